//! `ecp_columns(skill_search)`: an FTS5 auxiliary function telling, for
//! the row being matched, which fields hold each phrase of the query — so
//! one pass over the index gives ranking every candidate's fields, where
//! it took one more FTS5 query per term (each one the whole AND again).
//!
//! It answers a blob of one byte per phrase, in the order the phrases are
//! written in the expression (FTS5 numbers them so): bit `c` set when
//! column `c` (name, description, tags, body) holds the phrase in this row,
//! read with `xPhraseFirstColumn` / `xPhraseNextColumn`, which an index of
//! `detail=column` keeps. rusqlite does not expose FTS5's C API, so the
//! function is registered on each connection ([`register`]) through the
//! `fts5_api` that `SELECT fts5(?1)` hands over in a bound pointer: the one
//! place in the node that needs `unsafe`.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_int, c_void};
use std::ptr;

use rusqlite::Connection;
use rusqlite::ffi::{
    self, Fts5Context, Fts5ExtensionApi, Fts5PhraseIter, fts5_api, sqlite3_context, sqlite3_value,
};
use rusqlite::types::ToSqlOutput;

/// The function's name in SQL.
const NAME: &CStr = c"ecp_columns";

/// Registers [`NAME`] on `conn`: every connection that searches needs it.
pub(crate) fn register(conn: &Connection) -> Result<(), rusqlite::Error> {
    let mut api: *mut fts5_api = ptr::null_mut();
    // SQLite writes the pointer to its `fts5_api` into `api` ("fts5_api_ptr"
    // is the type FTS5 checks for), valid as long as the connection.
    let out = ToSqlOutput::Pointer(((&raw mut api).cast::<c_void>().cast_const(), c"fts5_api_ptr", None));
    conn.query_row("SELECT fts5(?1)", [out], |_| Ok(()))?;
    let failed = |rc: c_int, why: &str| {
        rusqlite::Error::SqliteFailure(
            ffi::Error::new(rc),
            Some(format!("{}: {why}", NAME.to_string_lossy())),
        )
    };
    if api.is_null() {
        return Err(failed(ffi::SQLITE_ERROR, "this SQLite has no FTS5 API"));
    }
    // SAFETY: `api` is non-null and points to FTS5's global `fts5_api`,
    // which lives as long as the connection `conn` borrowed here;
    // `xCreateFunction` exists from version 2 on (checked), copies the name,
    // and takes no user data nor destructor. `columns` has the signature of
    // `fts5_extension_function` and stays valid for the whole program.
    let rc = unsafe {
        if (*api).iVersion < 2 {
            return Err(failed(ffi::SQLITE_ERROR, "this SQLite's FTS5 API is too old"));
        }
        let Some(create) = (*api).xCreateFunction else {
            return Err(failed(ffi::SQLITE_ERROR, "this SQLite's FTS5 API cannot add functions"));
        };
        create(api, NAME.as_ptr(), ptr::null_mut(), Some(columns), None)
    };
    if rc != ffi::SQLITE_OK {
        return Err(failed(rc, "FTS5 refused to add the function"));
    }
    Ok(())
}

/// Bits of the columns holding phrase `phrase` in the current row.
///
/// # Safety
/// `api` and `fts` are what FTS5 passed to an auxiliary function call now running.
unsafe fn held_in(api: &Fts5ExtensionApi, fts: *mut Fts5Context, phrase: c_int) -> Result<u8, c_int> {
    let (Some(first), Some(next)) = (api.xPhraseFirstColumn, api.xPhraseNextColumn) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let mut iter = Fts5PhraseIter { a: ptr::null(), b: ptr::null() };
    let mut column: c_int = -1;
    // SAFETY: per this function's contract; `iter` and `column` are live
    // locals, and `next` is only called on the iterator `first` set up.
    unsafe {
        let rc = first(fts, phrase, &mut iter, &mut column);
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        let mut bits = 0u8;
        while column >= 0 {
            // Four columns: a fifth could not be told apart, and is none of ours.
            if column < 8 {
                bits |= 1 << column;
            }
            next(fts, &mut iter, &mut column);
        }
        Ok(bits)
    }
}

/// The auxiliary function: a blob of [`held_in`] for each phrase. Never
/// panics (a panic cannot cross into SQLite): errors are FTS5's codes.
unsafe extern "C" fn columns(
    api: *const Fts5ExtensionApi,
    fts: *mut Fts5Context,
    ctx: *mut sqlite3_context,
    _values: c_int,
    _value: *mut *mut sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its extension API, the context of the
    // row being matched and the SQL function's context, all valid for the
    // call; the blob is copied by SQLite (SQLITE_TRANSIENT) before `bits`
    // is dropped.
    unsafe {
        let Some(api) = api.as_ref() else {
            ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
            return;
        };
        let Some(count) = api.xPhraseCount else {
            ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
            return;
        };
        let phrases = count(fts).max(0);
        let mut bits = Vec::with_capacity(phrases as usize);
        for phrase in 0..phrases {
            match held_in(api, fts, phrase) {
                Ok(b) => bits.push(b),
                Err(rc) => {
                    ffi::sqlite3_result_error_code(ctx, rc);
                    return;
                }
            }
        }
        ffi::sqlite3_result_blob(ctx, bits.as_ptr().cast(), phrases, ffi::SQLITE_TRANSIENT());
    }
}

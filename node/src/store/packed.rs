//! Stored packets, compressed: the JSON of a skill's packet is kept as a
//! zstd frame (`skills.packet`, `skill_versions.packet`), about a third of
//! its size for a typical `SKILL.md`. Everything outside the store sees the
//! JSON: `integrityHash`, the ETags and the pages served are computed over it
//! as before. A withdrawal (`skills.withdrawal`, rare) stays plain JSON text,
//! so a reader takes either form ([`json`]).
//!
//! Since migration 23 the skills' packets are packed against a dictionary
//! built into the binary ([`pack_stored`]): a packet's JSON keys and a
//! `SKILL.md`'s frontmatter keys, which a frame of one packet otherwise
//! spells out itself (#18 item 2: about 180 bytes of a 1.26 KB frame). Such
//! a value is one byte naming its dictionary, then the zstd frame; a plain
//! frame starts with zstd's magic number (`28 b5 2f fd`), so the first byte
//! tells them apart, rows packed before still read, and a later dictionary
//! takes the next number without rewriting a row. A number this build does
//! not know is refused as written by a newer ecp-node.

use std::borrow::Cow;
use std::cell::RefCell;

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use zstd::bulk::{Compressor, Decompressor};

use super::StoreError;

/// zstd's default level: most of the gain of higher levels on a text of a few
/// KB, at a fraction of their CPU time (a 10,000-skill pull packs each once).
const LEVEL: i32 = 3;
/// The largest JSON a stored frame may unpack to: far above any packet the
/// limits let in (`max_body_bytes` is 100 KB by default), so a corrupt frame
/// cannot make a reader allocate without bound.
const MAX_UNPACKED: u64 = 64 << 20;

/// The dictionaries stored values may name, by their first byte (index + 1).
/// Append only: a stored row names its dictionary for ever.
const DICTIONARIES: [&[u8]; 1] = [include_bytes!("packed/dict1.txt")];

/// The dictionary [`pack_stored`] packs with, by its number.
const CURRENT: u8 = 1;

thread_local! {
    // One context per thread, reused: making one per packet cost more than
    // compressing a packet of a few KB.
    static PACKER: RefCell<Option<Compressor<'static>>> = const { RefCell::new(None) };
    static UNPACKER: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
    // The same with the current dictionary loaded, and one per dictionary to unpack.
    static DICT_PACKER: RefCell<Option<Compressor<'static>>> = const { RefCell::new(None) };
    static DICT_UNPACKERS: RefCell<Vec<Option<Decompressor<'static>>>> = const { RefCell::new(Vec::new()) };
}

/// The stored form of a packet's JSON.
pub(super) fn pack(json: &str) -> Vec<u8> {
    PACKER.with_borrow_mut(|packer| {
        let packer = match packer {
            Some(p) => p,
            None => packer.insert(Compressor::new(LEVEL).expect("a zstd context at a valid level")),
        };
        packer.compress(json.as_bytes()).expect("zstd compresses any input in memory")
    })
}

/// The stored form of a skill's packet: [`CURRENT`]'s number, then a zstd
/// frame packed against that dictionary.
pub(super) fn pack_stored(json: &str) -> Vec<u8> {
    DICT_PACKER.with_borrow_mut(|packer| {
        let packer = match packer {
            Some(p) => p,
            None => packer.insert(
                Compressor::with_dictionary(LEVEL, DICTIONARIES[usize::from(CURRENT) - 1])
                    .expect("a zstd context with a raw dictionary"),
            ),
        };
        let mut out = Vec::with_capacity(json.len() / 2 + 16);
        out.push(CURRENT);
        let frame = packer.compress(json.as_bytes()).expect("zstd compresses any input in memory");
        out.extend_from_slice(&frame);
        out
    })
}

/// A stored value split into the dictionary it names (0: none) and its zstd frame.
fn split(value: &[u8]) -> Result<(u8, &[u8]), StoreError> {
    match value.first() {
        Some(&n) if (1..=DICTIONARIES.len()).contains(&usize::from(n)) => Ok((n, &value[1..])),
        // Below zstd's magic number's first byte: a dictionary of a newer build.
        Some(&n) if n < 0x28 => Err(corrupt(format!(
            "it names dictionary {n}, which this ecp-node does not have (written by a newer one?)"
        ))),
        _ => Ok((0, value)),
    }
}

/// Runs `f` with the decompressor for dictionary `dict` (0: none).
fn with_unpacker<T>(
    dict: u8,
    f: impl FnOnce(&mut Decompressor<'static>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    if dict == 0 {
        return UNPACKER.with_borrow_mut(|unpacker| {
            let unpacker = match unpacker {
                Some(u) => u,
                None => unpacker.insert(Decompressor::new()?),
            };
            f(unpacker)
        });
    }
    DICT_UNPACKERS.with_borrow_mut(|unpackers| {
        let i = usize::from(dict) - 1;
        if unpackers.len() <= i {
            unpackers.resize_with(i + 1, || None);
        }
        let unpacker = match &mut unpackers[i] {
            Some(u) => u,
            slot => slot.insert(Decompressor::with_dictionary(DICTIONARIES[i])?),
        };
        f(unpacker)
    })
}

/// A stored packet's JSON: a zstd frame (with or without a dictionary), or
/// JSON text as older versions stored it and as withdrawals still are.
pub(super) fn json(value: ValueRef<'_>) -> Result<String, StoreError> {
    json_within(value, MAX_UNPACKED)
}

/// [`json`], refusing a frame that states more than `max` bytes.
fn json_within(value: ValueRef<'_>, max: u64) -> Result<String, StoreError> {
    match value {
        ValueRef::Text(text) => String::from_utf8(text.to_vec()).map_err(|e| corrupt(e.to_string())),
        ValueRef::Blob(value) => {
            // Every frame [`pack`] writes states its size: read exactly that.
            let (dict, frame) = split(value)?;
            let size = frame_size(frame, max)?;
            let bytes = with_unpacker(dict, |unpacker| unpacker.decompress(frame, size));
            let bytes = bytes.map_err(|e| corrupt(e.to_string()))?;
            String::from_utf8(bytes).map_err(|e| corrupt(e.to_string()))
        }
        other => Err(corrupt(format!("it is {:?}", other.data_type()))),
    }
}

/// A stored packet as a zstd frame (as stored: with its dictionary's number
/// if it has one), with the length of the JSON it unpacks to: what the feed
/// of `GET /ecp/skills` is built from, a row at a time ([`unpack_into`]
/// restores the JSON). A text value (a withdrawal) is packed.
pub(super) fn frame(value: ValueRef<'_>) -> Result<(Cow<'_, [u8]>, usize), StoreError> {
    let frame = match value {
        ValueRef::Blob(frame) => Cow::Borrowed(frame),
        ValueRef::Text(text) => {
            let text = std::str::from_utf8(text).map_err(|e| corrupt(e.to_string()))?;
            Cow::Owned(pack(text))
        }
        other => return Err(corrupt(format!("it is {:?}", other.data_type()))),
    };
    let size = frame_size(split(&frame)?.1, MAX_UNPACKED)?;
    Ok((frame, size))
}

/// Appends the JSON of `frame` (one [`frame`] or [`pack`] gave, with its
/// `size`) to `out`.
pub fn unpack_into(frame: &[u8], size: usize, out: &mut Vec<u8>) -> Result<(), StoreError> {
    let (dict, frame) = split(frame)?;
    let start = out.len();
    out.resize(start + size, 0);
    let written = with_unpacker(dict, |unpacker| unpacker.decompress_to_buffer(frame, &mut out[start..]));
    match written {
        Ok(n) if n == size => Ok(()),
        Ok(n) => {
            out.truncate(start);
            Err(corrupt(format!("it unpacks to {n} bytes, not the {size} it states")))
        }
        Err(e) => {
            out.truncate(start);
            Err(corrupt(e.to_string()))
        }
    }
}

/// The size a frame states, refused above `max`.
fn frame_size(frame: &[u8], max: u64) -> Result<usize, StoreError> {
    match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(size)) if size <= max => Ok(size as usize),
        Ok(Some(size)) => Err(corrupt(format!("it claims {size} bytes"))),
        Ok(None) | Err(_) => Err(corrupt("no zstd frame with its size".into())),
    }
}

/// A stored packet that does not unpack.
fn corrupt(why: String) -> StoreError {
    StoreError::Corrupt(format!("a stored packet does not unpack: {why}"))
}

/// A row's column `i` as a packet's JSON ([`json`]), inside a row mapping.
pub(super) fn column(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<String> {
    json(row.get_ref(i)?)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Blob, e.into()))
}

/// Makes `ecp_pack(text)` and `ecp_repack(value)` callable from SQL: the
/// migrations that compress the packets stored before (12), and pack them
/// again against the dictionary (23; [`super::schema`]).
pub(super) fn register(conn: &Connection) -> Result<(), StoreError> {
    conn.create_scalar_function("ecp_repack", 1, FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        Ok(match ctx.get_raw(0) {
            // NULL (a current version's row in skill_versions) stays NULL.
            ValueRef::Null => None,
            value => {
                Some(pack_stored(&json(value).map_err(|e| rusqlite::Error::UserFunctionError(e.into()))?))
            }
        })
    })?;
    conn.create_scalar_function("ecp_pack", 1, FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(text) => match std::str::from_utf8(text) {
                Ok(text) => Some(pack(text)),
                Err(e) => return Err(rusqlite::Error::UserFunctionError(e.into())),
            },
            // NULL (and anything already packed) is left as it is.
            ValueRef::Null => None,
            ValueRef::Blob(blob) => Some(blob.to_vec()),
            _ => return Err(rusqlite::Error::UserFunctionError("ecp_pack takes text".into())),
        })
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_text_round_trips_byte_identical(text in any::<String>()) {
            let packed = pack(&text);
            prop_assert_eq!(json(ValueRef::Blob(&packed)).unwrap(), text.clone());
            prop_assert_eq!(json(ValueRef::Text(text.as_bytes())).unwrap(), text);
        }

        #[test]
        fn a_packet_round_trips_through_sqlite(body in "[ -~\n\u{a0}-\u{2fff}]{0,4000}") {
            let origin = ecp_protocol::Origin::new("i", "u", "linux/amd64", "1");
            let packet = ecp_protocol::SkillPacket::new(&origin, "n", "d", &body, 0.9, crate::store::now());
            let text = serde_json::to_string(&packet).unwrap();
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch("CREATE TABLE t (p BLOB NOT NULL) STRICT").unwrap();
            conn.execute("INSERT INTO t (p) VALUES (?1)", [pack(&text)]).unwrap();
            let back = conn.query_row("SELECT p FROM t", [], |r| column(r, 0)).unwrap();
            prop_assert_eq!(&back, &text);
            let decoded: ecp_protocol::SkillPacket = serde_json::from_str(&back).unwrap();
            prop_assert_eq!(decoded.skill_body, body);
        }
    }

    #[test]
    fn a_corrupt_frame_is_an_error_not_a_panic() {
        let mut packed = pack("{\"skillName\":\"a\"}");
        let last = packed.len() - 1;
        packed[last] ^= 0xff;
        packed.truncate(packed.len() - 2);
        assert!(matches!(json(ValueRef::Blob(&packed)), Err(StoreError::Corrupt(_))));
        assert!(matches!(json(ValueRef::Integer(1)), Err(StoreError::Corrupt(_))));
        assert!(matches!(json(ValueRef::Blob(b"not zstd")), Err(StoreError::Corrupt(_))));
        // A frame that states more than the bound is refused before anything is allocated.
        let err = json_within(ValueRef::Blob(&pack(&"x".repeat(1001))), 1000).unwrap_err();
        assert!(err.to_string().contains("claims 1001 bytes"), "{err}");
        assert_eq!(json_within(ValueRef::Blob(&pack(&"x".repeat(1000))), 1000).unwrap().len(), 1000);
    }

    #[test]
    fn a_frame_unpacks_appended_to_what_the_buffer_holds() {
        let json = "{\"skillName\":\"a\"}";
        let packed = pack(json);
        let (frame, size) = frame(ValueRef::Blob(&packed)).unwrap();
        assert!(matches!(frame, Cow::Borrowed(_)), "a stored frame is not copied");
        assert_eq!(size, json.len());
        let mut out = b"x,".to_vec();
        unpack_into(&frame, size, &mut out).unwrap();
        assert_eq!(out, format!("x,{json}").as_bytes());
        // A withdrawal, stored as text, is packed on the way.
        let (text_frame, text_size) = super::frame(ValueRef::Text(json.as_bytes())).unwrap();
        assert_eq!((text_frame.as_ref(), text_size), (packed.as_slice(), json.len()));
        // A size other than the frame's is refused and leaves the buffer as it was.
        for wrong in [size - 1, size + 1] {
            let mut out = b"x,".to_vec();
            assert!(matches!(unpack_into(&packed, wrong, &mut out), Err(StoreError::Corrupt(_))), "{wrong}");
            assert_eq!(out, b"x,");
        }
        assert!(matches!(super::frame(ValueRef::Blob(b"not zstd")), Err(StoreError::Corrupt(_))));
        assert!(matches!(super::frame(ValueRef::Integer(3)), Err(StoreError::Corrupt(_))));
    }

    #[test]
    fn a_frame_names_its_dictionary_and_frames_without_one_still_read() {
        let origin = ecp_protocol::Origin::new("node-a", "u", "linux/amd64", "1");
        let body = "---\nname: n\ndescription: d\ntags: [a]\n---\n# N\n\nSteps.\n";
        let packet = ecp_protocol::SkillPacket::new(&origin, "n", "d", body, 0.9, crate::store::now());
        let json = serde_json::to_string(&packet).unwrap();
        let (plain, stored) = (pack(&json), pack_stored(&json));
        assert_eq!(stored[0], CURRENT);
        assert_eq!(&plain[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a plain frame starts with zstd's magic number");
        assert!(
            stored.len() + 100 < plain.len(),
            "the keys come from the dictionary: {} vs {}",
            stored.len(),
            plain.len()
        );
        for value in [&plain, &stored] {
            assert_eq!(super::json(ValueRef::Blob(value)).unwrap(), json);
            let (frame, size) = frame(ValueRef::Blob(value)).unwrap();
            assert_eq!(size, json.len());
            let mut out = Vec::new();
            unpack_into(&frame, size, &mut out).unwrap();
            assert_eq!(out, json.as_bytes());
        }
        // The next number is a dictionary of a newer build: refused, naming it.
        let mut newer = stored.clone();
        newer[0] = CURRENT + 1;
        let err = super::json(ValueRef::Blob(&newer)).unwrap_err();
        assert!(err.to_string().contains("dictionary 2"), "{err}");
        assert!(matches!(frame(ValueRef::Blob(&newer)), Err(StoreError::Corrupt(_))));
        assert!(matches!(unpack_into(&newer, json.len(), &mut Vec::new()), Err(StoreError::Corrupt(_))));
        // A frame packed against the dictionary does not unpack without it.
        assert!(super::json(ValueRef::Blob(&stored[1..])).is_err());
    }

    #[test]
    fn the_sql_functions_repack_any_stored_form_and_leave_null() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let json = "{\"skillName\":\"a\"}";
        for value in [rusqlite::types::Value::Text(json.into()), rusqlite::types::Value::Blob(pack(json))] {
            let repacked: Vec<u8> = conn.query_row("SELECT ecp_repack(?1)", [&value], |r| r.get(0)).unwrap();
            assert_eq!(repacked[0], CURRENT);
            assert_eq!(super::json(ValueRef::Blob(&repacked)).unwrap(), json);
        }
        let null: Option<Vec<u8>> = conn.query_row("SELECT ecp_repack(NULL)", [], |r| r.get(0)).unwrap();
        assert_eq!(null, None);
        assert!(conn.query_row("SELECT ecp_repack(x'00')", [], |r| r.get::<_, Vec<u8>>(0)).is_err());
    }

    #[test]
    fn the_sql_function_packs_text_and_leaves_null() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let packed: Vec<u8> = conn.query_row("SELECT ecp_pack('{\"a\":1}')", [], |r| r.get(0)).unwrap();
        assert_eq!(json(ValueRef::Blob(&packed)).unwrap(), "{\"a\":1}");
        let null: Option<Vec<u8>> = conn.query_row("SELECT ecp_pack(NULL)", [], |r| r.get(0)).unwrap();
        assert_eq!(null, None);
    }
}

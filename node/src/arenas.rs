//! glibc's malloc arenas (#18 item 3): the cap on how many the process
//! makes, set once at the start of `main`.
//!
//! glibc gives every thread that allocates an arena of its own (up to 8 per
//! core), and each arena keeps what was freed in it for its next
//! allocations. A node's tokio workers and its `spawn_blocking` threads
//! (feeds, gzip, manifests, SQLite) each get one, so memory freed in one
//! thread's arena cannot serve another's: at 100,000 skills that was about
//! 90 MB of a peak of 220–270 MB under 16 readers, and two arenas brought
//! it under 200 MB (`node/benches/README.md`, "Figures for #18 item 3").
//!
//! The operator's choice wins: with `MALLOC_ARENA_MAX`, or `GLIBC_TUNABLES`
//! naming `glibc.malloc.arena_max`, in the environment (glibc reads both
//! when the process starts) the node leaves the setting alone. musl has no
//! per-thread arenas, and other C libraries are left as they are: there
//! [`cap`] does nothing.

#![allow(unsafe_code)]

/// The arenas the node allows itself when the environment does not say:
/// the main one (the `brk` heap) and one more that the threads share.
pub const ARENAS: i32 = 2;

/// What [`cap`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// glibc now makes at most this many arenas.
    Set(i32),
    /// The environment sets the number: glibc has applied it already.
    Operator,
    /// Not glibc, or glibc refused the setting: the allocator's default.
    Unchanged,
}

/// Caps glibc's arenas at [`ARENAS`] unless the environment sets them.
///
/// Call it first thing in `main`, before any thread exists: glibc fixes its
/// limit when a thread first needs an arena beyond the main one, and a
/// thread that already has one keeps it.
pub fn cap() -> Cap {
    if operator_sets(|name| std::env::var_os(name)) {
        return Cap::Operator;
    }
    set_max(ARENAS)
}

/// Whether the environment (read by `var`) sets the arenas' number.
fn operator_sets(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    // glibc ignores an empty value, so it is no choice either.
    let max = var("MALLOC_ARENA_MAX").is_some_and(|v| !v.is_empty());
    let tunable =
        var("GLIBC_TUNABLES").is_some_and(|v| v.to_string_lossy().contains("glibc.malloc.arena_max="));
    max || tunable
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_max(arenas: i32) -> Cap {
    // SAFETY: `mallopt` takes two integers and no pointer; with `M_ARENA_MAX`
    // it only stores the limit under the main arena's lock. glibc marks it
    // MT-Unsafe for its lazy initialisation, and `cap` runs before any other
    // thread exists.
    let done = unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) };
    if done == 1 { Cap::Set(arenas) } else { Cap::Unchanged }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_max(_arenas: i32) -> Cap {
    Cap::Unchanged
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::operator_sets;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_operator_sets_the_arenas_by_either_variable_and_an_empty_one_is_no_choice() {
        assert!(!operator_sets(env(&[])));
        assert!(operator_sets(env(&[("MALLOC_ARENA_MAX", "8")])));
        assert!(!operator_sets(env(&[("MALLOC_ARENA_MAX", "")])));
        assert!(operator_sets(env(&[("GLIBC_TUNABLES", "glibc.malloc.check=0:glibc.malloc.arena_max=4")])));
        assert!(!operator_sets(env(&[("GLIBC_TUNABLES", "glibc.malloc.arena_test=4")])));
    }
}

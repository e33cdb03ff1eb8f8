//! The scan of one received body as a result, never an unwinding panic
//! (#14, #12): a panic in any rule or analyzer on one skill must refuse
//! that skill, not fail the push that carried it (a 500) or the pull round
//! whose page holds it (every round, so the node never caught up with the
//! peer again).
//!
//! [`guarded`] runs a scan and turns its panic into [`ScanFailed`]; the
//! merge (stage 3) and the bundle scan record that as a refusal whose
//! reason is [`ScanFailed`]'s fixed text: the panic's message (which may
//! quote the body or name source paths) is dropped, never shown to the
//! sender nor stored. What the panic hook prints to the node's standard
//! error is the process's business, not the scanner's.
//!
//! The scanner holds no state a panic could leave half-written: its
//! tables are built once (`LazyLock`, whose own failure would fail every
//! later scan the same way, each then refused) and every scan works on its
//! own buffers, so [`AssertUnwindSafe`] holds. Needs `panic = "unwind"`
//! (the workspace's profiles keep the default).

use std::panic::{AssertUnwindSafe, catch_unwind};

/// A scan that panicked: the body could not be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the scanner failed on this skill (an internal error, not a finding), so it is not accepted; please \
     report it to the ecp maintainers with the skill"
)]
pub struct ScanFailed;

/// Runs `scan`; its panic becomes [`ScanFailed`].
pub fn guarded<R>(scan: impl FnOnce() -> R) -> Result<R, ScanFailed> {
    catch_unwind(AssertUnwindSafe(scan)).map_err(|_payload| ScanFailed)
}

/// A line that makes the scan of a body holding it panic, in builds with
/// debug assertions only (tests, never a release): the one honest way for
/// the node's tests to reach [`guarded`]'s refusal through a real push or
/// pull. Long and odd enough that no skill holds it by chance.
#[doc(hidden)]
pub const PANIC_PROBE: &str = "ecp-test-probe: the scanner panics on this line (debug builds only) 7f3a1c";

/// Panics when `body` holds [`PANIC_PROBE`] in a debug build.
#[inline]
pub(super) fn probe(body: &str) {
    if cfg!(debug_assertions) && body.contains(PANIC_PROBE) {
        panic!("scan panic probe");
    }
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;

//! `outcomes` (ECP/1.3 outcome evidence, `SPEC.md` §16): what instances
//! observed of a skill's uses, as claims that travel on its packet. The
//! rules (limits, newest claim per observer, weighing by trust) are
//! [`crate::outcomes`]'.

use serde::{Deserialize, Serialize};

use super::{Timestamp, null_as_default};

/// One observer's summary of a skill's uses, as it last counted them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OutcomeClaim {
    /// The instance whose agents reported these uses.
    #[serde(deserialize_with = "null_as_default")]
    pub observer: String,
    /// Uses reported: `successes + failures`.
    pub uses: u64,
    /// Of those, successes.
    pub successes: u64,
    /// Of those, failures.
    pub failures: u64,
    /// Successes in a row of the observer's current version.
    pub streak: u64,
    /// When the observer last counted a use: of two claims by one
    /// observer, the one with the later `at` (then more uses) is newer.
    pub at: Timestamp,
}

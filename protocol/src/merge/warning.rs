//! Warnings (`SPEC.md` §7.10.5): what a merge tells about a packet it did
//! not refuse — a description longer than agents are meant to read.

use std::fmt;

/// The description length agents are written for (the Agent Skills
/// guideline), in characters: longer is a warning, not a refusal.
pub const DESCRIPTION_GUIDELINE_CHARS: usize = 1024;

/// A remark on a packet that passed; each displays as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PacketWarning {
    /// `skillDescription` has more than [`DESCRIPTION_GUIDELINE_CHARS`] characters.
    LongDescription {
        /// Its length in characters (Unicode scalar values).
        chars: usize,
    },
}

impl fmt::Display for PacketWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PacketWarning::LongDescription { chars } => write!(
                f,
                "skillDescription has {chars} characters, over the guideline of {DESCRIPTION_GUIDELINE_CHARS}; \
                 agents may cut it"
            ),
        }
    }
}

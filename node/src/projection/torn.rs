//! What a power loss can leave of the node's own write of a `SKILL.md`,
//! told apart from an agent's edit (#18 item 2).
//!
//! The projection never syncs: the store is the truth and the start
//! rewrites the folder. But the start imports before it projects, and a
//! write cut by a power loss is not always whole. On ext4 (delayed
//! allocation) the rename and the record of the write (the attribute, set
//! on the temporary file first) reach the disk in the journal, the data
//! when its pages are written back: after a power loss a file the node
//! wrote can be empty with its record, or hold only its first pages — each
//! 4 KiB, so its length is a multiple of that — and then, the record
//! matching no content, look like an agent's file.
//!
//! A pull into an empty store writes a new skill's file in place, its
//! record first ([`super::atomic::write_new_in_place`]): killed mid-write
//! (kill -9) it leaves an empty file, with its record or — killed between
//! the file's creation and its record — without one, or its first pages.
//!
//! Such a file is the node's torn write, never the agent's: the import
//! passes over it (it is neither imported over the store's version nor
//! sent to peers as the user's edit) and the projection writes the store's
//! version over it. It is one of:
//! - an empty `SKILL.md` carrying a record of the node's (any: the node
//!   never writes an empty file);
//! - an empty `SKILL.md` without a record, in the folder of a skill the
//!   store holds as received: an empty file is no skill (it has no
//!   frontmatter), so taking it for the node's loses nothing of the agent's,
//!   and an agent's own empty file in any other folder stays the agent's;
//! - a `SKILL.md` whose length is a non-zero multiple of [`PAGE`], shorter
//!   than what the node writes for the skill the store holds under its
//!   folder's name and a prefix of it — with or without a record. An
//!   agent's edit that only cuts the end of the node's file exactly at a
//!   4 KiB boundary is taken for one (and the store's version written back).
//!
//! Not covered: a file torn while an older version was written, whose
//! newer version the store committed before the power loss (it is a
//! prefix of neither), and a bundle's other files (a bundle is swapped in
//! whole by renaming its folder).

use std::path::Path;

use super::{Projection, SKILL_FILE, written_hash};

/// The unit a file's data reaches the disk in: the page cache's page.
pub(super) const PAGE: u64 = 4096;

/// Whether a `SKILL.md` of `len` bytes may be a torn write: worth reading
/// and comparing (empty, or whole pages).
pub fn may_be_torn(len: u64) -> bool {
    len.is_multiple_of(PAGE)
}

impl Projection {
    /// Whether `dir/SKILL.md`, holding `current`, is what a power loss (or a
    /// kill) left of the node's write of `intended` (the store's version, as
    /// the projection writes it; `None`: not known); `received`: the store
    /// holds that version as a received skill.
    pub(super) fn torn_at(
        &self,
        dir: &Path,
        current: &[u8],
        intended: Option<&[u8]>,
        received: bool,
    ) -> bool {
        if current.is_empty() {
            return (received && intended.is_some()) || written_hash(dir, &dir.join(SKILL_FILE)).is_some();
        }
        may_be_torn(current.len() as u64)
            && intended.is_some_and(|whole| current.len() < whole.len() && whole.starts_with(current))
    }

    /// Whether the `SKILL.md` of folder `entry`, holding `current`, is what
    /// a power loss left of the node's write of `intended` ([`Self::torn_at`];
    /// `received`: the store holds it as a received skill).
    pub fn torn(&self, entry: &str, current: &[u8], intended: Option<&[u8]>, received: bool) -> bool {
        self.torn_at(&self.dir.join(entry), current, intended, received)
    }
}

#[cfg(test)]
mod tests {
    use super::super::xattr;
    use super::*;

    /// A skill folder whose `SKILL.md` holds `bytes`, recorded as the node's
    /// write of `recorded` when given.
    fn folder(bytes: &[u8], recorded: Option<&[u8]>) -> (tempfile::TempDir, Projection) {
        let tmp = tempfile::tempdir().unwrap();
        let projection = Projection::new(tmp.path()).stamped_by("node-a");
        let dir = tmp.path().join("s");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(SKILL_FILE), bytes).unwrap();
        if let Some(content) = recorded {
            xattr::set_path(&dir.join(SKILL_FILE), &projection.record(content)).unwrap();
        }
        (tmp, projection)
    }

    fn whole() -> Vec<u8> {
        (0..3 * PAGE + 100).map(|i| b'a' + (i % 26) as u8).collect()
    }

    #[test]
    fn an_empty_file_is_torn_with_a_record_and_the_agents_without_one() {
        let (_t, p) = folder(b"", Some(&whole()));
        assert!(p.torn("s", b"", None, false));
        assert!(p.torn("s", b"", Some(&whole()), false));
        let (_t, p) = folder(b"", None);
        assert!(!p.torn("s", b"", Some(&whole()), false), "an agent's empty file beside a local skill");
        assert!(!p.torn("s", b"", None, false), "an agent's empty file, no skill of its name");
    }

    #[test]
    fn an_empty_file_without_a_record_is_torn_in_a_received_skills_folder() {
        // A kill between the in-place file's creation and its record.
        let (_t, p) = folder(b"", None);
        assert!(p.torn("s", b"", Some(&whole()), true));
        assert!(!p.torn("s", b"", None, true), "no version known: nothing to write back");
        // Not empty: the received skill's folder changes nothing.
        assert!(!p.torn("s", b"x", Some(&whole()), true), "one byte: the agent's");
    }

    #[test]
    fn whole_pages_of_what_the_node_writes_are_torn_and_one_byte_off_a_page_is_not() {
        let whole = whole();
        let (_t, p) = folder(b"", None);
        for pages in 1..=3 {
            let cut = &whole[..(pages * PAGE) as usize];
            assert!(p.torn("s", cut, Some(&whole), false), "{pages} page(s)");
        }
        assert!(!p.torn("s", &whole[..PAGE as usize - 1], Some(&whole), true), "one byte short of a page");
        assert!(!p.torn("s", &whole[..PAGE as usize + 1], Some(&whole), true), "one byte past a page");
        assert!(!p.torn("s", &whole[..PAGE as usize], None, true), "nothing to compare with");
        let mut edited = whole[..PAGE as usize].to_vec();
        edited[10] = b'!';
        assert!(!p.torn("s", &edited, Some(&whole), true), "not a prefix: the agent's");
    }

    #[test]
    fn a_file_as_long_as_what_the_node_writes_is_not_torn() {
        let whole: Vec<u8> = whole()[..2 * PAGE as usize].to_vec();
        let (_t, p) = folder(b"", None);
        assert!(!p.torn("s", &whole, Some(&whole), true), "whole, not torn");
        assert!(p.torn("s", &whole[..PAGE as usize], Some(&whole), false));
    }
}

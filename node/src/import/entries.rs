//! What the importer knows of the skills folders between passes
//! ([`Entries`]): which folder holds a skill its frontmatter names
//! otherwise, which folders were passed over and why, and the warnings of
//! the skills that were shared. Kept in memory for the projection and the
//! sharing decisions, and in the store ([`crate::store::FolderEntry`]) for
//! `skill list`, `status` and the next start; the store is written only
//! when a pass changes something.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::store::{FolderEntry, Store, StoreError};

/// Where a local skill's file lives: a folder's index among the sharing
/// folders and the skill's folder inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The index of its skills folder (0 for the first).
    pub index: usize,
    /// Its folder inside that one.
    pub entry: String,
}

/// The kept entries, shared by clones.
#[derive(Debug, Clone, Default)]
pub struct Entries {
    inner: Arc<RwLock<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<FolderEntry>,
    /// Skill name → its place, for skills imported from a folder named otherwise.
    aliases: HashMap<String, Place>,
}

impl Entries {
    /// The entries the store kept.
    pub fn load(store: &Store) -> Result<Entries, StoreError> {
        let entries = Entries::default();
        entries.set(store.folder_entries()?);
        Ok(entries)
    }

    fn set(&self, entries: Vec<FolderEntry>) {
        let aliases = entries
            .iter()
            .filter(|e| e.code.is_none())
            .filter_map(|e| {
                let name = e.name.clone().filter(|n| *n != e.entry)?;
                Some((name, Place { index: e.folder.checked_sub(1)?, entry: e.entry.clone() }))
            })
            .collect();
        *self.inner.write().unwrap_or_else(|p| p.into_inner()) = Inner { entries, aliases };
    }

    /// The place of the skill `name` when its folder is named otherwise.
    pub fn alias(&self, name: &str) -> Option<Place> {
        self.inner.read().unwrap_or_else(|p| p.into_inner()).aliases.get(name).cloned()
    }

    /// Notes at once that `name` lives at `place` (a folder named
    /// otherwise), before the pass ends: the projection of its import must
    /// already write it there.
    pub(super) fn note_alias(&self, name: &str, place: &Place) {
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        inner.aliases.insert(name.to_owned(), place.clone());
    }

    /// Every kept entry.
    pub fn all(&self) -> Vec<FolderEntry> {
        self.inner.read().unwrap_or_else(|p| p.into_inner()).entries.clone()
    }

    /// The skill folder `entry` of folder `index` held when last read.
    pub fn name_of(&self, index: usize, entry: &str) -> Option<String> {
        let inner = self.inner.read().unwrap_or_else(|p| p.into_inner());
        inner.entries.iter().find(|e| e.folder == index + 1 && e.entry == entry).and_then(|e| e.name.clone())
    }

    /// Replaces the entries with `entries` (sorted here), in the store too
    /// when they changed.
    pub fn replace(&self, store: &Store, mut entries: Vec<FolderEntry>) -> Result<(), StoreError> {
        entries.sort_by(|a, b| (a.folder, &a.entry).cmp(&(b.folder, &b.entry)));
        entries.dedup_by(|a, b| a.folder == b.folder && a.entry == b.entry);
        if self.inner.read().unwrap_or_else(|p| p.into_inner()).entries == entries {
            return Ok(());
        }
        store.replace_folder_entries(&entries)?;
        self.set(entries);
        Ok(())
    }
}

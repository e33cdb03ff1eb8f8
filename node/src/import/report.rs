//! What `skill list`, `status` and `/v1/` show of the skills folders, so a
//! skill that does not leave the node is never silent ([`FolderReport`]):
//! every folder the import passed over and every local skill kept private,
//! each with why, and every shared skill with a warning.

use serde::Serialize;

use crate::library::Library;
use crate::projection::SKILL_FILE;
use crate::store::{ShareWarning, StoreError};

/// A skill of the skills folders that does not leave the node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotShared {
    /// The skills folder's number (1 for the first), when it lives in one.
    pub folder: Option<usize>,
    /// Its file, relative to that folder (`template/SKILL.md`).
    pub path: Option<String>,
    /// The skill's name, when known.
    pub skill: Option<String>,
    /// Why, in short: a sharing rule's code (`operator`, `folder`,
    /// `frontmatter`, `ecpignore`, `unlisted`, `secret`) or the import's
    /// (`invalid`, `over-limit`, `collision`, `duplicate`, `symlink`,
    /// `unreadable`, `store`).
    pub code: String,
    /// What keeps it home and what to do.
    pub reason: String,
}

/// A shared skill with something its author may want to fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warned {
    /// The skills folder's number (1 for the first).
    pub folder: usize,
    /// Its file, relative to that folder.
    pub path: String,
    /// The skill's name.
    pub skill: String,
    /// The warnings.
    pub warnings: Vec<ShareWarning>,
}

/// Every skill of the skills folders not shared, and every one shared with
/// a warning.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FolderReport {
    /// Not shared, and why: passed over by the import first, then kept private.
    pub not_shared: Vec<NotShared>,
    /// Shared with warnings.
    pub shared_with_warnings: Vec<Warned>,
}

impl FolderReport {
    /// The report as the store has it now; blocking.
    pub fn of(library: &Library) -> Result<FolderReport, StoreError> {
        let mut report = FolderReport::default();
        for e in library.store().folder_entries()? {
            let path = format!("{}/{SKILL_FILE}", e.entry);
            match (e.code, e.name) {
                (Some(code), skill) => report.not_shared.push(NotShared {
                    folder: Some(e.folder),
                    path: Some(path),
                    skill,
                    code,
                    reason: e.reason.unwrap_or_default(),
                }),
                (None, Some(skill)) if !e.warnings.is_empty() => report.shared_with_warnings.push(Warned {
                    folder: e.folder,
                    path,
                    skill,
                    warnings: e.warnings,
                }),
                (None, _) => {}
            }
        }
        let mut private_names = Vec::new();
        for skill in library.store().local_skills()? {
            let Some(private) = skill.private else { continue };
            let name = skill.packet.skill_name;
            private_names.push(name.clone());
            let place = library.folder_of(&name);
            report.not_shared.push(NotShared {
                folder: place.as_ref().map(|p| p.index + 1),
                path: place.map(|p| format!("{}/{SKILL_FILE}", p.entry)),
                skill: Some(name),
                code: private.code,
                reason: private.reason,
            });
        }
        // A private skill with a warning is listed as not shared only.
        report.shared_with_warnings.retain(|w| !private_names.contains(&w.skill));
        Ok(report)
    }

    /// The report as JSON fields (`notShared`, `sharedWithWarnings`).
    pub fn into_json(self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self).expect("the report serialises") {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("a struct serialises as an object"),
        }
    }
}

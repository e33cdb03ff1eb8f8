//! The library's skills folder as the store says it should be: the
//! background writer that projects committed changes (so a request or the
//! next page's merge never waits for the file system), what the folder
//! shows, and a whole projection from the store page by page.

use ecp_protocol::{SkillKind, SkillPacket};
use tokio::sync::mpsc;

use super::{Library, PROJECT_PAGE, ToProject};
use crate::store::{Source, StoreError};

impl Library {
    /// Starts the background writer of the skills folder (call once, inside
    /// a Tokio runtime). Changes queued while it writes are written together.
    pub fn start_projection_worker(&self) -> tokio::task::JoinHandle<()> {
        let (tx, mut rx) = mpsc::unbounded_channel::<ToProject>();
        if self.projector.set(tx).is_err() {
            tracing::warn!("projection worker already running");
        }
        let library = self.clone();
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                let (mut batch, mut waiting) = (Vec::new(), Vec::new());
                let mut next = Some(first);
                while let Some(work) = next {
                    match work {
                        ToProject::Changes(changes) => batch.extend(changes),
                        ToProject::Flushed(done) => waiting.push(done),
                    }
                    next = rx.try_recv().ok();
                }
                if !batch.is_empty() {
                    let _ = library.in_background(move |library| library.project(&batch)).await;
                }
                for done in waiting {
                    let _ = done.send(());
                }
            }
        })
    }

    /// Returns once every change committed before the call is in the
    /// skills folder (at once without a projection worker, which projects
    /// each change as it commits).
    pub async fn projection_flushed(&self) {
        let Some(projector) = self.projector.get() else { return };
        let (done, flushed) = tokio::sync::oneshot::channel();
        if projector.send(ToProject::Flushed(done)).is_ok() {
            let _ = flushed.await;
        }
    }

    /// What the folder must show: every skill's current packet and kind
    /// (tombstones included) — a pinned one's pinned version
    /// ([`crate::versions`]), a retired one's (#19) shown as removed — but
    /// those review intake holds back, and those of a held deletion of the
    /// skills folder (writing them back would decide it without the user).
    pub fn folder_view(&self) -> Result<Vec<(SkillPacket, SkillKind)>, StoreError> {
        let mut view = Vec::new();
        self.each_folder_page(|page| {
            view.extend(page);
            Ok(())
        })?;
        Ok(view)
    }

    /// The names [`Library::folder_view`] leaves out: those review intake
    /// holds back, and those of a held deletion of the skills folder.
    pub(crate) fn withheld_from_folder(&self) -> Result<std::collections::HashSet<String>, StoreError> {
        let mut withheld = self.store.withheld_from_folder()?;
        // A peer's held withdrawals leave their skills as they are: shown.
        let held = self.store.held_deletions()?.into_iter().filter(|d| d.source == Source::SkillsDir);
        withheld.extend(held.flat_map(|d| d.names));
        Ok(withheld)
    }

    /// Hands [`Library::folder_view`] to `visit` a page of skills at a
    /// time: 100,000 packets at once would hold every body in memory.
    pub(crate) fn each_folder_page(
        &self,
        mut visit: impl FnMut(Vec<(SkillPacket, SkillKind)>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let withheld = self.withheld_from_folder()?;
        let retired = self.store.retired_names()?;
        let mut after = String::new();
        loop {
            let page = self.store.current_packets_after(&after, PROJECT_PAGE)?;
            let full = page.len() == PROJECT_PAGE;
            after = page.last().map_or(after, |(name, _, _)| name.clone());
            let shown = page.into_iter().filter(|(name, _, _)| !withheld.contains(name));
            let mut shown = crate::versions::with_pins(&self.store, shown.map(|(_, p, k)| (p, k)).collect())?;
            for (packet, _) in &mut shown {
                packet.deprecated |= retired.contains(&packet.skill_name);
            }
            visit(shown)?;
            if !full {
                return Ok(());
            }
        }
    }

    /// Writes the folder's view ([`Library::folder_view`]) to the folder
    /// (at start: the folder may be new, or another process may have
    /// changed the store).
    pub fn project_all(&self) -> Result<usize, StoreError> {
        let mut written = 0;
        self.each_folder_page(|page| {
            for (packet, kind) in page {
                let result = if !self.main_shows(kind) {
                    self.leave_main(&packet.skill_name)
                } else if packet.deprecated {
                    self.projection.remove(&packet.skill_name)
                } else {
                    self.projection.write(&packet, kind)
                };
                match result {
                    Ok(()) => written += usize::from(!packet.deprecated && self.main_shows(kind)),
                    Err(e) => tracing::error!(error = %e, "skills folder not fully updated"),
                }
            }
            Ok(())
        })?;
        if !self.agents.is_empty() {
            self.agents.fill(self);
        }
        Ok(written)
    }
}

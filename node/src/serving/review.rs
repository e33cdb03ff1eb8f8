//! The quarantine review on either store (`/v1/quarantine…`): the node's
//! own ([`crate::operator`], on its library) or a hub's, on the database
//! every replica shares (`store::hub`'s `quarantine`), answering in the
//! same shapes ([`Approved`], [`Dropped`], [`QuarantineEntry`]). All block.

use ecp_protocol::SkillPacket;

use super::Serving;
use crate::config::Config;
use crate::operator::{self, Approved, Dropped};
use crate::store::{QuarantineEntry, StoreError};

fn dropped(entry: QuarantineEntry) -> Dropped {
    Dropped { id: entry.id, name: entry.skill_name, peer: entry.peer.to_string() }
}

impl Serving {
    /// Held entries, oldest first.
    pub fn quarantine(&self) -> Result<Vec<QuarantineEntry>, StoreError> {
        match self {
            Serving::Local(library) => library.store().quarantine(),
            Serving::Hub(hub) => hub.quarantine(),
        }
    }

    /// A held entry and its packet as received (`None`: an excerpt alone was kept).
    pub fn quarantined(&self, id: i64) -> Result<(QuarantineEntry, Option<SkillPacket>), StoreError> {
        match self {
            Serving::Local(library) => library.store().quarantined(id),
            Serving::Hub(hub) => hub.quarantined(id),
        }
    }

    /// Installs held entry `id` (`force`: past the scan's findings).
    pub fn approve(&self, config: &Config, id: i64, force: bool) -> Result<Approved, StoreError> {
        match self {
            Serving::Local(library) => operator::approve(library, config, id, force),
            Serving::Hub(hub) => {
                let packet = hub.approve(id, config.default_trust, config.reshare_external, force)?;
                Ok(Approved { id, name: packet.skill_name, confidence: packet.confidence })
            }
        }
    }

    /// Drops held entry `id`.
    pub fn drop_quarantined(&self, id: i64) -> Result<Dropped, StoreError> {
        match self {
            Serving::Local(library) => operator::drop_quarantined(library, id),
            Serving::Hub(hub) => hub.quarantine_drop(id).map(dropped),
        }
    }

    /// Drops every held entry first received longer than `age` ago (`None`: every one).
    pub fn drop_many(&self, age: Option<std::time::Duration>) -> Result<Vec<Dropped>, StoreError> {
        match self {
            Serving::Local(library) => operator::drop_many(library, age),
            Serving::Hub(hub) => Ok(hub.quarantine_drop_older_than(age)?.into_iter().map(dropped).collect()),
        }
    }
}

//! [`ProgressHook`]: how far a pull round has come, page by page, for the
//! commands that show it (`ecp-node pull` and `sync`). A [`Context`](super::Context)
//! without one — the federator's — pays nothing but a `None` check per page.

use std::sync::Arc;

/// How far one pull round has come, after a page was merged.
#[derive(Debug, Clone, Copy)]
pub struct PullProgress<'a> {
    /// The peer.
    pub url: &'a str,
    /// Pages merged so far this round.
    pub pages: usize,
    /// Packets received so far this round.
    pub packets: usize,
    /// Body bytes received so far this round (manifest and pages, decoded).
    pub bytes: usize,
    /// The skills the peer's manifest counts, when the round pulls from 0:
    /// what a full pull brings (tombstones aside); `None` for an incremental one.
    pub expected: Option<usize>,
}

/// Told of every page a pull round merges.
#[derive(Clone)]
pub struct ProgressHook(Arc<dyn Fn(&PullProgress<'_>) + Send + Sync>);

impl ProgressHook {
    /// A hook calling `tell`; it runs on the async threads, so it must not block.
    pub fn new(tell: impl Fn(&PullProgress<'_>) + Send + Sync + 'static) -> ProgressHook {
        ProgressHook(Arc::new(tell))
    }

    pub(crate) fn tell(&self, progress: &PullProgress<'_>) {
        (self.0)(progress);
    }
}

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

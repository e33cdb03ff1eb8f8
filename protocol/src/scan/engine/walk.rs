//! The state of one scan's walk over the prefilter's hits ([`Walk`]) and
//! the buffers a thread keeps between scans ([`Scratch`]), trimmed so that
//! a huge hostile body does not pin them.

use super::text::{LineCursor, LineRef, Lowered};
use crate::scan::context::Outline;
use crate::scan::literals::End;

/// Buffers a scan needs, kept per thread, so that scanning a typical body
/// allocates little more than its findings.
#[derive(Default)]
pub(super) struct Scratch {
    /// Where the prefilter's keys end.
    pub(super) ends: Vec<End>,
    /// The prefilter's lanes' places, before they join `ends`.
    pub(super) spill: [Vec<End>; 3],
    pub(super) walk: Walk,
    /// The lines handed to one analyzer.
    pub(super) lines: Vec<LineRef>,
}

thread_local! {
    pub(super) static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Entries a scratch buffer may keep between scans: a huge hostile body
/// must not pin its buffers in every thread that scanned it.
pub(super) const MAX_KEPT_ENTRIES: usize = 1 << 14;

impl Scratch {
    pub(super) fn trim(&mut self) {
        if self.ends.capacity() > MAX_KEPT_ENTRIES {
            self.ends = Vec::new();
        }
        for lane in &mut self.spill {
            if lane.capacity() > MAX_KEPT_ENTRIES {
                *lane = Vec::new();
            }
        }
        if self.walk.analyzer_lines.capacity() > MAX_KEPT_ENTRIES {
            self.walk.analyzer_lines = Vec::new();
        }
        if self.lines.capacity() > MAX_KEPT_ENTRIES {
            self.lines = Vec::new();
        }
        if self.walk.secret_lines.capacity() > MAX_KEPT_ENTRIES {
            self.walk.secret_lines = Vec::new();
        }
        if self.walk.lower.text.capacity() > MAX_KEPT_ENTRIES {
            self.walk.lower.text = String::new();
        }
    }
}

/// The state of one scan's walk over trigger hits.
pub(super) struct Walk {
    pub(super) cursor: LineCursor,
    /// The line whose candidates are being collected.
    pub(super) current: Option<LineRef>,
    /// Rules triggered on `current`.
    pub(super) candidates: u128,
    pub(super) lower: Lowered,
    /// Lines each analyzer was triggered on, tagged by analyzer index.
    pub(super) analyzer_lines: Vec<(u32, LineRef)>,
    pub(super) analyzer_last: [Option<usize>; 32],
    /// Starts of the lines a `secret` trigger hit, in order.
    pub(super) secret_lines: Vec<usize>,
    /// The body's structure, once a finding has needed it.
    pub(super) outline: Option<Outline>,
    /// The last lines confirmed (by start) and the rules confirmed there,
    /// so that looking back does not confirm a rule on a line twice.
    pub(super) recent: [(usize, u128); RECENT_LINES],
    pub(super) next_recent: usize,
}

/// Lines [`Walk::recent`] remembers.
pub(super) const RECENT_LINES: usize = 4;

impl Default for Walk {
    fn default() -> Walk {
        Walk {
            cursor: LineCursor::default(),
            current: None,
            candidates: 0,
            lower: Lowered::default(),
            analyzer_lines: Vec::new(),
            analyzer_last: [None; 32],
            secret_lines: Vec::new(),
            outline: None,
            recent: [(usize::MAX, 0); RECENT_LINES],
            next_recent: 0,
        }
    }
}

impl Walk {
    /// Back to the start of a scan, keeping the buffers.
    pub(super) fn reset(&mut self) {
        self.cursor = LineCursor::default();
        self.current = None;
        self.candidates = 0;
        self.lower.of = None;
        self.analyzer_lines.clear();
        self.analyzer_last = [None; 32];
        self.secret_lines.clear();
        self.outline = None;
        self.recent = [(usize::MAX, 0); RECENT_LINES];
    }
}

//! The progress of `pull` and `sync` on standard error, page by page: a bar
//! per peer on a terminal (indicatif), one plain line per page otherwise
//! (`pulled 1,200 packets, 3.40 MB from URL (page 3)`) — so logs and CI
//! output stay readable, and standard output keeps only the result (`--json`
//! stays valid JSON).

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex};

use ecp_node::federation::{ProgressHook, PullProgress};
use indicatif::{DecimalBytes, HumanCount, MultiProgress, ProgressBar, ProgressStyle};

use super::output::tell;

/// Where the progress goes: bars on a terminal, lines otherwise.
#[derive(Clone)]
pub(crate) struct Progress(Arc<Shown>);

enum Shown {
    /// One bar per peer, created at its first page.
    Bars {
        multi: MultiProgress,
        bars: Mutex<HashMap<String, ProgressBar>>,
    },
    Lines,
}

impl Progress {
    /// Bars when standard error is a terminal, lines otherwise.
    pub(crate) fn on_stderr() -> Progress {
        Progress(Arc::new(if std::io::stderr().is_terminal() {
            Shown::Bars { multi: MultiProgress::new(), bars: Mutex::new(HashMap::new()) }
        } else {
            Shown::Lines
        }))
    }

    /// The hook for the rounds' [`Context`](ecp_node::federation::Context).
    pub(crate) fn hook(&self) -> ProgressHook {
        let shown = self.clone();
        ProgressHook::new(move |p| shown.page(p))
    }

    fn page(&self, p: &PullProgress<'_>) {
        match &*self.0 {
            Shown::Lines => tell(format_args!("{}", line(p))),
            Shown::Bars { multi, bars } => {
                let mut bars = bars.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let bar = bars.entry(p.url.to_owned()).or_insert_with(|| new_bar(multi, p));
                if let Some(expected) = p.expected {
                    bar.set_length(as_u64(expected.max(p.packets)));
                }
                bar.set_position(as_u64(p.packets));
                bar.set_message(format!("{}, page {}", DecimalBytes(as_u64(p.bytes)), p.pages));
            }
        }
    }

    /// Draws the bars one last time and leaves them on the screen, before
    /// the result is printed.
    pub(crate) fn finish(&self) {
        if let Shown::Bars { bars, .. } = &*self.0 {
            let bars = bars.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for bar in bars.values() {
                bar.finish();
            }
        }
    }
}

/// A peer's bar: a bar when the manifest says how many skills a full pull
/// brings, a spinner for an incremental pull of unknown size.
fn new_bar(multi: &MultiProgress, p: &PullProgress<'_>) -> ProgressBar {
    let (bar, template) = match p.expected {
        Some(n) => {
            (ProgressBar::new(as_u64(n)), "{prefix} [{bar:30}] {human_pos}/{human_len} packets, {msg}")
        }
        None => (ProgressBar::new_spinner(), "{prefix} {spinner} {human_pos} packets, {msg}"),
    };
    // The templates are constants: a failure is a bug caught by the tests.
    let style = ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = multi.add(bar.with_style(style.progress_chars("=> ")));
    bar.set_prefix(format!("pull {}", p.url));
    bar
}

/// The plain line of one page.
fn line(p: &PullProgress<'_>) -> String {
    let of = p.expected.map_or_else(String::new, |n| format!(" of {}", HumanCount(as_u64(n))));
    format!(
        "pulled {}{of} packets, {} from {} (page {})",
        HumanCount(as_u64(p.packets)),
        DecimalBytes(as_u64(p.bytes)),
        p.url,
        p.pages
    )
}

fn as_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_counts_packets_and_bytes_with_separators() {
        let p = PullProgress {
            url: "http://127.0.0.1:1",
            pages: 3,
            packets: 1200,
            bytes: 3_400_000,
            expected: None,
        };
        assert_eq!(line(&p), "pulled 1,200 packets, 3.40 MB from http://127.0.0.1:1 (page 3)");
        let full = PullProgress { expected: Some(2000), ..p };
        assert_eq!(line(&full), "pulled 1,200 of 2,000 packets, 3.40 MB from http://127.0.0.1:1 (page 3)");
    }

    #[test]
    fn the_templates_parse() {
        for template in [
            "{prefix} [{bar:30}] {human_pos}/{human_len} packets, {msg}",
            "{prefix} {spinner} {human_pos} packets, {msg}",
        ] {
            assert!(ProgressStyle::with_template(template).is_ok(), "{template}");
        }
    }
}

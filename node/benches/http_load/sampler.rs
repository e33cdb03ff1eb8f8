//! The `/proc` sampler: the node's resident memory (VmRSS, sampled in a
//! thread, and VmHWM), and where CPU time went during a measurement — the
//! node, this load client, every other process, the hypervisor's steal.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Kernel clock ticks per second for `/proc/<pid>/stat` (USER_HZ, 100 on Linux).
const CLOCK_TICKS_PER_SEC: f64 = 100.0;
/// How often the node's VmRSS is sampled during a case.
const RSS_EVERY: Duration = Duration::from_millis(50);

/// `VmRSS` and `VmHWM` of a process, in KiB.
pub(crate) fn memory_kib(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// User plus system CPU time a process has used, in seconds.
fn cpu_secs(pid: &str) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line; 12th and 13th after the name.
    (ticks(11) + ticks(12)) as f64 / CLOCK_TICKS_PER_SEC
}

/// Samples the node's VmRSS in a thread until dropped; keeps the highest.
pub(crate) struct RssSampler {
    stop: Arc<AtomicBool>,
    max_kib: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    pub(crate) fn start(pid: u32) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let max_kib = Arc::new(AtomicU64::new(memory_kib(pid).0));
        let thread = {
            let (stop, max_kib) = (Arc::clone(&stop), Arc::clone(&max_kib));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    max_kib.fetch_max(memory_kib(pid).0, Ordering::Relaxed);
                    std::thread::sleep(RSS_EVERY);
                }
            })
        };
        RssSampler { stop, max_kib, thread: Some(thread) }
    }

    /// Stops sampling; the highest VmRSS seen, in KiB.
    pub(crate) fn finish(mut self) -> u64 {
        self.stop_thread();
        self.max_kib.load(Ordering::Relaxed)
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Machine-wide CPU seconds from `/proc/stat`: `(busy, steal)`, where busy
/// is the user, nice and system time of every process on every core.
fn machine_cpu_secs() -> (f64, f64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = text
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| ticks.get(i).copied().unwrap_or(0) as f64 / CLOCK_TICKS_PER_SEC;
    // user nice system idle iowait irq softirq steal: interrupt time is left
    // out, as the kernel spends it for whichever process the packets are for.
    (at(0) + at(1) + at(2), at(7))
}

/// Where CPU time went during a measurement, in seconds.
#[derive(Clone, Copy, Default)]
pub(crate) struct CpuUse {
    /// The node process.
    pub(crate) node: f64,
    /// This process: the load client.
    pub(crate) client: f64,
    /// Every other process on the machine (other builds on a shared machine).
    pub(crate) others: f64,
    /// Time the hypervisor gave to other machines.
    pub(crate) steal: f64,
}

/// Reads [`CpuUse`] between [`CpuMeter::begin`] and [`CpuMeter::end`].
pub(crate) struct CpuMeter {
    node_pid: String,
    start: CpuUse,
    machine: f64,
}

impl CpuMeter {
    pub(crate) fn begin(node_pid: u32) -> CpuMeter {
        let node_pid = node_pid.to_string();
        let (machine, steal) = machine_cpu_secs();
        let start = CpuUse { node: cpu_secs(&node_pid), client: cpu_secs("self"), others: 0.0, steal };
        CpuMeter { node_pid, start, machine }
    }

    pub(crate) fn end(&self) -> CpuUse {
        let (machine, steal) = machine_cpu_secs();
        let node = cpu_secs(&self.node_pid) - self.start.node;
        let client = cpu_secs("self") - self.start.client;
        let others = (machine - self.machine - node - client).max(0.0);
        CpuUse { node, client, others, steal: steal - self.start.steal }
    }
}

//! The report: a line per load and per case as they finish, then markdown
//! tables of every figure and, in a real run, each goal of the issue with
//! PASS or MISS.

use std::fmt::Write as _;

use crate::cases::{Case, CaseResult};
use crate::load::LoadResult;
use crate::skills::BATCH;
use crate::{Phase, Settings};

/// The Go reference figures quoted by the issue, printed under the table.
const GO_REFERENCE: &str = "Go reference (issue): 60 and 45 req/s at 1,000 skills, 5 and 4 req/s at \
                            10,000, 28 s to load 10,000, 1.1–1.5 GB RSS.";

/// Prints one case's figures.
pub(crate) fn print_case(result: &CaseResult) {
    println!(
        "{:<20} {:>9.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  {:>9} B/resp  \
             CPU µs/req node {:>6.1} client {:>6.1}  others {:.2} cores  steal {:.2} cores  \
             node RSS max {:.1} MB{}",
        result.case.label(),
        result.rate(),
        result.quantile_ms(0.5),
        result.quantile_ms(0.99),
        result.quantile_ms(1.0),
        result.bytes_per_response(),
        result.us_per_request(result.cpu.node),
        result.us_per_request(result.cpu.client),
        result.cores(result.cpu.others),
        result.cores(result.cpu.steal),
        mib(result.rss_max_kib),
        if result.errors > 0 { format!("  ERRORS {}", result.errors) } else { String::new() },
    );
}

/// Prints one load's figures.
pub(crate) fn print_load(load: &LoadResult) {
    println!(
        "load: {} skills in {} batches of {BATCH}: {:.0} ms, {:.0} skills/s; batch mean {:.1} ms \
         (first ten) / {:.1} ms (last ten), slowest {:.1} ms; {:.1} MB sent; CPU: node {:.2} s, \
         other processes {:.2} s, steal {:.2} s; node RSS max {:.1} MB",
        load.skills,
        load.skills.div_ceil(BATCH),
        load.elapsed.as_secs_f64() * 1e3,
        load.skills as f64 / load.elapsed.as_secs_f64(),
        load.mean_of_ten_ms(false),
        load.mean_of_ten_ms(true),
        load.slowest_batch().as_secs_f64() * 1e3,
        load.bytes as f64 / 1e6,
        load.cpu.node,
        load.cpu.others,
        load.cpu.steal,
        mib(load.rss_max_kib),
    );
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// One goal of the issue: a figure, its target, whether it was met.
struct Goal {
    what: String,
    measured: String,
    target: String,
    met: Option<bool>,
}

/// The result of `c` on `p`, unless it had errors (then its figures mean nothing).
fn case(p: &Phase, c: Case) -> Option<&CaseResult> {
    p.cases.iter().find(|r| r.case == c).filter(|r| r.errors == 0)
}

fn goals(phases: &[Phase]) -> Vec<Goal> {
    let mut goals = Vec::new();
    for p in phases {
        let n = p.skills;
        let rate = |c: Case, min: f64, goals: &mut Vec<Goal>| {
            let r = case(p, c);
            goals.push(Goal {
                what: format!("{n} skills: {} req/s", c.label()),
                measured: r.map_or("errors".into(), |r| format!("{:.0}", r.rate())),
                target: format!("≥ {min:.0}"),
                met: Some(r.is_some_and(|r| r.rate() >= min)),
            });
        };
        if n == 1_000 {
            rate(Case::Manifest, 10_000.0, &mut goals);
            let r = case(p, Case::Manifest);
            goals.push(Goal {
                what: format!("{n} skills: {} p99", Case::Manifest.label()),
                measured: r.map_or("errors".into(), |r| format!("{:.2} ms", r.quantile_ms(0.99))),
                target: "< 10 ms".into(),
                met: Some(r.is_some_and(|r| r.quantile_ms(0.99) < 10.0)),
            });
            rate(Case::Skills, 500.0, &mut goals);
            rate(Case::NotModified, 20_000.0, &mut goals);
        }
        if n == 10_000 {
            rate(Case::Skills, 50.0, &mut goals);
            rate(Case::SinceZero, 50.0, &mut goals);
            let r = case(p, Case::SinceZero);
            goals.push(Goal {
                what: format!("{n} skills: node RSS during {}", Case::SinceZero.label()),
                measured: r.map_or("errors".into(), |r| format!("{:.1} MB", r.rss_max_kib as f64 / 1024.0)),
                target: "≤ 100 MB".into(),
                met: Some(r.is_some_and(|r| r.rss_max_kib as f64 / 1024.0 <= 100.0)),
            });
            rate(Case::NotModified, 20_000.0, &mut goals);
            let secs = p.load.elapsed.as_secs_f64();
            goals.push(Goal {
                what: format!("load {n} skills in batches of {BATCH}"),
                measured: format!("{secs:.2} s ({:.0} skills/s)", n as f64 / secs),
                target: "≤ 2 s".into(),
                met: Some(secs <= 2.0),
            });
            let mb = p.peak_kib as f64 / 1024.0;
            goals.push(Goal {
                what: format!("{n} skills: node peak RSS (VmHWM) under load"),
                measured: format!("{mb:.1} MB"),
                target: "≤ 100 MB".into(),
                met: Some(mb <= 100.0),
            });
            let mb = p.burst.peak_kib as f64 / 1024.0;
            goals.push(Goal {
                what: format!("{n} skills: node peak RSS after a push and a burst of GET /ecp/skills"),
                measured: format!("{mb:.1} MB"),
                target: "≤ 100 MB".into(),
                met: Some(mb <= 100.0),
            });
        }
    }
    goals
}

pub(crate) fn report(settings: &Settings, phases: &[Phase]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### http_load: {} connections, {} s per case, client threads {}\n",
        settings.connections,
        settings.secs.as_secs_f64(),
        settings.client_threads
    );
    let _ = writeln!(
        out,
        "| skills | case | req/s | p50 ms | p99 ms | max ms | bytes/resp | node CPU µs/req | \
         client CPU µs/req | others' CPU, cores | node RSS max MB |"
    );
    let _ = writeln!(out, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in phases {
        for r in &p.cases {
            let _ = writeln!(
                out,
                "| {} | {}{} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {:.1} | {:.1} | {:.2} | {:.1} |",
                r.skills,
                r.case.label(),
                if r.errors > 0 { format!(" ({} errors)", r.errors) } else { String::new() },
                r.rate(),
                r.quantile_ms(0.5),
                r.quantile_ms(0.99),
                r.quantile_ms(1.0),
                r.bytes_per_response(),
                r.us_per_request(r.cpu.node),
                r.us_per_request(r.cpu.client),
                r.cores(r.cpu.others + r.cpu.steal),
                mib(r.rss_max_kib),
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| skills | load time | skills/s | slowest batch | node CPU | others' CPU | node peak RSS (VmHWM) | \
         VmHWM after push + burst | burst time |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in phases {
        let _ = writeln!(
            out,
            "| {} | {:.0} ms | {:.0} | {:.1} ms | {:.2} s | {:.2} s | {:.1} MB | {:.1} MB | {:.0} ms |",
            p.skills,
            p.load.elapsed.as_secs_f64() * 1e3,
            p.skills as f64 / p.load.elapsed.as_secs_f64(),
            p.load.slowest_batch().as_secs_f64() * 1e3,
            p.load.cpu.node,
            p.load.cpu.others + p.load.cpu.steal,
            mib(p.peak_kib),
            mib(p.burst.peak_kib),
            p.burst.elapsed.as_secs_f64() * 1e3,
        );
    }
    if settings.judge {
        let _ = writeln!(out, "\n| goal | measured | target | result |");
        let _ = writeln!(out, "|---|---:|---:|---|");
        for g in goals(phases) {
            let result = match g.met {
                Some(true) => "PASS",
                Some(false) => "MISS",
                None => "-",
            };
            let _ = writeln!(out, "| {} | {} | {} | {result} |", g.what, g.measured, g.target);
        }
        let _ = writeln!(out, "\n{GO_REFERENCE}");
    }
    out
}

/// Prints how to check the figures with `wrk`, when it is installed.
pub(crate) fn wrk_hint() {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("wrk").is_file()));
    if on_path {
        println!(
            "wrk is installed; for an independent check, start a node and load it, then e.g.:\n  \
             ecp-node --data /tmp/ecp-wrk serve --listen 127.0.0.1:7327 &\n  \
             wrk -t1 -c16 -d5s --latency http://127.0.0.1:7327/ecp/manifest\n  \
             wrk -t1 -c16 -d5s --latency http://127.0.0.1:7327/ecp/skills\n  \
             wrk -t1 -c16 -d5s --latency -H 'If-None-Match: <ETag of /ecp/skills>' \
             http://127.0.0.1:7327/ecp/skills"
        );
    }
}

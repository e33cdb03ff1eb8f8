//! Benchmark `merge`: decode and merge a 10,000-packet update of realistic
//! ~1.5 KB skill bodies with the default policy (issue 2's goal: ≥ 150,000
//! packets/s including JSON decoding, on a 2-core machine).
//!
//! Run with `cargo bench -p ecp-protocol --bench merge`.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ecp_protocol::packet::Origin;
use ecp_protocol::{
    KnowledgeUpdate, MergeContext, SkillPacket, StandardPolicy, StoredSkill, Timestamp, merge_knowledge,
};

const PACKETS: usize = 10_000;

const TOOLS: &[&str] = &["git", "cargo", "npm", "docker", "kubectl", "psql", "make", "pytest"];
const TOPICS: &[&str] = &["flaky tests", "slow builds", "memory leaks", "merge conflicts", "schema drift"];

/// A realistic skill body of about 1.5 KB, different for every `i`.
fn skill_body(i: usize) -> String {
    let name = format!("skill-{i:05}");
    let tool = TOOLS[i % TOOLS.len()];
    let topic = TOPICS[i % TOPICS.len()];
    let mut text = format!(
        "---\nname: {name}\ndescription: Diagnose {topic} with {tool}, step {i}\ntags: [debugging, {tool}]\n---\n\
         # {name}\n\n## When to Use\nUse this when a teammate reports {topic} and the usual quick checks did not \
         explain it. It assumes a clean checkout and a working `{tool}` on the PATH.\n\n## Steps\n"
    );
    for step in 1..=5 {
        text.push_str(&format!(
            "{step}. Run `{tool}` with verbose output for case {i}.{step}, save the log under ./logs/{name}-{step}.txt \
             and compare it with the previous run; note every difference in timing or ordering.\n"
        ));
    }
    text.push_str(
        "\n## Verification\nThe problem reproduces before the fix and no longer after it; the logs of both runs \
         are attached to the ticket together with the exact commands that were used.\n",
    );
    text
}

fn update_json() -> Vec<u8> {
    let origin = Origin::new("bench-origin", "bench-user", "linux/amd64", "1.0.0");
    let created = Timestamp::parse("2026-11-20T10:00:00Z").unwrap();
    let skills: Vec<SkillPacket> = (0..PACKETS)
        .map(|i| {
            SkillPacket::new(
                &origin,
                &format!("skill-{i:05}"),
                "Diagnose a problem",
                &skill_body(i),
                0.9,
                created,
            )
            .with_tags(["debugging"])
            .with_patterns(["workflow:debug:bisect"])
        })
        .collect();
    let update = KnowledgeUpdate {
        id: "bench".into(),
        peer_instance: "bench-origin".into(),
        skills,
        ..Default::default()
    };
    serde_json::to_vec(&update).unwrap()
}

fn ctx() -> MergeContext<'static> {
    MergeContext {
        local_instance: "bench-node",
        sender: "bench-origin",
        trust: 0.6,
        now: Timestamp::parse("2026-11-22T10:00:00Z").unwrap(),
    }
}

fn bench_merge(c: &mut Criterion) {
    let json = update_json();
    let store: HashMap<String, StoredSkill> = HashMap::new();
    let policy = StandardPolicy::default();
    let ctx = ctx();
    let check = merge_knowledge(KnowledgeUpdate::from_json(&json).unwrap(), &store, &policy, &ctx);
    assert_eq!(
        check.result.new_skills as usize,
        PACKETS,
        "every bench packet must pass: {:?}",
        &check.result.conflicts[..check.result.conflicts.len().min(3)]
    );
    eprintln!(
        "update: {PACKETS} packets, {:.1} MB of JSON, average body {} bytes",
        json.len() as f64 / 1e6,
        check.decisions.iter().map(|d| d.packet.skill_body.len()).sum::<usize>() / PACKETS
    );

    let mut group = c.benchmark_group("merge");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(PACKETS as u64));
    group.bench_function("decode_and_merge_10k", |b| {
        b.iter(|| {
            let update = KnowledgeUpdate::from_json(black_box(&json)).unwrap();
            black_box(merge_knowledge(update, &store, &policy, &ctx))
        })
    });
    group.bench_function("decode_only_10k", |b| {
        b.iter(|| black_box(KnowledgeUpdate::from_json(black_box(&json)).unwrap()))
    });
    group.bench_function("merge_only_10k", |b| {
        b.iter_batched(
            || KnowledgeUpdate::from_json(&json).unwrap(),
            |update| black_box(merge_knowledge(update, &store, &policy, &ctx)),
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_merge);
criterion_main!(benches);

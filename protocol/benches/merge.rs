//! Benchmark `merge`: decode and merge a 10,000-packet update of realistic
//! ~1.5 KB skill bodies with the default policy (issue 2's goal: ≥ 150,000
//! packets/s including JSON decoding, on a 2-core machine), and the same
//! update with every packet a three-file bundle (issue 26), and with every
//! packet signed by its origin (issue 21: Ed25519 verification per packet);
//! at the end, all three as packets/s on one line.
//!
//! Run with `cargo bench -p ecp-protocol --bench merge`.

mod common;

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use common::{PACKETS, bundle_update_json, update_json};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ecp_protocol::{
    KnowledgeUpdate, MergeContext, MergeOutcome, StandardPolicy, StoredSkill, Timestamp, merge_knowledge,
};

fn ctx() -> MergeContext<'static> {
    MergeContext {
        local_instance: "bench-node",
        sender: "bench-origin",
        trust: 0.6,
        now: Timestamp::parse("2026-11-22T10:00:00Z").unwrap(),
        sender_kind: ecp_protocol::merge::SenderKind::Current,
    }
}

/// Merges `json` once and checks that every packet was installed: a bench
/// of refusals would measure the wrong path.
fn merge_every_packet(
    json: &[u8],
    store: &HashMap<String, StoredSkill>,
    policy: &StandardPolicy,
    ctx: &MergeContext<'_>,
) -> MergeOutcome {
    let check = merge_knowledge(KnowledgeUpdate::from_json(json).unwrap(), store, policy, ctx);
    assert_eq!(
        check.result.new_skills as usize,
        PACKETS,
        "every bench packet must pass: {:?}",
        &check.result.conflicts[..check.result.conflicts.len().min(3)]
    );
    check
}

fn bench_merge(c: &mut Criterion) {
    let json = update_json();
    let (store, policy, ctx) = (HashMap::new(), StandardPolicy::default(), ctx());
    let check = merge_every_packet(&json, &store, &policy, &ctx);
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

fn bench_bundles(c: &mut Criterion) {
    let json = bundle_update_json();
    let (store, policy, ctx) = (HashMap::new(), StandardPolicy::default(), ctx());
    let check = merge_every_packet(&json, &store, &policy, &ctx);
    assert!(check.decisions.iter().all(|d| d.packet.files.len() == 3));
    eprintln!("bundle update: {PACKETS} bundles of 3 files, {:.1} MB of JSON", json.len() as f64 / 1e6);
    let mut group = c.benchmark_group("merge");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(PACKETS as u64));
    group.bench_function("decode_and_merge_10k_bundles", |b| {
        b.iter(|| {
            let update = KnowledgeUpdate::from_json(black_box(&json)).unwrap();
            black_box(merge_knowledge(update, &store, &policy, &ctx))
        })
    });
    group.finish();
}

/// [`update_json`] with every packet signed by its origin (`SPEC.md` §13).
fn signed_update_json() -> Vec<u8> {
    let key = ecp_protocol::identity::NodeKey::from_seed(&[7; 32]);
    let mut update = KnowledgeUpdate::from_json(&update_json()).unwrap();
    for p in &mut update.skills {
        let instance = p.origin_instance.clone();
        p.origin_signature = Some(key.sign(p, &instance));
    }
    serde_json::to_vec(&update).unwrap()
}

fn bench_signed(c: &mut Criterion) {
    let json = signed_update_json();
    let (store, policy, ctx) = (HashMap::new(), StandardPolicy::default(), ctx());
    let check = merge_every_packet(&json, &store, &policy, &ctx);
    assert!(check.decisions.iter().all(|d| d.packet.origin_signature.is_some()));
    let mut group = c.benchmark_group("merge");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(PACKETS as u64));
    group.bench_function("decode_and_merge_10k_signed", |b| {
        b.iter(|| {
            let update = KnowledgeUpdate::from_json(black_box(&json)).unwrap();
            black_box(merge_knowledge(update, &store, &policy, &ctx))
        })
    });
    group.finish();
}

/// Decode + merge of the three updates side by side, as packets/s (the median
/// of a few runs each, interleaved so that both see the same machine):
/// the two figures the issues' goals name, on one line.
fn packets_per_second(_: &mut Criterion) {
    const RUNS: usize = 7;
    let (store, policy, ctx) = (HashMap::new(), StandardPolicy::default(), ctx());
    let updates = [update_json(), bundle_update_json(), signed_update_json()];
    let mut seconds = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..RUNS {
        for (json, times) in updates.iter().zip(&mut seconds) {
            let started = std::time::Instant::now();
            black_box(merge_every_packet(json, &store, &policy, &ctx));
            times.push(started.elapsed().as_secs_f64());
        }
    }
    let [single, bundles, signed] = seconds.map(|mut times| {
        times.sort_by(f64::total_cmp);
        PACKETS as f64 / times[RUNS / 2]
    });
    println!(
        "decode + merge of {PACKETS} packets: single-file {single:.0} packets/s (goal >= 150000), \
         three-file bundles {bundles:.0} packets/s ({:.0} % of single-file), signed {signed:.0} packets/s \
         ({:.0} % of unsigned)",
        100.0 * bundles / single,
        100.0 * signed / single
    );
}

criterion_group!(benches, bench_merge, bench_bundles, bench_signed, packets_per_second);
criterion_main!(benches);

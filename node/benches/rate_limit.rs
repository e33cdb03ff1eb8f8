//! Build or buy: the node's per-client rate limiter (`http::rate_limit`,
//! governor's limiter over a bounded store of ours, behind the node's
//! loopback and /64 policy) against the `governor` crate's own keyed
//! limiters, on the same check pattern: what the store and policy cost.
//!
//! Run with `cargo bench -p ecp-node --bench rate_limit`.
//!
//! Each group runs the three limiters one after the other in one run, so the
//! noise of a shared machine falls on all of them:
//! - `ours`: [`ClientLimiter::check`], as the middleware calls it;
//! - `governor-dashmap`: `RateLimiter::keyed` (its default, sharded store);
//! - `governor-hashmap`: `RateLimiter::hashmap` (one mutex, as our store).
//!
//! The hand-written limiter that `ours` replaced was measured beside them
//! once; the figures are in the `http::rate_limit` module doc.
//!
//! Workloads, one check per element:
//! - `many-clients`: 10,000 IPv4 clients in turn, each well under its limit;
//! - `one-hot-client`: one address far over its limit (every check refused),
//!   and the same with 1,000 other clients tracked;
//! - `ipv6-clients`: 10,000 IPv6 clients, keyed by /64 as the node keys them.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::num::NonZeroU32;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ecp_node::config::ClientRateLimit;
use ecp_node::http::rate_limit::ClientLimiter;
use governor::{Quota, RateLimiter};

/// The limit both sides enforce: 600 a minute, bursts of 100.
const PER_MINUTE: u32 = 600;
const BURST: u32 = 100;

fn ours() -> std::sync::Arc<ClientLimiter> {
    ClientLimiter::new(ClientRateLimit { per_minute: PER_MINUTE, burst: BURST, loopback: false })
        .expect("limit on")
}

fn quota() -> Quota {
    let nonzero = |n| NonZeroU32::new(n).expect("not zero");
    Quota::per_minute(nonzero(PER_MINUTE)).allow_burst(nonzero(BURST))
}

/// The key the node uses for a client: its IPv4 address, or its IPv6 /64
/// (`rate_limit::client_key`), so that governor keys by the same thing.
fn key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        v4 => v4,
    }
}

fn v4_clients(n: usize) -> Vec<IpAddr> {
    (0..n).map(|i| IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i as u32))).collect()
}

fn v6_clients(n: usize) -> Vec<IpAddr> {
    (0..n).map(|i| IpAddr::V6(Ipv6Addr::from(0x2001_0db8u128 << 96 | (i as u128) << 64 | 7))).collect()
}

/// One group: every limiter checks `traffic` in order, after `warm` checks
/// that fill its table.
fn compare(c: &mut Criterion, name: &str, warm: &[IpAddr], traffic: &[IpAddr]) {
    let mut group = c.benchmark_group(format!("rate-limit/{name}"));
    group.throughput(Throughput::Elements(traffic.len() as u64));

    let limiter = ours();
    warm.iter().for_each(|&ip| _ = limiter.check(ip, false));
    group.bench_function(BenchmarkId::from_parameter("ours"), |b| {
        b.iter(|| traffic.iter().filter(|&&ip| limiter.check(black_box(ip), false).is_ok()).count())
    });

    let dashmap = RateLimiter::keyed(quota());
    warm.iter().for_each(|&ip| _ = dashmap.check_key(&key(ip)));
    group.bench_function(BenchmarkId::from_parameter("governor-dashmap"), |b| {
        b.iter(|| traffic.iter().filter(|&&ip| dashmap.check_key(&key(black_box(ip))).is_ok()).count())
    });

    let hashmap = RateLimiter::hashmap(quota());
    warm.iter().for_each(|&ip| _ = hashmap.check_key(&key(ip)));
    group.bench_function(BenchmarkId::from_parameter("governor-hashmap"), |b| {
        b.iter(|| traffic.iter().filter(|&&ip| hashmap.check_key(&key(black_box(ip))).is_ok()).count())
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let many = v4_clients(10_000);
    compare(c, "many-clients", &many, &many);
    let hot = vec![IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)); 10_000];
    compare(c, "one-hot-client", &hot, &hot);
    let mut crowd = v4_clients(1_000);
    crowd.extend_from_slice(&hot);
    compare(c, "one-hot-client-among-1000", &crowd, &hot);
    let v6 = v6_clients(10_000);
    compare(c, "ipv6-clients", &v6, &v6);
}

criterion_group!(benches, bench);
criterion_main!(benches);

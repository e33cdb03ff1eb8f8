//! Throughput of the safety scanner, in bytes per second.
//!
//! Run with `cargo bench -p ecp-protocol --bench scan`.
//!
//! - `benign-corpus`: every benign corpus skill concatenated into one body.
//! - `merge-10k-bodies`: a realistic ~1.5 KB benign skill, 10,000 times, one
//!   body per `scan` call: how merge uses the scanner on a large update.
//! - `merge-10k-bodies-all-cores`: the same bodies split into one chunk per
//!   core, as merge scans a large update (`par.rs`): the throughput a node
//!   gets, where `merge-10k-bodies` is the throughput of one core.
//! - `malicious-corpus`: every malicious corpus skill concatenated, so most
//!   lines trigger rules and confirmation work dominates.
//! - `bundle-5mb`: `scan_bundle` on a clean generated skill folder of 5 MB
//!   and about 80 files (schemas, references, scripts, fonts, a `.tar.gz`
//!   of components walked through), in bytes of the bundle as held.

mod common;

use std::hint::black_box;
use std::time::Duration;

use std::collections::HashMap;

use common::corpus;
use common::generated_bundle::{SKILL_MD, generated_bundle};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ecp_protocol::bundle::{BundleLimits, BundleManifest, scan_bundle};
use ecp_protocol::scan::Scanner;

/// A typical skill body: prose, shell and SQL, a token in a header, `sudo`,
/// a migration rollback. About 1.5 KB, pure ASCII.
const TYPICAL_SKILL: &str = r#"---
name: orders-service-local-setup
description: Run the orders service locally against Postgres and call its API.
---

# Orders service: local setup

## When to Use
You need the orders service running on your machine to reproduce a bug or
try a schema change before opening a pull request.

## Steps
1. Install the system packages:
   ```bash
   sudo apt install -y postgresql-client libpq-dev
   ```
2. Start Postgres and apply migrations:
   ```bash
   docker compose up -d postgres
   DATABASE_URL=postgres://localhost/orders_dev sqlx migrate run
   ```
3. Run the service and check it answers:
   ```bash
   cargo run -p orders -- --port 8080 &
   curl -s -H "Authorization: Bearer $ORDERS_API_TOKEN" http://localhost:8080/v1/orders | jq '.items | length'
   ```
4. If a migration must be undone, the down file drops what the up file made:
   ```sql
   DROP INDEX IF EXISTS orders_customer_idx;
   DROP TABLE IF EXISTS order_notes;
   ```
5. Rebase your branch before pushing and update it with
   `git push --force-with-lease origin feature/order-notes`.

## Troubleshooting
- `connection refused`: Postgres is still starting; wait for `docker compose ps`
  to report it healthy and retry.
- `relation "orders" does not exist`: the migrations did not run against this
  database; check `DATABASE_URL` and run them again.

## Verification
- `cargo test -p orders` passes.
- The API returns the seeded orders; ignore whitespace-only diffs in fixtures.
- `rm -rf ./target/tmp` leaves no stray files behind after the run.
"#;

fn bench(c: &mut Criterion) {
    let scanner = Scanner::standard();
    let mut group = c.benchmark_group("scan");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));

    let benign = corpus("benign");
    group.throughput(Throughput::Bytes(benign.len() as u64));
    group.bench_function("benign-corpus", |b| b.iter(|| scanner.scan(black_box(&benign))));

    // Distinct names so every body is its own string, as in a real update.
    let bodies: Vec<String> = (0..10_000)
        .map(|i| {
            TYPICAL_SKILL.replacen("orders-service-local-setup", &format!("orders-service-setup-{i:05}"), 1)
        })
        .collect();
    let total: usize = bodies.iter().map(String::len).sum();
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function("merge-10k-bodies", |b| {
        b.iter(|| {
            let mut blocked = 0usize;
            for body in &bodies {
                blocked += usize::from(
                    scanner.scan(black_box(body)).is_blocked(ecp_protocol::scan::DEFAULT_THRESHOLD),
                );
            }
            blocked
        })
    });

    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let chunk = bodies.len().div_ceil(cores);
    group.bench_function("merge-10k-bodies-all-cores", |b| {
        b.iter(|| {
            std::thread::scope(|scope| {
                let workers: Vec<_> = bodies
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .filter(|body| {
                                    scanner
                                        .scan(black_box(body))
                                        .is_blocked(ecp_protocol::scan::DEFAULT_THRESHOLD)
                                })
                                .count()
                        })
                    })
                    .collect();
                workers.into_iter().map(|w| w.join().expect("scan worker")).sum::<usize>()
            })
        })
    });

    let malicious = corpus("malicious");
    group.throughput(Throughput::Bytes(malicious.len() as u64));
    group.bench_function("malicious-corpus", |b| b.iter(|| scanner.scan(black_box(&malicious))));

    let files = generated_bundle(5 << 20);
    let limits = BundleLimits::default();
    let companions = files.iter().map(|(p, b)| (p.as_str(), b.as_slice(), false));
    let manifest = BundleManifest::for_skill(SKILL_MD, companions, &limits).expect("a clean bundle");
    let blobs: HashMap<String, &[u8]> =
        files.iter().map(|(_, b)| (ecp_protocol::integrity::sha256_hex(b), b.as_slice())).collect();
    let policy = ecp_protocol::StandardPolicy::default();
    group.throughput(Throughput::Bytes(manifest.total_bytes()));
    group.bench_function("bundle-5mb", |b| {
        b.iter(|| scan_bundle(black_box(&manifest), SKILL_MD, |sha| blobs.get(sha).copied(), &policy))
    });

    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

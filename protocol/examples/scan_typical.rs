//! Scans 2,000 variants of the scan bench's typical body (`TYPICAL_SKILL`
//! of `benches/scan.rs`, names varied as in `typical-10k`), or the first
//! `N` of them: the harness of the instruction counts in
//! `benches/README.md`. `benches/instructions.sh` runs it under cachegrind
//! with `N=2000` and `N=0` and prints the difference per body, which
//! leaves out building the scanner and the first scan's lazy statics.
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
fn main() {
    let scanner = ecp_protocol::scan::Scanner::standard();
    let bodies: Vec<String> = (0..2_000)
        .map(|i| {
            TYPICAL_SKILL.replacen("orders-service-local-setup", &format!("orders-service-setup-{i:05}"), 1)
        })
        .collect();
    let _ = scanner.scan(&bodies[0]);
    let count: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
    let n: usize = bodies.iter().take(count).map(|b| scanner.scan(b).findings.len()).sum();
    println!("{n}");
}

//! Scans 2,000 variants of the scan bench's typical body (`typical_skill.md`
//! beside `benches/scan.rs`, names varied as in `typical-10k`), or the first
//! `N` of them: the harness of the instruction counts in
//! `benches/README.md`. `benches/instructions.sh` runs it under cachegrind
//! with `N=2000` and `N=0` and prints the difference per body, which
//! leaves out building the scanner and the first scan's lazy statics.
const TYPICAL_SKILL: &str = include_str!("../benches/typical_skill.md");
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

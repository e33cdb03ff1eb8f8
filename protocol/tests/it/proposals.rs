//! The proposal vectors of `SPEC.md` §17 (`proposals.json`, made by
//! `generate_proposals.py`) checked against [`ecp_protocol::proposal`].

use ecp_protocol::merge::SenderKind;
use ecp_protocol::proposal::{self, Proposal};
use ecp_protocol::{MergeContext, StandardPolicy, Timestamp};

use crate::spec_vectors::{Failures, cases, str_of};

const FILE: &str = "proposals.json";

#[test]
fn proposal_vectors() {
    let mut failures = Failures::new(FILE);
    for (i, case) in cases(FILE).iter().enumerate() {
        let input = &case["input"];
        let expected = &case["expected"];
        let p: Proposal = serde_json::from_value(input["proposal"].clone()).expect("a proposal");
        let id = proposal::proposal_id(&p.derived_from, &p.packet.integrity_hash);
        failures.check_eq(i, case, "id", id.as_str(), str_of(expected, "id"));
        let now = Timestamp::parse(str_of(input, "now")).expect("a time");
        let ctx = MergeContext {
            local_instance: str_of(input, "local_instance"),
            sender: str_of(input, "sender"),
            trust: input["trust"].as_f64().expect("a trust"),
            sender_kind: SenderKind::Current,
            now,
        };
        let got = proposal::check(&p, &StandardPolicy::default(), &ctx);
        match (str_of(expected, "outcome"), got) {
            ("ok", Ok(())) => {}
            ("refused", Err(e)) => {
                failures.check_eq(i, case, "code", e.code(), str_of(expected, "code"));
                if let Some(prefix) = expected["reason_prefix"].as_str()
                    && !e.to_string().starts_with(prefix)
                {
                    failures.add(i, case, format!("reason {e:?} does not start with {prefix:?}"));
                }
            }
            (want, got) => failures.add(i, case, format!("expected {want}, got {got:?}")),
        }
    }
    failures.finish();
}

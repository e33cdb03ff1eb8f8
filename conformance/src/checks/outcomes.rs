//! OUT: outcome evidence (SPEC §16): a packet carrying `outcomes` claims
//! is merged as it would be without them. A node that does not implement
//! §16 ignores the member as any unknown one (§2.4), so the check holds it
//! and every other node to the same: a packet is never refused, nor its
//! skill changed, for carrying evidence.

use serde_json::json;

use crate::check::{
    Check, Ctx, Level::*, Needs, Profile::*, Verdict, count, counts_text, ensure, fail, served,
};
use crate::packets;

pub(crate) static CHECKS: &[Check] = &[Check {
    id: "OUT-001",
    level: Must,
    profile: Ecp11,
    spec: "§16.1, §16.2",
    title: "Push a packet carrying outcome claims",
    requirement: "The packet MUST be installed (new 1) and served; a node may serve claims of its own on it, \
                  never refuse it for them (a node that rebuilds frontmatter, as the Go node does, serves \
                  another hash: PUSH-017 judges that, under ecp-1.2).",
    needs: Needs::Nothing,
    run: out_001,
}];

fn out_001(cx: &mut Ctx<'_>) -> Verdict {
    let name = cx.name("out001");
    let mut packet = cx.good(&name);
    packet["outcomes"] = json!([{
        "observer": cx.peer(), "uses": 5, "successes": 4, "failures": 1, "streak": 2,
        "at": packets::time_from_now(-60),
    }]);
    let (ex, result) = cx.push(&cx.update(vec![packet]))?;
    ensure(count(&result, "newSkills") == 1 && count(&result, "rejectedSkills") == 0, || {
        fail(format!("expected new 1, got {}", counts_text(&result)))
            .on(&ex)
            .show("conflicts", &result["conflicts"])
    })?;
    let (lex, listing) = cx.listing()?;
    let held =
        served(&listing, &name).ok_or_else(|| fail(format!("{name}, installed, is not served")).on(&lex))?;
    let carried = held["outcomes"].as_array().map_or(0, Vec::len);
    Ok(format!("installed and served; the served packet carries {carried} claims"))
}

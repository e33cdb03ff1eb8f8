//! The skills the bench pushes: realistic, unique and harmless, in
//! `POST /ecp/skills` bodies of [`BATCH`] packets.

use std::fmt::Write as _;

use ecp_protocol::{KnowledgeUpdate, Origin, PeerStats, SkillPacket, Timestamp};
use hyper::body::Bytes;

/// Skills per `POST /ecp/skills`, as the issue asks.
pub(crate) const BATCH: usize = 100;

/// Realistic, unique, harmless skills: a SKILL.md of about 1.7 KB each, with
/// frontmatter (`name` = `skillName`, `description`, `tags`).
pub(crate) fn skill_packets(indices: std::ops::Range<usize>) -> Vec<SkillPacket> {
    const AREAS: [&str; 8] = ["rust", "python", "go", "web", "data", "mobile", "infra", "docs"];
    const SUBJECTS: [(&str, &str); 10] = [
        ("release notes", "release-notes"),
        ("dependency updates", "dependencies"),
        ("test coverage", "testing"),
        ("error messages", "errors"),
        ("log output", "logging"),
        ("API reference pages", "api-docs"),
        ("build caching", "builds"),
        ("code review requests", "review"),
        ("onboarding guide", "onboarding"),
        ("configuration files", "config"),
    ];
    const VERBS: [&str; 5] = ["Tidy", "Review", "Update", "Audit", "Plan"];
    let origin = Origin::new("http-load-bench", "bench-user", "linux/amd64", env!("CARGO_PKG_VERSION"));
    let created_at = Timestamp::from_datetime(chrono::Utc::now() - chrono::Duration::minutes(5));
    indices
        .map(|i| {
            let area = AREAS[i % AREAS.len()];
            let (subject, tag) = SUBJECTS[(i / AREAS.len()) % SUBJECTS.len()];
            let verb = VERBS[(i / (AREAS.len() * SUBJECTS.len())) % VERBS.len()];
            let name = format!("{area}-{tag}-{verb}-{i:05}").to_lowercase();
            let description = format!(
                "{verb} the {subject} of a {area} project step by step, with checks before and after."
            );
            let body = skill_body(&name, &description, [area, tag, "playbook"], verb, subject, area, i);
            SkillPacket::new(&origin, &name, &description, &body, 0.9, created_at)
                .with_tags([area, tag, "playbook"])
        })
        .collect()
}

fn skill_body(
    name: &str,
    description: &str,
    tags: [&str; 3],
    verb: &str,
    subject: &str,
    area: &str,
    variant: usize,
) -> String {
    let verb_lower = verb.to_lowercase();
    let mut s = String::with_capacity(2048);
    let _ = write!(
        s,
        "---\nname: {name}\ndescription: {description}\ntags: [{}]\n---\n\
         # {verb} the {subject}\n\n\
         Use this playbook to {verb_lower} the {subject} of a {area} project with a result\n\
         that a reviewer can follow and the next person can repeat.\n\n\
         ## When to use\n\
         - The {subject} have drifted from what the team agreed on last quarter.\n\
         - A release is planned within the week and the {subject} must be ready for it.\n\
         - A new teammate asks how the {subject} are handled in this {area} project.\n\n\
         ## Before you start\n\
         1. Read the project README and the contributing guide.\n\
         2. Start a fresh branch named after the task, so the change stays easy to review.\n\
         3. Run the test suite once, so that you know the state you start from.\n\n\
         ## Steps\n\
         1. List the files that define the {subject}.\n\
         2. Compare them with the team checklist and write down each difference you find.\n\
         3. Change one thing at a time, and run the relevant tests after each change.\n\
         4. Keep commit messages short: what changed, and why it was needed.\n\
         5. Ask a reviewer who knows the {area} side of the project to read the diff.\n\
         6. After the merge, watch the dashboards for an hour and note anything unusual.\n\n\
         ## Checks\n\
         - The test suite passes on the branch and on the main line.\n\
         - The change log names the change in one line that a user understands.\n\
         - Nothing unrelated changed in the diff; move stray edits to their own branch.\n\n\
         ## Notes\n\
         Variant {variant}: prefer small pull requests. If the work grows beyond a day, split it\n\
         and open an issue for the rest.\n",
        tags.join(", ")
    );
    s
}

/// The packets as `POST /ecp/skills` bodies of [`BATCH`] packets each.
pub(crate) fn update_bodies(packets: Vec<SkillPacket>) -> anyhow::Result<Vec<Bytes>> {
    let mut bodies = Vec::new();
    let mut packets = packets.into_iter().peekable();
    let mut n = 0;
    while packets.peek().is_some() {
        let skills: Vec<SkillPacket> = packets.by_ref().take(BATCH).collect();
        n += 1;
        let update = KnowledgeUpdate {
            id: format!("http-load-bench-{n}"),
            peer_instance: "http-load-bench".into(),
            generated_at: Timestamp::from_datetime(chrono::Utc::now()),
            stats: PeerStats { total_skills: skills.len() as i64, ..PeerStats::default() },
            skills,
            sequence_num: 0,
            ..KnowledgeUpdate::default()
        };
        bodies.push(Bytes::from(serde_json::to_vec(&update)?));
    }
    Ok(bodies)
}

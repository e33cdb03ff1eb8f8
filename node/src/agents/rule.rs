//! The rule that picks an agent's listing ([`pick`]), pure: what the node
//! holds in, the listing out, each skill with why.
//!
//! 1. The agent folder's own local skills (its path is also a `[[folder]]`):
//!    always listed — a local skill is never removed from the folder it was
//!    written in — and counted first.
//! 2. `include`d skills, in the order named: always listed, whatever the
//!    budget and the tags.
//! 3. Every other candidate with one of the agent's `tags` (any, when it
//!    names none), by evidence: the node's confidence after outcomes,
//!    highest first, then the name (byte order) for ties.
//!    - `select = "top"`: listed while the listing stays within
//!      `budget_chars`; the first that would take it over the budget stops
//!      the listing, so a skill never stands in for a better one that did
//!      not fit. A listing exactly at the budget is within it.
//!    - `select = "all"`: every one listed; a listing over the budget is
//!      reported ([`Listing::over_budget`]) and logged.
//!
//! A skill costs what a harness lists of it: the characters (Unicode scalar
//! values) of `name: description` ([`listing_chars`]).

use serde::Serialize;

use super::{Agent, Select};

/// A skill the rule may list.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its name.
    pub name: String,
    /// Its description, as the folder shows it.
    pub description: String,
    /// The node's confidence in it, after outcomes.
    pub confidence: f64,
    /// Its tags.
    pub tags: Vec<String>,
    /// A local skill of the agent's own folder.
    pub local_here: bool,
}

/// Why a skill is in the listing or out of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// A local skill of this folder: never removed.
    Local,
    /// Named in `include`.
    Included,
    /// Ranked by evidence within the budget (`top`), or `select = "all"`.
    Ranked,
    /// Out: it would take the listing over the budget.
    OverBudget,
    /// Out: none of the agent's tags.
    NotTagged,
    /// Out: named in `include`, but the node holds no such skill.
    NotHeld,
}

/// One skill of an agent's listing, in or out.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    /// The skill.
    pub name: String,
    /// Whether it is listed (written into the agent's folder).
    pub listed: bool,
    /// Its cost in the listing ([`listing_chars`]).
    pub chars: u64,
    /// The node's confidence in it (0 for one not held).
    pub confidence: f64,
    /// Why.
    pub why: Why,
    /// Why, in words.
    pub reason: String,
}

/// An agent's listing: every line, listed ones first in the order picked.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The agent.
    pub agent: String,
    /// Its `budget_chars`.
    pub budget_chars: u64,
    /// The characters of the listed skills.
    pub chars: u64,
    /// Whether `chars` is over the budget (`include`s, local skills or `select = "all"`).
    pub over_budget: bool,
    /// Every skill, in then out.
    pub lines: Vec<Line>,
}

impl Listing {
    /// The names listed.
    pub fn listed(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter(|l| l.listed).map(|l| l.name.as_str())
    }
}

/// What a skill costs in the listing: the characters of `name: description`.
pub fn listing_chars(name: &str, description: &str) -> u64 {
    (name.chars().count() + 2 + description.chars().count()) as u64
}

/// Picks `agent`'s listing from `candidates` (see the module doc).
pub fn pick(agent: &Agent, mut candidates: Vec<Candidate>) -> Listing {
    let mut listing = Listing {
        agent: agent.name.clone(),
        budget_chars: agent.budget_chars,
        chars: 0,
        over_budget: false,
        lines: Vec::new(),
    };
    let take = |listing: &mut Listing, c: &Candidate, listed: bool, why: Why, reason: String| {
        let chars = listing_chars(&c.name, &c.description);
        if listed {
            listing.chars += chars;
        }
        listing.lines.push(Line {
            name: c.name.clone(),
            listed,
            chars,
            confidence: c.confidence,
            why,
            reason,
        });
    };
    candidates.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then_with(|| a.name.cmp(&b.name)));
    let (here, mut rest): (Vec<_>, Vec<_>) = candidates.into_iter().partition(|c| c.local_here);
    let mut here = here;
    here.sort_by(|a, b| a.name.cmp(&b.name));
    for c in &here {
        take(&mut listing, c, true, Why::Local, "local skill of this folder: never removed from it".into());
    }
    for name in &agent.include {
        match rest.iter().position(|c| &c.name == name) {
            Some(i) => {
                let c = rest.remove(i);
                take(&mut listing, &c, true, Why::Included, "named in include: always listed".into());
            }
            None if here.iter().any(|c| &c.name == name) => {}
            None => listing.lines.push(Line {
                name: name.clone(),
                listed: false,
                chars: 0,
                confidence: 0.0,
                why: Why::NotHeld,
                reason: "named in include, but the node holds no such skill".into(),
            }),
        }
    }
    let tagged = |c: &Candidate| {
        agent.tags.is_empty() || c.tags.iter().any(|t| agent.tags.iter().any(|a| a.eq_ignore_ascii_case(t)))
    };
    let mut full = false;
    let mut rank = 0;
    for c in &rest {
        if !tagged(c) {
            let reason = format!("has none of the tags {}; reachable through search", agent.tags.join(", "));
            take(&mut listing, c, false, Why::NotTagged, reason);
            continue;
        }
        rank += 1;
        let after = listing.chars + listing_chars(&c.name, &c.description);
        full |= agent.select == Select::Top && after > agent.budget_chars;
        if full {
            let reason = format!(
                "rank {rank} by evidence (confidence {:.2}): would take the listing to {after} of {} \
                 characters; reachable through search",
                c.confidence, agent.budget_chars
            );
            take(&mut listing, c, false, Why::OverBudget, reason);
        } else {
            let reason = format!("rank {rank} by evidence (confidence {:.2})", c.confidence);
            take(&mut listing, c, true, Why::Ranked, reason);
        }
    }
    listing.over_budget = listing.chars > agent.budget_chars;
    listing.lines.sort_by_key(|l| !l.listed);
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(budget: u64, select: Select) -> Agent {
        Agent {
            name: "a".into(),
            path: "/x".into(),
            budget_chars: budget,
            select,
            tags: Vec::new(),
            include: Vec::new(),
        }
    }

    fn c(name: &str, description: &str, confidence: f64) -> Candidate {
        Candidate {
            name: name.into(),
            description: description.into(),
            confidence,
            tags: Vec::new(),
            local_here: false,
        }
    }

    fn listed(l: &Listing) -> Vec<&str> {
        l.listed().collect()
    }

    #[test]
    fn a_skill_costs_the_characters_of_name_colon_description() {
        assert_eq!(listing_chars("ab", "cd"), 6);
        assert_eq!(listing_chars("é", "ü"), 4, "characters, not bytes");
    }

    #[test]
    fn top_lists_by_confidence_then_name_up_to_the_budget_and_stops_at_the_first_over() {
        // Each costs 10: "sN: 123456" is 2 + 2 + 6.
        let cands =
            vec![c("s1", "123456", 0.5), c("s2", "123456", 0.9), c("s3", "123456", 0.5), c("s4", "1", 0.1)];
        let l = pick(&agent(30, Select::Top), cands.clone());
        assert_eq!(listed(&l), ["s2", "s1", "s3"], "exactly at the budget is in");
        assert_eq!(l.chars, 30);
        let l = pick(&agent(29, Select::Top), cands);
        assert_eq!(listed(&l), ["s2", "s1"], "one past: the third is out, and so is the cheaper fourth");
        assert!(l.lines.iter().any(|x| x.name == "s4" && x.why == Why::OverBudget));
        assert!(!l.over_budget);
    }

    #[test]
    fn includes_and_local_skills_are_listed_whatever_the_budget() {
        let mut a = agent(5, Select::Top);
        a.include = vec!["low".into(), "gone".into()];
        let mut here = c("mine", "0123456789", 0.1);
        here.local_here = true;
        let l = pick(&a, vec![c("top", "x", 0.9), c("low", "y", 0.1), here]);
        assert_eq!(listed(&l), ["mine", "low"]);
        assert!(l.over_budget);
        assert!(l.lines.iter().any(|x| x.name == "gone" && x.why == Why::NotHeld && !x.listed));
        assert!(l.lines.iter().any(|x| x.name == "top" && x.why == Why::OverBudget));
    }

    #[test]
    fn all_lists_everything_and_says_when_over() {
        let l = pick(&agent(3, Select::All), vec![c("a", "bc", 0.1), c("d", "ef", 0.2)]);
        assert_eq!(listed(&l), ["d", "a"]);
        assert!(l.over_budget);
    }

    #[test]
    fn tags_keep_the_untagged_out() {
        let mut a = agent(100, Select::Top);
        a.tags = vec!["SQL".into()];
        let mut tagged = c("t", "x", 0.1);
        tagged.tags = vec!["sql".into()];
        let l = pick(&a, vec![tagged, c("u", "x", 0.9)]);
        assert_eq!(listed(&l), ["t"]);
        assert!(l.lines.iter().any(|x| x.name == "u" && x.why == Why::NotTagged));
    }
}

//! `[[agent]]` of `node.toml` (#24 item 3): the folders the node fills with
//! received skills for each agent, under a listing budget
//! ([`crate::agents`]). Checked here: a name of letters, digits, `-` and
//! `_`, each name and path once, a known `select`, valid skill names in
//! `include`.

use std::path::PathBuf;

use serde::Deserialize;

use super::ConfigError;

/// One `[[agent]]` as written in `node.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileAgent {
    /// The agent's name (`agents show NAME`, `--agent NAME`).
    pub name: String,
    /// The folder the agent reads its skills from.
    pub path: PathBuf,
    /// The listing's budget, in characters of `name: description`.
    pub budget_chars: u64,
    /// `"top"` (default) or `"all"`.
    pub select: Option<String>,
    /// Only skills with one of these tags are ranked (none: every skill).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Skills always listed.
    #[serde(default)]
    pub include: Vec<String>,
}

/// How an agent's listing is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Select {
    /// Ranked by evidence, within the budget.
    Top,
    /// Every skill, the budget ignored (a warning when over it).
    All,
}

impl std::str::FromStr for Select {
    type Err = String;

    fn from_str(s: &str) -> Result<Select, String> {
        match s {
            "top" => Ok(Select::Top),
            "all" => Ok(Select::All),
            other => Err(format!("select is {other:?}; write \"top\" or \"all\"")),
        }
    }
}

impl std::fmt::Display for Select {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Select::Top => "top",
            Select::All => "all",
        })
    }
}

/// One agent, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Its name.
    pub name: String,
    /// Its folder.
    pub path: PathBuf,
    /// The listing's budget in characters.
    pub budget_chars: u64,
    /// How the listing is chosen.
    pub select: Select,
    /// Only skills with one of these are ranked; empty: all.
    pub tags: Vec<String>,
    /// Skills always listed, in this order.
    pub include: Vec<String>,
}

/// Whether `name` may name an agent: 1 to 64 letters, digits, `-` or `_`.
pub fn valid_agent_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Checks the file's `[[agent]]`s.
pub fn resolve_agents(file: &[FileAgent]) -> Result<Vec<Agent>, ConfigError> {
    let mut agents: Vec<Agent> = Vec::with_capacity(file.len());
    for (i, f) in file.iter().enumerate() {
        let invalid = |message: String| ConfigError::Invalid { key: format!("agent[{}]", i + 1), message };
        if !valid_agent_name(&f.name) {
            return Err(invalid(format!(
                "name {:?} is not an agent name: use 1 to 64 letters, digits, '-' or '_'",
                f.name
            )));
        }
        let select = f.select.as_deref().unwrap_or("top").parse().map_err(invalid)?;
        for name in &f.include {
            if let Err(e) = ecp_protocol::skill_doc::validate_name(name) {
                return Err(invalid(format!("include {name:?} is not a skill name: {e}")));
            }
        }
        if agents.iter().any(|a| a.name == f.name) {
            return Err(invalid(format!("the agent {:?} is named twice; name each agent once", f.name)));
        }
        if let Some(a) = agents.iter().find(|a| same_path(&a.path, &f.path)) {
            return Err(invalid(format!(
                "the agents {:?} and {:?} share the folder {}; give each agent its own folder",
                a.name,
                f.name,
                f.path.display()
            )));
        }
        agents.push(Agent {
            name: f.name.clone(),
            path: f.path.clone(),
            budget_chars: f.budget_chars,
            select,
            tags: f.tags.clone(),
            include: f.include.clone(),
        });
    }
    Ok(agents)
}

/// Whether two folder paths name the same folder as written (relative ones
/// against the working directory; links are not resolved).
pub fn same_path(a: &std::path::Path, b: &std::path::Path) -> bool {
    let abs = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    abs(a).components().eq(abs(b).components())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, path: &str) -> FileAgent {
        FileAgent {
            name: name.into(),
            path: path.into(),
            budget_chars: 10,
            select: None,
            tags: Vec::new(),
            include: Vec::new(),
        }
    }

    #[test]
    fn agents_resolve_with_top_by_default() {
        let agents = resolve_agents(&[file("claude", "/a")]).unwrap();
        assert_eq!(agents[0].select, Select::Top);
    }

    #[test]
    fn a_bad_agent_is_refused_naming_the_problem() {
        let e = resolve_agents(&[file("bad name", "/a")]).unwrap_err().to_string();
        assert!(e.contains("agent[1]") && e.contains("not an agent name"), "{e}");
        let e = resolve_agents(&[file("a", "/a"), file("b", "/a/")]).unwrap_err().to_string();
        assert!(e.contains("share the folder"), "{e}");
        let e = resolve_agents(&[file("a", "/a"), file("a", "/b")]).unwrap_err().to_string();
        assert!(e.contains("named twice"), "{e}");
        let mut f = file("a", "/a");
        f.select = Some("best".into());
        let e = resolve_agents(&[f]).unwrap_err().to_string();
        assert!(e.contains("\"top\" or \"all\""), "{e}");
        let mut f = file("a", "/a");
        f.include = vec!["../x".into()];
        assert!(resolve_agents(&[f]).unwrap_err().to_string().contains("include"));
    }

    #[test]
    fn an_agent_name_is_checked_at_its_length_limit() {
        assert!(valid_agent_name(&"a".repeat(64)));
        assert!(!valid_agent_name(&"a".repeat(65)));
        assert!(!valid_agent_name(""));
    }
}

//! `ecp-node agents add` and `agents remove`: edits of `node.toml` that
//! keep everything else of it — comments, order, spacing — as written
//! (`toml_edit`). The caller checks that the new text resolves before it
//! replaces the file.

use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, value};

use super::{Agent, Select};

/// An edit that cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The file is not TOML.
    #[error("node.toml is not valid TOML: {0}")]
    Parse(String),
    /// `agent` is there but not as `[[agent]]`.
    #[error("node.toml's agent is not an array of tables; write each agent as [[agent]]")]
    NotTables,
    /// An agent of that name is there already.
    #[error("an agent named {0:?} is already in node.toml; `ecp-node agents remove {0}` first to change it")]
    Exists(String),
    /// No agent of that name.
    #[error("no agent named {0:?} in node.toml; `ecp-node agents list` shows them")]
    NoSuchAgent(String),
}

fn parse(text: &str) -> Result<DocumentMut, EditError> {
    text.parse::<DocumentMut>().map_err(|e| EditError::Parse(e.to_string().trim().to_owned()))
}

fn agents(doc: &mut DocumentMut) -> Result<Option<&mut ArrayOfTables>, EditError> {
    match doc.get_mut("agent") {
        None => Ok(None),
        Some(item) => item.as_array_of_tables_mut().map(Some).ok_or(EditError::NotTables),
    }
}

fn named(tables: &ArrayOfTables, name: &str) -> Option<usize> {
    tables.iter().position(|t| t.get("name").and_then(Item::as_str) == Some(name))
}

/// `text` with `agent` appended as a new `[[agent]]`.
pub fn add_agent(text: &str, agent: &Agent) -> Result<String, EditError> {
    let mut doc = parse(text)?;
    if let Some(tables) = agents(&mut doc)?
        && named(tables, &agent.name).is_some()
    {
        return Err(EditError::Exists(agent.name.clone()));
    }
    let mut table = Table::new();
    table["name"] = value(agent.name.as_str());
    table["path"] = value(agent.path.to_string_lossy().as_ref());
    table["budget_chars"] = value(i64::try_from(agent.budget_chars).unwrap_or(i64::MAX));
    if agent.select != Select::Top {
        table["select"] = value(agent.select.to_string());
    }
    let list = |items: &[String]| items.iter().map(String::as_str).collect::<Array>();
    if !agent.tags.is_empty() {
        table["tags"] = value(list(&agent.tags));
    }
    if !agent.include.is_empty() {
        table["include"] = value(list(&agent.include));
    }
    match agents(&mut doc)? {
        Some(tables) => tables.push(table),
        None => {
            let mut tables = ArrayOfTables::new();
            tables.push(table);
            doc.insert("agent", Item::ArrayOfTables(tables));
        }
    }
    Ok(doc.to_string())
}

/// `text` without the `[[agent]]` named `name`.
pub fn remove_agent(text: &str, name: &str) -> Result<String, EditError> {
    let mut doc = parse(text)?;
    let tables = agents(&mut doc)?.ok_or_else(|| EditError::NoSuchAgent(name.to_owned()))?;
    let index = named(tables, name).ok_or_else(|| EditError::NoSuchAgent(name.to_owned()))?;
    tables.remove(index);
    if tables.is_empty() {
        doc.remove("agent");
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(name: &str) -> Agent {
        Agent {
            name: name.into(),
            path: "/home/me/.claude/skills".into(),
            budget_chars: 2000,
            select: Select::All,
            tags: vec!["sql".into()],
            include: vec!["csv-dedupe".into()],
        }
    }

    const FILE: &str =
        "# my node\nlisten = \"127.0.0.1:7327\" # the port\n\n[[folder]]\n# mine\npath = \"/s\"\n";

    #[test]
    fn add_then_remove_keeps_the_comments_and_gives_back_the_file() {
        let added = add_agent(FILE, &agent("claude")).unwrap();
        assert!(added.starts_with(FILE), "{added}");
        assert!(added.contains("[[agent]]") && added.contains("budget_chars = 2000"), "{added}");
        assert!(
            added.contains("select = \"all\"") && added.contains("include = [\"csv-dedupe\"]"),
            "{added}"
        );
        let back = remove_agent(&added, "claude").unwrap();
        assert_eq!(back, FILE);
    }

    #[test]
    fn a_second_agent_of_a_name_or_a_missing_one_is_refused() {
        let added = add_agent("", &agent("claude")).unwrap();
        assert!(matches!(add_agent(&added, &agent("claude")), Err(EditError::Exists(_))));
        assert!(matches!(remove_agent(&added, "codex"), Err(EditError::NoSuchAgent(_))));
        assert!(matches!(remove_agent("x = [", "codex"), Err(EditError::Parse(_))));
        assert!(matches!(remove_agent("[agent]\nname = \"a\"\n", "a"), Err(EditError::NotTables)));
    }
}

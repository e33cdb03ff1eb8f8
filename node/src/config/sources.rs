//! Where settings come from — flags, environment, `node.toml`, defaults —
//! and the one rule that picks between them: for every key of
//! [`super::table::KEYS`] alike, a flag beats the environment, which beats
//! the file, which beats the default. The result, [`Resolved`], holds each
//! key's typed value and its [`Source`], for [`super::resolve`] to check
//! and for `ecp-node config show` to print.
//!
//! What it does not do: check ranges or combine keys (the shared secret
//! from three keys, folders) — that is [`super::resolve`].

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::keys::FileKey;
use super::table::{FILE_ONLY_ARRAYS, KEYS, Key, Kind, find};
use super::{ConfigError, Secret};
use serde::Deserialize;

/// Where a key's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The key table's default (or unset, when it has none).
    Default,
    /// `node.toml`.
    File,
    /// The environment variable named.
    Env(&'static str),
    /// The flag named (without `--`).
    Flag(&'static str),
}

impl Source {
    /// How strongly it binds: flag > environment > file > default.
    pub fn rank(self) -> u8 {
        match self {
            Source::Default => 0,
            Source::File => 1,
            Source::Env(_) => 2,
            Source::Flag(_) => 3,
        }
    }

    /// `default`, `file`, `env` or `flag`: the word `config show --json` prints.
    pub fn word(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::File => "file",
            Source::Env(_) => "env",
            Source::Flag(_) => "flag",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File => f.write_str("file"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Flag(long) => write!(f, "flag --{long}"),
        }
    }
}

/// A value as given, before its key's [`Kind`] reads it.
#[derive(Debug, Clone)]
enum Raw {
    /// From `node.toml`.
    Toml(toml::Value),
    /// From the environment or a flag (several for a repeated flag); a
    /// secret's text is a [`Secret`] from the moment it is read.
    Texts(Vec<Text>),
}

/// One text of the environment or a flag.
#[derive(Debug, Clone)]
enum Text {
    Plain(String),
    Secret(Secret),
}

impl Text {
    fn of(key: &Key, text: String) -> Text {
        if key.kind == Kind::Secret { Text::Secret(Secret::new(text)) } else { Text::Plain(text) }
    }
}

/// A key's value, typed by its [`Kind`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// [`Kind::Text`] and [`Kind::Choice`].
    Text(String),
    /// [`Kind::Path`].
    Path(PathBuf),
    /// [`Kind::Paths`].
    Paths(Vec<PathBuf>),
    /// [`Kind::Addr`].
    Addr(SocketAddr),
    /// [`Kind::Bool`].
    Bool(bool),
    /// [`Kind::Count`].
    Count(u64),
    /// [`Kind::Share`].
    Share(f64),
    /// [`Kind::Duration`].
    Duration(Duration),
    /// [`Kind::List`].
    List(Vec<String>),
    /// [`Kind::Secret`].
    Secret(Secret),
}

/// The environment, as far as the key table reads it: each key's variable.
/// An empty variable counts as unset.
#[derive(Debug, Clone, Default)]
pub struct Env(BTreeMap<&'static str, Text>);

impl Env {
    /// The process's environment.
    pub fn process() -> Env {
        Env::read(|var| std::env::var(var).ok())
    }

    /// The variables of `pairs` (tests: setting the process's variables is
    /// `unsafe` since edition 2024). Panics on a name no key has.
    #[cfg(test)]
    pub(crate) fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Env {
        let pairs: BTreeMap<&str, &str> = pairs.into_iter().collect();
        for name in pairs.keys() {
            assert!(KEYS.iter().any(|k| k.env == *name), "no key reads {name}");
        }
        Env::read(|var| pairs.get(var).map(|v| (*v).to_owned()))
    }

    fn read(get: impl Fn(&str) -> Option<String>) -> Env {
        let vars = KEYS
            .iter()
            .filter_map(|k| get(k.env).filter(|v| !v.is_empty()).map(|v| (k.env, Text::of(k, v))))
            .collect();
        Env(vars)
    }
}

/// What flags said, by their long names.
#[derive(Debug, Clone, Default)]
pub struct Flags(BTreeMap<&'static str, Vec<Text>>);

impl Flags {
    /// `self` with `--long value` added (a switch takes `"true"`). Panics on
    /// a flag no key has.
    pub fn with(mut self, long: &str, value: impl Into<String>) -> Flags {
        self.push(long, value.into());
        self
    }

    /// Adds every flag of `other` (its values after those of `self`).
    pub fn extend(&mut self, other: Flags) {
        for (long, texts) in other.0 {
            self.0.entry(long).or_default().extend(texts);
        }
    }

    /// Adds `--long value` (once more, for a repeated flag).
    pub fn push(&mut self, long: &str, value: String) {
        let key = KEYS
            .iter()
            .find(|k| k.flag.is_some_and(|f| f.long == long))
            .unwrap_or_else(|| panic!("no key has the flag --{long}"));
        let long = key.flag.expect("found by its flag").long;
        self.0.entry(long).or_default().push(Text::of(key, value));
    }
}

/// Everything a configuration is made from.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `node.toml` (`--config`, `ECP_CONFIG`).
    pub file: Option<PathBuf>,
    /// The environment.
    pub env: Env,
    /// The flags.
    pub flags: Flags,
}

/// One `[[folder]]` of `node.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileFolder {
    /// The skills folder.
    pub path: PathBuf,
    /// Whether its skills may be shared (default true).
    pub share: Option<bool>,
}

/// One key's resolved value and where it came from.
#[derive(Debug, Clone)]
pub struct Setting {
    /// Its row of the key table.
    pub key: &'static Key,
    /// Its value; `None`: unset (no default).
    pub value: Option<Value>,
    /// Where the value came from.
    pub source: Source,
    /// For a value from `node.toml`: the file, line and column it is written at.
    pub at: Option<String>,
}

/// Every key's value and source, and the file's arrays of tables.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// One per row of the key table, in its order.
    pub settings: Vec<Setting>,
    /// `[[folder]]`.
    pub folders: Vec<FileFolder>,
    /// `[[key]]`.
    pub keys: Vec<FileKey>,
    /// `[[agent]]` (#24 item 3).
    pub agents: Vec<super::agents::FileAgent>,
}

impl Resolved {
    /// Reads the file and picks each key's value: flag, else environment,
    /// else file, else default.
    pub fn load(sources: &Sources) -> Result<Resolved, ConfigError> {
        let mut file = match &sources.file {
            Some(path) => FileValues::load(path)?,
            None => FileValues::default(),
        };
        let mut settings = Vec::with_capacity(KEYS.len());
        for key in KEYS {
            let mut at = None;
            let flag = key.flag.and_then(|f| sources.flags.0.get(f.long).map(|texts| (f.long, texts)));
            let (raw, source) = if let Some((long, texts)) = flag {
                (Some(Raw::Texts(texts.clone())), Source::Flag(long))
            } else if let Some(text) = sources.env.0.get(key.env) {
                (Some(Raw::Texts(vec![text.clone()])), Source::Env(key.env))
            } else if let Some(value) = file.values.remove(&key.id()) {
                at = file.at(&key.id());
                (Some(Raw::Toml(value)), Source::File)
            } else {
                (key.default.map(|d| Raw::Texts(vec![Text::Plain(d.to_owned())])), Source::Default)
            };
            let value = match raw {
                Some(raw) => Some(
                    read(key, raw, source)
                        .map_err(|message| invalid_at(key, source, at.as_deref(), message))?,
                ),
                None => None,
            };
            settings.push(Setting { key, value, source, at });
        }
        Ok(Resolved { settings, folders: file.folders, keys: file.keys, agents: file.agents })
    }

    /// The setting of the key `id` (`section.name`).
    pub fn setting(&self, id: &str) -> &Setting {
        let key = find(id);
        self.settings.iter().find(|s| s.key == key).expect("one setting per key")
    }

    /// The value of `id`, if set.
    pub fn value(&self, id: &str) -> Option<&Value> {
        self.setting(id).value.as_ref()
    }

    /// An error for `id`'s value, naming the key and where the value came from.
    pub fn invalid(&self, id: &str, message: impl fmt::Display) -> ConfigError {
        let setting = self.setting(id);
        invalid_at(setting.key, setting.source, setting.at.as_deref(), message)
    }
}

/// Typed accessors: each panics when asked for a key of another kind,
/// which is a mistake in the code, never in the configuration.
impl Resolved {
    /// A [`Kind::Count`] key with a default.
    pub fn count(&self, id: &str) -> u64 {
        self.count_opt(id).unwrap_or_else(|| panic!("{id} has a default"))
    }

    /// A [`Kind::Count`] key.
    pub fn count_opt(&self, id: &str) -> Option<u64> {
        self.value(id).map(|v| match v {
            Value::Count(n) => *n,
            other => panic!("{id} is not a count: {other:?}"),
        })
    }

    /// A [`Kind::Bool`] key with a default.
    pub fn bool(&self, id: &str) -> bool {
        match self.value(id) {
            Some(Value::Bool(b)) => *b,
            other => panic!("{id} is not a bool with a default: {other:?}"),
        }
    }

    /// A [`Kind::Share`] key with a default.
    pub fn share(&self, id: &str) -> f64 {
        match self.value(id) {
            Some(Value::Share(x)) => *x,
            other => panic!("{id} is not a share with a default: {other:?}"),
        }
    }

    /// A [`Kind::Duration`] key with a default.
    pub fn duration(&self, id: &str) -> Duration {
        match self.value(id) {
            Some(Value::Duration(d)) => *d,
            other => panic!("{id} is not a duration with a default: {other:?}"),
        }
    }

    /// A [`Kind::Text`] or [`Kind::Choice`] key.
    pub fn text(&self, id: &str) -> Option<&str> {
        self.value(id).map(|v| match v {
            Value::Text(t) => t.as_str(),
            other => panic!("{id} is not text: {other:?}"),
        })
    }

    /// A [`Kind::Path`] key.
    pub fn path(&self, id: &str) -> Option<&Path> {
        self.value(id).map(|v| match v {
            Value::Path(p) => p.as_path(),
            other => panic!("{id} is not a path: {other:?}"),
        })
    }

    /// A [`Kind::Addr`] key.
    pub fn addr(&self, id: &str) -> Option<SocketAddr> {
        self.value(id).map(|v| match v {
            Value::Addr(a) => *a,
            other => panic!("{id} is not an address: {other:?}"),
        })
    }

    /// A [`Kind::List`] key.
    pub fn list(&self, id: &str) -> Option<&[String]> {
        self.value(id).map(|v| match v {
            Value::List(l) => l.as_slice(),
            other => panic!("{id} is not a list: {other:?}"),
        })
    }

    /// A [`Kind::Secret`] key.
    pub fn secret(&self, id: &str) -> Option<&Secret> {
        self.value(id).map(|v| match v {
            Value::Secret(s) => s,
            other => panic!("{id} is not a secret: {other:?}"),
        })
    }

    /// A [`Kind::Paths`] key.
    pub fn paths(&self, id: &str) -> Option<&[PathBuf]> {
        self.value(id).map(|v| match v {
            Value::Paths(p) => p.as_slice(),
            other => panic!("{id} is not paths: {other:?}"),
        })
    }
}

fn invalid_at(key: &Key, source: Source, at: Option<&str>, message: impl fmt::Display) -> ConfigError {
    let from = match (source, at) {
        (Source::File, Some(at)) => format!(" ({at})"),
        (Source::Default | Source::File, _) => String::new(),
        (other, _) => format!(" (from {other})"),
    };
    ConfigError::Invalid { key: key.id(), message: format!("{message}{from}") }
}

/// `node.toml` taken apart: each key's value by id, and the arrays of tables.
#[derive(Debug, Default)]
struct FileValues {
    values: BTreeMap<String, toml::Value>,
    folders: Vec<FileFolder>,
    keys: Vec<FileKey>,
    agents: Vec<super::agents::FileAgent>,
    /// Where each key (by id) and table (by name) is written.
    places: Places,
}

impl FileValues {
    fn load(path: &Path) -> Result<FileValues, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.into(), source })?;
        let table: toml::Table = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.into(),
            message: format!(
                "{}: {}",
                line_column(&text, e.span().map_or(0, |s| s.start)),
                e.message().trim()
            ),
        })?;
        let mut out = FileValues { places: Places::of(path, &text), ..FileValues::default() };
        let parse_error = |id: &str, message: String| ConfigError::Parse {
            path: path.into(),
            message: out.places.said(id, message),
        };
        let mut values = BTreeMap::new();
        let (mut folders, mut keys, mut agents) = (Vec::new(), Vec::new(), Vec::new());
        for (name, value) in table {
            let is_section = KEYS.iter().any(|k| k.section == name);
            match (name.as_str(), value) {
                ("folder" | "key" | "agent", toml::Value::Table(_)) => {
                    return Err(parse_error(
                        &name,
                        format!(
                            "[{name}] is one table; write [[{name}]] (two brackets) above each {name}'s keys"
                        ),
                    ));
                }
                ("folder", value) => {
                    folders = value.try_into().map_err(|e: toml::de::Error| {
                        parse_error(&name, format!("[[folder]]: {}", e.message()))
                    })?;
                }
                ("agent", value) => {
                    agents = value.try_into().map_err(|e: toml::de::Error| {
                        parse_error(&name, format!("[[agent]]: {}", e.message()))
                    })?;
                }
                ("key", value) => {
                    keys = value.try_into().map_err(|e: toml::de::Error| {
                        parse_error(&name, format!("[[key]]: {}", e.message()))
                    })?;
                }
                (_, toml::Value::Table(entries)) if is_section => {
                    for (entry, value) in entries {
                        let id = format!("{name}.{entry}");
                        if !KEYS.iter().any(|k| k.section == name && k.name == entry) {
                            return Err(parse_error(&id, unknown(&format!("[{name}] {entry}"))));
                        }
                        values.insert(id, value);
                    }
                }
                (_, _) if is_section => {
                    return Err(parse_error(
                        &name,
                        format!("{name} must be a table: write [{name}] above its keys"),
                    ));
                }
                (_, value) if KEYS.iter().any(|k| k.section.is_empty() && k.name == name) => {
                    values.insert(name, value);
                }
                _ => return Err(parse_error(&name, unknown(&name))),
            }
        }
        out.values = values;
        out.folders = folders;
        out.keys = keys;
        out.agents = agents;
        Ok(out)
    }

    /// Where the key `id` is written: the file, line and column.
    fn at(&self, id: &str) -> Option<String> {
        self.places.of_id(id)
    }
}

/// Where each key and table of a `node.toml` is written, for errors that
/// come after it parsed (an unknown key, a value of the wrong type).
#[derive(Debug, Default)]
struct Places {
    file: String,
    /// Byte offsets by id (`name`, `section`, `section.name`).
    offsets: BTreeMap<String, usize>,
    text: String,
}

impl Places {
    fn of(path: &Path, text: &str) -> Places {
        let mut offsets = BTreeMap::new();
        if let Ok(table) = toml::de::DeTable::parse(text) {
            for (name, value) in table.get_ref() {
                offsets.insert(name.get_ref().to_string(), name.span().start);
                if let toml::de::DeValue::Table(entries) = value.get_ref() {
                    for (entry, _) in entries {
                        offsets.insert(format!("{}.{}", name.get_ref(), entry.get_ref()), entry.span().start);
                    }
                }
            }
        }
        Places { file: path.display().to_string(), offsets, text: text.to_owned() }
    }

    /// `file, line L, column C` of `id`, if known.
    fn of_id(&self, id: &str) -> Option<String> {
        self.offsets.get(id).map(|&at| format!("config file {}, {}", self.file, line_column(&self.text, at)))
    }

    /// `message`, prefixed with the line and column of `id` when known.
    fn said(&self, id: &str, message: String) -> String {
        match self.offsets.get(id) {
            Some(&at) => format!("{}: {message}", line_column(&self.text, at)),
            None => message,
        }
    }
}

/// `line L, column C` (1-based, columns in characters) of the byte offset `at` of `text`.
fn line_column(text: &str, at: usize) -> String {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
    format!("line {line}, column {column}")
}

fn unknown(what: &str) -> String {
    let arrays: Vec<String> = FILE_ONLY_ARRAYS.iter().map(|(name, _)| format!("[[{name}]]")).collect();
    format!(
        "unknown key {what}; `ecp-node config show` lists every key (top-level keys come before the first \
         table), and {} are the only arrays of tables",
        arrays.join(" and ")
    )
}

mod values;
use values::read;

#[cfg(test)]
mod tests;

//! How one key's raw value — texts from flags, the environment or a default, or a TOML value of `node.toml` — is read as the key's kind (`Kind`): booleans, durations, addresses, shares, paths, lists and secrets. Each error says what was expected.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::super::table::{Form, Key, Kind};
use super::super::{Secret, duration, unit};
use super::{Raw, Source, Text, Value};

/// Reads `raw` as `key`'s kind; the message says what was expected.
pub(super) fn read(key: &Key, raw: Raw, source: Source) -> Result<Value, String> {
    let negated = matches!(source, Source::Env(_) | Source::Flag(_))
        && key.flag.is_some_and(|f| f.form == Form::NegatedSwitch);
    match raw {
        Raw::Toml(value) => read_toml(key, value),
        Raw::Texts(mut texts) => match key.kind {
            Kind::Paths => Ok(Value::Paths(texts.into_iter().map(|t| PathBuf::from(plain(t))).collect())),
            Kind::List => Ok(Value::List(texts.into_iter().flat_map(|t| split_list(&plain(t))).collect())),
            _ => match texts.pop().expect("at least one text") {
                Text::Secret(secret) => Ok(Value::Secret(secret)),
                Text::Plain(text) => match read_text(key, &text)? {
                    Value::Bool(b) if negated => Ok(Value::Bool(!b)),
                    value => Ok(value),
                },
            },
        },
    }
}

pub(super) fn plain(text: Text) -> String {
    match text {
        Text::Plain(t) => t,
        Text::Secret(s) => s.expose().to_owned(),
    }
}

pub(super) fn split_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// A value written as text (the environment, a flag, a default).
pub(super) fn read_text(key: &Key, text: &str) -> Result<Value, String> {
    match key.kind {
        Kind::Text => Ok(Value::Text(text.to_owned())),
        Kind::Path => Ok(Value::Path(PathBuf::from(text))),
        Kind::Paths => Ok(Value::Paths(vec![PathBuf::from(text)])),
        Kind::Secret => Ok(Value::Secret(Secret::new(text))),
        Kind::List => Ok(Value::List(split_list(text))),
        Kind::Addr => address(text.trim()).map(Value::Addr),
        Kind::Bool => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "y" | "on" | "t" => Ok(Value::Bool(true)),
            "false" | "0" | "no" | "n" | "off" | "f" => Ok(Value::Bool(false)),
            _ => Err(format!("{text:?} is not true or false")),
        },
        Kind::Count => text
            .trim()
            .parse()
            .map(Value::Count)
            .map_err(|_| format!("{text:?} is not a whole number of 0 or more")),
        Kind::Share => match text.trim().parse::<f64>() {
            Ok(x) => share(x),
            Err(_) => Err(format!("{text:?} is not a number from 0 to 1")),
        },
        Kind::Duration => duration::parse(text).map(Value::Duration).map_err(|e| e.to_string()),
        Kind::Choice(choices) => match choices.iter().find(|c| **c == text.trim()) {
            Some(choice) => Ok(Value::Text((*choice).to_owned())),
            None => Err(format!("{text:?} is not one of {}", choices.join(", "))),
        },
    }
}

/// An address with a port: an IP address, or a host name resolved now
/// (`localhost:7327`; of several addresses the first IPv4 one, so that a
/// name listens where clients of that name usually connect first).
pub(super) fn address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let example = "like 127.0.0.1:7327 or localhost:7327";
    let Some((host, port)) = text.rsplit_once(':').filter(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
    else {
        return Err(format!("{text:?} is not an address with a port, {example}"));
    };
    let found: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(text)
        .map_err(|e| {
            format!(
                "cannot resolve the host {host:?} of {text:?}: {e}; give an address with a port, {example}"
            )
        })?
        .collect();
    found.iter().find(|a| a.is_ipv4()).or(found.first()).copied().ok_or_else(|| {
        format!("the host {host:?} of {text:?} has no address (port {port}); give an address with a port, {example}")
    })
}

pub(super) fn share(x: f64) -> Result<Value, String> {
    unit(x).map(Value::Share).map_err(|e| e.to_string())
}

/// A value written in `node.toml`: its TOML type must fit the kind.
pub(super) fn read_toml(key: &Key, value: toml::Value) -> Result<Value, String> {
    use toml::Value as T;
    let expected = match key.kind {
        Kind::Bool => "true or false",
        Kind::Count => "a whole number",
        Kind::Share => "a number from 0 to 1",
        Kind::List => "an array of strings",
        _ => "a string",
    };
    match (key.kind, value) {
        (Kind::Bool, T::Boolean(b)) => Ok(Value::Bool(b)),
        (Kind::Count, T::Integer(n)) => {
            u64::try_from(n).map(Value::Count).map_err(|_| format!("{n} is below 0; give {expected}"))
        }
        (Kind::Share, T::Float(x)) => share(x),
        #[allow(clippy::cast_precision_loss)] // 0 and 1 are exact
        (Kind::Share, T::Integer(n)) => share(n as f64),
        (Kind::List, T::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                T::String(s) => Ok(s),
                other => Err(format!("{other} is not a string; give {expected}")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::List),
        (Kind::Bool | Kind::Count | Kind::Share | Kind::List, other) => {
            Err(format!("{} is not {expected}", other.type_str()))
        }
        (_, T::String(text)) => read_text(key, &text),
        (_, other) => Err(format!("{} is not {expected}", other.type_str())),
    }
}

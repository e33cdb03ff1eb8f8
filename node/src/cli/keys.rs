//! The flags of the node's settings, made from the key table
//! ([`ecp_node::config::KEYS`]): each row with a flag becomes an argument of
//! the commands of its [`Scope`], with the row's meaning, environment
//! variable and default as its help. Clap does not read the environment
//! for them: [`ecp_node::config::Sources`] does, so that a value set both
//! ways is known to come from the flag.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};
use ecp_node::config::{Flags, Form, KEYS, Kind, Scope};

/// What the flags of every command ([`Scope::Global`]) said.
#[derive(Debug, Clone, Default)]
pub(crate) struct GlobalKeys(pub(crate) Flags);

/// What the flags of `serve` ([`Scope::Serve`]) said.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServeKeys(pub(crate) Flags);

/// What the flags of `serve`, `pull` and `sync` ([`Scope::Merge`]) said.
#[derive(Debug, Clone, Default)]
pub(crate) struct MergeKeys(pub(crate) Flags);

/// The arguments of the rows of `scope`.
fn args(scope: Scope) -> impl Iterator<Item = Arg> {
    KEYS.iter().filter_map(move |key| {
        let flag = key.flag.filter(|f| f.scope == scope)?;
        let default = match (flag.form, key.default) {
            (Form::Value, Some(d)) => format!(" [default: {d}]"),
            _ => String::new(),
        };
        let doc = key.doc.replace('`', "");
        let mut first = doc.chars();
        let doc: String = first.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(first).collect();
        let help = format!("{doc} [env: {}]{default}", key.env);
        let arg = Arg::new(flag.long).long(flag.long).help(help).global(scope == Scope::Global);
        let arg = match (flag.form, key.kind) {
            (Form::Switch | Form::NegatedSwitch, _) => arg.action(ArgAction::SetTrue),
            (Form::Value, Kind::Paths | Kind::List) => arg.action(ArgAction::Append),
            (Form::Value, Kind::Choice(choices)) => arg.value_parser(choices.to_vec()),
            (Form::Value, _) => arg.action(ArgAction::Set),
        };
        let value_name = match key.kind {
            Kind::Bool => "BOOL",
            Kind::Count => "N",
            Kind::Share => "SHARE",
            Kind::Addr => "ADDR",
            Kind::Path | Kind::Paths => "PATH",
            Kind::Secret => "S",
            _ => "VALUE",
        };
        Some(arg.value_name(value_name))
    })
}

/// The values given on the command line to the flags of `scope`.
fn given(matches: &ArgMatches, scope: Scope) -> Flags {
    let mut flags = Flags::default();
    for flag in KEYS.iter().filter_map(|k| k.flag).filter(|f| f.scope == scope) {
        if matches.value_source(flag.long) != Some(ValueSource::CommandLine) {
            continue;
        }
        for value in matches.get_raw(flag.long).into_iter().flatten() {
            flags.push(flag.long, value.to_string_lossy().into_owned());
        }
    }
    flags
}

macro_rules! key_args {
    ($ty:ident, $scope:expr) => {
        impl FromArgMatches for $ty {
            fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
                Ok($ty(given(matches, $scope)))
            }

            fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
                *self = $ty(given(matches, $scope));
                Ok(())
            }
        }

        impl clap::Args for $ty {
            fn augment_args(cmd: Command) -> Command {
                cmd.args(args($scope))
            }

            fn augment_args_for_update(cmd: Command) -> Command {
                cmd.args(args($scope))
            }
        }
    };
}

key_args!(GlobalKeys, Scope::Global);
key_args!(ServeKeys, Scope::Serve);
key_args!(MergeKeys, Scope::Merge);

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::cli::{Cli, Command as Sub};

    #[test]
    fn every_flag_of_the_table_is_on_its_commands_and_keeps_its_name() {
        let cli = Cli::command();
        let serve = cli.find_subcommand("serve").expect("serve");
        let merging = ["serve", "pull", "sync", "health"].map(|c| cli.find_subcommand(c).expect("a command"));
        for key in KEYS {
            let Some(flag) = key.flag else { continue };
            let on = |cmd: &Command| cmd.get_arguments().any(|a| a.get_long() == Some(flag.long));
            match flag.scope {
                Scope::Global => assert!(on(&cli), "--{}", flag.long),
                Scope::Serve => assert!(on(serve) && !on(&cli), "--{}", flag.long),
                Scope::Merge => assert!(merging.iter().all(|c| on(c)) && !on(&cli), "--{}", flag.long),
            }
        }
    }

    #[test]
    fn flags_arrive_as_given_and_only_when_given() {
        let cli = Cli::try_parse_from([
            "ecp-node",
            "serve",
            "--data",
            "d",
            "--skills-dir",
            "a",
            "--skills-dir",
            "b",
            "--no-mdns",
            "--max-packets",
            "7",
            "--intake",
            "review",
        ])
        .unwrap();
        let Sub::Serve(serve) = cli.command else { panic!("serve") };
        let shown = format!("{:?} {:?}", cli.global.keys.0, serve.keys.0);
        for part in [
            "\"data\"",
            "\"skills-dir\"",
            "\"a\"",
            "\"b\"",
            "\"no-mdns\"",
            "\"max-packets\"",
            "\"7\"",
            "\"intake\"",
        ] {
            assert!(shown.contains(part), "{part} in {shown}");
        }
        assert!(!shown.contains("trust-loopback"), "a switch not given is not given: {shown}");
        assert!(Cli::try_parse_from(["ecp-node", "serve", "--intake", "later"]).is_err());
    }
}

//! The flags of the node's settings, made from the key table
//! ([`ecp_node::config::KEYS`]): each row with a flag becomes an argument of
//! the commands of its [`Scope`] ([`Scope::commands`]), with the row's
//! meaning, environment variable and default as its help. A command takes
//! them by flattening [`Keys`] with the set of its scopes
//! ([`Scope::of_command`]); a command with subcommands hands them on to
//! each. Clap does not read the environment for them:
//! [`ecp_node::config::Sources`] does, so that a value set both ways is
//! known to come from the flag.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};
use ecp_node::config::{Flags, Form, KEYS, Kind, Scope};

/// What the flags of the scopes in the set `SCOPES` ([`Scope::bit`]s) said.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keys<const SCOPES: u8>(pub(crate) Flags);

/// The flags every command takes ([`Scope::Global`]).
pub(crate) type GlobalKeys = Keys<{ Scope::Global.bit() }>;

/// Whether `key`'s flag belongs to one of the `scopes`.
fn in_scopes(flag: &ecp_node::config::Flag, scopes: u8) -> bool {
    flag.scope.bit() & scopes != 0
}

/// The arguments of the rows of the `scopes`. Global to the command they
/// are given to, so that its subcommands take them too.
fn args(scopes: u8) -> impl Iterator<Item = Arg> {
    KEYS.iter().filter_map(move |key| {
        let flag = key.flag.filter(|f| in_scopes(f, scopes))?;
        let default = match (flag.form, key.default) {
            (Form::Value, Some(d)) => format!(" [default: {d}]"),
            _ => String::new(),
        };
        let doc = key.doc.replace('`', "");
        let mut first = doc.chars();
        let doc: String = first.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(first).collect();
        let help = format!("{doc} [env: {}]{default}", key.env);
        let arg = Arg::new(flag.long).long(flag.long).help(help).global(true);
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

/// The values given on the command line to the flags of the `scopes`.
fn given(matches: &ArgMatches, scopes: u8) -> Flags {
    let mut flags = Flags::default();
    for flag in KEYS.iter().filter_map(|k| k.flag).filter(|f| in_scopes(f, scopes)) {
        if matches.value_source(flag.long) != Some(ValueSource::CommandLine) {
            continue;
        }
        for value in matches.get_raw(flag.long).into_iter().flatten() {
            flags.push(flag.long, value.to_string_lossy().into_owned());
        }
    }
    flags
}

impl<const SCOPES: u8> FromArgMatches for Keys<SCOPES> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Keys(given(matches, SCOPES)))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Keys(given(matches, SCOPES));
        Ok(())
    }
}

impl<const SCOPES: u8> clap::Args for Keys<SCOPES> {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(args(SCOPES))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.args(args(SCOPES))
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::cli::{Cli, Command as Sub};

    /// Every leaf command under `cmd` (built: global flags handed down),
    /// by its path from the top (`["skill", "add"]`).
    fn leaves(cmd: &Command, path: &[String], out: &mut Vec<(Vec<String>, Command)>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut below = path.to_vec();
            below.push(sub.get_name().to_owned());
            if sub.has_subcommands() {
                leaves(sub, &below, out);
            }
            // A command with subcommands may also run alone (`peers`).
            if !sub.has_subcommands() || !sub.is_subcommand_required_set() {
                out.push((below, sub.clone()));
            }
        }
    }

    /// A value `--flag VALUE` of `kind` takes; none for a switch.
    fn value_for(key: &ecp_node::config::Key) -> Option<&'static str> {
        let flag = key.flag.expect("a flag");
        match (flag.form, key.kind) {
            (Form::Switch | Form::NegatedSwitch, _) => None,
            (_, Kind::Choice(choices)) => Some(choices[0]),
            (_, Kind::Count) => Some("1"),
            (_, Kind::Share) => Some("0.5"),
            (_, Kind::Duration) => Some("1s"),
            (_, Kind::Addr) => Some("127.0.0.1:1"),
            _ => Some("x"),
        }
    }

    /// Whether `help` shows the flag `--long` (not only a longer one it begins).
    fn shows(help: &str, long: &str) -> bool {
        let flag = format!("--{long}");
        help.match_indices(&flag).any(|(at, _)| {
            help[at + flag.len()..].chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '-'))
        })
    }

    #[test]
    fn each_command_shows_and_takes_exactly_the_flags_its_scopes_give_it() {
        let mut cli = Cli::command();
        cli.build();
        let mut all = Vec::new();
        leaves(&cli, &[], &mut all);
        assert!(all.len() >= 30, "every leaf command is walked: {}", all.len());
        for (path, cmd) in &all {
            let help = cmd.clone().render_long_help().to_string();
            for key in KEYS {
                let Some(flag) = key.flag else { continue };
                let wanted = flag.scope == Scope::Global || flag.scope.commands().contains(&path[0].as_str());
                let at = format!("ecp-node {} --{}", path.join(" "), flag.long);
                // Told by its environment variable: `pull --secret` is the peer's, not the key's.
                let marker = format!("[env: {}]", key.env);
                let ours = |a: &Arg| a.get_help().is_some_and(|h| h.to_string().contains(&marker));
                if !wanted && cmd.get_arguments().any(|a| a.get_long() == Some(flag.long) && !ours(a)) {
                    continue;
                }
                assert_eq!(shows(&help, flag.long) && help.contains(&marker), wanted, "{at}: shown\n{help}");
                // And taken by the parser: an unknown flag is refused before
                // missing arguments are looked for.
                let mut line: Vec<&str> = vec!["ecp-node"];
                line.extend(path.iter().map(String::as_str));
                line.push(&at[at.rfind(" --").expect("a flag") + 1..]);
                line.extend(value_for(key));
                let unknown = Cli::try_parse_from(&line)
                    .is_err_and(|e| e.kind() == clap::error::ErrorKind::UnknownArgument);
                assert_eq!(!unknown, wanted, "{at}: taken by the parser");
            }
        }
    }

    #[test]
    fn the_scopes_name_real_commands_and_the_narrow_flags_stay_off_the_others() {
        let cli = Cli::command();
        for scope in Scope::ALL {
            for name in scope.commands() {
                assert!(cli.find_subcommand(name).is_some(), "{scope:?} names {name}, which is no command");
            }
        }
        let mut cli = cli;
        cli.build();
        for (path, narrow) in [
            (
                ["peers"].as_slice(),
                ["--intake", "--received-permissions", "--max-description-bytes", "--sharing-mode"],
            ),
            (&["audit"], ["--intake", "--received-permissions", "--max-description-bytes", "--sharing-mode"]),
            (
                &["events"],
                ["--intake", "--received-permissions", "--max-description-bytes", "--tls-client-cert"],
            ),
        ] {
            let help =
                cli.find_subcommand(path[0]).expect("a command").clone().render_long_help().to_string();
            for flag in narrow {
                assert!(!shows(&help, &flag[2..]), "{flag} on {path:?}:\n{help}");
            }
        }
    }

    #[test]
    fn push_has_its_own_help_and_no_pull_trust() {
        let mut cli = Cli::command();
        cli.build();
        let help =
            |name: &str| cli.find_subcommand(name).expect("a command").clone().render_long_help().to_string();
        let (push, pull) = (help("push"), help("pull"));
        assert!(!shows(&push, "trust") && shows(&pull, "trust"), "{push}");
        assert!(push.contains("Print the push's report") && push.contains("acknowledged"), "{push}");
        assert!(pull.contains("Trust in what this pull brings"), "{pull}");
        assert!(Cli::try_parse_from(["ecp-node", "push", "http://127.0.0.1:9", "--trust", "1"]).is_err());
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
        // A command's subcommands take its flags, before or after their own arguments.
        for line in [
            ["ecp-node", "skill", "--sharing-mode", "listed", "list"],
            ["ecp-node", "skill", "list", "--sharing-mode", "listed"],
        ] {
            let cli = Cli::try_parse_from(line).unwrap();
            let Sub::Skill(skill) = cli.command else { panic!("skill") };
            assert_eq!(
                format!("{:?}", skill.keys.0),
                format!("{:?}", {
                    let mut f = Flags::default();
                    f.push("sharing-mode", "listed".to_owned());
                    f
                })
            );
        }
    }
}

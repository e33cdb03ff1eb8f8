//! The words a command prefix (`sudo`, `env`, `nohup`, `nice`, …) takes
//! before the command it runs: its flags, and the values some of them
//! take. `sudo -E /tmp/.x`, `env -i /tmp/.x`, `nohup -- /tmp/.x` and
//! `sudo -u svc /tmp/.x` run `/tmp/.x` as surely as `sudo /tmp/.x` does;
//! a reader that ends command position at the first word after the
//! prefix misses them. Each analyzer that tracks command position keeps
//! its own list of prefixes; this module only says what may stand
//! between one of them and the command.

/// A prefix's flags whose value is the next word (`sudo -u svc`, `env -u
/// VAR`, `nice -n 10`), per prefix: a flag not listed is taken to stand
/// alone (`sudo -E`, `env -i`), and `--` ends the flags.
fn value_flags(prefix: &str) -> &'static [&'static str] {
    match prefix.to_ascii_lowercase().as_str() {
        "sudo" => {
            &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir"]
        }
        "doas" => &["-u", "-C"],
        "env" => &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "time" => &["-o", "-f", "--output", "--format"],
        "exec" => &["-a"],
        "xargs" => &["-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s", "--arg-file", "--delimiter"],
        _ => &[],
    }
}

/// What a word after a prefix is, while the prefix's own words last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrefixWord {
    /// A flag of the prefix: the command is still to come.
    Flag,
    /// A flag whose value is the next word: that word is not the command.
    FlagWithValue,
    /// Not a flag: this word is the command (or the prefix's words ended).
    Other,
}

/// What `word`, read after `prefix`, is. Case matters for the flags
/// (`sudo -e` edits files; `-E` keeps the environment) but not for what
/// they are: both stand before a command.
pub(crate) fn after_prefix(prefix: &str, word: &str) -> PrefixWord {
    if !word.starts_with('-') || word == "-" {
        return PrefixWord::Other;
    }
    if word.contains('=') || word == "--" {
        return PrefixWord::Flag;
    }
    if value_flags(prefix).contains(&word) { PrefixWord::FlagWithValue } else { PrefixWord::Flag }
}

#[cfg(test)]
mod tests {
    use super::PrefixWord::*;
    use super::*;

    #[test]
    fn flags_of_a_prefix_keep_the_command_to_come() {
        assert_eq!(after_prefix("sudo", "-E"), Flag);
        assert_eq!(after_prefix("env", "-i"), Flag);
        assert_eq!(after_prefix("nohup", "--"), Flag);
        assert_eq!(after_prefix("sudo", "--user=svc"), Flag);
        assert_eq!(after_prefix("sudo", "-u"), FlagWithValue);
        assert_eq!(after_prefix("SUDO", "-u"), FlagWithValue);
        assert_eq!(after_prefix("nice", "-n"), FlagWithValue);
        // Another prefix's value flag is no value flag here.
        assert_eq!(after_prefix("nohup", "-u"), Flag);
        // A word that is no flag is the command; so is a lone `-`.
        assert_eq!(after_prefix("sudo", "/tmp/.x"), Other);
        assert_eq!(after_prefix("sudo", "-"), Other);
        assert_eq!(after_prefix("sudo", ""), Other);
    }
}

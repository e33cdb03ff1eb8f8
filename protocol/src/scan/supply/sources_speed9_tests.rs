//! The declared sources' word gate read up to the last `://` (#14's
//! speed, ninth pass): it turns away no line a declared pattern matches,
//! and agrees with the whole line's gate wherever a pattern could match.

use super::*;
use proptest::prelude::*;

#[test]
fn the_window_ends_at_the_last_address() {
    assert_eq!(before_last_url(b"a https://x b ftp://y"), b"a https://x b ftp");
    assert_eq!(before_last_url(b"no address"), b"no address");
    // A colon with one slash, and one at the very end.
    assert_eq!(before_last_url(b"a://b c:/d e:"), b"a");
    assert_eq!(before_last_url(b"://"), b"");
}

proptest! {
    #[test]
    fn no_declared_source_is_turned_away(
        line in "(conda |mamba -c |composer config repositories.x composer |source \"|source: '|bundle config mirror\\.|maven \\{ url \"|dotnet nuget add source |Register-PSRepository -SourceLocation |brew tap a/b |https://h.example/x|http://|x| |\"){0,6}",
    ) {
        let b = line.as_bytes();
        if DECLARED_ANY.is_match(b) {
            prop_assert!(DECLARED_WORDS.any_in(before_last_url(b)), "{:?}", line);
        }
    }
}

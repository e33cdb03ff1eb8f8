//! `LineCursor::locate` reading on from the located line's end, held to a
//! count of every newline before each place (#14's throughput, tenth
//! pass).

use super::text::LineCursor;
use proptest::prelude::*;

/// The line of `pos` as a count from the text's start finds it.
fn line_of(text: &str, pos: usize) -> (usize, usize, usize) {
    let before = &text[..pos];
    let index = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
    (index, start, end)
}

#[test]
fn a_place_on_the_newline_ending_its_line_and_the_next_lines_first_byte() {
    let text = "ab\ncd\n\nef";
    let mut c = LineCursor::default();
    // The newline itself belongs to the line it ends; the byte after it to the next.
    for pos in [0, 2, 3, 5, 6, 7, 8] {
        let l = c.locate(text, pos);
        assert_eq!((l.index, l.start, l.end), line_of(text, pos), "{pos}");
    }
}

proptest! {
    #[test]
    fn locates_what_a_count_from_the_start_locates(
        text in r"[a\n]{1,80}",
        picks in proptest::collection::vec(0usize..80, 1..12),
    ) {
        let mut places: Vec<usize> = picks.into_iter().filter(|&p| p < text.len()).collect();
        places.sort_unstable();
        let mut c = LineCursor::default();
        for pos in places {
            let l = c.locate(&text, pos);
            prop_assert_eq!((l.index, l.start, l.end), line_of(&text, pos), "{}", pos);
        }
    }
}

//! The prefilter's tests: against a naive search, across lane cuts, and
//! at the bounds of its table.

use super::*;

fn all(lits: &[&str], text: &str) -> Vec<(usize, String)> {
    let bytes: Vec<&[u8]> = lits.iter().map(|l| l.as_bytes()).collect();
    let l = Literals::new(&bytes).unwrap();
    let mut ends = Vec::new();
    l.find(text.as_bytes(), &mut ends);
    let mut out = Vec::new();
    for e in ends {
        for &id in l.ending(e) {
            let start = l.start(text.as_bytes(), id, e.at);
            // Shared classes may report extra places; the caller checks.
            if spells(text.as_bytes(), start, lits[usize::from(id)].as_bytes()).is_some() {
                out.push((start, lits[usize::from(id)].to_string()));
            }
        }
    }
    out.sort();
    out
}

fn naive(lits: &[&str], text: &str) -> Vec<(usize, String)> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    for l in lits {
        let mut from = 0;
        while let Some(i) = lower[from..].find(l) {
            out.push((from + i, l.to_string()));
            from += i + 1;
        }
    }
    out.sort();
    out
}

/// `n` distinct four-letter keys, few sharing a prefix.
fn spread_keys(n: usize) -> Vec<String> {
    let mut x: u32 = 12345;
    let mut keys = std::collections::BTreeSet::new();
    while keys.len() < n {
        let key: String = (0..4)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'a' + ((x >> 16) % 26) as u8)
            })
            .collect();
        keys.insert(key);
    }
    keys.into_iter().collect()
}

#[test]
fn holds_more_states_than_one_half_of_the_table() {
    // 29 classes (letters, blank, digits, other): a half holds 1,129
    // states, which the states of 450 spread keys outgrow; the states
    // that end no key still fit the lower half, and those that do the
    // upper half.
    let keys = spread_keys(450);
    let lits: Vec<&str> = keys.iter().map(String::as_str).collect();
    let bytes: Vec<&[u8]> = lits.iter().map(|l| l.as_bytes()).collect();
    let l = Literals::new(&bytes).expect("fits in two halves");
    assert!(l.state_count() * 29 > usize::from(MATCH), "{} states", l.state_count());
    let text: String = lits.iter().rev().map(|k| format!("{} x{k}y ", k.to_uppercase())).collect();
    assert_eq!(all(&lits, &text), naive(&lits, &text));
    // Past what the upper half holds (more keys than states in it), it
    // does not fit.
    let keys = spread_keys(1_200);
    let bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
    assert!(Literals::new(&bytes).is_none());
}

#[test]
fn a_key_ending_in_a_blank_is_reported_once_per_run_of_blanks() {
    let lits = ["nc ", "c x"];
    assert_eq!(
        all(&lits, "nc     9 and nc\t\tx"),
        vec![(0, "nc ".to_string()), (13, "nc ".to_string()), (14, "c x".to_string())]
    );
}

#[test]
fn finds_overlapping_literals_in_any_case() {
    let lits = ["sudo", "sudoers", "do", "/dev/tcp/", "rm", "()"];
    let text = "SuDoErs; x() ; echo >/DEV/tcp/h; rm -rf";
    assert_eq!(all(&lits, text), naive(&lits, text));
}

#[test]
fn a_space_in_a_literal_matches_any_run_of_blanks() {
    let lits = ["rm -", "git push", "m -"];
    let expected = [(0, "rm -"), (1, "m -"), (9, "git push"), (22, "rm -"), (23, "m -")];
    let expected: Vec<(usize, String)> = expected.iter().map(|&(i, l)| (i, l.to_string())).collect();
    assert_eq!(all(&lits, "rm  -rf; git\t \tpush; xrm -"), expected);
}

#[test]
fn a_blank_in_a_key_matches_a_line_break() {
    // A phrase Markdown wraps: newline, carriage return and the next
    // line's indent are one run of blanks.
    let lits = ["next time", "has approved", "nc "];
    let text = "the next\n   time, and it has\r\napproved; nc\n9";
    let expected = [(4, "next time"), (25, "has approved"), (40, "nc ")];
    let expected: Vec<(usize, String)> = expected.iter().map(|&(i, l)| (i, l.to_string())).collect();
    assert_eq!(all(&lits, text), expected);
    assert_eq!(spells(b"next\n\n time", 0, b"next time"), Some(11));
    // A line break stands only where the key has a blank.
    assert_eq!(all(&["nexttime"], "next\ntime"), Vec::new());
    let bytes: [&[u8]; 1] = [b"has ap"];
    let l = Literals::new(&bytes).unwrap();
    assert_eq!(l.start(b"x has \r\n\tap", 0, 11), 2);
}

#[test]
fn lanes_of_very_different_lengths_agree_with_a_naive_search() {
    let lits = ["curl", "sh", "| sh", "bash", "xyz"];
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!("{i} curl | sh\n"));
    }
    // One lane gets a line far longer than the others and than `PAD`.
    text.push_str(&format!("{} bash\n", "curl x".repeat(300)));
    for i in 0..40 {
        text.push_str(&format!("{i} bash xyz\n"));
    }
    text.push_str(&"sh ".repeat(500));
    text.push_str("\nend");
    assert!(lanes(text.as_bytes(), 3).is_some());
    assert_eq!(all(&lits, &text), naive(&lits, &text));
}

proptest::proptest! {
    // Keys with blanks and shared prefixes, on text made of their pieces
    // and long blank runs, so that cuts fall inside keys and inside runs.
    #[test]
    fn lanes_report_what_one_walk_reports(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec!["rm", " ", "\t", "    ", "-", "rf", "curl", "| sh", "sudo", "x", "\n", "é"]),
            100..400,
        )
    ) {
        let keys: [&[u8]; 6] = [b"rm -", b"curl", b"| sh", b"sudo", b"r", b"-rf"];
        let l = Literals::new(&keys).unwrap();
        let text: String = pieces.concat();
        let keys_at = |ends: Vec<End>| -> Vec<(usize, Vec<u16>)> {
            ends.into_iter()
                .map(|e| {
                    let mut ids = l.ending(e).to_vec();
                    ids.sort_unstable();
                    (e.at, ids)
                })
                .collect()
        };
        let mut in_lanes = Vec::new();
        l.find(text.as_bytes(), &mut in_lanes);
        let mut in_one = Vec::new();
        l.walk(text.as_bytes(), 0, 0, &mut in_one);
        // Lanes' buffers kept from an earlier call, as the engine keeps them.
        let mut spill: [Vec<End>; 3] = std::array::from_fn(|k| vec![End::default(); k * 20]);
        let mut reused = Vec::new();
        l.find_with(text.as_bytes(), &mut reused, &mut spill);
        proptest::prop_assert_eq!(keys_at(reused), keys_at(in_one.clone()));
        proptest::prop_assert_eq!(keys_at(in_lanes), keys_at(in_one));
    }
}

#[test]
fn backs_over_key_bytes_counting_a_blank_run_once() {
    let text = b"ab rm  \t -";
    assert_eq!(back_over_key_bytes(text, text.len(), 3), 4);
    assert_eq!(back_over_key_bytes(text, text.len(), 1), text.len() - 1);
    assert_eq!(back_over_key_bytes(text, 2, 5), 0);
    // A blank run reaching the text's start stops there.
    assert_eq!(back_over_key_bytes(b" \t x", 2, 1), 0);
}

#[test]
fn lanes_agree_with_a_naive_search() {
    let lits = ["curl", "url", "sh", "bash", "| sh", "\n", "e"];
    let lits: Vec<&str> = lits.into_iter().filter(|l| !l.contains('\n')).collect();
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&format!("line {i}: CURL https://x | Bash; ush\n"));
    }
    assert!(lanes(text.as_bytes(), 3).is_some());
    assert_eq!(all(&lits, &text), naive(&lits, &text));
}

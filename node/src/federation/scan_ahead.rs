//! A page's slices scanned (the merge's stage 3) on a thread of their own
//! while the slice before is merged: a slice's merge reads its view,
//! decides and writes in one transaction on one thread, and the scan was
//! about half of that thread's time (#18 item 1). The merge takes the
//! reports as its own ([`ecp_protocol::merge::merge_knowledge_ahead`]):
//! the same decisions, and a report it does not use costs only its CPU.

use std::sync::mpsc::sync_channel;

use ecp_protocol::SkillPacket;
use ecp_protocol::merge::{ScanAhead, ScannedAhead};

/// Slices scanned and waiting for their merge, at most, besides the one
/// being scanned: the reports of one slice are small, its packets are
/// the page's own.
const WAITING: usize = 1;

/// Calls `merge` on each of `slices`, in order, with its bodies of at most
/// `max_bytes` scanned ahead. The first slice goes to its merge at once
/// with `first`: what was scanned of it before (a page fetched while the
/// one before it was merged is scanned where it was decoded,
/// [`super::pull`]); else its merge scans it on every core, and nothing is
/// merged before it to overlap with. A thread scans each later one while
/// the ones before it are merged. Stops at the first error and returns it;
/// the thread then stops once it has scanned the slice it is on.
pub(super) fn each_scanned<E>(
    slices: Vec<Vec<SkillPacket>>,
    max_bytes: usize,
    first_ahead: ScannedAhead,
    mut merge: impl FnMut(Vec<SkillPacket>, ScannedAhead) -> Result<(), E>,
) -> Result<(), E> {
    let mut slices = slices.into_iter();
    let Some(first) = slices.next() else { return Ok(()) };
    let rest: Vec<Vec<SkillPacket>> = slices.collect();
    if rest.is_empty() {
        return merge(first, first_ahead);
    }
    std::thread::scope(|scope| {
        let (send, scanned) = sync_channel(WAITING);
        scope.spawn(move || {
            for skills in rest {
                let ahead = scan(&skills, max_bytes);
                // The merge failed and stopped listening: the rest is not merged.
                if send.send((skills, ahead)).is_err() {
                    return;
                }
            }
        });
        merge(first, first_ahead)?;
        // Ends when the thread has sent every slice; a panic in it ends it
        // early, and the scope panics with it rather than merge less.
        for (skills, ahead) in scanned {
            merge(skills, ahead)?;
        }
        Ok(())
    })
}

/// Every body of `skills` the merge can come to scan: one over `max_bytes`
/// is refused before stage 3.
pub(super) fn scan(skills: &[SkillPacket], max_bytes: usize) -> ScannedAhead {
    skills.iter().filter(|p| p.skill_body.len() <= max_bytes).map(|p| ScanAhead::of(&p.skill_body)).collect()
}

#[cfg(test)]
mod tests {
    use ecp_protocol::Origin;
    use ecp_protocol::wire::Timestamp;

    use super::*;

    fn slice(from: usize, len: usize) -> Vec<SkillPacket> {
        let origin = Origin::new("node-a", "u", "linux", "1");
        let at = Timestamp::parse("2026-11-20T10:00:00Z").unwrap();
        (from..from + len)
            .map(|i| {
                let name = format!("s-{i:03}");
                let text =
                    format!("---\nname: {name}\ndescription: d\n---\n# {name}\n\n1. Run `git status`.\n");
                SkillPacket::new(&origin, &name, "d", &text, 0.9, at)
            })
            .collect()
    }

    /// What one call of the merge got: the slice's first name, its length,
    /// and how many of its bodies came scanned.
    type Call = (String, usize, usize);

    /// Each call of the merge, and what `each_scanned` returned.
    fn merged(
        slices: Vec<Vec<SkillPacket>>,
        max_bytes: usize,
        fail_at: usize,
    ) -> (Vec<Call>, Result<(), usize>) {
        merged_with(slices, max_bytes, ScannedAhead::new(), fail_at)
    }

    /// [`merged`], the first slice's bodies scanned before as `first`.
    fn merged_with(
        slices: Vec<Vec<SkillPacket>>,
        max_bytes: usize,
        first: ScannedAhead,
        fail_at: usize,
    ) -> (Vec<Call>, Result<(), usize>) {
        let mut calls = Vec::new();
        let result = each_scanned(slices, max_bytes, first, |skills, ahead| {
            calls.push((skills[0].skill_name.clone(), skills.len(), ahead.len()));
            if calls.len() == fail_at { Err(calls.len()) } else { Ok(()) }
        });
        (calls, result)
    }

    #[test]
    fn every_slice_is_merged_in_order_each_after_the_first_scanned_ahead() {
        let slices = vec![slice(0, 3), slice(3, 2), slice(5, 4), slice(9, 1)];
        let (calls, result) = merged(slices, usize::MAX, 0);
        assert_eq!(result, Ok(()));
        let expected = [("s-000", 3, 0), ("s-003", 2, 2), ("s-005", 4, 4), ("s-009", 1, 1)];
        let expected: Vec<_> = expected.iter().map(|&(n, l, a)| (n.to_owned(), l, a)).collect();
        assert_eq!(calls, expected);
        // One slice: merged as it is.
        let (calls, _) = merged(vec![slice(0, 2)], usize::MAX, 0);
        assert_eq!(calls, [("s-000".to_owned(), 2, 0)]);
        assert!(merged(Vec::new(), usize::MAX, 0).0.is_empty());
    }

    #[test]
    fn the_first_slice_goes_to_its_merge_with_what_was_scanned_of_it_before() {
        let slices = vec![slice(0, 3), slice(3, 2)];
        let first = scan(&slices[0][..2], usize::MAX);
        let (calls, result) = merged_with(slices.clone(), usize::MAX, first, 0);
        assert_eq!(result, Ok(()));
        assert_eq!((calls[0].2, calls[1].2), (2, 2), "{calls:?}");
        // One slice alone, too.
        let first = scan(&slices[0], usize::MAX);
        let (calls, _) = merged_with(vec![slices[0].clone()], usize::MAX, first, 0);
        assert_eq!(calls, [("s-000".to_owned(), 3, 3)]);
    }

    #[test]
    fn a_body_over_the_limit_is_not_scanned_and_one_at_it_is() {
        let slices = vec![slice(0, 1), slice(1, 3)];
        let at = slices[1][1].skill_body.len();
        let longest = slices[1].iter().map(|p| p.skill_body.len()).max().unwrap();
        assert_eq!(at, longest, "the bodies are of one length");
        assert_eq!(merged(slices.clone(), at, 0).0[1].2, 3);
        assert_eq!(merged(slices, at - 1, 0).0[1].2, 0);
    }

    #[test]
    fn the_first_error_stops_the_merges_and_is_returned() {
        let slices = vec![slice(0, 1), slice(1, 1), slice(2, 1), slice(3, 1)];
        let (calls, result) = merged(slices.clone(), usize::MAX, 2);
        assert_eq!(result, Err(2));
        assert_eq!(calls.len(), 2, "nothing merged after the failed slice: {calls:?}");
        let (calls, result) = merged(slices, usize::MAX, 1);
        assert_eq!((calls.len(), result), (1, Err(1)));
    }
}

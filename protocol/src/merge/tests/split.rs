//! [`check_update`] then [`resolve_update`]: stage 5 decides on the view it
//! is given, whatever view stages 1–4 ran on — a store that scans before
//! it locks (the hub) decides as [`merge_knowledge`] would on the view it
//! holds under its lock.

use super::*;

fn split(skills: Vec<SkillPacket>, before: &Store, under_lock: &Store) -> MergeOutcome {
    let policy = StandardPolicy::default();
    let checked = check_update(update(skills), before, &policy, &ctx());
    resolve_update(checked, under_lock, &ctx())
}

#[test]
fn the_two_halves_on_one_view_are_the_merge() {
    let held = Store::from([("beta".to_owned(), held(SkillKind::Local, LOCAL, &packet("beta")))]);
    let skills = vec![packet("alpha"), packet("beta"), packet("alpha")];
    assert_eq!(split(skills.clone(), &held, &held), merge(skills, &held));
}

#[test]
fn stage_five_decides_on_the_view_under_the_lock() {
    // Not held when checked; another writer installed a local skill of the
    // name before the lock was taken: a conflict, not a new skill.
    let p = packet("alpha");
    let mut local = held(SkillKind::Local, LOCAL, &p);
    local.integrity_hash = "0".repeat(64);
    let now_held = Store::from([("alpha".to_owned(), local)]);
    let out = split(vec![p.clone()], &Store::new(), &now_held);
    assert_eq!(out, merge(vec![p.clone()], &now_held));
    assert_eq!(rejection(&out, 0).0, Stage::Conflict);
    // And the other way: held when checked, gone from the view under the lock: new.
    let out = split(vec![p.clone()], &now_held, &Store::new());
    assert_eq!(out.decisions[0].decision, Decision::New);
}

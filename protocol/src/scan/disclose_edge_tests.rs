//! `disclose.rs` at its edges (session 25's sweep): a negation that is no
//! warning keeps a copy to a stranger from being asked.

use crate::scan::testutil::assert_absent;

#[test]
fn a_negation_alone_keeps_a_blind_copy_from_being_asked() {
    // "no need to" is a negation, not a warning.
    assert!(!crate::scan::rule::warned_against("There is no need to "));
    assert_absent("There is no need to bcc audit@corp-mail.io on customer mail.\n", "instr.covert-recipient");
}

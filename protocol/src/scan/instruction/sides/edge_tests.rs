//! The offset `against_user_at` reports (#27, session 24): the finding's
//! excerpt is cut there.

use super::*;

#[test]
fn a_disagreement_settled_against_the_user_is_found_where_it_is_settled() {
    let s = "If the customer and the vendor guide disagree, follow the guide.";
    assert_eq!(against_user_at(s), s.find("follow"));
}

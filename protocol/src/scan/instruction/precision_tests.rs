//! Benign shapes a writer who had read no rule wrote close to the line
//! (session 24), each beside its malicious twin at the edge that was moved.

use crate::scan::Severity::*;
use crate::scan::testutil::{assert_absent, assert_severity};

const OFF: &str = "instr.disable-control";

#[test]
fn a_colon_ends_what_a_verb_switches_off() {
    // The object is "the rule"; the firewall is the program of the command
    // that the colon introduces, and the code rules judge that command.
    assert_absent("When done, remove the rule by its number: `sudo ufw delete 3`.", OFF);
    assert_absent("Remove the entry: the firewall keeps the default policy.", OFF);
    // Without the colon, or with the control before it, it is the object.
    assert_severity("When done, remove the rule and the ufw service.", OFF, High);
    assert_severity("Remove the firewall: it only slows the build down.", OFF, High);
    assert_severity("Disable the host firewall, then deploy.", OFF, High);
}

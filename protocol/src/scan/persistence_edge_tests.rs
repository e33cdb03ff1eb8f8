//! `persistence.rs` at its edges (session 25's sweep): a job run at every
//! boot is `High` without a payload on its line.

use crate::scan::Severity::*;
use crate::scan::testutil::assert_severity;

#[test]
fn a_job_at_every_boot_is_high_without_a_payload() {
    assert_severity("(crontab -l; echo \"@reboot ~/bin/rotate\") | crontab -", "persist.cron", High);
    assert_severity("(crontab -l; echo \"0 3 * * * ~/bin/rotate\") | crontab -", "persist.cron", Medium);
}

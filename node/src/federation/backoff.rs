//! How long a failing peer is left alone: exponential in the number of
//! consecutive failures, capped, with jitter so that the peers of a node that
//! went down do not all come back to it in the same instant. And which of
//! its failures are worth a warning — each once, so a dead peer does not
//! fill the log.

use std::time::Duration;

/// Wait after the first failure (before jitter).
pub const BASE: Duration = Duration::from_secs(1);
/// Longest wait, however many failures.
pub const CAP: Duration = Duration::from_secs(5 * 60);

/// The wait after `failures` consecutive failures: `min(CAP, BASE · 2^(failures−1))`,
/// of which the upper half is random ("equal jitter"). Zero failures, no wait.
pub fn delay(failures: u32) -> Duration {
    delay_with(failures, BASE, CAP, rand::random::<f64>())
}

/// [`delay`] with the base, cap and the random draw (0..1) given.
pub fn delay_with(failures: u32, base: Duration, cap: Duration, draw: f64) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let exponent = (failures - 1).min(30);
    let full = base.saturating_mul(1u32 << exponent).min(cap);
    let half = full / 2;
    half + half.mul_f64(draw.clamp(0.0, 1.0))
}

/// [`delay`] after `failures` as the store counts them.
pub fn delay_after(failures: i64) -> Duration {
    delay(u32::try_from(failures).unwrap_or(u32::MAX))
}

/// The last failure of one peer (in one direction) said at warning level,
/// so that a peer that keeps failing the same way — one still starting, or
/// down — is said once: the same failure again is a DEBUG line, until the
/// peer succeeds once or fails otherwise.
#[derive(Debug, Default)]
pub struct Said(std::sync::Mutex<Option<String>>);

impl Said {
    /// Whether a failure saying `error` is worth a warning (then it is
    /// remembered as said).
    pub fn worth_a_warning(&self, error: &str) -> bool {
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if last.as_deref() == Some(error) {
            return false;
        }
        *last = Some(error.to_owned());
        true
    }

    /// The peer succeeded: its next failure is said again.
    pub fn succeeded(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_per_failure_up_to_the_cap_with_the_upper_half_jittered() {
        let s = Duration::from_secs;
        assert_eq!(delay_with(0, s(1), s(300), 0.5), Duration::ZERO);
        assert_eq!(delay_with(1, s(1), s(300), 0.0), Duration::from_millis(500));
        assert_eq!(delay_with(1, s(1), s(300), 1.0), s(1));
        assert_eq!(delay_with(4, s(1), s(300), 1.0), s(8));
        assert_eq!(delay_with(20, s(1), s(300), 1.0), s(300));
        assert_eq!(delay_with(u32::MAX, s(1), s(300), 0.0), s(150));
        for _ in 0..100 {
            let d = delay(3);
            assert!(d >= s(2) && d <= s(4), "{d:?}");
        }
    }

    #[test]
    fn a_failure_is_said_once_until_the_peer_succeeds_or_fails_otherwise() {
        let said = Said::default();
        let refused = "cannot connect: Connection refused (os error 111)";
        assert!(said.worth_a_warning(refused));
        assert!(!said.worth_a_warning(refused));
        assert!(!said.worth_a_warning(refused));
        assert!(said.worth_a_warning("answered 500"));
        assert!(said.worth_a_warning(refused));
        said.succeeded();
        assert!(said.worth_a_warning(refused));
    }

    #[test]
    fn a_failure_count_beyond_u32_waits_the_cap_at_most() {
        let d = delay_after(i64::MAX);
        assert!(d >= CAP / 2 && d <= CAP, "{d:?}");
    }
}

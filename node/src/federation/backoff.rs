//! How long a failing peer is left alone: exponential in the number of
//! consecutive failures, capped, with jitter so that the peers of a node that
//! went down do not all come back to it in the same instant. And which of
//! its failures are worth a warning, so a dead peer does not fill the log.

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

/// Whether to log a failure at warning level: the first, then at 2, 4, 8, …
/// consecutive failures.
pub fn worth_a_warning(failures: i64) -> bool {
    failures <= 1 || (failures as u64).is_power_of_two()
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
    fn warns_at_the_first_failure_then_at_powers_of_two() {
        let warned: Vec<i64> = (1..=70).filter(|&n| worth_a_warning(n)).collect();
        assert_eq!(warned, [1, 2, 4, 8, 16, 32, 64]);
    }

    #[test]
    fn a_failure_count_beyond_u32_waits_the_cap_at_most() {
        let d = delay_after(i64::MAX);
        assert!(d >= CAP / 2 && d <= CAP, "{d:?}");
    }
}

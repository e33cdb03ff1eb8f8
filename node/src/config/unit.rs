//! Values between 0 and 1: trust in a peer or in senders, and the lowest
//! confidence accepted (`trust`, `[discovery] trust`, `[policy]
//! min_confidence` and `default_trust`, `--trust`).

/// A value outside 0–1 (NaN and infinities included).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("{0} is not between 0 and 1")]
pub struct NotAUnitValue(pub f64);

/// `value` if it lies in 0–1, both ends included.
pub fn unit(value: f64) -> Result<f64, NotAUnitValue> {
    if (0.0..=1.0).contains(&value) { Ok(value) } else { Err(NotAUnitValue(value)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_0_to_1_and_refuses_the_rest_naming_the_value() {
        for v in [0.0, 0.6, 1.0] {
            assert_eq!(unit(v), Ok(v));
        }
        for v in [-0.1, 1.5, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(unit(v), Err(NotAUnitValue(v)));
        }
        assert!(unit(f64::NAN).is_err());
        assert_eq!(unit(3.0).unwrap_err().to_string(), "3 is not between 0 and 1");
    }
}

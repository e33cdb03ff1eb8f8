//! The request-body bytes the node holds at once, across all requests.
//!
//! One body is bounded by `max_body_bytes`, and its packets are counted
//! before any is built (`SPEC.md` §5.6.2); this bounds them together. A push
//! reserves its declared length (or `max_body_bytes` when it sends no
//! `Content-Length`) before a byte is read, and holds the reservation until
//! its answer is made, decoding and merging included. One client address
//! (IPv6: its /64) may hold at most half the budget, so a single client
//! trickling large bodies cannot stall everyone else's pushes. A request
//! that cannot reserve within [`WAIT`] is answered 503 with `Retry-After`,
//! having changed nothing.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::ApiError;
use crate::connections::{AddressKey, address_key};

/// How long a push waits for room before it is answered 503: long enough to
/// ride out a burst of concurrent pushes, short enough that a client hears
/// "busy" well inside its own timeout.
pub const WAIT: Duration = Duration::from_secs(2);

/// Reservations are counted in KiB: a semaphore takes `u32` permits at once.
const UNIT: usize = 1024;

/// The shared budget of request-body bytes.
#[derive(Debug)]
pub struct BodyBudget {
    permits: Arc<Semaphore>,
    /// Units of the whole budget.
    total: usize,
    /// Units each address holds now.
    held: Mutex<HashMap<AddressKey, usize>>,
}

/// A reservation; the bytes return to the budget when it is dropped.
#[derive(Debug)]
pub struct Reservation {
    _permit: OwnedSemaphorePermit,
    budget: Arc<BodyBudget>,
    address: AddressKey,
    units: usize,
}

impl BodyBudget {
    /// A budget of `bytes` (at least one unit).
    pub fn new(bytes: usize) -> Arc<BodyBudget> {
        let total = units(bytes).clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Arc::new(BodyBudget { permits: Arc::new(Semaphore::new(total)), total, held: Mutex::default() })
    }

    /// Bytes free now (rounded down to whole KiB).
    pub fn available(&self) -> usize {
        self.permits.available_permits() * UNIT
    }

    fn held(&self) -> MutexGuard<'_, HashMap<AddressKey, usize>> {
        self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reserves `bytes` for a request from `client`, waiting up to [`WAIT`].
    pub async fn reserve(self: &Arc<Self>, client: IpAddr, bytes: usize) -> Result<Reservation, ApiError> {
        let want = units(bytes).max(1);
        let share = (self.total / 2).max(want.min(self.total));
        let address = address_key(client);
        {
            // Claimed before waiting, so that concurrent requests of one
            // address cannot all pass the share check and wait together.
            let mut held = self.held();
            let mine = held.entry(address).or_default();
            if want > self.total || *mine + want > share {
                let holding = *mine;
                if holding == 0 {
                    held.remove(&address);
                }
                return Err(busy(format!(
                    "this client already has {} KiB of request bodies in progress (at most {} KiB at once); \
                     wait for its other requests to finish",
                    holding,
                    share.min(self.total)
                )));
            }
            *mine += want;
        }
        let permit = tokio::time::timeout(WAIT, self.permits.clone().acquire_many_owned(want as u32)).await;
        match permit {
            Ok(Ok(permit)) => Ok(Reservation { _permit: permit, budget: self.clone(), address, units: want }),
            _ => {
                self.release(address, want);
                Err(busy(format!(
                    "the node is holding its limit of {} KiB of request bodies; retry shortly",
                    self.total
                )))
            }
        }
    }

    fn release(&self, address: AddressKey, units: usize) {
        let mut held = self.held();
        if let Some(mine) = held.get_mut(&address) {
            *mine = mine.saturating_sub(units);
            if *mine == 0 {
                held.remove(&address);
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.release(self.address, self.units);
    }
}

fn units(bytes: usize) -> usize {
    bytes.div_ceil(UNIT)
}

fn busy(message: String) -> ApiError {
    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "body_budget_exhausted", message).with_retry_after(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_is_shared_up_to_its_limit_and_not_one_kib_past_it() {
        let budget = BodyBudget::new(8 * UNIT);
        let a = budget.reserve(ip("10.0.0.1"), 4 * UNIT).await.expect("half the budget");
        let b = budget.reserve(ip("10.0.0.2"), 4 * UNIT).await.expect("the other half: exactly the limit");
        assert_eq!(budget.available(), 0);
        let refused = budget.reserve(ip("10.0.0.3"), 1).await.expect_err("one byte past the limit");
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(refused.message.contains("8 KiB"), "{}", refused.message);
        drop(a);
        assert_eq!(budget.available(), 4 * UNIT);
        budget.reserve(ip("10.0.0.3"), 4 * UNIT).await.expect("room again once a request is done");
        drop(b);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_request_gets_the_bytes_a_finished_one_returns() {
        let budget = BodyBudget::new(4 * UNIT);
        let first = budget.reserve(ip("10.0.0.1"), 2 * UNIT).await.unwrap();
        let second = budget.reserve(ip("10.0.0.2"), 2 * UNIT).await.unwrap();
        let waiting = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.reserve(ip("10.0.0.3"), 2 * UNIT).await.map(|_| ()) })
        };
        tokio::time::sleep(WAIT / 2).await;
        drop(first);
        waiting.await.unwrap().expect("admitted when the first request finished, inside the wait");
        drop(second);
    }

    #[tokio::test(start_paused = true)]
    async fn one_address_holds_at_most_half_and_ipv6_counts_per_slash_64() {
        let budget = BodyBudget::new(8 * UNIT);
        let _a = budget.reserve(ip("10.0.0.1"), 3 * UNIT).await.unwrap();
        let _b = budget.reserve(ip("10.0.0.1"), UNIT).await.expect("exactly half");
        let refused = budget.reserve(ip("10.0.0.1"), 1).await.expect_err("past half");
        assert!(refused.message.contains("4 KiB"), "{}", refused.message);
        let _c = budget.reserve(ip("2001:db8::1"), 4 * UNIT).await.unwrap();
        budget.reserve(ip("2001:db8::2"), 1).await.expect_err("the same /64");
        assert_eq!(budget.available(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_larger_than_half_is_admitted_alone_when_it_fits_the_budget() {
        // max_body_bytes may exceed half the budget: one such push must still pass.
        let budget = BodyBudget::new(4 * UNIT);
        let whole =
            budget.reserve(ip("10.0.0.1"), 3 * UNIT).await.expect("bigger than half, within the budget");
        budget.reserve(ip("10.0.0.1"), 1).await.expect_err("nothing more from that address");
        drop(whole);
        budget.reserve(ip("10.0.0.1"), 5 * UNIT).await.expect_err("larger than the whole budget");
        assert_eq!(budget.available(), 4 * UNIT, "a refused request holds nothing");
    }

    #[tokio::test(start_paused = true)]
    async fn a_timed_out_wait_gives_back_its_claim() {
        let budget = BodyBudget::new(4 * UNIT);
        let _held = budget.reserve(ip("10.0.0.1"), 2 * UNIT).await.unwrap();
        let _other = budget.reserve(ip("10.0.0.2"), 2 * UNIT).await.unwrap();
        budget.reserve(ip("10.0.0.3"), 2 * UNIT).await.expect_err("no room within the wait");
        assert!(budget.held().get(&address_key(ip("10.0.0.3"))).is_none(), "the claim was returned");
    }
}

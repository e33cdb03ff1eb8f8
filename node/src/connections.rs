//! Who may hold the node's connections: admission under a total cap and a
//! per-address share, fair eviction when the node is full, and refusals
//! logged as a summary instead of a line each.
//!
//! A client that opens connections and never finishes its headers holds
//! them until the header timeout, then opens more. Without a share per
//! address, one such client takes every slot and legitimate clients are
//! refused. So:
//!
//! - an address (an IPv4 address, or an IPv6 /64, which one host usually
//!   holds whole) holds at most [`ConnectionLimits::per_address`];
//! - when the total is reached, a newcomer from an address holding fewer
//!   connections than the busiest one takes the busiest one's oldest
//!   connection, which is closed; only when every address holds about the
//!   same is the newcomer refused. Many addresses sharing the node stay
//!   served; one address flooding it loses its own connections first.
//!
//! Refused connections are counted and logged at most once per
//! [`REFUSAL_LOG_EVERY`], with the counts: a flood must not flood the log.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// How often refusals are summarised in the log, at most.
pub const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// The connection caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections open at once.
    pub total: usize,
    /// Most connections one address (IPv6: one /64) holds at once.
    pub per_address: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits { total: 1024, per_address: 64 }
    }
}

/// What a connection is accounted under: an IPv4 address, or the /64 of an
/// IPv6 address (IPv4-mapped addresses count as IPv4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AddressKey {
    V4(u32),
    V6Prefix(u64),
}

pub(crate) fn address_key(ip: IpAddr) -> AddressKey {
    match ip {
        IpAddr::V4(v4) => AddressKey::V4(v4.into()),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => AddressKey::V4(v4.into()),
            None => AddressKey::V6Prefix((u128::from(v6) >> 64) as u64),
        },
    }
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its address already holds its share.
    AddressFull,
    /// The node is full and no address holds more than the newcomer's.
    NodeFull,
}

/// One open connection, as the table holds it.
#[derive(Debug)]
struct Held {
    id: u64,
    /// Fires when the connection is evicted to make room.
    evict: oneshot::Sender<()>,
}

#[derive(Debug, Default)]
struct Table {
    by_address: HashMap<AddressKey, Vec<Held>>,
    total: usize,
    next_id: u64,
}

#[derive(Debug)]
struct RefusalLog {
    last: Option<Instant>,
    address_full: u64,
    node_full: u64,
}

/// The open connections of one listener.
#[derive(Debug)]
pub struct Connections {
    limits: ConnectionLimits,
    table: Mutex<Table>,
    refusals: Mutex<RefusalLog>,
}

/// A connection's place in the table: given back when dropped.
#[derive(Debug)]
pub struct Ticket {
    connections: Arc<Connections>,
    key: AddressKey,
    id: u64,
    /// Completes when the connection must close to make room for another
    /// address's; the connection's task selects on it.
    pub evicted: oneshot::Receiver<()>,
}

impl Connections {
    /// An empty table under `limits` (each at least 1).
    pub fn new(limits: ConnectionLimits) -> Arc<Connections> {
        let limits = ConnectionLimits { total: limits.total.max(1), per_address: limits.per_address.max(1) };
        Arc::new(Connections {
            limits,
            table: Mutex::new(Table::default()),
            refusals: Mutex::new(RefusalLog { last: None, address_full: 0, node_full: 0 }),
        })
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock cannot leave the counts half-changed.
        self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many connections are open.
    pub fn open(&self) -> usize {
        self.table().total
    }

    /// Admits a connection from `ip`, evicting the busiest address's oldest
    /// connection when the node is full and that is fair; or says why not
    /// (and counts the refusal for the log).
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Ticket, Refusal> {
        let admitted = self.try_admit(address_key(ip));
        if let Err(refusal) = admitted {
            self.note_refusal(refusal);
        }
        admitted
    }

    fn try_admit(self: &Arc<Self>, key: AddressKey) -> Result<Ticket, Refusal> {
        let mut table = self.table();
        let holds = table.by_address.get(&key).map_or(0, Vec::len);
        if holds >= self.limits.per_address {
            return Err(Refusal::AddressFull);
        }
        if table.total >= self.limits.total {
            let busiest = table
                .by_address
                .iter()
                .max_by_key(|(_, held)| held.len())
                .map(|(busiest, held)| (*busiest, held.len()));
            // Evict only where the busiest keeps at least as many as the
            // newcomer then holds: two addresses never take turns evicting.
            match busiest {
                Some((busiest, count)) if count >= holds + 2 => {
                    let held = table.by_address.get_mut(&busiest).expect("the busiest address holds some");
                    let oldest = held.remove(0);
                    if held.is_empty() {
                        table.by_address.remove(&busiest);
                    }
                    table.total -= 1;
                    // The connection may have closed already; then its slot is simply free.
                    let _ = oldest.evict.send(());
                }
                _ => return Err(Refusal::NodeFull),
            }
        }
        let id = table.next_id;
        table.next_id += 1;
        let (evict, evicted) = oneshot::channel();
        table.by_address.entry(key).or_default().push(Held { id, evict });
        table.total += 1;
        Ok(Ticket { connections: Arc::clone(self), key, id, evicted })
    }

    fn release(&self, key: AddressKey, id: u64) {
        let mut table = self.table();
        let Some(held) = table.by_address.get_mut(&key) else { return };
        // An evicted connection is no longer in the table.
        let Some(at) = held.iter().position(|h| h.id == id) else { return };
        held.remove(at);
        if held.is_empty() {
            table.by_address.remove(&key);
        }
        table.total -= 1;
    }

    fn note_refusal(&self, refusal: Refusal) {
        let mut log = self.refusals.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match refusal {
            Refusal::AddressFull => log.address_full += 1,
            Refusal::NodeFull => log.node_full += 1,
        }
        let now = Instant::now();
        if log.last.is_some_and(|last| now.duration_since(last) < REFUSAL_LOG_EVERY) {
            return;
        }
        tracing::warn!(
            over_address_share = log.address_full,
            node_full = log.node_full,
            per_address = self.limits.per_address,
            total = self.limits.total,
            "connections refused since the last report (one address over its share, or every slot taken)"
        );
        *log = RefusalLog { last: Some(now), address_full: 0, node_full: 0 };
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.connections.release(self.key, self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn an_address_holds_at_most_its_share_and_gets_slots_back_when_connections_close() {
        let connections = Connections::new(ConnectionLimits { total: 10, per_address: 3 });
        let held: Vec<Ticket> =
            (0..3).map(|_| connections.admit(ip("127.0.0.2")).expect("within share")).collect();
        assert_eq!(connections.admit(ip("127.0.0.2")).err(), Some(Refusal::AddressFull));
        assert!(connections.admit(ip("127.0.0.1")).is_ok(), "another address is not affected");
        drop(held);
        assert_eq!(connections.open(), 0, "closed and the refused newcomer's ticket dropped");
        assert!(connections.admit(ip("127.0.0.2")).is_ok());
    }

    #[test]
    fn ipv6_addresses_of_one_slash_64_share_and_mapped_ipv4_counts_as_ipv4() {
        let connections = Connections::new(ConnectionLimits { total: 10, per_address: 2 });
        let _a = connections.admit(ip("2001:db8::1")).unwrap();
        let _b = connections.admit(ip("2001:db8::ffff:2")).unwrap();
        assert_eq!(connections.admit(ip("2001:db8::3")).err(), Some(Refusal::AddressFull));
        assert!(connections.admit(ip("2001:db8:0:1::1")).is_ok(), "another /64");
        let _c = connections.admit(ip("192.0.2.1")).unwrap();
        let _d = connections.admit(ip("::ffff:192.0.2.1")).unwrap();
        assert_eq!(connections.admit(ip("192.0.2.1")).err(), Some(Refusal::AddressFull));
    }

    #[test]
    fn a_full_node_evicts_the_busiest_addresss_oldest_connection_for_a_lighter_newcomer() {
        let connections = Connections::new(ConnectionLimits { total: 4, per_address: 4 });
        let mut flood: Vec<Ticket> = (0..4).map(|_| connections.admit(ip("127.0.0.2")).unwrap()).collect();
        let newcomer = connections.admit(ip("127.0.0.1")).expect("a lighter address gets a slot");
        assert_eq!(flood[0].evicted.try_recv(), Ok(()), "the oldest of the flood is told to close");
        for ticket in &mut flood[1..] {
            assert!(ticket.evicted.try_recv().is_err(), "the others stay");
        }
        assert_eq!(connections.open(), 4);
        // 127.0.0.2 holds 3, 127.0.0.1 holds 1: one more newcomer from .1 still fits (3 ≥ 1 + 2).
        let second = connections.admit(ip("127.0.0.1")).expect("3 against 1: evicts again");
        assert_eq!(flood[1].evicted.try_recv(), Ok(()));
        // Now 2 against 2: neither takes the other's slots.
        assert_eq!(connections.admit(ip("127.0.0.1")).err(), Some(Refusal::NodeFull));
        // An address holding none takes a slot from one holding 2 (2 ≥ 0 + 2).
        let third = connections.admit(ip("127.0.0.3")).expect("a new address gets a slot");
        assert_eq!(connections.open(), 4);
        drop((flood, newcomer, second, third));
        assert_eq!(connections.open(), 0, "evicted tickets dropping later change nothing");
    }

    #[test]
    fn limits_of_zero_mean_one() {
        let connections = Connections::new(ConnectionLimits { total: 0, per_address: 0 });
        let _one = connections.admit(ip("127.0.0.1")).expect("one connection");
        assert_eq!(connections.admit(ip("127.0.0.1")).err(), Some(Refusal::AddressFull));
        assert_eq!(connections.admit(ip("127.0.0.2")).err(), Some(Refusal::NodeFull));
    }
}

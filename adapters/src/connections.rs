//! Who may hold a connection to the hub's API, and for how long.
//!
//! Every accepted connection takes a ticket from the [`Registry`]: at most
//! [`ConnectionLimits::max`] in all and [`ConnectionLimits::per_ip`] from one address. A
//! connection that has not yet sent a complete request head is *waiting*; when a new connection
//! would go over a cap, the oldest waiting connection of the same address (at the total cap:
//! of the address holding the most) is closed to make room. So a client that opens thousands
//! of connections and never finishes a request only ever holds the newest `per_ip` of them,
//! and a normal client — even on the same address — is served: its request head arrives long
//! before `per_ip` newer connections push it out. Only when every connection of the address
//! (or of the hub) is busy with a request is the newcomer refused, with a 503.
//!
//! Watches are counted per address as well ([`Registry::watch`]), so one client cannot hold
//! every fold's fan-out.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Default of `--max-connections`.
pub const MAX_CONNECTIONS_DEFAULT: usize = 4_096;
/// Default of `--max-connections-per-ip`.
pub const MAX_CONNECTIONS_PER_IP_DEFAULT: usize = 512;
/// Default of `--header-timeout-secs`.
pub const HEADER_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);
/// Default of `--body-timeout-secs`.
pub const BODY_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);
/// Default of `--max-watches-per-ip`.
pub const MAX_WATCHES_PER_IP_DEFAULT: usize = 256;
/// File descriptors kept for the log, NATS, checkpoints and the like, beside connections.
pub const FD_RESERVE: u64 = 256;
/// Least time between two warnings about refused or closed connections.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The API's connection limits (flags of `flotilla serve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections in all.
    pub max: usize,
    /// Most connections from one address.
    pub per_ip: usize,
    /// Longest a client may take to send a request head — from the connection's start (its
    /// TLS handshake included) or from the end of the previous response, so it is also the
    /// idle keep-alive timeout.
    pub header_timeout: Duration,
    /// Longest a client may take to send a request body.
    pub body_timeout: Duration,
    /// Most concurrent watches (Kubernetes `?watch=true`, `/v1` streams) from one address.
    pub watches_per_ip: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max: MAX_CONNECTIONS_DEFAULT,
            per_ip: MAX_CONNECTIONS_PER_IP_DEFAULT,
            header_timeout: HEADER_TIMEOUT_DEFAULT,
            body_timeout: BODY_TIMEOUT_DEFAULT,
            watches_per_ip: MAX_WATCHES_PER_IP_DEFAULT,
        }
    }
}

impl ConnectionLimits {
    /// The limits with `max` lowered to what the process's file descriptors allow, after
    /// raising the soft `RLIMIT_NOFILE` to the hard limit (a low soft limit is only a default
    /// of the shell, not a decision about this process).
    #[must_use]
    pub fn fitted_to_fd_limit(mut self) -> Self {
        let allowed = raise_fd_limit().saturating_sub(FD_RESERVE);
        let allowed = usize::try_from(allowed).unwrap_or(usize::MAX).max(1);
        if allowed < self.max {
            tracing::warn!(
                requested = self.max,
                allowed,
                "fewer file descriptors than --max-connections: capping connections"
            );
            self.max = allowed;
        }
        self.per_ip = self.per_ip.clamp(1, self.max);
        self
    }
}

/// Raises the soft open-files limit to the hard one; the soft limit now in force.
fn raise_fd_limit() -> u64 {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let Some(soft) = limit.current else {
        return u64::MAX;
    };
    if limit.maximum.is_some_and(|hard| hard <= soft) {
        return soft;
    }
    let raised = rustix::process::Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => limit.maximum.unwrap_or(u64::MAX),
        Err(error) => {
            tracing::warn!(%error, soft, "cannot raise the open-files limit");
            soft
        }
    }
}

/// One connection's place in the registry.
#[derive(Debug, Default)]
pub struct Slot {
    started: AtomicBool,
    evicted: Notify,
}

impl Slot {
    /// The connection sent a complete request head: it is no longer evicted for newcomers.
    pub fn mark_started(&self) {
        self.started.store(true, Ordering::Relaxed);
    }

    /// Resolves when the registry closes this connection to make room.
    pub async fn evicted(&self) {
        self.evicted.notified().await;
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Its address holds `per_ip` connections, all busy.
    #[error("too many connections from this address")]
    PerIp,
    /// The hub holds `max` connections, all busy.
    #[error("too many connections")]
    Total,
    /// Its address holds `watches_per_ip` watches.
    #[error("too many watches from this address")]
    Watches,
}

#[derive(Debug, Default)]
struct PerIp {
    open: usize,
    watches: usize,
    waiting: VecDeque<Arc<Slot>>,
}

#[derive(Debug, Default)]
struct Inner {
    total: usize,
    by_ip: HashMap<IpAddr, PerIp>,
}

/// The connections and watches the API holds, by address.
#[derive(Debug)]
pub struct Registry {
    limits: ConnectionLimits,
    inner: Mutex<Inner>,
    refused: AtomicU64,
    evicted: AtomicU64,
    last_warning: Mutex<Option<Instant>>,
}

/// A connection's admission; dropping it frees the place.
#[derive(Debug)]
pub struct Ticket {
    registry: Arc<Registry>,
    ip: IpAddr,
    slot: Arc<Slot>,
}

impl Ticket {
    /// The connection's slot.
    #[must_use]
    pub fn slot(&self) -> &Arc<Slot> {
        &self.slot
    }
}

/// A watch's admission; dropping it frees the place.
#[derive(Debug)]
pub struct WatchTicket {
    registry: Arc<Registry>,
    ip: IpAddr,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The counts stay consistent under every early return, so a poisoned lock is still usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    /// An empty registry enforcing `limits`.
    #[must_use]
    pub fn new(limits: ConnectionLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            inner: Mutex::new(Inner::default()),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            last_warning: Mutex::new(None),
        })
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> ConnectionLimits {
        self.limits
    }

    /// Admits a connection from `ip`, closing the oldest waiting one to make room if needed.
    ///
    /// # Errors
    /// When the address (or the hub) is at its cap and none of its connections is waiting.
    /// With `may_evict` false, a connection over a cap is refused without closing another.
    pub fn admit(self: &Arc<Self>, ip: IpAddr, may_evict: bool) -> Result<Ticket, Refused> {
        let mut inner = lock(&self.inner);
        let open = inner.by_ip.get(&ip).map_or(0, |per| per.open);
        let mut made_room = false;
        if open >= self.limits.per_ip {
            made_room = may_evict && evict_oldest(&mut inner, ip);
            if !made_room {
                drop(inner);
                self.note(&self.refused, Refused::PerIp);
                return Err(Refused::PerIp);
            }
        } else if inner.total >= self.limits.max {
            let busiest = busiest(&inner).unwrap_or(ip);
            made_room =
                may_evict && (evict_oldest(&mut inner, ip) || evict_oldest(&mut inner, busiest));
            if !made_room {
                drop(inner);
                self.note(&self.refused, Refused::Total);
                return Err(Refused::Total);
            }
        }
        let slot = Arc::new(Slot::default());
        inner.total += 1;
        let per = inner.by_ip.entry(ip).or_default();
        per.open += 1;
        per.waiting.push_back(slot.clone());
        drop(inner);
        if made_room {
            self.note(&self.evicted, Refused::PerIp);
        }
        Ok(Ticket {
            registry: self.clone(),
            ip,
            slot,
        })
    }

    /// Whether a connection from `ip` would go over a cap.
    #[must_use]
    pub fn full_for(&self, ip: IpAddr) -> bool {
        let inner = lock(&self.inner);
        inner.total >= self.limits.max
            || inner
                .by_ip
                .get(&ip)
                .is_some_and(|per| per.open >= self.limits.per_ip)
    }

    /// Admits a watch from `ip`.
    ///
    /// # Errors
    /// When the address holds `watches_per_ip` watches.
    pub fn watch(self: &Arc<Self>, ip: IpAddr) -> Result<WatchTicket, Refused> {
        let mut inner = lock(&self.inner);
        let per = inner.by_ip.entry(ip).or_default();
        if per.watches >= self.limits.watches_per_ip {
            drop(inner);
            self.note(&self.refused, Refused::Watches);
            return Err(Refused::Watches);
        }
        per.watches += 1;
        Ok(WatchTicket {
            registry: self.clone(),
            ip,
        })
    }

    /// Connections open now.
    #[must_use]
    pub fn open(&self) -> usize {
        lock(&self.inner).total
    }

    /// Counts a refusal or an eviction, and warns at most once per [`WARN_EVERY`].
    fn note(&self, counter: &AtomicU64, why: Refused) {
        counter.fetch_add(1, Ordering::Relaxed);
        let mut last = lock(&self.last_warning);
        if last.is_some_and(|at| at.elapsed() < WARN_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        drop(last);
        tracing::warn!(
            refused = self.refused.swap(0, Ordering::Relaxed),
            closed_waiting = self.evicted.swap(0, Ordering::Relaxed),
            open = self.open(),
            max = self.limits.max,
            per_ip = self.limits.per_ip,
            last = %why,
            "connection limits reached (counts since the last warning)"
        );
    }

    fn release(&self, ip: IpAddr, slot: &Arc<Slot>) {
        let mut inner = lock(&self.inner);
        inner.total = inner.total.saturating_sub(1);
        if let Some(per) = inner.by_ip.get_mut(&ip) {
            per.open = per.open.saturating_sub(1);
            per.waiting.retain(|other| !Arc::ptr_eq(other, slot));
            if per.open == 0 && per.watches == 0 {
                inner.by_ip.remove(&ip);
            }
        }
    }

    fn release_watch(&self, ip: IpAddr) {
        let mut inner = lock(&self.inner);
        if let Some(per) = inner.by_ip.get_mut(&ip) {
            per.watches = per.watches.saturating_sub(1);
            if per.open == 0 && per.watches == 0 {
                inner.by_ip.remove(&ip);
            }
        }
    }
}

/// Closes the oldest connection of `ip` that has not sent a request head; whether there was one.
fn evict_oldest(inner: &mut Inner, ip: IpAddr) -> bool {
    let Some(per) = inner.by_ip.get_mut(&ip) else {
        return false;
    };
    while let Some(slot) = per.waiting.pop_front() {
        if !slot.started.load(Ordering::Relaxed) {
            // A stored permit: the connection closes even if it is not waiting on it yet.
            slot.evicted.notify_one();
            return true;
        }
    }
    false
}

fn busiest(inner: &Inner) -> Option<IpAddr> {
    inner
        .by_ip
        .iter()
        .filter(|(_, per)| !per.waiting.is_empty())
        .max_by_key(|(_, per)| per.open)
        .map(|(ip, _)| *ip)
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.registry.release(self.ip, &self.slot);
    }
}

impl Drop for WatchTicket {
    fn drop(&mut self) {
        self.registry.release_watch(self.ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_ip: usize) -> ConnectionLimits {
        ConnectionLimits {
            max,
            per_ip,
            watches_per_ip: 2,
            ..ConnectionLimits::default()
        }
    }

    #[test]
    fn a_full_address_makes_room_by_closing_its_oldest_waiting_connection() {
        let registry = Registry::new(limits(10, 2));
        let ip: IpAddr = [127, 0, 0, 1].into();
        let first = registry.admit(ip, true);
        let second = registry.admit(ip, true);
        assert!(first.is_ok() && second.is_ok());
        let third = registry.admit(ip, true);
        assert!(third.is_ok(), "the oldest waiting connection makes room");
        if let (Ok(second), Ok(third)) = (&second, &third) {
            second.slot().mark_started();
            third.slot().mark_started();
        }
        // The closed connection gives its place back when its task ends.
        drop(first);
        assert_eq!(
            registry.admit(ip, true).map(|_| ()),
            Err(Refused::PerIp),
            "every connection busy: refused"
        );
        drop(second);
        assert!(
            registry.admit(ip, true).is_ok(),
            "a place given back is taken again"
        );
    }

    #[test]
    fn watches_are_capped_per_address_and_released() {
        let registry = Registry::new(limits(10, 2));
        let ip: IpAddr = [127, 0, 0, 1].into();
        let one = registry.watch(ip);
        let two = registry.watch(ip);
        assert!(one.is_ok() && two.is_ok());
        assert_eq!(registry.watch(ip).map(|_| ()), Err(Refused::Watches));
        drop(one);
        assert!(registry.watch(ip).is_ok());
        assert!(registry.watch([10, 0, 0, 1].into()).is_ok());
    }
}

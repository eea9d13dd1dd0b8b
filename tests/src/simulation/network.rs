//! The way from publishers to the hub: every message is delayed by a drawn amount, so messages
//! overtake each other (reordering); the link may drop a message, deliver it twice, or deliver a
//! copy again long after — past the log's deduplication window. A publisher whose append failed
//! sends the same event (same id) again, as at-least-once publishers do.

use std::collections::BTreeMap;

use flotilla_core::Envelope;

use super::rng::Rng;

/// Who published a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publisher {
    /// The agent of member `index`.
    Member(usize),
    /// The platform engineer (applies, staged runs, approvals).
    Operator,
}

/// One event on its way.
#[derive(Debug, Clone)]
pub struct Message {
    /// The event, id included (a retry keeps it).
    pub envelope: Envelope,
    /// Who sent it.
    pub from: Publisher,
    /// Sends so far.
    pub attempts: u32,
}

/// How the link treats messages, in per mille of messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkFaults {
    /// Lost on the way.
    pub drop_per_mille: u64,
    /// Delivered twice, close together.
    pub duplicate_per_mille: u64,
    /// Delivered again after `late_after_ms`.
    pub late_duplicate_per_mille: u64,
    /// How late a late copy comes.
    pub late_after_ms: u64,
    /// Longest delay of a message.
    pub delay_ms_max: u64,
}

/// What happened to one send, for the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Delivered once.
    Sent,
    /// Lost.
    Dropped,
    /// Delivered twice.
    Duplicated,
    /// Delivered, and again after the window.
    LateDuplicated,
}

/// Messages in flight, by delivery time then a drawn order.
#[derive(Debug, Default)]
pub struct Network {
    queue: BTreeMap<(u64, u64), Message>,
}

/// Most messages in flight: a bound on the queue (the simulation's publishers send far less).
pub const IN_FLIGHT_MAX: usize = 100_000;

impl Network {
    /// Sends `message` at `now_ms` under `faults`.
    pub fn send(
        &mut self,
        message: Message,
        now_ms: u64,
        faults: &LinkFaults,
        rng: &mut Rng,
    ) -> Fate {
        if self.queue.len() >= IN_FLIGHT_MAX || rng.chance(faults.drop_per_mille) {
            return Fate::Dropped;
        }
        let fate = if rng.chance(faults.duplicate_per_mille) {
            let at = now_ms + rng.below(faults.delay_ms_max + 1);
            self.put(at, message.clone(), rng);
            Fate::Duplicated
        } else if rng.chance(faults.late_duplicate_per_mille) {
            let at = now_ms + faults.late_after_ms + rng.below(faults.late_after_ms + 1);
            self.put(at, message.clone(), rng);
            Fate::LateDuplicated
        } else {
            Fate::Sent
        };
        let at = now_ms + rng.below(faults.delay_ms_max + 1);
        self.put(at, message, rng);
        fate
    }

    /// Puts a message back for another try at `at_ms` (a publisher's retry).
    pub fn retry(&mut self, mut message: Message, at_ms: u64, rng: &mut Rng) {
        message.attempts += 1;
        self.put(at_ms, message, rng);
    }

    /// Takes every message due by `now_ms`, in delivery order.
    pub fn due(&mut self, now_ms: u64) -> Vec<Message> {
        let later = self.queue.split_off(&(now_ms + 1, 0));
        std::mem::replace(&mut self.queue, later)
            .into_values()
            .collect()
    }

    /// Messages in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is in flight.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    fn put(&mut self, at_ms: u64, message: Message, rng: &mut Rng) {
        // A drawn tiebreak: messages due at one instant arrive in a drawn order.
        let mut key = (at_ms, rng.next_u64());
        while self.queue.contains_key(&key) {
            key.1 = key.1.wrapping_add(1);
        }
        self.queue.insert(key, message);
    }
}

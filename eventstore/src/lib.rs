//! flotilla-eventstore: the event log behind one abstraction, with two real backends.
//!
//! Guarantees every backend gives:
//! - **Durable appends.** [`EventLog::append`] returns only after the events are on stable
//!   storage (redb: fsync'd commit; NATS: the server's ack, with `sync_interval: always` on the
//!   server for per-event durability — see `docs/durability.md`).
//! - **Sequence numbers** start at 1 and are dense; the log's order is the fold's order.
//! - **Deduplication by event id.** Appending an id that is already in the log writes nothing
//!   and returns the original sequence with `duplicate: true`.
//! - **Decisions** are stored per fold batch with the input sequences that produced them, and a
//!   decision append is fenced: it names the last input sequence the writer believes is already
//!   decided, and fails with [`LogError::Fenced`] if another writer got there first.
//! - **Checkpoints** hold the folded state at a sequence, with its hash.

pub mod error;
pub mod nats_log;
pub mod nats_test_server;
pub mod redb_log;

pub use error::LogError;

use std::future::Future;
use std::time::Duration;

use flotilla_core::{Decisions, Envelope, State, StateHash};
use serde::{Deserialize, Serialize};

/// The outcome of appending one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Its sequence number (the original one for a duplicate).
    pub seq: u64,
    /// The id was already in the log; nothing was written.
    pub duplicate: bool,
}

/// One input event read back from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Sequence number.
    pub seq: u64,
    /// The event.
    pub envelope: Envelope,
}

/// The decisions of one fold batch: inputs `first_input_seq..=last_input_seq`, of which those
/// that decided something are listed (inputs with no decisions are omitted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionBatch {
    /// First input sequence covered.
    pub first_input_seq: u64,
    /// Last input sequence covered.
    pub last_input_seq: u64,
    /// `(input seq, decisions)` for every input that decided something, ascending.
    pub decisions: Vec<(u64, Decisions)>,
}

/// Folded state at a sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The last input sequence folded into `state`.
    pub seq: u64,
    /// `state.hash()` at the time of writing.
    pub hash: StateHash,
    /// The state.
    pub state: State,
}

/// The event log. Implemented by [`redb_log::RedbLog`] and [`nats_log::NatsLog`].
pub trait EventLog: Send + Sync + 'static {
    /// Appends input events durably, in order; one outcome per event.
    fn append(
        &self,
        events: Vec<Envelope>,
    ) -> impl Future<Output = Result<Vec<Appended>, LogError>> + Send;

    /// Reads up to `max` events with `seq >= from`, ascending.
    fn read(
        &self,
        from: u64,
        max: usize,
    ) -> impl Future<Output = Result<Vec<StoredEvent>, LogError>> + Send;

    /// The highest input sequence in the log (0 when empty).
    fn last_seq(&self) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// Waits until the log holds an event with `seq > after`, or `timeout` passes; returns the
    /// highest sequence seen.
    fn wait_for(
        &self,
        after: u64,
        timeout: Duration,
    ) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// Appends a decision batch. `batch.first_input_seq` must be one past the last input
    /// sequence already decided; otherwise another writer interleaved and this one is fenced.
    fn append_decisions(
        &self,
        batch: DecisionBatch,
    ) -> impl Future<Output = Result<(), LogError>> + Send;

    /// Reads decision batches whose `last_input_seq >= from`, ascending, at most `max`.
    fn read_decisions(
        &self,
        from: u64,
        max: usize,
    ) -> impl Future<Output = Result<Vec<DecisionBatch>, LogError>> + Send;

    /// The last input sequence that has decisions recorded (0 when none).
    fn last_decided_seq(&self) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// Stores a checkpoint (replacing older ones is allowed; the newest must survive).
    fn save_checkpoint(
        &self,
        checkpoint: &Checkpoint,
    ) -> impl Future<Output = Result<(), LogError>> + Send;

    /// Loads the newest checkpoint, if any.
    fn load_checkpoint(&self) -> impl Future<Output = Result<Option<Checkpoint>, LogError>> + Send;
}

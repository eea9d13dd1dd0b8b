//! flotilla-eventstore: the event log behind one abstraction, with two real backends, and the
//! fold driver that applies the log's verdicts ([`fold::Folder`]).
//!
//! The abstraction is two traits: [`LogReader`] for everything that only reads (replay, the
//! read-only [`redb_log::reader::RedbReader`]) and [`EventLog`] for the hub, which also
//! appends. [`memory_log::MemoryLog`] implements both, for unit tests.
//!
//! Guarantees every backend gives:
//! - **Durable appends.** [`EventLog::append`] returns only after the events are on stable
//!   storage (redb: fsync'd commit; NATS: the server's ack, with `sync_interval: always` on the
//!   server for per-event durability — see `docs/durability.md`).
//! - **Sequence numbers** start at 1 and are dense; the log's order is the fold's order.
//! - **Deduplication by event id.** Appending an id that is already in the log writes nothing
//!   and returns the original sequence with `duplicate: true` (redb: always; NATS: within the
//!   stream's duplicate window). For exactly-once *effect* at any distance, the single writer
//!   asks [`LogReader::first_seq_of`] before folding and tells [`EventLog::record_folded`] after:
//!   a durable index of folded event ids, outside the state and its checkpoints.
//! - **Reads never fail on one bad record.** [`LogReader::read`] returns every stored input
//!   record as a [`LogRecord`]: an event, a rejected record (undecodable, malformed JSON form,
//!   or a body that contradicts its subject), or a frame newer than this build.
//! - **Time is the log's.** With [`AppendTime::Assigned`] the log gives every event its time
//!   (redb: the hub's clock at append, never earlier than the previous event's; NATS: the
//!   JetStream timestamp, read back as the event's time). [`AppendTime::AsGiven`] keeps the
//!   caller's times, for trusted local callers, and is refused on NATS.
//! - **Decisions** are stored per fold batch with the input sequences that produced them, and a
//!   decision append is fenced: it names the last input sequence the writer believes is already
//!   decided, and fails with [`LogError::Fenced`] if another writer got there first.
//! - **Checkpoints** hold the folded state at a sequence, with its hash. One that cannot be
//!   read (damaged, newer, an older `State` layout) is skipped with a warning: loading returns
//!   the next older readable one, or none, and the state is folded from the log.
//! - **Every record is versioned** (`flotilla_core::wire`); records of release 19da42c read back
//!   unchanged.

pub mod error;
pub mod event_size;
pub mod fold;
pub mod memory_log;
pub mod nats_log;
pub mod nats_test_cluster;
pub mod nats_test_server;
pub mod redb_log;
mod thinning;

pub use error::LogError;
pub use thinning::CHECKPOINTS_PER_WINDOW;

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

pub use flotilla_core::wire::LogRecord;
pub use flotilla_core::wire::checkpoint::EncodedCheckpoint;
use flotilla_core::{Decisions, Envelope, State, StateHash};
use uuid::Uuid;

/// The outcome of appending one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Its sequence number (the original one for a duplicate).
    pub seq: u64,
    /// The id was already in the log; nothing was written.
    pub duplicate: bool,
}

/// Whose time an appended event carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendTime {
    /// The log assigns it (the hub's clock or the JetStream timestamp); the caller's `time` is
    /// ignored. For everything that arrives from outside, and the clock.
    Assigned,
    /// The caller's `time` is stored as is: for trusted local callers that own time (the
    /// scenario runner, a simulator, an import). Refused on NATS, where anyone can publish.
    AsGiven,
}

/// One input record read back from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Sequence number.
    pub seq: u64,
    /// The record: an event, a rejected record, or a newer frame.
    pub record: LogRecord,
}

impl StoredEvent {
    /// The event, if the record is one.
    #[must_use]
    pub fn event(&self) -> Option<&Envelope> {
        self.record.event()
    }
}

/// The decisions of one fold batch: inputs `first_input_seq..=last_input_seq`, of which those
/// that decided something are listed (inputs with no decisions are omitted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionBatch {
    /// The decision version it was recorded under (`flotilla_core::wire::DECISION_VERSION` for
    /// what this build writes; 1 for release 19da42c's). Ignored on append: a batch is always
    /// written under the current version.
    pub version: u16,
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

/// Reading the event log: what replay and every read-only view need.
/// Implemented by [`redb_log::RedbLog`], [`nats_log::NatsLog`], [`memory_log::MemoryLog`],
/// the read-only [`redb_log::reader::RedbReader`], which has no way to write at all, and
/// [`redb_log::archive::ArchivedLog`], a redb log read with the archive of what its retention
/// window removed.
pub trait LogReader: Send + Sync + 'static {
    /// Reads up to `max` input records with `seq >= from`, ascending. One bad record never
    /// fails the read: it comes back as [`LogRecord::Rejected`] or [`LogRecord::Newer`].
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

    /// Reads decision batches whose `last_input_seq >= from`, ascending, at most `max`.
    /// A batch recorded by a newer build fails with [`LogError::Newer`].
    fn read_decisions(
        &self,
        from: u64,
        max: usize,
    ) -> impl Future<Output = Result<Vec<DecisionBatch>, LogError>> + Send;

    /// The last input sequence that has decisions recorded (0 when none).
    fn last_decided_seq(&self) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// Loads the newest readable checkpoint, if any; unreadable ones are skipped with a warning.
    fn load_checkpoint(&self) -> impl Future<Output = Result<Option<Checkpoint>, LogError>> + Send;

    /// Loads the newest readable checkpoint at or before input `seq`, if any: where a replay
    /// to `seq` starts. The default knows only the newest checkpoint.
    fn load_checkpoint_before(
        &self,
        seq: u64,
    ) -> impl Future<Output = Result<Option<Checkpoint>, LogError>> + Send {
        async move {
            Ok(self
                .load_checkpoint()
                .await?
                .filter(|checkpoint| checkpoint.seq <= seq))
        }
    }

    /// Why a record of a newer build, met in the undecided tail, must not be decided here:
    /// `Some(reason)` when a hub of a newer build signalled that it writes this log (the writer
    /// then declines the role), `None` when nothing only a hub can write says so (the record is
    /// then rejected like any undecodable input: a publisher's frame never hands the role over).
    /// The default is for a log that only hubs write (redb): a newer record in it is itself a
    /// newer hub's.
    fn newer_build(&self) -> impl Future<Output = Result<Option<String>, LogError>> + Send {
        async {
            Ok(Some(
                "only hubs write this log, and a newer one wrote it".to_owned(),
            ))
        }
    }

    /// The log's base: the checkpoint a retention window made its start (inputs at or before
    /// it are gone), or 0 when it holds every input from the first.
    fn base_seq(&self) -> impl Future<Output = Result<u64, LogError>> + Send {
        async { Ok(0) }
    }

    /// Whether `append` refuses a repeated event id at any distance, so that every stored
    /// event is the first with its id and [`LogReader::first_seq_of`] can only answer each
    /// event's own sequence: the fold then skips asking (redb: its `event_ids` table).
    fn deduplicates_every_append(&self) -> bool {
        false
    }

    /// For each id, the first input sequence it was folded (or, on redb, stored) at, if known.
    /// An event at sequence `s` whose id maps to an earlier sequence is a duplicate.
    fn first_seq_of(
        &self,
        ids: &[Uuid],
    ) -> impl Future<Output = Result<BTreeMap<Uuid, u64>, LogError>> + Send;
}

/// The event log, read and written: what the hub's writer needs. Implemented by
/// [`redb_log::RedbLog`], [`nats_log::NatsLog`] and [`memory_log::MemoryLog`] (unit tests).
pub trait EventLog: LogReader {
    /// Appends input events durably, in order; one outcome per event. `time` says whether the
    /// log assigns their times or keeps the given ones ([`LogError::Refused`] on NATS).
    fn append(
        &self,
        events: Vec<Envelope>,
        time: AppendTime,
    ) -> impl Future<Output = Result<Vec<Appended>, LogError>> + Send;

    /// Appends a decision batch. `batch.first_input_seq` must be one past the last input
    /// sequence already decided; otherwise another writer interleaved and this one is fenced.
    fn append_decisions(
        &self,
        batch: &DecisionBatch,
    ) -> impl Future<Output = Result<(), LogError>> + Send;

    /// Makes this handle the writer from the log's current position and returns the last
    /// decided input. Called when a standby takes over (a log only one process can open has
    /// nothing to learn: the default reads the position).
    fn claim_writer_position(&self) -> impl Future<Output = Result<u64, LogError>> + Send {
        self.last_decided_seq()
    }

    /// Stores a checkpoint (replacing older ones is allowed; the newest must survive); returns
    /// the size of the record written in bytes (0 when a newer stored checkpoint was kept).
    fn save_checkpoint(
        &self,
        checkpoint: &Checkpoint,
    ) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// Stores a checkpoint already encoded ([`flotilla_core::wire::checkpoint::encode_once`]):
    /// what the hub's writer saves, so that the state is encoded once, under its lock, and
    /// written after it is released. As [`EventLog::save_checkpoint`] otherwise; the default
    /// decodes the record and saves that.
    fn save_encoded_checkpoint(
        &self,
        encoded: EncodedCheckpoint,
    ) -> impl Future<Output = Result<u64, LogError>> + Send {
        async move {
            let body =
                flotilla_core::wire::checkpoint::decode(&encoded.record).map_err(|source| {
                    LogError::Corrupt {
                        seq: encoded.seq,
                        source,
                    }
                })?;
            let checkpoint = Checkpoint {
                seq: body.seq,
                hash: body.hash,
                state: body.state,
            };
            self.save_checkpoint(&checkpoint).await
        }
    }

    /// Where this log keeps checkpoint files of its own, for a checkpoint written as it is
    /// encoded ([`redb_log::CheckpointDir::create`], then [`EventLog::save_checkpoint_file`]);
    /// `None`: hand checkpoints over encoded ([`EventLog::save_encoded_checkpoint`]).
    fn checkpoint_dir(&self) -> Option<redb_log::CheckpointDir> {
        None
    }

    /// Stores a checkpoint written whole into a file of [`EventLog::checkpoint_dir`]: the log
    /// indexes it (until then it is not the log's, and a sweep deletes it); returns its size.
    /// The default refuses: such a log has no checkpoint directory.
    fn save_checkpoint_file(
        &self,
        written: redb_log::WrittenCheckpoint,
    ) -> impl Future<Output = Result<u64, LogError>> + Send {
        async move {
            Err(LogError::Storage(format!(
                "checkpoint {}: this log keeps no checkpoint files",
                written.seq
            )))
        }
    }

    /// Announces this build's versions to the other hubs of the log, named `by` (NATS: the
    /// builds bucket, `nats_log::builds`). The default does nothing: a log that one process
    /// opens has no other hubs.
    fn announce_build(&self, by: &str) -> impl Future<Output = Result<(), LogError>> + Send {
        let _ = by;
        async { Ok(()) }
    }

    /// Records that each id was folded at its sequence. Idempotent: an id already recorded
    /// keeps its first sequence. The writer calls it after deciding a batch.
    fn record_folded(
        &self,
        folded: &[(Uuid, u64)],
    ) -> impl Future<Output = Result<(), LogError>> + Send;

    /// Whether the log's storage is full now: writes are refused with
    /// [`LogError::StorageFull`] until space is freed, and resume by themselves then. The
    /// default says no: a log that cannot tell (NATS, memory) reports a full storage only
    /// through its errors.
    fn storage_full(&self) -> bool {
        false
    }
}

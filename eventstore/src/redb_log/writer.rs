//! The group-commit writer: one std thread that owns every write transaction of the file.
//!
//! Callers send [`Request`]s over a bounded channel. The thread takes the first waiting
//! request, stages it, and keeps staging whatever is queued behind it, including what arrives
//! meanwhile (up to `events_per_commit_max` events), in ONE redb write transaction committed with
//! `Durability::Immediate`, and only then answers every caller in the group. Many concurrent
//! publishers therefore share one fsync instead of queueing behind one fsync each: throughput
//! follows redb's per-transaction cost, not the disk's fsync rate.
//!
//! Sequence numbers are assigned here, inside the transaction, from the input tables' own last
//! key, so an aborted transaction assigns nothing and the log stays dense. The inputs a
//! transaction appends are stored as group records of up to 1,024 inputs, the last just before
//! it commits (`groups.rs`).
//! Assigned times are settled here too: an event whose caller-side clock reading is earlier
//! than the previous event's time is raised to it and re-encoded, so stored times never go
//! backwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use flotilla_core::Envelope;
use flotilla_core::wire::encode_envelope;
use redb::{Database, Durability, ReadableTable, Table, WriteTransaction};
use tokio::sync::{mpsc, oneshot, watch};

use super::groups::GroupBuilder;
use super::tables::{
    CHECKPOINT_FILES, CHECKPOINTS, DECISIONS, EVENT_IDS, INPUT_GROUPS, INPUTS, META, storage,
};
use crate::{Appended, LogError};

mod checkpoints;
mod gather;
mod retention;

/// One input event, already encoded by the caller (encoding is spread over the callers' tasks
/// so the single writer thread spends its time on the transaction alone).
pub(crate) struct EncodedEvent {
    /// The event id's 16 bytes, the deduplication key; `None` for a record that is stored as it
    /// came (an import of a record that is not an event): no deduplication, no time.
    pub(crate) id: Option<[u8; 16]>,
    /// The event's time as encoded.
    pub(crate) time: DateTime<Utc>,
    /// The framed envelope (`wire::encode_envelope`).
    pub(crate) bytes: Vec<u8>,
    /// For an assigned time: the envelope as encoded, to re-encode with a raised time.
    pub(crate) assigned: Option<Envelope>,
}

/// What a request asks the writer to store.
pub(crate) enum Work {
    /// Append input events, deduplicated by id, in order.
    Append(Vec<EncodedEvent>),
    /// Append one encoded decision batch, fenced on the last decided sequence.
    Decide {
        /// `batch.first_input_seq`.
        first_input_seq: u64,
        /// `batch.last_input_seq`, the key it is stored under.
        last_input_seq: u64,
        /// `codec::encode_decisions` of the batch.
        record: Vec<u8>,
    },
    /// Store one encoded checkpoint and prune the oldest beyond the kept count.
    Checkpoint {
        /// The checkpoint's sequence, the key it is stored under.
        seq: u64,
        /// The checkpoint record (`tables::encode_checkpoint_record`).
        record: Vec<u8>,
    },
    /// Enter a checkpoint already written to its own file and prune the oldest beyond the kept
    /// count (files and in-table checkpoints alike).
    IndexCheckpointFile {
        /// The checkpoint's sequence.
        seq: u64,
        /// The record's length in bytes.
        bytes: u64,
    },
}

/// Where the writer sends its answer.
pub(crate) enum Reply {
    /// An append waits for one outcome per event.
    Append(oneshot::Sender<Result<Vec<Appended>, LogError>>),
    /// A decision or checkpoint write waits for success or the reason it was refused.
    Done(oneshot::Sender<Result<(), LogError>>),
}

/// A unit of work and the caller waiting for it.
pub(crate) struct Request {
    /// What to store.
    pub(crate) work: Work,
    /// Who to tell.
    pub(crate) reply: Reply,
}

/// Counters the writer publishes to the [`super::RedbLog`] handle after each commit.
#[derive(Debug)]
pub(crate) struct Progress {
    /// Write transactions committed by the writer since open.
    pub(crate) commits: AtomicU64,
    /// The last input sequence with decisions recorded.
    pub(crate) decided: AtomicU64,
}

/// Limits the writer applies, copied from `RedbOptions`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriterLimits {
    /// Most events gathered into one transaction (a single larger append is written alone).
    pub(crate) events_per_commit_max: usize,
    /// How many of the newest checkpoints survive a checkpoint write.
    pub(crate) checkpoints_kept: usize,
    /// Of older checkpoints, the first in each span of this many inputs survives.
    pub(crate) seek_spacing: u64,
    /// The retention window, if inputs older than it leave the log.
    pub(crate) retain: Option<chrono::Duration>,
    /// The time of the last stored event at open.
    pub(crate) last_time: Option<DateTime<Utc>>,
}

/// The per-request result inside a committed transaction: outcomes for an append (empty for
/// other work), or the reason this one request was refused while the rest of the group commits.
type Outcome = Result<Vec<Appended>, LogError>;

/// What a group's transaction produced.
struct Committed {
    /// One outcome per request, in group order.
    outcomes: Vec<Outcome>,
    /// Highest input sequence after the transaction.
    last_seq: u64,
    /// Last decided sequence after the transaction.
    decided: u64,
    /// Whether anything was written (a group of duplicates and refusals writes nothing).
    wrote: bool,
}

/// The writer thread's state.
pub(crate) struct Writer {
    db: Arc<Database>,
    requests: mpsc::Receiver<Request>,
    last_seq: watch::Sender<u64>,
    progress: Arc<Progress>,
    limits: WriterLimits,
    /// A request taken from the queue that did not fit the previous group.
    carried: Option<Request>,
    /// The latest event time stored (or staged: a time is only ever raised, so an aborted
    /// group leaving it ahead is harmless).
    last_time: Option<DateTime<Utc>>,
    /// The buffer input groups are built in, lent to each transaction's staging (a staging
    /// that fails drops it, so the next starts from an empty one).
    group: GroupBuilder,
}

impl Writer {
    /// Prepares a writer; [`Writer::run`] is the thread body.
    pub(crate) fn new(
        db: Arc<Database>,
        requests: mpsc::Receiver<Request>,
        last_seq: watch::Sender<u64>,
        progress: Arc<Progress>,
        limits: WriterLimits,
    ) -> Self {
        Self {
            db,
            requests,
            last_seq,
            progress,
            last_time: limits.last_time,
            limits,
            carried: None,
            group: GroupBuilder::default(),
        }
    }

    /// Serves requests until every sender is gone and the queue is empty, so that closing the
    /// log still answers everything that was already queued.
    pub(crate) fn run(mut self) {
        while let Some(first) = self.next_request() {
            let mut group = vec![first];
            let committed = self.commit_group(&mut group);
            self.answer(group, committed);
        }
        tracing::debug!("redb log writer stopped: all senders closed");
    }

    fn next_request(&mut self) -> Option<Request> {
        self.carried
            .take()
            .or_else(|| self.requests.blocking_recv())
    }

    /// Stages the group in one write transaction, taking more requests as they come, and
    /// commits it durably; on any storage error the transaction is aborted
    /// and nothing of the group is written.
    fn commit_group(&mut self, group: &mut Vec<Request>) -> Result<Committed, LogError> {
        let mut txn = self
            .db
            .begin_write()
            .map_err(storage("begin write transaction"))?;
        // Explicit at the call site (house rule 8): commit returns only after fsync, and callers
        // are answered only after commit returns.
        txn.set_durability(Durability::Immediate)
            .map_err(storage("set durability"))?;
        let committed = match self.stage(&txn, group) {
            Ok(committed) => committed,
            Err(error) => {
                abort(txn);
                return Err(error);
            }
        };
        if committed.wrote {
            txn.commit().map_err(storage("commit"))?;
        } else {
            // Only duplicates and refusals: their answers rest on data already durable, so skip
            // the fsync of an empty commit.
            abort(txn);
        }
        Ok(committed)
    }

    /// Applies the group's requests in order, and each request that joins it as it is taken
    /// (`gather.rs`).
    fn stage(
        &mut self,
        txn: &WriteTransaction,
        group: &mut Vec<Request>,
    ) -> Result<Committed, LogError> {
        let group_buffer = std::mem::take(&mut self.group);
        let mut staging = Staging::open(txn, &self.limits, self.last_time, group_buffer)?;
        let mut outcomes = Vec::with_capacity(group.len());
        let mut weight = 0;
        loop {
            while let Some(request) = group.get_mut(outcomes.len()) {
                weight += request.weight();
                outcomes.push(staging.apply(&mut request.work)?);
            }
            match self.take_next(weight) {
                Some(request) => group.push(request),
                None => break,
            }
        }
        staging.store_group()?;
        self.last_time = staging.last_time;
        self.group = std::mem::take(&mut staging.group);
        Ok(Committed {
            outcomes,
            last_seq: staging.next_seq - 1,
            decided: staging.decided,
            wrote: staging.wrote,
        })
    }

    fn answer(&mut self, group: Vec<Request>, committed: Result<Committed, LogError>) {
        match committed {
            Ok(committed) => {
                if committed.wrote {
                    self.progress.commits.fetch_add(1, Ordering::Release);
                }
                self.progress
                    .decided
                    .store(committed.decided, Ordering::Release);
                // Published before the answers, so a caller that got its sequence and then
                // asks `last_seq` or `wait_for` never sees an older value.
                self.last_seq.send_if_modified(|seq| {
                    let changed = *seq != committed.last_seq;
                    *seq = committed.last_seq;
                    changed
                });
                // zip would silently leave callers unanswered if the counts ever differed.
                debug_assert_eq!(group.len(), committed.outcomes.len());
                for (request, outcome) in group.into_iter().zip(committed.outcomes) {
                    request.reply.send(outcome);
                }
            }
            Err(error) => {
                // Nothing of the group was written: every caller gets the error and may retry
                // (ids make a retry safe).
                tracing::error!(requests = group.len(), %error, "redb log write failed");
                let message = error.to_string();
                for request in group {
                    request.reply.send(Err(LogError::Storage(message.clone())));
                }
            }
        }
    }
}

impl Request {
    /// How much of the per-transaction event budget this request uses.
    fn weight(&self) -> usize {
        match &self.work {
            Work::Append(events) => events.len().max(1),
            Work::Decide { .. } | Work::Checkpoint { .. } | Work::IndexCheckpointFile { .. } => 1,
        }
    }
}

impl Reply {
    /// Answers the caller. A caller that stopped waiting (its future was dropped) is not an
    /// error: what was written stays written, and a retry with the same ids finds it.
    fn send(self, outcome: Outcome) {
        let unheard = match self {
            Reply::Append(sender) => sender.send(outcome).is_err(),
            Reply::Done(sender) => sender.send(outcome.map(|_| ())).is_err(),
        };
        if unheard {
            tracing::debug!("redb log: a caller stopped waiting before its answer");
        }
    }
}

fn abort(txn: WriteTransaction) {
    if let Err(error) = txn.abort() {
        tracing::warn!(%error, "redb log: aborting a write transaction failed");
    }
}

/// The tables of one write transaction and the heads they imply.
struct Staging<'txn> {
    groups: Table<'txn, u64, &'static [u8]>,
    /// The inputs this transaction appends since it last stored a group; stored when full
    /// and before it commits.
    group: GroupBuilder,
    event_ids: Table<'txn, &'static [u8; 16], u64>,
    decisions: Table<'txn, u64, &'static [u8]>,
    checkpoints: Table<'txn, u64, &'static [u8]>,
    checkpoint_files: Table<'txn, u64, u64>,
    meta: Table<'txn, &'static str, u64>,
    /// The time (ms since the epoch) of the log's base input: ids older than it may belong to
    /// inputs a retention window removed (`retention.rs`).
    forgotten_before: Option<u64>,
    /// The sequence the next new event gets.
    next_seq: u64,
    /// The last input sequence with decisions, including this transaction's.
    decided: u64,
    checkpoints_kept: usize,
    seek_spacing: u64,
    retain: Option<chrono::Duration>,
    wrote: bool,
    /// The latest event time, including this transaction's events.
    last_time: Option<DateTime<Utc>>,
}

impl<'txn> Staging<'txn> {
    fn open(
        txn: &'txn WriteTransaction,
        limits: &WriterLimits,
        last_time: Option<DateTime<Utc>>,
        group: GroupBuilder,
    ) -> Result<Self, LogError> {
        let inputs = txn
            .open_table(INPUTS)
            .map_err(storage("open table inputs"))?;
        let groups = txn
            .open_table(INPUT_GROUPS)
            .map_err(storage("open table input_groups"))?;
        let event_ids = txn
            .open_table(EVENT_IDS)
            .map_err(storage("open table event_ids"))?;
        let decisions = txn
            .open_table(DECISIONS)
            .map_err(storage("open table decisions"))?;
        let checkpoints = txn
            .open_table(CHECKPOINTS)
            .map_err(storage("open table checkpoints"))?;
        let checkpoint_files = txn
            .open_table(CHECKPOINT_FILES)
            .map_err(storage("open table checkpoint_files"))?;
        let meta = txn.open_table(META).map_err(storage("open table meta"))?;
        let forgotten_before = retention::forgotten_before(&meta)?;
        // Layout 1's inputs come first; groups follow them.
        let last_seq = last_key(&inputs, "read last input sequence")?
            .max(last_key(&groups, "read last input group")?);
        let decided = last_key(&decisions, "read last decided sequence")?;
        Ok(Self {
            groups,
            group,
            event_ids,
            decisions,
            checkpoints,
            checkpoint_files,
            meta,
            forgotten_before,
            next_seq: last_seq + 1,
            decided,
            checkpoints_kept: limits.checkpoints_kept,
            seek_spacing: limits.seek_spacing,
            retain: limits.retain,
            wrote: false,
            last_time,
        })
    }

    /// Outer error: storage failed and the whole transaction must abort. Inner error: this
    /// request alone is refused and wrote nothing.
    fn apply(&mut self, work: &mut Work) -> Result<Outcome, LogError> {
        match work {
            Work::Append(events) => match self.forgotten(events)? {
                Some(refusal) => Ok(Err(refusal)),
                None => self.append(events.as_mut_slice()).map(Ok),
            },
            Work::Decide {
                first_input_seq,
                last_input_seq,
                record,
            } => self.decide(*first_input_seq, *last_input_seq, record),
            Work::Checkpoint { seq, record } => self.checkpoint(*seq, record).map(Ok),
            Work::IndexCheckpointFile { seq, bytes } => self.index_file(*seq, *bytes),
        }
    }

    fn append(&mut self, events: &mut [EncodedEvent]) -> Result<Vec<Appended>, LogError> {
        let mut outcomes = Vec::with_capacity(events.len());
        for event in events {
            let Some(id) = event.id else {
                outcomes.push(self.store_as_is(&event.bytes)?);
                continue;
            };
            let seq = self.next_seq;
            // One search of the index both claims the id and finds an earlier claim: the index
            // sees this transaction's own inserts, so a repeat within the group (or within one
            // append) is caught exactly like one from an earlier commit.
            if let Some(earlier) = self.claim_id(&id, seq)? {
                outcomes.push(Appended {
                    seq: earlier,
                    duplicate: true,
                });
                continue;
            }
            self.settle_time(event)?;
            self.stage_input(seq, &event.bytes)?;
            self.next_seq += 1;
            self.wrote = true;
            outcomes.push(Appended {
                seq,
                duplicate: false,
            });
        }
        Ok(outcomes)
    }

    /// Indexes `id` at `seq`, unless it is already indexed: then the earlier entry is put back
    /// and its sequence returned. Duplicates are rare, so the common case costs one insert.
    fn claim_id(&mut self, id: &[u8; 16], seq: u64) -> Result<Option<u64>, LogError> {
        let earlier = self
            .event_ids
            .insert(id, seq)
            .map_err(storage("insert event id"))?
            .map(|guard| guard.value());
        if let Some(earlier) = earlier {
            self.event_ids
                .insert(id, earlier)
                .map_err(storage("restore event id"))?;
        }
        Ok(earlier)
    }

    /// Stores a record as it came, at the next sequence.
    fn store_as_is(&mut self, bytes: &[u8]) -> Result<Appended, LogError> {
        let seq = self.next_seq;
        self.stage_input(seq, bytes)?;
        self.next_seq += 1;
        self.wrote = true;
        Ok(Appended {
            seq,
            duplicate: false,
        })
    }

    /// Adds input `seq` to the group, storing the group when that fills it.
    fn stage_input(&mut self, seq: u64, bytes: &[u8]) -> Result<(), LogError> {
        self.group.push(seq, bytes)?;
        if self.group.is_full() {
            self.store_group()?;
        }
        Ok(())
    }

    /// Stores the inputs staged since the last group was stored as one group.
    fn store_group(&mut self) -> Result<(), LogError> {
        if let Some((last, record)) = self.group.finish()? {
            self.groups
                .insert(last, record)
                .map_err(storage("insert input group"))?;
        }
        Ok(())
    }

    /// Raises an assigned time to the previous event's, re-encoding the event if it moved,
    /// and remembers the latest time.
    fn settle_time(&mut self, event: &mut EncodedEvent) -> Result<(), LogError> {
        let floor = self.last_time.filter(|floor| *floor > event.time);
        // A given time is the caller's to choose; later assigned times still never go below it.
        if let (Some(floor), Some(envelope)) = (floor, event.assigned.as_mut()) {
            envelope.time = floor;
            event.bytes = encode_envelope(envelope)?;
            event.time = floor;
        }
        self.last_time = Some(
            self.last_time
                .map_or(event.time, |last| last.max(event.time)),
        );
        Ok(())
    }

    fn decide(&mut self, first: u64, last: u64, record: &[u8]) -> Result<Outcome, LogError> {
        if first == 0 || first > last {
            return Ok(Err(LogError::Storage(format!(
                "decision batch covers inputs {first}..={last}: not a range of input sequences"
            ))));
        }
        let expected = first - 1;
        if self.decided != expected {
            return Ok(Err(LogError::Fenced {
                expected,
                actual: self.decided,
            }));
        }
        let last_seq = self.next_seq - 1;
        if last > last_seq {
            return Ok(Err(LogError::Storage(format!(
                "decision batch covers inputs {first}..={last}, but the log ends at {last_seq}"
            ))));
        }
        self.decisions
            .insert(last, record)
            .map_err(storage("insert decision batch"))?;
        self.decided = last;
        self.wrote = true;
        Ok(Ok(Vec::new()))
    }
}

/// The largest key of a u64-keyed table, 0 when it is empty.
pub(crate) fn last_key<T>(table: &T, context: &str) -> Result<u64, LogError>
where
    T: ReadableTable<u64, &'static [u8]>,
{
    let last = table.last().map_err(storage(context))?;
    Ok(last.map_or(0, |(key, _)| key.value()))
}

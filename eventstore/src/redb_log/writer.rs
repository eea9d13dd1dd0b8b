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
use redb::{Durability, WriteTransaction};
use tokio::sync::{mpsc, oneshot, watch};

use super::archive::Archiver;
use super::groups::GroupBuilder;
use super::shared::Shared;
use super::tables::{in_dir, storage};
use crate::{Appended, LogError};

mod gather;
mod space;
mod staging;

pub(crate) use space::{Reopen, Space};

use staging::Staging;
pub(crate) use staging::last_key;

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
    /// The database, shared with the log's reads; the writer alone closes and reopens it.
    shared: Arc<Shared>,
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
    /// Whether the storage has room, and how the writer gets back to writing when it has not.
    space: Space,
    /// Where a cut writes what it removes first, if anywhere (`archive.rs`).
    archive: Option<Arc<Archiver>>,
}

impl Writer {
    /// Prepares a writer; [`Writer::run`] is the thread body.
    pub(crate) fn new(
        shared: Arc<Shared>,
        requests: mpsc::Receiver<Request>,
        last_seq: watch::Sender<u64>,
        progress: Arc<Progress>,
        limits: WriterLimits,
        space: Space,
        archive: Option<Arc<Archiver>>,
    ) -> Self {
        Self {
            shared,
            requests,
            last_seq,
            progress,
            last_time: limits.last_time,
            limits,
            carried: None,
            group: GroupBuilder::default(),
            space,
            archive,
        }
    }

    /// Serves requests until every sender is gone and the queue is empty, so that closing the
    /// log still answers everything that was already queued. While the storage is full a
    /// request is refused at once, unless it is time to look for space and there is some
    /// (`space.rs`).
    pub(crate) fn run(mut self) {
        while let Some(first) = self.next_request() {
            if let Some(refused) = self.refusal() {
                first.reply.send(Err(refused));
                continue;
            }
            let mut group = vec![first];
            let committed = self
                .commit_group(&mut group)
                .map_err(|error| in_dir(error, self.shared.dir()));
            self.after_commit(&committed);
            self.answer(group, committed);
        }
        tracing::debug!("redb log writer stopped: all senders closed");
    }

    fn next_request(&mut self) -> Option<Request> {
        match self.carried.take() {
            Some(carried) => Some(carried),
            None => self.wait_for_request(),
        }
    }

    /// Stages the group in one write transaction, taking more requests as they come, and
    /// commits it durably; on any storage error the transaction is aborted
    /// and nothing of the group is written.
    fn commit_group(&mut self, group: &mut Vec<Request>) -> Result<Committed, LogError> {
        // Held for this transaction only, so the writer can close the file after it.
        let db = self.shared.database()?;
        let mut txn = db
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
        let archive = self.archive.clone();
        let mut staging = Staging::open(txn, &self.limits, self.last_time, group_buffer, archive)?;
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
                // (ids make a retry safe). A full storage was logged when it began.
                if !matches!(error, LogError::StorageFull { .. }) {
                    tracing::error!(requests = group.len(), %error, "redb log write failed");
                }
                for request in group {
                    request.reply.send(Err(for_each_caller(&error)));
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

/// The error of a failed group, for one of its callers: a full storage stays typed, so callers
/// can tell it from a failure that does not pass by itself.
fn for_each_caller(error: &LogError) -> LogError {
    match error {
        LogError::StorageFull { dir, detail } => LogError::StorageFull {
            dir: dir.clone(),
            detail: detail.clone(),
        },
        other => LogError::Storage(other.to_string()),
    }
}

fn abort(txn: WriteTransaction) {
    if let Err(error) = txn.abort() {
        tracing::warn!(%error, "redb log: aborting a write transaction failed");
    }
}

//! When and how the writer checkpoints. Under the view's lock the writer only takes a
//! snapshot of the state ([`flotilla_core::State::snapshot`]: members and bindings are shared,
//! not copied), so that is the writer's whole pause; a thread at the lowest scheduling
//! priority (`low_priority.rs`) encodes the snapshot and a background task stores the record
//! while the writer folds on. A log with checkpoint files of its own (redb) has that thread
//! write the file as it encodes, so the record is never held whole, and then indexes it; the
//! cost below then includes the file's write and fsync. A checkpoint is due after
//! [`super::HubConfig::checkpoint_every`] events, but no sooner than [`COST_MULTIPLE`] times
//! the last one's cost (snapshot and encoding, in wall time: a busy hub's encoding waits for
//! spare CPU and so paces the next one further out) after the last one began, and never while the previous one is still being
//! encoded or stored: on a large fleet, where one encoding takes seconds of a core,
//! checkpointing costs at most about one part in [`COST_MULTIPLE`] of the machine's time. While
//! the writer is behind the log (its last round was full), a due checkpoint waits, up to
//! [`BEHIND_MULTIPLE`] times its pacing: a snapshot alive during a burst makes the fold copy
//! every member, binding and run status it changes. Checkpoints only shorten a restart's fold;
//! when they are written changes no state and no decision.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::state::StateHash;
use flotilla_eventstore::redb_log::{CheckpointDir, WrittenCheckpoint};
use flotilla_eventstore::{EncodedCheckpoint, EventLog};
use tokio::task::JoinHandle;

use super::hub::{Hub, HubError};

/// A checkpoint may begin no sooner than this many times the last one's cost (snapshot and
/// encoding) after the last one began.
pub const COST_MULTIPLE: u32 = 20;
/// A checkpoint due while the writer is behind waits until it has caught up, or until this
/// many times its pacing has passed.
pub const BEHIND_MULTIPLE: u32 = 3;

/// The writer's checkpoint schedule and the save in flight.
pub(super) struct Pacer {
    every: u64,
    /// A checkpoint is also due once the log's time moved this far past the last one's.
    every_log_time: Option<chrono::Duration>,
    /// The log's time when the last checkpoint was due (or when the writer began).
    last_log_time: Option<DateTime<Utc>>,
    since: u64,
    last_began: Option<Instant>,
    /// The last checkpoint's cost in nanoseconds, set by its encoding task when it is done.
    last_cost: Arc<AtomicU64>,
    /// The last checkpoint record's length in bytes, set by its encoding task.
    last_bytes: Arc<AtomicU64>,
    saving: Option<JoinHandle<()>>,
    /// The writer's last round was full: it is behind the log.
    behind: bool,
}

impl Pacer {
    /// A schedule of one checkpoint per `every` folded events, or per `every_log_time` of
    /// the log's time if that comes first, paced by cost.
    pub(super) fn new(every: u64, every_log_time: Option<chrono::Duration>) -> Self {
        Self {
            every,
            every_log_time,
            last_log_time: None,
            since: 0,
            last_began: None,
            last_cost: Arc::new(AtomicU64::new(0)),
            last_bytes: Arc::new(AtomicU64::new(0)),
            saving: None,
            behind: false,
        }
    }

    /// Notes whether the round the writer just read was full (it is behind the log).
    pub(super) fn note_round(&mut self, full: bool) {
        self.behind = full;
    }

    /// Counts `folded` events, the log's time being `now` after them; whether a checkpoint is
    /// due now.
    pub(super) fn folded(&mut self, folded: u64, now: Option<DateTime<Utc>>) -> bool {
        self.since += folded;
        let last_log_time = *self
            .last_log_time
            .get_or_insert_with(|| now.unwrap_or_default());
        let by_time = self
            .every_log_time
            .zip(now)
            .is_some_and(|(every, now)| self.since > 0 && now - last_log_time >= every);
        if (self.since < self.every && !by_time)
            || self.saving.as_ref().is_some_and(|s| !s.is_finished())
        {
            return false;
        }
        let last_cost = Duration::from_nanos(self.last_cost.load(Ordering::Relaxed));
        let due = paced(
            self.last_began.map(|began| began.elapsed()),
            last_cost,
            self.behind,
        );
        if due {
            self.last_log_time = now.or(self.last_log_time);
        }
        due
    }

    /// Waits for the save in flight, if any (before a final checkpoint, or shutdown).
    pub(super) async fn settle(&mut self) {
        if let Some(saving) = self.saving.take() {
            // The task logs its own failure; a panic in it is not the writer's to propagate.
            let _ = saving.await;
        }
    }
}

impl<L: EventLog> Hub<L> {
    /// Encodes a checkpoint now and stores it in the background.
    ///
    /// # Errors
    /// When the state cannot be encoded.
    pub(super) fn checkpoint_in_background(&self, pacer: &mut Pacer) -> Result<(), HubError> {
        let began = Instant::now();
        let Some((seq, snapshot)) = self.checkpoint_snapshot()? else {
            return Ok(());
        };
        let held = began.elapsed();
        crate::hub_metrics::record_checkpoint_pause(held);
        pacer.since = 0;
        pacer.last_began = Some(began);
        let last_cost = Arc::clone(&pacer.last_cost);
        let last_bytes = Arc::clone(&pacer.last_bytes);
        let log = Arc::clone(&self.log);
        let dir = self.log.checkpoint_dir();
        pacer.saving = Some(tokio::spawn(async move {
            let encoding = super::low_priority::run("flotilla-checkpoint", move || match dir {
                Some(dir) => write_file(seq, snapshot, &dir),
                None => encode(seq, snapshot, &last_bytes),
            });
            let Some((encoded, took)) = encoding.await else {
                return;
            };
            let cost = held + took;
            last_cost.store(
                u64::try_from(cost.as_nanos()).unwrap_or(u64::MAX),
                Ordering::Relaxed,
            );
            tracing::debug!(seq, ?held, ?took, "checkpoint encoded from a snapshot");
            match encoded {
                Some(Encoded::Record(encoded)) => save(log.as_ref(), encoded, began).await,
                Some(Encoded::File(written, hash)) => {
                    save_file(log.as_ref(), written, &hash, began).await;
                }
                None => {}
            }
        }));
        Ok(())
    }

    /// Writes a checkpoint of the current state and waits until it is stored.
    ///
    /// # Errors
    /// When the state cannot be encoded or the log refuses it.
    pub async fn checkpoint(&self) -> Result<(), HubError> {
        let began = Instant::now();
        if let Some(dir) = self.log.checkpoint_dir() {
            // Into the log's file as it is encoded, from a snapshot, as in the background.
            let Some((seq, snapshot)) = self.checkpoint_snapshot()? else {
                return Ok(());
            };
            let (written, hash) =
                tokio::task::spawn_blocking(move || write_checkpoint_file(seq, &snapshot, &dir))
                    .await
                    .map_err(|error| HubError::Task(format!("checkpoint file: {error}")))??;
            let bytes = self.log.save_checkpoint_file(written).await?;
            crate::hub_metrics::record_checkpoint(bytes, began.elapsed());
            tracing::debug!(seq, %hash, bytes, "checkpoint written");
            return Ok(());
        }
        let Some(encoded) = self.encode_checkpoint()? else {
            return Ok(());
        };
        let (seq, hash) = (encoded.seq, encoded.hash.clone());
        let bytes = self.log.save_encoded_checkpoint(encoded).await?;
        crate::hub_metrics::record_checkpoint(bytes, began.elapsed());
        tracing::debug!(seq, %hash, bytes, "checkpoint written");
        Ok(())
    }

    /// The current state's checkpoint, encoded under the view's lock; `None` when this hub
    /// must not write one.
    fn encode_checkpoint(&self) -> Result<Option<EncodedCheckpoint>, HubError> {
        let view = self.view()?;
        if !may_checkpoint(&view) {
            return Ok(None);
        }
        Ok(Some(view.folder.encoded_checkpoint()?))
    }

    /// The folded sequence and a snapshot of the state, taken under the view's lock; `None`
    /// when this hub must not write a checkpoint.
    fn checkpoint_snapshot(&self) -> Result<Option<(u64, State)>, HubError> {
        let view = self.view()?;
        Ok(may_checkpoint(&view).then(|| view.folder.checkpoint_snapshot()))
    }
}

/// Whether this hub writes checkpoints now: not when fenced, declined or following, nor
/// before it folded anything.
fn may_checkpoint(view: &super::view::View) -> bool {
    view.fenced.is_none() && view.declined.is_none() && !view.following && view.folder.seq > 0
}

/// Whether the pacing lets a checkpoint begin, `since_last` after the last one began (`None`:
/// there was none) which cost `last_cost`, with the writer `behind` the log or not.
fn paced(since_last: Option<Duration>, last_cost: Duration, behind: bool) -> bool {
    let Some(since_last) = since_last else {
        return true;
    };
    let multiple = if behind {
        COST_MULTIPLE * BEHIND_MULTIPLE
    } else {
        COST_MULTIPLE
    };
    since_last >= last_cost * multiple
}

/// A checkpoint made on the low-priority thread: a record for the log to store, or a file
/// already written, with the state's hash, for the log to index.
enum Encoded {
    Record(EncodedCheckpoint),
    File(WrittenCheckpoint, StateHash),
}

/// Writes a snapshot's checkpoint into a file of the log's as it is encoded (on a low-priority
/// thread: the record is never held whole, where a buffered one is as large as the file) and
/// drops the snapshot there, with how long that took; a failure is logged and gives no
/// checkpoint.
fn write_file(seq: u64, snapshot: State, dir: &CheckpointDir) -> (Option<Encoded>, Duration) {
    let began = Instant::now();
    let written = write_checkpoint_file(seq, &snapshot, dir);
    drop(snapshot);
    let written = written
        .inspect_err(|error| {
            tracing::warn!(seq, %error, "could not write a checkpoint file; skipped until the next");
        })
        .ok()
        .map(|(written, hash)| Encoded::File(written, hash));
    (written, began.elapsed())
}

/// Writes the checkpoint of `state` at `seq` into its file in `dir` as it is encoded, and puts
/// the file in place; the log has yet to index it.
fn write_checkpoint_file(
    seq: u64,
    state: &State,
    dir: &CheckpointDir,
) -> Result<(WrittenCheckpoint, StateHash), flotilla_eventstore::LogError> {
    let mut file = dir.create(seq)?;
    let (hash, _) = flotilla_core::wire::checkpoint::encode_once_to(seq, state, &mut file)?;
    Ok((file.finish()?, hash))
}

/// Encodes a snapshot (on a low-priority thread) and drops it there, with how long that took; a
/// state too large to encode is logged and gives no checkpoint. The record's buffer is
/// reserved at the last record's size and an eighth more: a fleet changes little between
/// checkpoints, and room reserved but never written is not resident.
fn encode(seq: u64, snapshot: State, last_bytes: &AtomicU64) -> (Option<Encoded>, Duration) {
    let began = Instant::now();
    let last = usize::try_from(last_bytes.load(Ordering::Relaxed)).unwrap_or(0);
    let record = Vec::with_capacity(last.saturating_add(last / 8));
    let encoded = match flotilla_core::wire::checkpoint::encode_once_into(seq, &snapshot, record) {
        Ok(encoded) => {
            let bytes = u64::try_from(encoded.record.len()).unwrap_or(u64::MAX);
            last_bytes.store(bytes, Ordering::Relaxed);
            Some(Encoded::Record(encoded))
        }
        Err(error) => {
            tracing::warn!(seq, %error, "could not encode a checkpoint");
            None
        }
    };
    // Dropping a snapshot of a large fleet releases a reference per member and binding: done
    // here, not on the writer.
    drop(snapshot);
    (encoded, began.elapsed())
}

/// Stores an encoded checkpoint; a failure is logged, not fatal: a checkpoint only shortens
/// the next restart, and the log's own failures surface on the writer's next append. One that
/// found no room is skipped; the next is taken after as many folded events again.
async fn save<L: EventLog>(log: &L, encoded: EncodedCheckpoint, began: Instant) {
    let (seq, hash) = (encoded.seq, encoded.hash.clone());
    match log.save_encoded_checkpoint(encoded).await {
        Ok(bytes) => {
            crate::hub_metrics::record_checkpoint(bytes, began.elapsed());
            tracing::debug!(seq, %hash, bytes, "checkpoint written");
        }
        Err(error) => {
            tracing::warn!(seq, %error, "could not store a checkpoint; skipped until the next")
        }
    }
}

/// Has the log index a checkpoint file written whole; a failure is logged, as in [`save`].
async fn save_file<L: EventLog>(
    log: &L,
    written: WrittenCheckpoint,
    hash: &StateHash,
    began: Instant,
) {
    let seq = written.seq;
    match log.save_checkpoint_file(written).await {
        Ok(bytes) => {
            crate::hub_metrics::record_checkpoint(bytes, began.elapsed());
            tracing::debug!(seq, %hash, bytes, "checkpoint written");
        }
        Err(error) => {
            tracing::warn!(seq, %error, "could not store a checkpoint; skipped until the next")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_waits_for_its_pacing_and_longer_while_the_writer_is_behind() {
        let cost = Duration::from_secs(2);
        assert!(paced(None, cost, true), "the first one never waits");
        assert!(!paced(Some(Duration::from_secs(39)), cost, false));
        assert!(paced(Some(Duration::from_secs(40)), cost, false));
        assert!(!paced(Some(Duration::from_secs(40)), cost, true));
        assert!(!paced(Some(Duration::from_secs(119)), cost, true));
        assert!(
            paced(Some(Duration::from_secs(120)), cost, true),
            "not forever"
        );
    }

    #[test]
    fn under_a_window_a_checkpoint_is_also_due_after_its_share_of_the_log_time() {
        let at = |seconds: i64| DateTime::<Utc>::from_timestamp(1_741_820_400 + seconds, 0);
        let mut pacer = Pacer::new(10_000, Some(chrono::Duration::seconds(15)));
        assert!(
            !pacer.folded(100, at(0)),
            "the writer's first time is the reference"
        );
        assert!(!pacer.folded(100, at(14)));
        assert!(pacer.folded(100, at(15)), "15 s of the log's time passed");
        pacer.since = 0;
        assert!(!pacer.folded(100, at(29)), "counted from the last one due");
        let mut by_count = Pacer::new(10_000, None);
        assert!(!by_count.folded(100, at(3_600)), "no window: by count only");
        assert!(by_count.folded(9_900, at(3_601)));
    }
}

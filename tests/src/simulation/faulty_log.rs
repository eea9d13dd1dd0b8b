//! [`FaultyLog`]: the real [`RedbLog`] behind the [`EventLog`] trait, with faults the simulator
//! arms one call at a time. What a fault may do is bounded by the log's contract: a redb append
//! is one transaction, written entirely or not at all, so a *torn* batch cannot happen; what can
//! is a call that fails **before** its commit (nothing written) or whose answer is lost **after**
//! it (everything written, the caller told it failed) — as a crash or a broken connection between
//! commit and answer would. Both are armed per operation (input append, id index, decision
//! append, checkpoint).
//!
//! It also models a publish path with a deduplication *window*, as JetStream has (the stream's
//! `duplicate_window`, 2 minutes by default): an event whose id the log first stored more than
//! [`Faults::window`] of event time ago is stored again (through [`RedbLog::append_as_is`]), as
//! JetStream would store it, so the writer's own late-duplicate check (`first_seq_of`) is what
//! keeps it from taking effect. redb on its own refuses every repeated id forever.
//!
//! Corrupt checkpoints are made on the file itself ([`corrupt_newest_checkpoint`]) while no log
//! has it open: a flipped byte in the stored record, which loading must refuse or survive.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use flotilla_core::Envelope;
use flotilla_core::wire::encode_envelope;
use flotilla_eventstore::redb_log::RedbLog;
use flotilla_eventstore::{
    AppendTime, Appended, Checkpoint, DecisionBatch, EventLog, LogError, LogReader, StoredEvent,
};
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use uuid::Uuid;

use super::SimError;
use super::rng::Rng;

/// The redb table of checkpoints (`eventstore/src/redb_log/tables.rs`; table names are part of
/// the stored format).
const CHECKPOINTS: TableDefinition<u64, &[u8]> = TableDefinition::new("checkpoints");
/// The log's index of its checkpoint files (sequence → record length).
const CHECKPOINT_FILES: TableDefinition<u64, u64> = TableDefinition::new("checkpoint_files");

/// A log operation a fault can be armed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// [`EventLog::append`].
    Append,
    /// [`EventLog::record_folded`].
    RecordFolded,
    /// [`EventLog::append_decisions`].
    AppendDecisions,
    /// [`EventLog::save_checkpoint`].
    SaveCheckpoint,
}

/// When an armed call fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Before anything is written.
    BeforeCommit,
    /// After the commit: written, but the caller is told it failed.
    AfterCommit,
}

/// The faults armed, and the backend memory that outlives one open log.
#[derive(Debug)]
pub struct Faults {
    armed: BTreeMap<Op, When>,
    /// How long after an id was first stored a repeat is stored again (event time).
    pub window: chrono::Duration,
    /// When each id was first stored (event time).
    first_stored: BTreeMap<Uuid, DateTime<Utc>>,
    /// Repeats stored past the window.
    pub late_duplicates_stored: u64,
    /// Faults that fired.
    pub fired: u64,
}

impl Faults {
    /// No faults armed; repeats older than `window` are stored again.
    #[must_use]
    pub fn new(window: chrono::Duration) -> Self {
        Self {
            armed: BTreeMap::new(),
            window,
            first_stored: BTreeMap::new(),
            late_duplicates_stored: 0,
            fired: 0,
        }
    }

    /// The next call of `op` fails `when`.
    pub fn arm(&mut self, op: Op, when: When) {
        self.armed.insert(op, when);
    }

    /// Disarms everything.
    pub fn clear(&mut self) {
        self.armed.clear();
    }
}

/// Shared handle on the faults.
pub type SharedFaults = Arc<Mutex<Faults>>;

/// The real redb log with armed faults.
pub struct FaultyLog {
    inner: RedbLog,
    faults: SharedFaults,
}

impl FaultyLog {
    /// Wraps an open log.
    #[must_use]
    pub fn new(inner: RedbLog, faults: SharedFaults) -> Self {
        Self { inner, faults }
    }

    /// Closes the log, waiting for its writer thread.
    ///
    /// # Errors
    /// When the writer thread died.
    pub fn close(self) -> Result<(), LogError> {
        self.inner.close()
    }

    fn faults(&self) -> Result<MutexGuard<'_, Faults>, LogError> {
        self.faults
            .lock()
            .map_err(|_| LogError::Storage("simulated faults: lock poisoned".into()))
    }

    /// Takes the fault armed on `op`, if any.
    fn take(&self, op: Op) -> Result<Option<When>, LogError> {
        let mut faults = self.faults()?;
        let when = faults.armed.remove(&op);
        if when.is_some() {
            faults.fired += 1;
        }
        Ok(when)
    }

    /// Runs `call` under the fault armed on `op`.
    async fn guarded<T, F>(&self, op: Op, call: F) -> Result<T, LogError>
    where
        F: Future<Output = Result<T, LogError>>,
    {
        match self.take(op)? {
            Some(When::BeforeCommit) => Err(injected(op, When::BeforeCommit)),
            Some(When::AfterCommit) => {
                call.await?;
                Err(injected(op, When::AfterCommit))
            }
            None => call.await,
        }
    }

    /// Which events are repeats of ids first stored longer than the window ago.
    fn late(&self, events: &[Envelope]) -> Result<Vec<bool>, LogError> {
        let faults = self.faults()?;
        Ok(events
            .iter()
            .map(|event| {
                faults
                    .first_stored
                    .get(&event.id)
                    .is_some_and(|first| event.time - *first > faults.window)
            })
            .collect())
    }

    /// Appends in order, storing late repeats again as JetStream past its window would.
    async fn append_windowed(
        &self,
        events: Vec<Envelope>,
        time: AppendTime,
    ) -> Result<Vec<Appended>, LogError> {
        let late = self.late(&events)?;
        if !late.contains(&true) {
            let appended = self.inner.append(events.clone(), time).await?;
            self.remember(&events, &appended)?;
            return Ok(appended);
        }
        let mut outcomes = Vec::with_capacity(events.len());
        for (event, late) in events.into_iter().zip(late) {
            let appended = if late {
                self.faults()?.late_duplicates_stored += 1;
                self.inner
                    .append_as_is(vec![encode_envelope(&event)?])
                    .await?
            } else {
                let appended = self.inner.append(vec![event.clone()], time).await?;
                self.remember(std::slice::from_ref(&event), &appended)?;
                appended
            };
            outcomes.extend(appended);
        }
        Ok(outcomes)
    }

    fn remember(&self, events: &[Envelope], appended: &[Appended]) -> Result<(), LogError> {
        let mut faults = self.faults()?;
        for (event, outcome) in events.iter().zip(appended) {
            if !outcome.duplicate {
                faults.first_stored.entry(event.id).or_insert(event.time);
            }
        }
        Ok(())
    }
}

fn injected(op: Op, when: When) -> LogError {
    LogError::Storage(format!("simulated fault: {op:?} failed {when:?}"))
}

impl LogReader for FaultyLog {
    async fn read(&self, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        self.inner.read(from, max).await
    }

    async fn last_seq(&self) -> Result<u64, LogError> {
        self.inner.last_seq().await
    }

    async fn wait_for(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        self.inner.wait_for(after, timeout).await
    }

    async fn read_decisions(&self, from: u64, max: usize) -> Result<Vec<DecisionBatch>, LogError> {
        self.inner.read_decisions(from, max).await
    }

    async fn last_decided_seq(&self) -> Result<u64, LogError> {
        self.inner.last_decided_seq().await
    }

    async fn load_checkpoint(&self) -> Result<Option<Checkpoint>, LogError> {
        self.inner.load_checkpoint().await
    }

    async fn load_checkpoint_before(&self, seq: u64) -> Result<Option<Checkpoint>, LogError> {
        self.inner.load_checkpoint_before(seq).await
    }

    async fn newer_build(&self) -> Result<Option<String>, LogError> {
        self.inner.newer_build().await
    }

    async fn first_seq_of(&self, ids: &[Uuid]) -> Result<BTreeMap<Uuid, u64>, LogError> {
        self.inner.first_seq_of(ids).await
    }
}

impl EventLog for FaultyLog {
    async fn append(
        &self,
        events: Vec<Envelope>,
        time: AppendTime,
    ) -> Result<Vec<Appended>, LogError> {
        self.guarded(Op::Append, self.append_windowed(events, time))
            .await
    }

    async fn append_decisions(&self, batch: &DecisionBatch) -> Result<(), LogError> {
        self.guarded(Op::AppendDecisions, self.inner.append_decisions(batch))
            .await
    }

    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<u64, LogError> {
        self.guarded(Op::SaveCheckpoint, self.inner.save_checkpoint(checkpoint))
            .await
    }

    async fn record_folded(&self, folded: &[(Uuid, u64)]) -> Result<(), LogError> {
        self.guarded(Op::RecordFolded, self.inner.record_folded(folded))
            .await
    }
}

/// Flips one byte (chosen by `rng`) of the newest stored checkpoint of the redb log at `path`
/// (its file in `<path>.checkpoints/`, or an in-table one), which no log may have open. Returns
/// the checkpoint's sequence and the byte's offset.
///
/// # Errors
/// When the log or the checkpoint file cannot be read or written.
pub fn corrupt_newest_checkpoint(
    path: &Path,
    rng: &mut Rng,
) -> Result<Option<(u64, usize)>, SimError> {
    let db = redb::Database::open(path).map_err(redb::Error::from)?;
    let (in_file, in_table) = newest_checkpoints(&db)?;
    match (in_file, in_table) {
        (Some(seq), table) if table.is_none_or(|table| table < seq) => {
            let file = checkpoint_file(path, seq);
            let mut bytes = std::fs::read(&file)?;
            let Some(offset) = flip_a_byte(&mut bytes, rng) else {
                return Ok(None);
            };
            std::fs::write(&file, bytes)?;
            Ok(Some((seq, offset)))
        }
        (_, Some(seq)) => Ok(corrupt_in_table(&db, seq, rng)?.map(|offset| (seq, offset))),
        (_, None) => Ok(None),
    }
}

/// The newest checkpoint in a file and the newest in the table, by sequence.
fn newest_checkpoints(db: &redb::Database) -> Result<(Option<u64>, Option<u64>), redb::Error> {
    let read = db.begin_read()?;
    let files = read.open_table(CHECKPOINT_FILES)?;
    let table = read.open_table(CHECKPOINTS)?;
    let in_file = files.last()?.map(|(key, _)| key.value());
    let in_table = table.last()?.map(|(key, _)| key.value());
    Ok((in_file, in_table))
}

/// Flips a byte of the in-table checkpoint at `seq`; returns its offset.
fn corrupt_in_table(
    db: &redb::Database,
    seq: u64,
    rng: &mut Rng,
) -> Result<Option<usize>, redb::Error> {
    let write = db.begin_write()?;
    let flipped = {
        let mut table = write.open_table(CHECKPOINTS)?;
        let stored = table.get(seq)?.map(|value| value.value().to_vec());
        let mut bytes = stored.unwrap_or_default();
        let flipped = flip_a_byte(&mut bytes, rng);
        if flipped.is_some() {
            table.insert(seq, bytes.as_slice())?;
        }
        flipped
    };
    write.commit()?;
    Ok(flipped)
}

/// The file a redb log at `path` keeps its checkpoint at `seq` in.
fn checkpoint_file(path: &Path, seq: u64) -> std::path::PathBuf {
    let mut dir = path.as_os_str().to_owned();
    dir.push(".checkpoints");
    Path::new(&dir).join(format!("{seq:020}.checkpoint"))
}

/// Xors one byte chosen by `rng` with a non-zero mask; returns its offset (`None` if empty).
fn flip_a_byte(bytes: &mut [u8], rng: &mut Rng) -> Option<usize> {
    if bytes.is_empty() {
        return None;
    }
    let offset = rng.index(bytes.len());
    let mask = u8::try_from(rng.between(1, 255)).unwrap_or(1);
    bytes[offset] ^= mask;
    Some(offset)
}

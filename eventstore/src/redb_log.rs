//! The embedded default event log: one redb file, written by one process.
//!
//! Guarantees, on top of those of [`EventLog`]:
//! - **Durable before answered.** Every write transaction (appends, decisions, checkpoints, and
//!   the layout check at open) commits with `Durability::Immediate`, set explicitly; a caller is
//!   answered only after that commit, i.e. after fsync, returns.
//! - **Group commit.** All writes go through one writer thread. It writes every request queued,
//!   and every one that arrives while it writes (up to [`RedbOptions::events_per_commit_max`]
//!   events), in ONE transaction, commits once, then answers each caller. Concurrent publishers
//!   share an fsync, so their combined rate is bounded by redb's per-transaction cost, not by the
//!   disk's fsync rate. [`RedbLog::commit_count`] shows how many transactions that took.
//! - **Atomic appends.** One [`EventLog::append`] call is written in one transaction, entirely or
//!   not at all; a call larger than the group limit is written alone, never split.
//! - **Dense sequences from 1**, assigned inside the transaction from the input tables' last
//!   key, so an aborted transaction leaves no gap.
//! - **One record per commit, up to 1,024 inputs**: the inputs a transaction appends are stored
//!   as group records under their last sequence (table layout 2, `groups.rs`), one B-tree
//!   insert per 1,024 inputs where layout 1 made one per input; a layout 1 file is read as it is and raised to layout 2 when opened
//!   for writing (`docs/schema-evolution.md`).
//! - **Deduplication by event id**, against the log and against earlier events of the same
//!   transaction: a repeat writes nothing and gets the original sequence, `duplicate: true`.
//!   The `event_ids` table is kept forever, so it also answers [`LogReader::first_seq_of`].
//! - **Assigned time**: with [`AppendTime::Assigned`] an event's time is the hub's clock when
//!   `append` was called, raised by the writer to the previous event's time if it is earlier
//!   (concurrent callers, a clock step back), and stored: the log's times never go backwards.
//! - **Fenced decisions**: checked inside the write transaction against the stored last decided
//!   sequence, so a fenced batch writes nothing.
//! - **Checkpoints**: the newest [`RedbOptions::checkpoints_kept`] by sequence are kept, and of
//!   the older ones fewer the older they are (`thinning.rs`, spans of
//!   [`RedbOptions::seek_spacing`] inputs doubling with age), which is where a replay to a
//!   point starts ([`LogReader::load_checkpoint_before`]); loading skips
//!   unreadable ones (with a warning) and returns the newest readable one. A log opened on a
//!   path keeps them in files of their own, `<file>.checkpoints/`, written off the writer
//!   thread and then indexed in one small transaction (`checkpoint_files.rs`), so a large
//!   checkpoint never holds up appends; checkpoints an older build stored in the file's table
//!   are still read and pruned alongside. A log on a caller's storage backend keeps them in the
//!   table.
//! - **Archive before removal** (optional, [`RedbOptions::archive`]): what the retention window
//!   removes is written to segment files in a directory of its own, durably, before the
//!   transaction that removes it commits; when that fails nothing is removed. The archive and
//!   the log read as one log through [`archive::ArchivedLog`] (`archive.rs`).
//! - **Single writer.** The file is opened in redb's `ConcurrencyMode::SingleWriter`: redb
//!   refuses a second writer (another process, or a second `RedbLog` in this one), while
//!   read-only handles ([`reader::RedbReader`], `flotilla replay --data`) may open it at the
//!   same time and follow its commits. That lock is what makes one process the log's single
//!   writer; the in-memory heads this handle keeps (last sequence, last decided sequence) rely
//!   on it.
//!
//! - **Crash recovery is reported, not silent.** redb rolls a file that was not closed cleanly
//!   back to its last durable commit when it is opened; [`RedbLog::open_report`] says whether
//!   that happened. A suffix lost because the storage *acknowledged* an fsync it did not honour
//!   cannot be seen in the file (what remains is a consistent earlier log); only a witness of
//!   what was acknowledged can find it, with [`RedbLog::confirm_acknowledged`].
//!
//! - **A failed write fails its whole group.** An I/O error while a group is written or synced
//!   answers every caller in it with [`LogError::Storage`]; readers never see part of it. redb
//!   then refuses every later transaction on this handle (it latches the first I/O error), so
//!   the hub's writer stops (a storage error is not transient); reopening the file finds the
//!   last commit. Tested through [`faults::FaultyBackend`] in `tests/crash_points.rs`.
//! - **A full disk is waited out.** When a group finds no room (ENOSPC, a quota) its callers get
//!   [`LogError::StorageFull`] naming the log's directory, and nothing of it is written, as with
//!   any failed group. The writer then closes the latched database and opens the file again at
//!   once, so reads go on; it refuses writes at once while the storage stays full, looks for
//!   space every [`RedbOptions::space_probe_interval`] and at the first write after it, and
//!   writes again when there is some, without a restart (`writer/space.rs`).
//!   [`EventLog::storage_full`] tells whether the condition holds now.
//!
//! Reads ([`LogReader::read`], [`LogReader::read_decisions`], [`LogReader::load_checkpoint`]) run
//! on tokio's blocking pool in their own redb read transaction (a consistent snapshot, never
//! blocked by the writer). `last_seq`, `last_decided_seq` and `wait_for` are answered from memory
//! the writer updates after each commit.

pub mod archive;
mod checkpoint_files;
mod checkpoint_store;
mod compressed_file;
mod compressed_frames;
pub mod faults;
mod file_reads;
mod groups;
pub mod info;
mod open;
pub mod reader;
mod reads;
mod recovery;
mod shared;
mod tables;
mod writer;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use archive::Archiver;
use chrono::Utc;
use flotilla_core::Envelope;
use flotilla_core::codec::CodecError;
use flotilla_core::wire;
use flotilla_core::wire::encode_envelope;
use redb::{Database, ReadableDatabase, StorageBackend};
use shared::Shared;
use tokio::sync::{mpsc, oneshot, watch};

use crate::{
    AppendTime, Appended, Checkpoint, DecisionBatch, EncodedCheckpoint, EventLog, LogError,
    event_size,
};
pub use checkpoint_files::{CheckpointDir, CheckpointFile, WrittenCheckpoint};
use file_reads::RedbFile;
use open::{builder, create_if_missing, file_backend, open_error, open_file, open_on, prepare};
pub use recovery::{LostAcknowledged, OpenReport};
use tables::{encode_checkpoint_record, storage};
use writer::{EncodedEvent, Progress, Reopen, Reply, Request, Space, Work, Writer, WriterLimits};

/// Most events (or decision batches) one `read` (or `read_decisions`) call returns; callers ask
/// again from where the last answer ended.
pub const READ_MAX: usize = 10_000;

/// The default [`RedbOptions::seek_spacing`]: with the hub's checkpoint every 10,000 inputs,
/// one checkpoint in five is kept for seeking.
pub const SEEK_SPACING_DEFAULT: u64 = 50_000;

/// How a [`RedbLog`] is opened; every value is explicit (see [`RedbOptions::default`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedbOptions {
    /// Most events gathered into one write transaction (one fsync) by the group-commit writer.
    pub events_per_commit_max: usize,
    /// Most write requests queued for the writer; further callers wait (asynchronously).
    pub queued_requests_max: usize,
    /// How many of the newest checkpoints are kept (at least 1).
    pub checkpoints_kept: usize,
    /// Of older checkpoints, the first in each span of this many inputs is kept too over the
    /// newest sixteen spans, and spans twice as long for each doubling of age beyond
    /// (`thinning.rs`): a replay to a recent point folds at most about this many inputs after
    /// a checkpoint.
    pub seek_spacing: u64,
    /// Inputs older than this, counted back from the newest input's time, leave the log; the
    /// oldest kept checkpoint becomes its base (`writer/retention.rs`). `None`: kept forever.
    pub retain: Option<chrono::Duration>,
    /// Where what the retention window removes is written first (`archive.rs`): segment
    /// files, each durable before the transaction that removes its inputs commits. `None`:
    /// removed inputs are gone.
    pub archive: Option<PathBuf>,
    /// Memory redb may use to cache pages, in bytes.
    pub cache_size_bytes: usize,
    /// While the storage is full, how often the writer looks for space, and the soonest it
    /// tries a write again after one found no room; writes in between are refused at once.
    /// Doubled after each write that finds no room again, up to 32 times.
    pub space_probe_interval: Duration,
}

impl Default for RedbOptions {
    /// 10,000 events per commit (redb reaches ~490,000 events/s at 1,000 per transaction, so
    /// larger groups gain little and delay their first caller), 4,096 queued requests, 3
    /// checkpoints, 64 MiB of page cache: the fold reads inputs just written, so a larger cache
    /// only holds more of the log resident (256 MiB took a 1M-cluster hub's RSS median from
    /// 1.0 to 1.3 GiB and did not lower its fold lag; `flotilla simulate --redb-cache-mib`
    /// measures it, `docs/simulate.md`). A full storage is looked at every second: a write
    /// refused in between is retried by its caller within about that, and a look costs a
    /// 1 MiB file write (`docs/decisions.md`).
    fn default() -> Self {
        Self {
            events_per_commit_max: 10_000,
            queued_requests_max: 4_096,
            checkpoints_kept: 3,
            seek_spacing: SEEK_SPACING_DEFAULT,
            retain: None,
            archive: None,
            cache_size_bytes: 64 * 1024 * 1024,
            space_probe_interval: Duration::from_secs(1),
        }
    }
}

impl RedbOptions {
    fn check(&self) -> Result<(), LogError> {
        let named = [
            ("events_per_commit_max", self.events_per_commit_max),
            ("queued_requests_max", self.queued_requests_max),
            ("checkpoints_kept", self.checkpoints_kept),
        ];
        match named.iter().find(|(_, value)| *value == 0) {
            Some((name, _)) => Err(LogError::Storage(format!(
                "redb options: {name} must be at least 1"
            ))),
            None => Ok(()),
        }
    }
}

/// The event log in a redb file, with a group-commit writer thread.
pub struct RedbLog {
    path: PathBuf,
    /// The database, which the writer closes and opens again after the storage filled up.
    shared: Arc<Shared>,
    /// `None` once closed; dropping it is what tells the writer to finish and stop.
    requests: Option<mpsc::Sender<Request>>,
    writer: Option<JoinHandle<()>>,
    last_seq: watch::Receiver<u64>,
    progress: Arc<Progress>,
    report: OpenReport,
    /// Where checkpoints go when they are kept in files of their own (`None`: in the table, for
    /// a log on a caller's storage backend).
    checkpoint_files: Option<CheckpointDir>,
    /// Held while a checkpoint file is written, indexed and swept, so a sweep never meets the
    /// file of a save that is not yet indexed.
    checkpoint_saves: tokio::sync::Mutex<()>,
}

impl RedbLog {
    /// Creates or opens the log at `path` and starts its writer thread.
    ///
    /// # Errors
    /// [`LogError::Storage`] when the options are invalid, the file is locked by another writer,
    /// is not a redb file, or has a table layout this build does not read.
    pub fn open(path: &Path, options: RedbOptions) -> Result<RedbLog, LogError> {
        options.check()?;
        create_if_missing(path, &options, file_backend)?;
        let at = path.to_path_buf();
        let opening = options.clone();
        let reopen: Reopen = Box::new(move || open_file(&at, &opening));
        let opened = reopen()?;
        let files = CheckpointDir::beside(path);
        let mut log = Self::start(path, opened, options, Some(reopen), Some(&files))?;
        log.sweep_checkpoint_files(&files)?;
        log.checkpoint_files = Some(files);
        Ok(log)
    }

    /// Creates or opens the log on a storage backend of the caller's (for crash tests, a
    /// [`faults::FaultyBackend`]); `path` only names it in messages. Otherwise as [`Self::open`].
    ///
    /// # Errors
    /// As [`Self::open`].
    pub fn open_with_backend(
        path: &Path,
        backend: impl StorageBackend,
        options: RedbOptions,
    ) -> Result<RedbLog, LogError> {
        options.check()?;
        let repaired = Arc::new(AtomicBool::new(false));
        let db = builder(&options, &repaired)
            .create_with_backend(backend)
            .map_err(|error| open_error(path, error))?;
        let opened = (db, repaired.load(Ordering::Acquire));
        Self::start(path, opened, options, None, None)
    }

    /// Creates or opens the log on storage the caller provides per path (for crash tests, a
    /// [`faults::FaultyBackend`]): a missing file is built under a temporary name on
    /// `backend_for(that name)` and renamed into place once durable, as [`Self::open`] does;
    /// then the file at `path` is opened on `backend_for(path)`, and opened so again after the
    /// storage filled up. Checkpoints stay in the table.
    ///
    /// # Errors
    /// As [`Self::open`], and when `backend_for` fails.
    pub fn open_creating_with<B, F>(
        path: &Path,
        backend_for: F,
        options: RedbOptions,
    ) -> Result<RedbLog, LogError>
    where
        B: StorageBackend,
        F: Fn(&Path) -> std::io::Result<B> + Send + 'static,
    {
        options.check()?;
        create_if_missing(path, &options, &backend_for)?;
        let at = path.to_path_buf();
        let opening = options.clone();
        let reopen: Reopen = Box::new(move || open_on(&at, &opening, &backend_for));
        let opened = reopen()?;
        Self::start(path, opened, options, Some(reopen), None)
    }

    /// Reads the heads and starts the writer thread on an opened database (and whether redb
    /// repaired it); `reopen` opens the file again after the storage filled up, `files` are
    /// the log's checkpoint files (`None`: its checkpoints are in its table).
    fn start(
        path: &Path,
        (db, repaired): (Database, bool),
        options: RedbOptions,
        reopen: Option<Reopen>,
        files: Option<&CheckpointDir>,
    ) -> Result<RedbLog, LogError> {
        let shown = path.display();
        let heads = prepare(&db).map_err(|error| LogError::Storage(format!("{shown}: {error}")))?;
        if repaired {
            tracing::warn!(path = %shown, last_seq = heads.last_seq,
                "redb log was not closed cleanly and was recovered to its last durable commit");
        }
        let report = OpenReport {
            repaired,
            last_seq: heads.last_seq,
            last_decided_seq: heads.decided,
        };
        let dir = path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let shared = Arc::new(Shared::new(db, dir.to_path_buf()));
        let (sender, receiver) = mpsc::channel(options.queued_requests_max);
        let (seq_sender, seq_receiver) = watch::channel(heads.last_seq);
        let progress = Arc::new(Progress {
            commits: AtomicU64::new(0),
            decided: AtomicU64::new(heads.decided),
        });
        let limits = WriterLimits {
            events_per_commit_max: options.events_per_commit_max,
            checkpoints_kept: options.checkpoints_kept,
            seek_spacing: options.seek_spacing,
            retain: options.retain,
            last_time: heads.last_time,
        };
        let archive = options.archive.clone().map(|dir| {
            tracing::info!(path = %shown, archive = %dir.display(),
                "what the retention window removes is archived first");
            Arc::new(Archiver::new(dir, files.cloned()))
        });
        let writer = Writer::new(
            Arc::clone(&shared),
            receiver,
            seq_sender,
            Arc::clone(&progress),
            limits,
            Space::new(reopen, options.space_probe_interval),
            archive,
        );
        let handle = std::thread::Builder::new()
            .name("flotilla-redb-writer".into())
            .spawn(move || writer.run())
            .map_err(storage(&format!("{shown}: start the writer thread")))?;
        tracing::info!(path = %shown, last_seq = heads.last_seq, decided = heads.decided, "redb log open");
        Ok(RedbLog {
            path: path.to_path_buf(),
            shared,
            requests: Some(sender),
            writer: Some(handle),
            last_seq: seq_receiver,
            progress,
            report,
            checkpoint_files: None,
            checkpoint_saves: tokio::sync::Mutex::new(()),
        })
    }

    /// Deletes the checkpoint files this log does not index (see `checkpoint_files.rs`).
    fn sweep_checkpoint_files(&self, files: &CheckpointDir) -> Result<(), LogError> {
        let txn = self
            .shared
            .database()?
            .begin_read()
            .map_err(storage("begin read"))?;
        let indexed = reads::indexed_files(&txn, u64::MAX)?.into_iter().collect();
        let deleted = files.sweep(&indexed)?;
        if deleted > 0 {
            tracing::debug!(dir = %files.path().display(), deleted, "checkpoint files swept");
        }
        Ok(())
    }

    /// How the file was found at open: whether redb had to recover it, and the heads then.
    #[must_use]
    pub fn open_report(&self) -> OpenReport {
        self.report
    }

    /// Checks the log against a witness of what was acknowledged before a crash (a publisher's
    /// receipts, a follower's position): the file alone cannot tell that a suffix is missing.
    ///
    /// # Errors
    /// [`LostAcknowledged`] when the log ends before `acknowledged_seq`.
    pub fn confirm_acknowledged(&self, acknowledged_seq: u64) -> Result<(), LostAcknowledged> {
        let last_seq = *self.last_seq.borrow();
        if acknowledged_seq > last_seq {
            return Err(LostAcknowledged {
                acknowledged: acknowledged_seq,
                last_seq,
            });
        }
        Ok(())
    }

    /// The file this log lives in.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends records exactly as given (bytes an export carried for records that are not
    /// events, such as a rejected undecodable one), each at the next sequence, without
    /// deduplication. Used by `flotilla replay import` to rebuild a log record for record.
    ///
    /// # Errors
    /// When the writer is gone or storage fails.
    pub async fn append_as_is(&self, records: Vec<Vec<u8>>) -> Result<Vec<Appended>, LogError> {
        let encoded = records
            .into_iter()
            .map(|bytes| EncodedEvent {
                id: None,
                time: Utc::now(),
                bytes,
                assigned: None,
            })
            .collect();
        let (reply, answer) = oneshot::channel();
        self.submit(Work::Append(encoded), Reply::Append(reply), answer)
            .await
    }

    /// Write transactions committed by the group-commit writer since open (for tests and metrics).
    #[must_use]
    pub fn commit_count(&self) -> u64 {
        self.progress.commits.load(Ordering::Acquire)
    }

    /// Stops the writer once it has answered every request already queued, and waits for it.
    /// Dropping the log does the same; `close` also reports a writer that died.
    ///
    /// Either way the calling thread blocks until the writer's current transaction commits. The
    /// file is released when this handle is gone and no read still runs on it.
    ///
    /// # Errors
    /// [`LogError::Storage`] when the writer thread panicked.
    pub fn close(mut self) -> Result<(), LogError> {
        self.stop_writer()
    }

    fn stop_writer(&mut self) -> Result<(), LogError> {
        drop(self.requests.take());
        match self.writer.take().map(JoinHandle::join) {
            Some(Err(_panic)) => Err(LogError::Storage(format!(
                "{}: the writer thread panicked",
                self.path.display()
            ))),
            Some(Ok(())) | None => Ok(()),
        }
    }

    /// Hands work to the writer and waits for its answer.
    async fn submit<T>(
        &self,
        work: Work,
        reply: Reply,
        answer: oneshot::Receiver<Result<T, LogError>>,
    ) -> Result<T, LogError> {
        let requests = self.requests.as_ref().ok_or(LogError::Closed)?;
        // A send error or a dropped reply means the writer thread is gone.
        requests
            .send(Request { work, reply })
            .await
            .map_err(|_| LogError::Closed)?;
        answer.await.map_err(|_| LogError::Closed)?
    }
}

impl Drop for RedbLog {
    fn drop(&mut self) {
        if let Err(error) = self.stop_writer() {
            tracing::error!(%error, "redb log closed with an error");
        }
    }
}

impl fmt::Debug for RedbLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbLog")
            .field("path", &self.path)
            .field("last_seq", &*self.last_seq.borrow())
            .field("open", &self.requests.is_some())
            .finish_non_exhaustive()
    }
}

impl RedbFile for RedbLog {
    type Database = Database;

    fn database(&self) -> Result<Arc<Database>, LogError> {
        self.shared.database()
    }

    fn checkpoint_dir(&self) -> Option<&CheckpointDir> {
        self.checkpoint_files.as_ref()
    }

    async fn head_seq(&self) -> Result<u64, LogError> {
        Ok(*self.last_seq.borrow())
    }

    async fn wait_past(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        crate::error::wait_past(self.last_seq.clone(), after, timeout).await
    }

    async fn decided_seq(&self) -> Result<u64, LogError> {
        Ok(self.progress.decided.load(Ordering::Acquire))
    }

    async fn after_failed_read(&self, error: LogError, tries: u32) -> Result<(), LogError> {
        self.shared.after_failed_read(error, tries).await
    }
}

impl EventLog for RedbLog {
    async fn append(
        &self,
        events: Vec<Envelope>,
        time: AppendTime,
    ) -> Result<Vec<Appended>, LogError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let now = Utc::now();
        let mut encoded = Vec::with_capacity(events.len());
        for mut envelope in events {
            let assigned = time == AppendTime::Assigned;
            if assigned {
                envelope.time = now;
            }
            encoded.push(EncodedEvent {
                id: Some(envelope.id.into_bytes()),
                time: envelope.time,
                bytes: encode_envelope(&envelope)?,
                // Kept so the writer can raise the time to the previous event's and re-encode.
                assigned: assigned.then_some(envelope),
            });
        }
        // Every event is checked before the writer sees any, as on NATS (`event_size`); the
        // writer then stores the append in one transaction, so it is whole or absent.
        event_size::check(
            encoded.iter().map(|event| event.bytes.len()),
            event_size::EVENT_BYTES_MAX,
        )?;
        let (reply, answer) = oneshot::channel();
        self.submit(Work::Append(encoded), Reply::Append(reply), answer)
            .await
    }

    async fn append_decisions(&self, batch: &DecisionBatch) -> Result<(), LogError> {
        let record = wire::decisions::encode_batch(
            batch.first_input_seq,
            batch.last_input_seq,
            &batch.decisions,
        )?;
        let work = Work::Decide {
            first_input_seq: batch.first_input_seq,
            last_input_seq: batch.last_input_seq,
            record,
        };
        let (reply, answer) = oneshot::channel();
        self.submit(work, Reply::Done(reply), answer).await
    }

    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<u64, LogError> {
        // Encoded on the caller's task: the checkpoint is borrowed, and copying the whole state
        // to encode it elsewhere would cost more than encoding it here.
        let record = encode_checkpoint_record(checkpoint)?;
        self.store_checkpoint(checkpoint.seq, record).await
    }

    async fn save_encoded_checkpoint(&self, encoded: EncodedCheckpoint) -> Result<u64, LogError> {
        self.store_checkpoint(encoded.seq, encoded.record).await
    }

    fn checkpoint_dir(&self) -> Option<CheckpointDir> {
        self.checkpoint_files.clone()
    }

    async fn save_checkpoint_file(&self, written: WrittenCheckpoint) -> Result<u64, LogError> {
        let Some(files) = self.checkpoint_files.clone() else {
            return Err(LogError::Storage(
                "this log keeps its checkpoints inside its file, not in files of their own".into(),
            ));
        };
        let _one_at_a_time = self.checkpoint_saves.lock().await;
        self.index_checkpoint_file(files, written.seq, written.bytes)
            .await
    }

    /// Nothing to do: `event_ids` is written at append, and append refuses duplicates.
    async fn record_folded(&self, _folded: &[(uuid::Uuid, u64)]) -> Result<(), LogError> {
        Ok(())
    }

    /// The last write found no room, and no space has been seen since (`writer/space.rs`).
    fn storage_full(&self) -> bool {
        self.shared.is_full()
    }
}

/// Decodes a stored decision batch; a newer one is [`LogError::Newer`].
fn decode_batch(seq: u64, bytes: &[u8]) -> Result<DecisionBatch, LogError> {
    match wire::decisions::decode_batch(bytes) {
        Ok(batch) => Ok(DecisionBatch {
            version: batch.version,
            first_input_seq: batch.first_input_seq,
            last_input_seq: batch.last_input_seq,
            decisions: batch.decisions,
        }),
        Err(CodecError::Newer { kind, version }) => Err(LogError::Newer { seq, kind, version }),
        Err(source) => Err(LogError::Corrupt { seq, source }),
    }
}

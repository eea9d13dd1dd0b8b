//! The reads the hub's [`RedbLog`](super::RedbLog) and the read-only
//! [`RedbReader`](super::reader::RedbReader) answer alike: both read one redb file through the
//! same tables, and differ only in where they learn the heads (the writer's own counters, or the
//! file itself).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use redb::{ReadTransaction, ReadableDatabase};

use super::READ_MAX;
use super::checkpoint_files::CheckpointDir;
use super::reads;
use super::tables::storage;
use crate::{Checkpoint, DecisionBatch, LogError, LogReader, StoredEvent};

/// A handle on a redb log file: what [`LogReader`] needs beyond the shared reads. Public only
/// so that the blanket [`LogReader`] impl may name it; it lives in a private module, so no
/// other crate can implement it.
pub trait RedbFile: Send + Sync + 'static {
    /// The redb handle: the hub's writable database or a reader's read-only one.
    type Database: ReadableDatabase + Send + Sync + 'static;

    /// The database the reads run on, for one read.
    ///
    /// # Errors
    /// When the file is closed (the hub's log, while it waits for space to open it again).
    fn database(&self) -> Result<Arc<Self::Database>, LogError>;

    /// Where checkpoints are kept in files of their own, if they are.
    fn checkpoint_dir(&self) -> Option<&CheckpointDir>;

    /// [`LogReader::last_seq`].
    fn head_seq(&self) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// [`LogReader::wait_for`].
    fn wait_past(
        &self,
        after: u64,
        timeout: Duration,
    ) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// [`LogReader::last_decided_seq`].
    fn decided_seq(&self) -> impl Future<Output = Result<u64, LogError>> + Send;

    /// What to do after read attempt `tries` (from 1) failed with `error`: `Ok(())` to read
    /// again, or the error to answer. The default answers it.
    fn after_failed_read(
        &self,
        error: LogError,
        tries: u32,
    ) -> impl Future<Output = Result<(), LogError>> + Send {
        let _ = tries;
        async { Err(error) }
    }
}

/// Runs `read` in a fresh read transaction on tokio's blocking pool.
///
/// Why not on the caller's task: a redb read is a synchronous `pread` on a cache miss, and
/// decoding up to [`READ_MAX`] records is real CPU work; either would stall every other task on
/// that runtime worker. The hand-off costs microseconds, small next to a batch read.
pub(crate) async fn read_blocking<D, T, F>(
    db: Arc<D>,
    what: &'static str,
    read: F,
) -> Result<T, LogError>
where
    D: ReadableDatabase + Send + Sync + 'static,
    T: Send + 'static,
    F: FnOnce(&ReadTransaction) -> Result<T, LogError> + Send + 'static,
{
    let task = tokio::task::spawn_blocking(move || {
        let txn = db.begin_read().map_err(storage("begin read transaction"))?;
        read(&txn)
    });
    task.await
        .map_err(|error| LogError::Storage(format!("{what}: read task failed: {error}")))?
}

/// Runs `read` as [`read_blocking`] does, on the file's current database, and again as long as
/// [`RedbFile::after_failed_read`] says so.
async fn read_on<L, T, F>(file: &L, what: &'static str, read: F) -> Result<T, LogError>
where
    L: RedbFile,
    T: Send + 'static,
    F: Fn(&ReadTransaction) -> Result<T, LogError> + Clone + Send + 'static,
{
    let mut tries = 0;
    loop {
        tries += 1;
        let read = read.clone();
        match read_blocking(file.database()?, what, read).await {
            Err(error) => file.after_failed_read(error, tries).await?,
            done => return done,
        }
    }
}

/// Up to `max` inputs from `from` on, with those at or before the base the file still holds
/// ([`reads::held_inputs`]).
pub(crate) async fn read_held<L: RedbFile>(
    file: &L,
    from: u64,
    max: usize,
) -> Result<Vec<StoredEvent>, LogError> {
    let max = max.min(READ_MAX);
    if max == 0 {
        return Ok(Vec::new());
    }
    read_on(file, "read inputs", move |txn| {
        reads::held_inputs(txn, from, max)
    })
    .await
}

/// The log's base and its first grouped input, read together.
pub(crate) async fn held<L: RedbFile>(file: &L) -> Result<(u64, Option<u64>), LogError> {
    read_on(file, "read base", |txn| {
        Ok((reads::base(txn)?, reads::first_grouped(txn)?))
    })
    .await
}

impl<L: RedbFile> LogReader for L {
    async fn read(&self, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        let max = max.min(READ_MAX);
        if max == 0 {
            return Ok(Vec::new());
        }
        read_on(self, "read inputs", move |txn| {
            reads::inputs(txn, from, max)
        })
        .await
    }

    async fn last_seq(&self) -> Result<u64, LogError> {
        self.head_seq().await
    }

    async fn wait_for(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        self.wait_past(after, timeout).await
    }

    async fn read_decisions(&self, from: u64, max: usize) -> Result<Vec<DecisionBatch>, LogError> {
        let max = max.min(READ_MAX);
        if max == 0 {
            return Ok(Vec::new());
        }
        read_on(self, "read decisions", move |txn| {
            reads::batches(txn, from, max)
        })
        .await
    }

    async fn last_decided_seq(&self) -> Result<u64, LogError> {
        self.decided_seq().await
    }

    async fn load_checkpoint(&self) -> Result<Option<Checkpoint>, LogError> {
        self.load_checkpoint_before(u64::MAX).await
    }

    async fn load_checkpoint_before(&self, seq: u64) -> Result<Option<Checkpoint>, LogError> {
        let files = self.checkpoint_dir().cloned();
        read_on(self, "load checkpoint", move |txn| {
            reads::checkpoint_before(txn, files.as_ref(), seq)
        })
        .await
    }

    async fn base_seq(&self) -> Result<u64, LogError> {
        read_on(self, "read base", reads::base).await
    }

    /// The hub's writer refuses every repeated event id (the `event_ids` table).
    fn deduplicates_every_append(&self) -> bool {
        true
    }

    async fn first_seq_of(
        &self,
        ids: &[uuid::Uuid],
    ) -> Result<BTreeMap<uuid::Uuid, u64>, LogError> {
        if ids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let ids: Arc<[uuid::Uuid]> = ids.into();
        read_on(self, "look up event ids", move |txn| {
            reads::event_ids(txn, &ids)
        })
        .await
    }
}

//! A read-only view of a redb log, for `flotilla replay --data DIR`: it opens the file in
//! redb's `ConcurrencyMode::SingleWriter`, the mode the hub writes in, so it can read while a
//! hub writes and sees each new commit. It never writes: it is a [`LogReader`] only, so
//! appends, decisions and checkpoints cannot even be asked of it. A file a hub left without
//! closing it (killed, or its machine lost power) needs a repair that a read-only open cannot
//! make: the reader then repairs a copy in a temporary directory and reads that — everything
//! committed before the crash — leaving the original for the hub to repair when it restarts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use redb::{Builder, ConcurrencyMode, ReadOnlyDatabase};

use super::checkpoint_files::CheckpointDir;
use super::file_reads::{RedbFile, read_blocking};
use super::reads;
use crate::LogError;

/// Pause between two looks at the file in [`LogReader::wait_for`].
const WAIT_POLL: Duration = Duration::from_millis(50);

/// A redb log opened read-only.
#[derive(Clone)]
pub struct RedbReader {
    path: PathBuf,
    db: Arc<ReadOnlyDatabase>,
    checkpoint_files: CheckpointDir,
    /// The directory of a repaired copy, removed when the last clone goes.
    _recovered: Option<Arc<tempfile::TempDir>>,
}

impl std::fmt::Debug for RedbReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbReader")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RedbReader {
    /// Opens the log file at `path` read-only; a file left unrepaired by a crashed hub is read
    /// through a repaired copy.
    ///
    /// # Errors
    /// When the file is missing, is not a redb file, or is held by a writer that excludes
    /// readers (a hub of a release before this mode).
    pub fn open(path: &Path) -> Result<Self, LogError> {
        let cannot = |error: &dyn std::fmt::Display| {
            LogError::Storage(format!(
                "{}: cannot open read-only: {error}",
                path.display()
            ))
        };
        let (db, recovered) = match open_shared(path) {
            Ok(db) => (db, None),
            Err(redb::DatabaseError::RepairAborted) => {
                let (db, scratch) = open_repaired_copy(path).map_err(|e| cannot(&e))?;
                (db, Some(Arc::new(scratch)))
            }
            Err(error) => return Err(cannot(&error)),
        };
        Ok(Self {
            path: path.to_owned(),
            db: Arc::new(db),
            checkpoint_files: CheckpointDir::beside(path),
            _recovered: recovered,
        })
    }

    /// What the log holds and what it costs on disk (`flotilla replay info`).
    ///
    /// # Errors
    /// When the file cannot be read.
    pub async fn info(&self) -> Result<super::info::LogInfo, LogError> {
        let (path, files) = (self.path.clone(), self.checkpoint_files.clone());
        read_blocking(Arc::clone(&self.db), "read log info", move |txn| {
            super::info::read(txn, &path, Some(&files))
        })
        .await
    }

    /// The stored bytes of input `seq` exactly as written (for exports of records that have no
    /// JSON form).
    ///
    /// # Errors
    /// When the file cannot be read.
    pub async fn input_bytes(&self, seq: u64) -> Result<Option<Vec<u8>>, LogError> {
        read_blocking(Arc::clone(&self.db), "read input", move |txn| {
            reads::input_bytes(txn, seq)
        })
        .await
    }
}

/// Opens `path` read-only in the mode the hub writes in.
fn open_shared(path: &Path) -> Result<ReadOnlyDatabase, redb::DatabaseError> {
    Builder::new()
        .set_concurrency_mode(ConcurrencyMode::SingleWriter)
        .open_read_only(path)
}

/// Copies `path` into a temporary directory, lets redb repair the copy, and opens it read-only.
fn open_repaired_copy(path: &Path) -> Result<(ReadOnlyDatabase, tempfile::TempDir), String> {
    tracing::warn!(
        path = %path.display(),
        "the log was not closed cleanly (a hub crashed, or is starting): reading a repaired copy"
    );
    let scratch = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let copy = scratch.path().join("flotilla.redb");
    std::fs::copy(path, &copy).map_err(|e| format!("copy to {}: {e}", copy.display()))?;
    let repaired = Builder::new()
        .create(&copy)
        .map_err(|e| format!("repair the copy: {e}"))?;
    drop(repaired);
    let db = open_shared(&copy).map_err(|e| format!("the repaired copy: {e}"))?;
    Ok((db, scratch))
}

impl RedbFile for RedbReader {
    type Database = ReadOnlyDatabase;

    fn database(&self) -> Result<Arc<ReadOnlyDatabase>, LogError> {
        Ok(Arc::clone(&self.db))
    }

    fn checkpoint_dir(&self) -> Option<&CheckpointDir> {
        Some(&self.checkpoint_files)
    }

    async fn head_seq(&self) -> Result<u64, LogError> {
        Ok(
            read_blocking(Arc::clone(&self.db), "read heads", reads::heads)
                .await?
                .0,
        )
    }

    async fn wait_past(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let last = self.head_seq().await?;
            if last > after || tokio::time::Instant::now() >= deadline {
                return Ok(last);
            }
            tokio::time::sleep(WAIT_POLL).await;
        }
    }

    async fn decided_seq(&self) -> Result<u64, LogError> {
        Ok(
            read_blocking(Arc::clone(&self.db), "read heads", reads::heads)
                .await?
                .1,
        )
    }
}

//! What the log's handle, its reads and its writer thread share: the open database, which the
//! writer closes and opens again after the storage filled up (redb refuses every later call on a
//! handle that met an I/O error), and whether the storage is full now.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use redb::Database;

use crate::LogError;

/// Most tries of a read that failed while the storage is full (the writer is opening the file
/// again), [`READ_RETRY_PAUSE`] apart.
const READ_TRIES_MAX: u32 = 50;
/// The pause between those tries.
const READ_RETRY_PAUSE: Duration = Duration::from_millis(20);

/// The database of one log file, as its readers and its writer reach it.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The open database; `None` while the writer reopens the file, or after a reopen failed
    /// (the writer tries again at its next look for space).
    db: RwLock<Option<Arc<Database>>>,
    /// The storage had no room for the last write, and no space has been seen since.
    full: AtomicBool,
    /// The directory the log file is in: named in errors, and where the writer looks for space.
    dir: PathBuf,
}

impl Shared {
    /// Shares `db`, the log file in `dir`.
    pub(crate) fn new(db: Database, dir: PathBuf) -> Self {
        Self {
            db: RwLock::new(Some(Arc::new(db))),
            full: AtomicBool::new(false),
            dir,
        }
    }

    /// The open database, for one read or one write transaction; hold it no longer, or the
    /// writer cannot close it when it must.
    ///
    /// # Errors
    /// [`LogError::StorageFull`] while the file is closed for want of space.
    pub(crate) fn database(&self) -> Result<Arc<Database>, LogError> {
        let slot = self.db.read().unwrap_or_else(PoisonError::into_inner);
        slot.clone().ok_or_else(|| LogError::StorageFull {
            dir: self.dir.clone(),
            detail: "the log file is closed until there is space to open it again".into(),
        })
    }

    /// Whether a database is open.
    pub(crate) fn is_open(&self) -> bool {
        self.db
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Takes the database out; readers get [`LogError::StorageFull`] until [`Self::put`].
    pub(crate) fn take(&self) -> Option<Arc<Database>> {
        self.db
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Shares a newly opened database.
    pub(crate) fn put(&self, db: Database) {
        *self.db.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(db));
    }

    /// Whether the storage had no room for the last write and no space has been seen since.
    pub(crate) fn is_full(&self) -> bool {
        self.full.load(Ordering::Acquire)
    }

    /// Records whether the storage is full.
    pub(crate) fn set_full(&self, full: bool) {
        self.full.store(full, Ordering::Release);
    }

    /// The directory the log file is in.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// After read attempt `tries` failed with `error`: `Ok(())` to read again, or the error to
    /// answer. A read can meet the database between a write that found no room (redb then
    /// fails every call on it) and the writer opening the file again: such a read is tried
    /// again, for up to [`READ_TRIES_MAX`] tries, and then answered with
    /// [`LogError::StorageFull`], which passes. The writer marks the storage full just after
    /// the failed commit, so a read that failed first gives it [`READ_RETRY_PAUSE`] to do so
    /// before its error counts as its own.
    pub(crate) async fn after_failed_read(
        &self,
        error: LogError,
        tries: u32,
    ) -> Result<(), LogError> {
        if !matches!(error, LogError::Storage(_)) {
            return Err(error);
        }
        if !self.is_full() {
            tokio::time::sleep(READ_RETRY_PAUSE).await;
        }
        if !self.is_full() {
            return Err(error);
        }
        if tries >= READ_TRIES_MAX {
            return Err(LogError::StorageFull {
                dir: self.dir.clone(),
                detail: error.to_string(),
            });
        }
        tokio::time::sleep(READ_RETRY_PAUSE).await;
        Ok(())
    }
}

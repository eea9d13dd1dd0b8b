//! Test support: a fault-injecting storage backend for the redb log, to test crash points.
//!
//! [`FaultyBackend`] sits between redb and the real file ([`redb::backends::FileBackend`]). The
//! process sees every write it makes, as it would through the page cache; beside that, the
//! backend keeps the **durable image**: the file as it was at the last `sync_data` that was
//! honoured. A shared [`FaultPlan`] handle, driven by the test, decides what each call does:
//!
//! - **lost fsyncs** ([`FaultPlan::lose_syncs_from`]): `sync_data` answers `Ok` without making
//!   anything durable, as a disk with a volatile write cache that ignores flushes does;
//! - **failed writes and syncs** ([`FaultPlan::fail_write_at`], [`FaultPlan::fail_sync_at`]):
//!   the call returns an I/O error and writes nothing;
//! - **a power cut** ([`FaultPlan::cut_power_at_write`], [`FaultPlan::cut_power`]): the cut
//!   write persists only a prefix of its bytes (a torn write), and every later write, resize or
//!   sync fails, so nothing after the cut is acknowledged;
//! - **a full disk** ([`FaultPlan::fill_disk`] until [`FaultPlan::free_disk`]): a resize that
//!   grows the file, and a write that reaches past its end, fail with
//!   [`io::ErrorKind::StorageFull`] and change nothing; the file's own pages still take writes,
//!   as on a file system with no free blocks left.
//!
//! After a cut the test builds the file a restarted machine would find with
//! [`FaultPlan::surviving_image`]: the durable image, plus — when the cache flushed in order
//! before the power went — a prefix of the unsynced operations, the last one possibly torn. It
//! writes that image to a path and opens a [`super::RedbLog`] on it.
//!
//! What the model leaves out, on purpose: a cache that flushes unsynced writes *out of order*
//! while fsyncs are also ignored can overwrite pages of the last durable commit with pages of a
//! later one, which no storage engine that trusts fsync survives; and bit flips in synced data.
//! Calls are counted from 1 per plan, across every backend the plan made.

use std::fmt;
use std::io;
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use redb::backends::FileBackend;
use redb::{BackendError, StorageBackend};

/// What the test lets survive of the operations made since the last honoured sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsynced {
    /// None of them: the power went before the cache flushed anything.
    Lost,
    /// The first `ops` of them in order, then `torn_bytes` of the next one if it is a write: the
    /// cache was flushing in order when the power went.
    InOrder {
        /// Whole operations that persisted.
        ops: usize,
        /// Bytes of the following write that persisted (a torn write).
        torn_bytes: usize,
    },
}

/// A shared handle on the simulated disk: the test sets faults on it and reads what survived.
#[derive(Clone, Default)]
pub struct FaultPlan {
    disk: Arc<Mutex<Disk>>,
}

/// Counters a test reads back from a [`FaultPlan`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// `write` calls seen.
    pub writes: u64,
    /// `sync_data` calls seen.
    pub syncs: u64,
    /// Syncs answered `Ok` without making anything durable.
    pub syncs_lost: u64,
    /// Operations made since the last honoured sync (writes and resizes).
    pub unsynced_ops: usize,
    /// Whether the power has been cut.
    pub power_cut: bool,
}

/// One operation not yet made durable.
#[derive(Debug, Clone)]
enum Pending {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug, Default)]
struct Disk {
    /// The file at the last honoured sync.
    durable: Vec<u8>,
    /// Operations since then, in the order they were made.
    unsynced: Vec<Pending>,
    counts: FaultCounts,
    lose_syncs_from: Option<u64>,
    fail_write_at: Option<u64>,
    fail_sync_at: Option<u64>,
    /// The write at which the power goes, and how many of its bytes persist.
    cut_at_write: Option<(u64, usize)>,
    /// The disk has no free blocks: the file cannot grow.
    full: bool,
}

/// The error a write or resize that needs a block gets while the disk is full.
fn no_room() -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        "fault injection: no space left on device",
    )
}

/// The error every call gets once the power is cut.
fn power_gone() -> io::Error {
    io::Error::other("fault injection: the power is cut")
}

impl Disk {
    fn write(&mut self, inner: &FileBackend, offset: u64, data: &[u8]) -> io::Result<()> {
        if self.counts.power_cut {
            return Err(power_gone());
        }
        let end = offset.saturating_add(u64::try_from(data.len()).unwrap_or(u64::MAX));
        if self.full && end > inner.len()? {
            return Err(no_room());
        }
        self.counts.writes += 1;
        let number = self.counts.writes;
        if self.fail_write_at == Some(number) {
            return Err(io::Error::other(format!(
                "fault injection: write {number} failed"
            )));
        }
        if let Some((at, kept)) = self.cut_at_write
            && at == number
        {
            let torn = data[..kept.min(data.len())].to_vec();
            self.unsynced.push(Pending::Write { offset, data: torn });
            self.counts.power_cut = true;
            return Err(power_gone());
        }
        inner.write(offset, data)?;
        self.unsynced.push(Pending::Write {
            offset,
            data: data.to_vec(),
        });
        Ok(())
    }

    fn set_len(&mut self, inner: &FileBackend, len: u64) -> io::Result<()> {
        if self.counts.power_cut {
            return Err(power_gone());
        }
        if self.full && len > inner.len()? {
            return Err(no_room());
        }
        inner.set_len(len)?;
        self.unsynced.push(Pending::SetLen(len));
        Ok(())
    }

    fn sync(&mut self, inner: &FileBackend) -> io::Result<()> {
        if self.counts.power_cut {
            return Err(power_gone());
        }
        self.counts.syncs += 1;
        let number = self.counts.syncs;
        if self.fail_sync_at == Some(number) {
            return Err(io::Error::other(format!(
                "fault injection: sync {number} failed"
            )));
        }
        if self.lose_syncs_from.is_some_and(|from| number >= from) {
            self.counts.syncs_lost += 1;
            return Ok(());
        }
        inner.sync_data()?;
        for op in std::mem::take(&mut self.unsynced) {
            apply(&mut self.durable, &op, usize::MAX);
        }
        Ok(())
    }

    fn image(&self, unsynced: Unsynced) -> Vec<u8> {
        let mut image = self.durable.clone();
        if let Unsynced::InOrder { ops, torn_bytes } = unsynced {
            for op in self.unsynced.iter().take(ops) {
                apply(&mut image, op, usize::MAX);
            }
            if let Some(op) = self.unsynced.get(ops) {
                apply(&mut image, op, torn_bytes);
            }
        }
        image
    }
}

/// Applies one operation to an image; a write persists at most `kept` of its bytes.
fn apply(image: &mut Vec<u8>, op: &Pending, kept: usize) {
    match op {
        Pending::SetLen(len) => image.resize(usize::try_from(*len).unwrap_or(usize::MAX), 0),
        Pending::Write { offset, data } => {
            let data = &data[..kept.min(data.len())];
            let start = usize::try_from(*offset).unwrap_or(usize::MAX);
            let end = start.saturating_add(data.len());
            if image.len() < end {
                image.resize(end, 0);
            }
            image[start..end].copy_from_slice(data);
        }
    }
}

impl FaultPlan {
    fn disk(&self) -> MutexGuard<'_, Disk> {
        // A panic elsewhere while holding the lock leaves the disk as consistent as any crash.
        self.disk.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens (creating if missing) the file at `path` behind a [`FaultyBackend`] driven by this
    /// plan. The file's current content becomes the durable image, and earlier unsynced
    /// operations and a cut are forgotten (the machine restarted); the fault settings and the
    /// call counters stay.
    ///
    /// # Errors
    /// When the file cannot be opened or read.
    pub fn backend(&self, path: &Path) -> io::Result<FaultyBackend> {
        let durable = std::fs::read(path).or_else(|error| match error.kind() {
            io::ErrorKind::NotFound => Ok(Vec::new()),
            _ => Err(error),
        })?;
        let file = super::open::open_log_file(path)?;
        let mut disk = self.disk();
        disk.durable = durable;
        disk.unsynced.clear();
        disk.counts.power_cut = false;
        disk.cut_at_write = None;
        drop(disk);
        Ok(FaultyBackend {
            inner: FileBackend::new(file).map_err(io::Error::other)?,
            plan: self.clone(),
        })
    }

    /// From the `number`th `sync_data` call on (counting from 1), syncs answer `Ok` but make
    /// nothing durable.
    pub fn lose_syncs_from(&self, number: u64) {
        self.disk().lose_syncs_from = Some(number);
    }

    /// The `number`th `write` call fails with an I/O error and writes nothing.
    pub fn fail_write_at(&self, number: u64) {
        self.disk().fail_write_at = Some(number);
    }

    /// The `number`th `sync_data` call fails with an I/O error.
    pub fn fail_sync_at(&self, number: u64) {
        self.disk().fail_sync_at = Some(number);
    }

    /// The power goes during the `number`th `write` call: `kept_bytes` of it persist (torn), and
    /// that call and every later write, resize and sync fail.
    pub fn cut_power_at_write(&self, number: u64, kept_bytes: usize) {
        self.disk().cut_at_write = Some((number, kept_bytes));
    }

    /// The disk fills up: from now on the file cannot grow, and a resize that grows it or a
    /// write past its end fails with [`io::ErrorKind::StorageFull`].
    pub fn fill_disk(&self) {
        self.disk().full = true;
    }

    /// Space is freed: the file grows again.
    pub fn free_disk(&self) {
        self.disk().full = false;
    }

    /// The power goes now: every later write, resize and sync fails.
    pub fn cut_power(&self) {
        self.disk().counts.power_cut = true;
    }

    /// The counters so far.
    #[must_use]
    pub fn counts(&self) -> FaultCounts {
        let disk = self.disk();
        FaultCounts {
            unsynced_ops: disk.unsynced.len(),
            ..disk.counts
        }
    }

    /// The file a restarted machine finds: the durable image plus what `unsynced` lets survive
    /// of the operations since the last honoured sync.
    #[must_use]
    pub fn surviving_image(&self, unsynced: Unsynced) -> Vec<u8> {
        self.disk().image(unsynced)
    }
}

impl fmt::Debug for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultPlan")
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

/// redb's file backend with faults injected by a [`FaultPlan`]; see the module docs.
#[derive(Debug)]
pub struct FaultyBackend {
    inner: FileBackend,
    plan: FaultPlan,
}

impl StorageBackend for FaultyBackend {
    fn len(&self) -> Result<u64, io::Error> {
        self.inner.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        self.inner.read(offset, out)
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        self.plan.disk().set_len(&self.inner, len)
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        self.plan.disk().sync(&self.inner)
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        self.plan.disk().write(&self.inner, offset, data)
    }

    fn close(&self) -> Result<(), io::Error> {
        self.inner.close()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_range(start, end)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        self.inner.try_lock_shared_range(start, end)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(start, end)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(start, end)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(start, end)
    }

    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.query_lock_range(start, end)
    }
}

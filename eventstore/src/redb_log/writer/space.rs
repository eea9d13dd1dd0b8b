//! How the writer lives through a full disk. A group that finds no room (ENOSPC, a quota) fails
//! whole, like any failed group, and its callers get [`LogError::StorageFull`]. redb latches the
//! I/O error: it refuses every later call on that handle, until it is closed and the file opened
//! again. Other I/O errors leave it latched, and the log stops writing; a lack of room passes
//! once someone frees space, so after one the writer closes the database and opens the file
//! again at once — redb brings it back to its last commit, which holds every acknowledged write
//! and nothing of the failed group — and reads go on while the disk stays full.
//!
//! While the storage is full the writer refuses writes at once, without touching the file, and
//! looks for space every [`crate::redb_log::RedbOptions::space_probe_interval`], and at the
//! first write after that: it writes a probe file of [`SPACE_PROBE_BYTES`] beside the log and
//! removes it. A write finds room when the probe did; a probe that finds room while nothing
//! waits to be written ends the condition too, and a write that finds no room again starts it
//! again. The condition is logged once when it starts and once when it ends.
//!
//! A probe can find room that a write then lacks (a little space freed, less than the file's
//! next growth), and each such write costs a close and a reopen with repair. So every write that
//! finds no room since the last one that committed doubles the wait before the next look, up to
//! [`BACKOFF_DOUBLINGS_MAX`] times (32 s at the default 1 s).

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use redb::Database;
use tokio::sync::mpsc::error::TryRecvError;

use super::super::open::prepare;
use super::{Committed, Request, Writer};
use crate::LogError;

/// Opens the log's file again, as it was opened first; whether redb had to repair it.
pub(crate) type Reopen = Box<dyn Fn() -> Result<(Database, bool), LogError> + Send>;

/// Bytes the writer writes to look for space: a group of appends is usually far smaller, and a
/// file system with this much free takes the next write.
pub(crate) const SPACE_PROBE_BYTES: usize = 1 << 20;

/// The probe file's name, beside the log file.
const PROBE_FILE: &str = ".flotilla-space-probe";

/// While the storage is full the writer waits for requests in slices this long, so that it
/// looks for space when that is due even if nobody writes.
const FULL_WAIT_SLICE: Duration = Duration::from_millis(20);

/// Most doublings of the wait between looks for space (see the module docs).
const BACKOFF_DOUBLINGS_MAX: u32 = 5;

/// Most tries to close the database, [`CLOSE_WAIT_SLICE`] apart, while reads still hold it.
const CLOSE_TRIES_MAX: u32 = 100;
const CLOSE_WAIT_SLICE: Duration = Duration::from_millis(10);

/// Whether the storage has room, and how to get back to writing when it has not.
pub(crate) struct Space {
    /// How the file is opened again; `None` for a log on a caller's storage backend, which
    /// cannot be opened twice: it stays latched after any I/O error, as redb leaves it.
    reopen: Option<Reopen>,
    probe_interval: Duration,
    full: Option<Full>,
    /// Writes that found no room since the last one that committed.
    failed_writes: u32,
}

/// A full storage, since when, and what it said.
struct Full {
    since: Instant,
    /// When the writer next looks for space.
    next_probe: Instant,
    /// Writes refused without being tried.
    refused: u64,
    /// What the storage answered the write that found no room.
    detail: String,
}

impl Space {
    /// The storage has room; `reopen` opens the file again after it had none.
    pub(crate) fn new(reopen: Option<Reopen>, probe_interval: Duration) -> Self {
        Self {
            reopen,
            probe_interval,
            full: None,
            failed_writes: 0,
        }
    }

    /// How long the writer waits between looks for space now.
    fn backoff(&self) -> Duration {
        let doublings = self
            .failed_writes
            .saturating_sub(1)
            .min(BACKOFF_DOUBLINGS_MAX);
        self.probe_interval * 2_u32.pow(doublings)
    }
}

impl Writer {
    /// The next request from the queue. While the storage is full it waits in slices, and looks
    /// for space whenever that is due.
    pub(super) fn wait_for_request(&mut self) -> Option<Request> {
        loop {
            let Some(next_probe) = self.space.full.as_ref().map(|full| full.next_probe) else {
                return self.requests.blocking_recv();
            };
            match self.requests.try_recv() {
                Ok(request) => return Some(request),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            if Instant::now() < next_probe {
                std::thread::sleep(FULL_WAIT_SLICE);
            } else if self.space_found() {
                self.end_full("space was found");
            }
        }
    }

    /// Why the next group must be refused without being tried: never while the storage has
    /// room; while it is full, unless it is time to look for space and there is some.
    pub(super) fn refusal(&mut self) -> Option<LogError> {
        let due = Instant::now() >= self.space.full.as_ref()?.next_probe;
        if due && self.space_found() {
            return None;
        }
        let full = self.space.full.as_mut()?;
        full.refused += 1;
        Some(LogError::StorageFull {
            dir: self.shared.dir().to_path_buf(),
            detail: full.detail.clone(),
        })
    }

    /// After a group was tried: no room starts the condition (or goes on with it) and opens the
    /// file again; a commit that wrote ends it.
    pub(super) fn after_commit(&mut self, committed: &Result<Committed, LogError>) {
        match committed {
            Err(LogError::StorageFull { detail, .. }) if self.space.reopen.is_some() => {
                self.space.failed_writes = self.space.failed_writes.saturating_add(1);
                self.start_full(detail);
                self.close_database();
                self.open_again();
            }
            Ok(committed) if committed.wrote => {
                self.space.failed_writes = 0;
                self.end_full("a write committed");
            }
            _ => {}
        }
    }

    fn start_full(&mut self, detail: &str) {
        let next_probe = Instant::now() + self.space.backoff();
        if let Some(full) = &mut self.space.full {
            full.next_probe = next_probe;
            return;
        }
        let dir = self.shared.dir().display();
        tracing::error!(
            dir = %dir,
            %detail,
            "the storage of the log is full: writes are refused and nothing of them is \
             stored; free space in {dir} and writing resumes by itself, without a restart"
        );
        self.space.full = Some(Full {
            since: Instant::now(),
            next_probe,
            refused: 0,
            detail: detail.to_owned(),
        });
        self.shared.set_full(true);
    }

    fn end_full(&mut self, why: &str) {
        let Some(full) = self.space.full.take() else {
            return;
        };
        self.shared.set_full(false);
        tracing::warn!(
            dir = %self.shared.dir().display(),
            full_for_secs = full.since.elapsed().as_secs(),
            refused = full.refused,
            "the storage of the log has room again ({why}): writing resumed"
        );
    }

    /// Looks for space now: a probe file beside the log, then the file opened again if it is
    /// closed. The next look is an interval later, whatever this one finds.
    fn space_found(&mut self) -> bool {
        let next_probe = Instant::now() + self.space.backoff();
        if let Some(full) = &mut self.space.full {
            full.next_probe = next_probe;
        }
        room_for_probe(self.shared.dir()) && self.open_again()
    }

    /// Closes the database the failed write latched. Reads hold it for one transaction at a
    /// time, so the writer waits for them a little; one that holds it longer closes it when it
    /// ends, and until then opening the file again fails and is tried at the next look.
    fn close_database(&mut self) {
        let Some(mut db) = self.shared.take() else {
            return;
        };
        for _ in 0..CLOSE_TRIES_MAX {
            match Arc::try_unwrap(db) {
                Ok(owned) => {
                    // redb reports the latched error again; the file is closed either way.
                    if let Err(error) = owned.close() {
                        tracing::debug!(%error, "closing the log file after a write found no room");
                    }
                    return;
                }
                Err(shared) => {
                    db = shared;
                    std::thread::sleep(CLOSE_WAIT_SLICE);
                }
            }
        }
        tracing::warn!("a read still holds the log file; it is closed when that read ends");
    }

    /// Opens the file again if it is closed; whether it is open. The heads are read again: they
    /// must be what the writer published, since a failed group writes nothing.
    fn open_again(&mut self) -> bool {
        if self.shared.is_open() {
            return true;
        }
        let Some(reopen) = &self.space.reopen else {
            return false;
        };
        let opened = reopen().and_then(|(db, repaired)| Ok((prepare(&db)?, db, repaired)));
        let (heads, db, repaired) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                tracing::debug!(%error, "cannot open the log file again yet");
                return false;
            }
        };
        let published = (
            *self.last_seq.borrow(),
            self.progress.decided.load(Ordering::Acquire),
        );
        if (heads.last_seq, heads.decided) != published {
            tracing::error!(
                file_last_seq = heads.last_seq,
                file_decided = heads.decided,
                published_last_seq = published.0,
                published_decided = published.1,
                "the log file opened again after a full storage ends elsewhere than the writer \
                 had published; going on from the file"
            );
            self.last_seq.send_replace(heads.last_seq);
            self.progress
                .decided
                .store(heads.decided, Ordering::Release);
        }
        tracing::info!(repaired, last_seq = heads.last_seq, "log file opened again");
        self.shared.put(db);
        true
    }
}

/// Whether the directory takes [`SPACE_PROBE_BYTES`] more now: written to a probe file there,
/// which is removed again either way. Not synced: file systems reserve room for a write when it
/// is made, which is what is asked.
fn room_for_probe(dir: &Path) -> bool {
    let path = dir.join(PROBE_FILE);
    let zeros = [0_u8; 64 * 1024];
    let written = File::create(&path).and_then(|mut file| {
        for _ in 0..SPACE_PROBE_BYTES / zeros.len() {
            file.write_all(&zeros)?;
        }
        file.flush()
    });
    if let Err(error) = fs::remove_file(&path)
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::debug!(path = %path.display(), %error, "cannot remove the space probe");
    }
    written.is_ok()
}

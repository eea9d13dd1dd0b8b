//! Checkpoints kept in files of their own beside the redb file, so storing one never holds the
//! log's write transaction: a 100,000-member checkpoint (about 70 MB) took 1.8–2.1 s to store
//! inside redb, during which appends and decision records waited; written to its own file it is
//! one sequential write and an fsync, on a blocking thread, while the log goes on.
//!
//! A file is named by its sequence (`00000000000000010000.checkpoint`) in the directory
//! `<log file>.checkpoints/`. It is written under a temporary name, synced, renamed and the
//! directory synced; only then is its sequence entered in the log's `checkpoint_files` table
//! (one small durable transaction). That table, not the directory, says which files belong to
//! the log: a file whose entry was never committed, or was lost with the log's tail after lost
//! fsyncs, or was pruned, is deleted by [`CheckpointDir::sweep`]. A file that does not decode
//! (torn, altered) is skipped on load like any unreadable checkpoint: its record carries the
//! state's hash, which decoding checks.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::LogError;

/// The name a checkpoint file ends with.
const SUFFIX: &str = ".checkpoint";
/// The name a checkpoint file is written under before it is complete.
const PARTIAL_SUFFIX: &str = ".checkpoint.partial";

/// The directory of a redb log's checkpoint files.
#[derive(Debug, Clone)]
pub(crate) struct CheckpointDir {
    dir: PathBuf,
}

impl CheckpointDir {
    /// The checkpoint directory of the log file at `log`: `<log>.checkpoints`.
    pub(crate) fn beside(log: &Path) -> Self {
        let mut name = log.file_name().unwrap_or_default().to_os_string();
        name.push(".checkpoints");
        Self {
            dir: log.with_file_name(name),
        }
    }

    /// The directory itself.
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    fn file(&self, seq: u64) -> PathBuf {
        self.dir.join(format!("{seq:020}{SUFFIX}"))
    }

    /// Writes the record for `seq` durably: temporary name, fsync, rename, directory fsync.
    /// A file already there for `seq` (left by a log whose tail was lost) is replaced.
    pub(crate) fn write(&self, seq: u64, record: &[u8]) -> Result<(), LogError> {
        let failed = |what: &str| {
            let dir = self.dir.display().to_string();
            let what = what.to_owned();
            move |error: io::Error| {
                LogError::Storage(format!("checkpoint {seq} in {dir}: {what}: {error}"))
            }
        };
        fs::create_dir_all(&self.dir).map_err(failed("create the directory"))?;
        let partial = self.dir.join(format!("{seq:020}{PARTIAL_SUFFIX}"));
        let mut file = File::create(&partial).map_err(failed("create the file"))?;
        file.write_all(record).map_err(failed("write"))?;
        file.sync_all().map_err(failed("sync the file"))?;
        drop(file);
        fs::rename(&partial, self.file(seq)).map_err(failed("rename into place"))?;
        sync_dir(&self.dir).map_err(failed("sync the directory"))
    }

    /// The record stored for `seq`.
    pub(crate) fn read(&self, seq: u64) -> Result<Vec<u8>, LogError> {
        let path = self.file(seq);
        fs::read(&path).map_err(|error| {
            LogError::Storage(format!("checkpoint file {}: {error}", path.display()))
        })
    }

    /// Deletes every file in the directory that is not the checkpoint of a sequence in
    /// `indexed` (unindexed, pruned, or partial); returns how many it deleted. A missing
    /// directory holds nothing to delete.
    pub(crate) fn sweep(&self, indexed: &BTreeSet<u64>) -> Result<usize, LogError> {
        let listing = match fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(error) => return Err(self.sweep_error(&error)),
        };
        let mut deleted = 0;
        for entry in listing {
            let entry = entry.map_err(|error| self.sweep_error(&error))?;
            let name = entry.file_name();
            let kept = name
                .to_str()
                .and_then(|name| name.strip_suffix(SUFFIX))
                .and_then(|seq| seq.parse::<u64>().ok())
                .is_some_and(|seq| indexed.contains(&seq));
            if !kept {
                fs::remove_file(entry.path()).map_err(|error| self.sweep_error(&error))?;
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    fn sweep_error(&self, error: &io::Error) -> LogError {
        LogError::Storage(format!(
            "sweep checkpoint files in {}: {error}",
            self.dir.display()
        ))
    }
}

/// Makes a rename in `dir` durable (POSIX: the directory entry is data of the directory).
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_checkpoint_reads_back_and_unindexed_files_are_swept() -> Result<(), LogError> {
        let temp = tempfile::tempdir().map_err(|e| LogError::Storage(e.to_string()))?;
        let files = CheckpointDir::beside(&temp.path().join("log.redb"));
        assert!(files.path().ends_with("log.redb.checkpoints"));
        files.write(10, b"ten")?;
        files.write(20, b"twenty")?;
        files.write(20, b"twenty again")?;
        fs::write(
            files.path().join("00000000000000000030.checkpoint.partial"),
            b"torn",
        )
        .map_err(|e| LogError::Storage(e.to_string()))?;
        assert_eq!(files.read(20)?, b"twenty again");
        assert_eq!(files.sweep(&BTreeSet::from([20]))?, 2);
        assert!(files.read(10).is_err());
        assert_eq!(files.read(20)?, b"twenty again");
        Ok(())
    }
}

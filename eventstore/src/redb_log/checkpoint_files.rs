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
//! state's hash, which decoding checks. A file whose write does not finish (no room left, an
//! encoding error) is removed at once rather than left for a sweep: on a full disk it would hold
//! room the log needs.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::compressed_file::{self, CompressingWriter};
use super::tables::no_space;
use crate::LogError;

/// The name a checkpoint file ends with.
const SUFFIX: &str = ".checkpoint";
/// The name a checkpoint file is written under before it is complete.
const PARTIAL_SUFFIX: &str = ".checkpoint.partial";

/// The directory of a redb log's checkpoint files.
#[derive(Debug, Clone)]
pub struct CheckpointDir {
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
        let mut file = self.create(seq)?;
        file.write_all(record)
            .map_err(|error| self.failed(seq, "write", &error))?;
        file.finish().map(|_| ())
    }

    /// Starts the file of checkpoint `seq` under its temporary name, for a record written as
    /// it is encoded; [`CheckpointFile::finish`] puts it in place. Until the log indexes it
    /// ([`crate::EventLog::save_checkpoint_file`]) a sweep deletes it, so one checkpoint is
    /// written at a time (the hub's pacing sees to that).
    ///
    /// # Errors
    /// When the directory or the file cannot be created.
    pub fn create(&self, seq: u64) -> Result<CheckpointFile, LogError> {
        fs::create_dir_all(&self.dir)
            .map_err(|error| self.failed(seq, "create the directory", &error))?;
        let partial = Partial(self.dir.join(format!("{seq:020}{PARTIAL_SUFFIX}")));
        let file = File::create(&partial.0)
            .map_err(|error| self.failed(seq, "create the file", &error))?;
        let file = CompressingWriter::new(BufWriter::with_capacity(WRITE_BUFFER_BYTES, file))
            .map_err(|error| self.failed(seq, "start the file", &error))?;
        Ok(CheckpointFile {
            seq,
            dir: self.clone(),
            partial,
            file,
        })
    }

    /// The record stored for `seq` (decompressed).
    pub(crate) fn read(&self, seq: u64) -> Result<Vec<u8>, LogError> {
        let path = self.file(seq);
        let failed = |error: &dyn std::fmt::Display| {
            LogError::Storage(format!("checkpoint file {}: {error}", path.display()))
        };
        let file = fs::read(&path).map_err(|error| failed(&error))?;
        compressed_file::record(file).map_err(|error| failed(&error))
    }

    /// The file of `seq` as it is stored (compressed), to copy it whole.
    pub(crate) fn read_stored(&self, seq: u64) -> io::Result<Vec<u8>> {
        fs::read(self.file(seq))
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

    /// A failure to write checkpoint `seq` here, at step `what`; [`LogError::StorageFull`],
    /// naming the log's directory, when the storage has no room.
    fn failed(&self, seq: u64, what: &str, error: &io::Error) -> LogError {
        let detail = format!(
            "checkpoint {seq} in {}: {what}: {error}",
            self.dir.display()
        );
        if no_space(error) {
            let dir = self.dir.parent().unwrap_or(&self.dir).to_path_buf();
            return LogError::StorageFull { dir, detail };
        }
        LogError::Storage(detail)
    }

    fn sweep_error(&self, error: &io::Error) -> LogError {
        LogError::Storage(format!(
            "sweep checkpoint files in {}: {error}",
            self.dir.display()
        ))
    }
}

/// Bytes a checkpoint file gathers before each write to the file system.
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// A checkpoint file being written under its temporary name.
#[derive(Debug)]
pub struct CheckpointFile {
    seq: u64,
    dir: CheckpointDir,
    partial: Partial,
    file: CompressingWriter,
}

/// The temporary name of a checkpoint file, removed when it is dropped: after the rename it
/// names nothing, and before it, the write did not finish.
#[derive(Debug)]
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        match fs::remove_file(&self.0) {
            Ok(()) => tracing::debug!(path = %self.0.display(), "unfinished checkpoint removed"),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::debug!(path = %self.0.display(), %error, "cannot remove a partial checkpoint");
            }
        }
    }
}

/// A checkpoint file written whole and in place, for the log to index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenCheckpoint {
    /// The input sequence it is the checkpoint of.
    pub seq: u64,
    /// Its size.
    pub bytes: u64,
}

impl CheckpointFile {
    /// Makes the file durable and puts it in place: flush, fsync, rename, directory fsync.
    ///
    /// # Errors
    /// When any of those fails; the temporary file is then removed.
    pub fn finish(self) -> Result<WrittenCheckpoint, LogError> {
        let (seq, dir, partial) = (self.seq, self.dir.clone(), self.partial);
        let failed = |what: &str, error: &io::Error| dir.failed(seq, what, error);
        let file = self
            .file
            .finish()
            .map_err(|error| failed("write", &error))?;
        let bytes = file
            .metadata()
            .map_err(|error| failed("read the size", &error))?
            .len();
        file.sync_all()
            .map_err(|error| failed("sync the file", &error))?;
        drop(file);
        fs::rename(&partial.0, dir.file(seq))
            .map_err(|error| failed("rename into place", &error))?;
        sync_dir(&dir.dir).map_err(|error| failed("sync the directory", &error))?;
        Ok(WrittenCheckpoint { seq, bytes })
    }
}

impl Write for CheckpointFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.file.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Seek for CheckpointFile {
    fn seek(&mut self, position: SeekFrom) -> io::Result<u64> {
        self.file.seek(position)
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

    #[test]
    fn a_checkpoint_file_that_is_not_finished_leaves_nothing_behind() -> Result<(), LogError> {
        let temp = tempfile::tempdir().map_err(|e| LogError::Storage(e.to_string()))?;
        let files = CheckpointDir::beside(&temp.path().join("log.redb"));
        let mut file = files.create(40)?;
        file.write_all(b"half a record")
            .map_err(|e| LogError::Storage(e.to_string()))?;
        drop(file);
        let left = fs::read_dir(files.path())
            .map_err(|e| LogError::Storage(e.to_string()))?
            .count();
        assert_eq!(left, 0, "an unfinished checkpoint kept its room");
        files.create(50)?.finish()?;
        assert_eq!(files.read(50)?, b"");
        Ok(())
    }
}

//! Writing the archive: on the log's writer thread, inside the transaction of a cut, before it
//! commits (`writer/staging/archiving.rs`). Every file is written under a temporary name,
//! synced, renamed into place and the directory synced, so a file the archive names is whole
//! and durable; a write that does not finish leaves nothing behind.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use sha2::{Digest, Sha256};

use super::format::{
    self, SEGMENT_HEADER, SegmentHeader, checkpoint_name, parse_checkpoint_name,
    parse_segment_name, segment_name,
};
use super::{PARTIAL_SUFFIX, sync_dir};
use crate::redb_log::checkpoint_files::CheckpointDir;
use crate::redb_log::groups;
use crate::redb_log::tables::no_space;

/// zstd's level for a segment's decision batches: written on the writer thread, once per cut.
const LEVEL: i32 = 3;
/// Bytes a segment gathers before each write to the file system.
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// Why the archive could not be written: the cut that needed it removes nothing.
#[derive(Debug)]
pub(crate) struct ArchiveError {
    dir: PathBuf,
    what: String,
    full: bool,
}

impl ArchiveError {
    fn io(dir: &Path, what: impl Into<String>, error: &io::Error) -> Self {
        Self {
            dir: dir.to_path_buf(),
            what: format!("{}: {error}", what.into()),
            full: no_space(error),
        }
    }

    /// A failure that is not the file system's (a record that does not hold together).
    pub(crate) fn other(dir: &Path, what: impl Into<String>) -> Self {
        Self {
            dir: dir.to_path_buf(),
            what: what.into(),
            full: false,
        }
    }

    /// What to do about it, for the warning.
    pub(crate) fn advice(&self) -> String {
        let dir = self.dir.display();
        if self.full {
            format!(
                "free space where {dir} is; the log keeps every input until then, and archives \
                 and removes them at the first checkpoint after"
            )
        } else {
            format!(
                "make {dir} writable (or restart the hub without --archive, which removes \
                 without archiving); the log keeps every input until then"
            )
        }
    }
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "archive {}: {}", self.dir.display(), self.what)
    }
}

/// The archive as the writer keeps it: where it is, where the log's checkpoint files are (to
/// copy a base checkpoint from), and what the archive holds, read at the first cut.
#[derive(Debug)]
pub(crate) struct Archiver {
    dir: PathBuf,
    checkpoint_files: Option<CheckpointDir>,
    known: Mutex<Option<Known>>,
}

/// The archive's files, by what their names and headers say.
#[derive(Debug, Default)]
struct Known {
    /// Segments by their first input.
    segments: BTreeMap<u64, SegmentHeader>,
    /// The sequences of the checkpoints it holds.
    checkpoints: BTreeSet<u64>,
}

impl Archiver {
    /// The archive in `dir` of a log whose checkpoint files are in `checkpoint_files` (`None`:
    /// in its table).
    pub(crate) fn new(dir: PathBuf, checkpoint_files: Option<CheckpointDir>) -> Self {
        Self {
            dir,
            checkpoint_files,
            known: Mutex::new(None),
        }
    }

    /// The archive's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The log's checkpoint files, if it keeps them in files.
    pub(crate) fn checkpoint_files(&self) -> Option<&CheckpointDir> {
        self.checkpoint_files.as_ref()
    }

    /// Whether a segment of inputs from `first` on, after the log's base `from_base`, begins a
    /// chain that starts after checkpoint `from_base`, and the archive does not hold that
    /// checkpoint yet: the segment that ends just before `first` and at that base continues
    /// the chain; without one, the chain starts at `from_base` (from the empty state at 0).
    pub(crate) fn needs_checkpoint(
        &self,
        first: u64,
        from_base: u64,
    ) -> Result<bool, ArchiveError> {
        self.with_known(|known| {
            let before = known.segments.range(..first).next_back();
            let continues = before
                .is_some_and(|(_, header)| header.last + 1 == first && header.to_base == from_base);
            !continues && from_base > 0 && !known.checkpoints.contains(&from_base)
        })
    }

    /// Copies the log's checkpoint `seq` (its file's bytes, or its table record) into the
    /// archive, durably.
    pub(crate) fn write_checkpoint(&self, seq: u64, payload: &[u8]) -> Result<(), ArchiveError> {
        let name = checkpoint_name(seq);
        let bytes = format::checkpoint_file(seq, payload);
        let failed = |what: &str, error: &io::Error| {
            ArchiveError::io(&self.dir, format!("checkpoint {seq}: {what}"), error)
        };
        self.create_dir()
            .map_err(|e| failed("create the directory", &e))?;
        let partial = Partial(self.dir.join(format!("{name}{PARTIAL_SUFFIX}")));
        let mut file = File::create(&partial.0).map_err(|e| failed("create", &e))?;
        file.write_all(&bytes).map_err(|e| failed("write", &e))?;
        file.sync_all().map_err(|e| failed("sync", &e))?;
        drop(file);
        self.put_in_place(&partial, &name)
            .map_err(|e| failed("put in place", &e))?;
        self.with_known(|known| known.checkpoints.insert(seq))?;
        tracing::info!(dir = %self.dir.display(), seq, "archive: the log's base checkpoint copied");
        Ok(())
    }

    /// Starts the segment of inputs `first..=last`, written by a cut that moves the log's base
    /// from `from_base` to `to_base`.
    pub(crate) fn segment(
        &self,
        first: u64,
        last: u64,
        from_base: u64,
        to_base: u64,
    ) -> Result<SegmentWriter<'_>, ArchiveError> {
        let name = segment_name(first, last);
        let failed = |what: &str, error: &io::Error| {
            ArchiveError::io(&self.dir, format!("segment {name}: {what}"), error)
        };
        self.create_dir()
            .map_err(|e| failed("create the directory", &e))?;
        let partial = Partial(self.dir.join(format!("{name}{PARTIAL_SUFFIX}")));
        let file = File::create(&partial.0).map_err(|e| failed("create", &e))?;
        let mut file = BufWriter::with_capacity(WRITE_BUFFER_BYTES, file);
        file.write_all(&[0; SEGMENT_HEADER])
            .map_err(|e| failed("write", &e))?;
        let batches = zstd::stream::write::Encoder::new(Vec::new(), LEVEL)
            .map_err(|e| failed("start compressing", &e))?;
        Ok(SegmentWriter {
            archiver: self,
            name,
            partial,
            file,
            hasher: Sha256::new(),
            header: SegmentHeader {
                first,
                last,
                from_base,
                to_base,
                groups: 0,
                batches: 0,
                groups_bytes: 0,
                batches_bytes: 0,
                batches_raw_bytes: 0,
                sha256: [0; 32],
            },
            next: first,
            batches,
            entry: Vec::new(),
        })
    }

    fn create_dir(&self) -> io::Result<()> {
        if self.dir.is_dir() {
            return Ok(());
        }
        fs::create_dir_all(&self.dir)?;
        match self.dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => sync_dir(parent),
            None => Ok(()),
        }
    }

    /// Renames a finished file into place and makes the rename durable.
    fn put_in_place(&self, partial: &Partial, name: &str) -> io::Result<()> {
        fs::rename(&partial.0, self.dir.join(name))?;
        sync_dir(&self.dir)
    }

    /// Runs `look` on what the archive holds, read from the directory the first time.
    fn with_known<T>(&self, look: impl FnOnce(&mut Known) -> T) -> Result<T, ArchiveError> {
        let mut slot = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(self.scan()?);
        }
        Ok(look(slot.get_or_insert_with(Known::default)))
    }

    /// Reads the directory: every segment's header and every checkpoint's name; removes the
    /// files of writes that did not finish.
    fn scan(&self) -> Result<Known, ArchiveError> {
        let failed = |error: &io::Error| ArchiveError::io(&self.dir, "read the directory", error);
        let mut known = Known::default();
        let listing = match fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(known),
            Err(error) => return Err(failed(&error)),
        };
        for entry in listing {
            let entry = entry.map_err(|e| failed(&e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(PARTIAL_SUFFIX) {
                fs::remove_file(entry.path()).map_err(|e| failed(&e))?;
            } else if let Some(seq) = parse_checkpoint_name(&name) {
                known.checkpoints.insert(seq);
            } else if let Some(named) = parse_segment_name(&name) {
                match super::read_header(&entry.path()) {
                    Ok(header) if (header.first, header.last) == named => {
                        known.segments.insert(header.first, header);
                    }
                    Ok(_) => tracing::warn!(file = %entry.path().display(),
                        "archive: a segment whose header names other inputs is left as it is"),
                    Err(error) => tracing::warn!(
                        file = %entry.path().display(), %error,
                        "archive: a segment whose header cannot be read is left as it is"
                    ),
                }
            }
        }
        Ok(known)
    }

    /// Takes a segment that is now in place: the segments it overlaps were written by cuts
    /// that did not commit, and go.
    fn installed(&self, header: SegmentHeader) -> Result<(), ArchiveError> {
        let superseded = self.with_known(|known| {
            let gone: Vec<SegmentHeader> = known
                .segments
                .values()
                .filter(|other| other.last >= header.first && **other != header)
                .copied()
                .collect();
            for other in &gone {
                known.segments.remove(&other.first);
            }
            known.segments.insert(header.first, header);
            gone
        })?;
        for other in &superseded {
            let path = self.dir.join(other.file_name());
            if other.file_name() == header.file_name() {
                continue;
            }
            match fs::remove_file(&path) {
                Ok(()) => tracing::info!(file = %path.display(),
                    "archive: a segment of a cut that did not commit is replaced"),
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => tracing::warn!(file = %path.display(), %error,
                    "archive: cannot remove a segment of a cut that did not commit; \
                     readers ignore it"),
            }
        }
        if !superseded.is_empty() {
            sync_dir(&self.dir).map_err(|e| ArchiveError::io(&self.dir, "sync", &e))?;
        }
        Ok(())
    }
}

/// A segment being written under its temporary name.
pub(crate) struct SegmentWriter<'a> {
    archiver: &'a Archiver,
    name: String,
    partial: Partial,
    file: BufWriter<File>,
    /// The SHA-256 of the body so far.
    hasher: Sha256,
    header: SegmentHeader,
    /// The input the next group must begin with.
    next: u64,
    batches: zstd::stream::write::Encoder<'static, Vec<u8>>,
    /// One entry's bytes, reused.
    entry: Vec<u8>,
}

impl SegmentWriter<'_> {
    fn failed(&self, what: &str, error: &io::Error) -> ArchiveError {
        let what = format!("segment {}: {what}", self.name);
        ArchiveError::io(self.archiver.dir(), what, error)
    }

    fn refused(&self, what: impl fmt::Display) -> ArchiveError {
        let what = format!("segment {}: {what}", self.name);
        ArchiveError::other(self.archiver.dir(), what)
    }

    /// Adds the group record stored under `key` (its last input), the one after the last.
    pub(crate) fn group(&mut self, key: u64, record: &[u8]) -> Result<(), ArchiveError> {
        let first = groups::first_of(record);
        if first != Some(self.next) || key < self.next || key > self.header.last {
            return Err(self.refused(format!(
                "the group stored under {key} does not follow input {}",
                self.next - 1
            )));
        }
        self.entry.clear();
        format::entry(&mut self.entry, key, record).map_err(|e| self.refused(e))?;
        self.file
            .write_all(&self.entry)
            .map_err(|e| self.failed("write", &e))?;
        self.hasher.update(&self.entry);
        self.header.groups += 1;
        self.header.groups_bytes += self.entry.len() as u64;
        self.next = key + 1;
        Ok(())
    }

    /// Adds the decision batch stored under `key` (its last input).
    pub(crate) fn batch(&mut self, key: u64, record: &[u8]) -> Result<(), ArchiveError> {
        self.entry.clear();
        format::entry(&mut self.entry, key, record).map_err(|e| self.refused(e))?;
        self.batches
            .write_all(&self.entry)
            .map_err(|e| self.failed("compress", &e))?;
        self.header.batches += 1;
        self.header.batches_raw_bytes += self.entry.len() as u64;
        Ok(())
    }

    /// Completes the segment and puts it in place durably — file synced, renamed, directory
    /// synced — in place of any segment it overlaps (a cut's that did not commit).
    pub(crate) fn finish(self) -> Result<(), ArchiveError> {
        let SegmentWriter {
            archiver,
            name,
            partial,
            mut file,
            mut hasher,
            mut header,
            next,
            batches,
            ..
        } = self;
        let failed = |what: &str, error: &io::Error| {
            ArchiveError::io(archiver.dir(), format!("segment {name}: {what}"), error)
        };
        if next != header.last + 1 {
            return Err(ArchiveError::other(
                archiver.dir(),
                format!("segment {name}: its groups end at input {}", next - 1),
            ));
        }
        let batches = batches.finish().map_err(|e| failed("compress", &e))?;
        file.write_all(&batches).map_err(|e| failed("write", &e))?;
        hasher.update(&batches);
        header.batches_bytes = batches.len() as u64;
        header.sha256 = format::file_hash(hasher, &header.fields());
        let mut file = file.into_inner().map_err(|e| failed("write", e.error()))?;
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(&header.encode()))
            .map_err(|e| failed("write", &e))?;
        file.sync_all().map_err(|e| failed("sync", &e))?;
        drop(file);
        archiver
            .put_in_place(&partial, &name)
            .map_err(|e| failed("put in place", &e))?;
        archiver.installed(header)
    }
}

/// The temporary name of a file being written, removed when it is dropped: after the rename it
/// names nothing, and before it the write did not finish.
#[derive(Debug)]
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        match fs::remove_file(&self.0) {
            Ok(()) => tracing::debug!(path = %self.0.display(), "unfinished archive file removed"),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(path = %self.0.display(), %error,
                    "cannot remove an unfinished archive file");
            }
        }
    }
}

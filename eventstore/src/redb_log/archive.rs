//! The archive (`RedbOptions::archive`, `flotilla serve --archive DIR`): what a retention window
//! removes from the log is first written to a directory of its own, so the log stays within
//! its window while its whole history can still be replayed ([`ArchivedLog`]).
//!
//! Guarantees:
//! - **Written before removed.** A cut (`writer/staging/retention.rs`) writes the input groups
//!   and decision batches it removes to one segment file — under a temporary name, synced,
//!   renamed into place, the directory synced — before the transaction that removes them
//!   commits. When the archive cannot be written (no room, no permission), nothing is
//!   removed: the base stays where it was, a warning says what to do, and the next checkpoint
//!   tries again.
//! - **Verifiable.** Every file starts with a header naming its format, version and range, and
//!   holds a SHA-256 of its contents (`format.rs`); a damaged file is refused when it is read,
//!   never folded.
//! - **Idempotent.** A segment written by a cut whose transaction did not commit (a crash in
//!   between) holds inputs the log still has: readers ignore it, and the next cut writes its
//!   segment in its place.
//! - **Contiguous.** A segment holds the groups one cut removed, the inputs `first..=last` of
//!   its name without a gap, and the decision batches that cut removed: those after the base it
//!   moved from, up to the base it moved to. Each segment begins with the input after the last
//!   one of the segment before, and its batches with the one after that segment's; a chain of
//!   segments starts at the log's beginning (the archive was there from the first cut) or just
//!   after a checkpoint the archive holds a copy of (the log already had a base when the
//!   archive began, or cuts were made without it in between).
//! - **The log is unchanged by it.** Folded state, decisions and the log's tables are the same
//!   with an archive as without; one cut that would move the base but remove no whole input
//!   group (the base fell inside a group) waits for the next checkpoint instead, so that every
//!   segment holds inputs.
//!
//! The directory holds `<first>-<last>.segment` files (sequences in 20 digits), the
//! `<sequence>.checkpoint` files a chain starts after, and nothing else the archive needs;
//! `.partial` files are writes that did not finish, removed at the next cut.

mod format;
mod read;
mod write;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::LogError;
use format::{SEGMENT_HEADER, SegmentHeader, parse_checkpoint_name, parse_segment_name};
pub use read::ArchivedLog;
pub(crate) use write::{ArchiveError, Archiver};

/// The name a file is written under before it is complete.
const PARTIAL_SUFFIX: &str = ".partial";

/// Makes a rename in `dir` durable (POSIX: the directory entry is data of the directory).
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Reads a segment's header from its file.
fn read_header(path: &Path) -> Result<SegmentHeader, String> {
    let mut file = File::open(path).map_err(|error| error.to_string())?;
    let mut bytes = [0; SEGMENT_HEADER];
    file.read_exact(&mut bytes)
        .map_err(|error| error.to_string())?;
    SegmentHeader::decode(&bytes)
}

/// One segment of the archive, as its header says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentInfo {
    /// The first input it holds.
    pub first: u64,
    /// The last input it holds.
    pub last: u64,
    /// The log's base before the cut that wrote it: its decision batches follow it.
    pub from_base: u64,
    /// The log's base after that cut: its decision batches end there.
    pub to_base: u64,
    /// Its input groups.
    pub groups: u32,
    /// Its decision batches.
    pub batches: u32,
    /// The file's size.
    pub bytes: u64,
}

/// One checkpoint the archive holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedCheckpoint {
    /// The last input folded into it.
    pub seq: u64,
    /// The file's size.
    pub bytes: u64,
}

/// What an archive directory holds (`flotilla replay --archive DIR info`), read from the
/// files' names and headers; the contents are verified when they are read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveInfo {
    /// The directory.
    pub dir: PathBuf,
    /// The first input its segments hold.
    pub first: Option<u64>,
    /// The last input its segments hold.
    pub last: Option<u64>,
    /// The base of the newest segment: decision batches are archived up to it.
    pub decided_to: u64,
    /// Bytes of every file, segments and checkpoints.
    pub bytes: u64,
    /// The segments, oldest first.
    pub segments: Vec<SegmentInfo>,
    /// The checkpoints a chain of segments starts after.
    pub checkpoints: Vec<ArchivedCheckpoint>,
    /// Files whose header cannot be read, with why.
    pub unreadable: Vec<String>,
}

impl ArchiveInfo {
    /// Reads the directory `dir` (an archive not written yet holds nothing).
    ///
    /// # Errors
    /// When the directory cannot be listed.
    pub fn read(dir: &Path) -> Result<Self, LogError> {
        let listing = list(dir)?;
        let segments: Vec<SegmentInfo> = listing
            .segments
            .iter()
            .map(|header| SegmentInfo {
                first: header.first,
                last: header.last,
                from_base: header.from_base,
                to_base: header.to_base,
                groups: header.groups,
                batches: header.batches,
                bytes: header.file_bytes(),
            })
            .collect();
        let bytes = segments.iter().map(|s| s.bytes).sum::<u64>()
            + listing.checkpoints.iter().map(|c| c.bytes).sum::<u64>();
        Ok(Self {
            dir: dir.to_path_buf(),
            first: segments.first().map(|s| s.first),
            last: segments.last().map(|s| s.last),
            decided_to: segments.last().map_or(0, |s| s.to_base),
            bytes,
            segments,
            checkpoints: listing.checkpoints,
            unreadable: listing.unreadable,
        })
    }
}

/// The archive's files, by their names and headers.
#[derive(Debug, Default)]
struct Listing {
    /// Segment headers, by first input.
    segments: Vec<SegmentHeader>,
    /// Checkpoints, by sequence.
    checkpoints: Vec<ArchivedCheckpoint>,
    /// Files whose header cannot be read, with why.
    unreadable: Vec<String>,
}

/// Lists `dir`; a missing directory is an empty archive.
fn list(dir: &Path) -> Result<Listing, LogError> {
    let failed =
        |error: &io::Error| LogError::Storage(format!("archive {}: list: {error}", dir.display()));
    let mut listing = Listing::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(listing),
        Err(error) => return Err(failed(&error)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| failed(&e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(seq) = parse_checkpoint_name(&name) {
            let bytes = entry.metadata().map_err(|e| failed(&e))?.len();
            listing.checkpoints.push(ArchivedCheckpoint { seq, bytes });
        } else if let Some((first, last)) = parse_segment_name(&name) {
            match read_header(&entry.path()) {
                Ok(header) if (header.first, header.last) == (first, last) => {
                    listing.segments.push(header);
                }
                Ok(header) => listing.unreadable.push(format!(
                    "{name}: its header says inputs {}..={}",
                    header.first, header.last
                )),
                Err(error) => listing.unreadable.push(format!("{name}: {error}")),
            }
        }
    }
    listing.segments.sort_by_key(|header| header.first);
    listing.checkpoints.sort_by_key(|checkpoint| checkpoint.seq);
    Ok(listing)
}

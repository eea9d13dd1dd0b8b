//! The redb file layout: table definitions, the layout version, and the checkpoint record.
//!
//! Table names and value encodings are part of the stored format: they only grow. A change that
//! old files cannot be read under bumps [`LAYOUT_VERSION`], which [`super::RedbLog::open`]
//! checks before touching anything else.

use std::path::{Path, PathBuf};

use flotilla_core::codec::CodecError;
use flotilla_core::wire::checkpoint;
use redb::TableDefinition;

use crate::{Checkpoint, LogError};

/// Input records of layout 1: sequence → framed envelope (`wire::encode_envelope`; 19da42c:
/// unmarked). Read, never written since layout 2.
pub(crate) const INPUTS: TableDefinition<u64, &[u8]> = TableDefinition::new("inputs");
/// Input groups (layout 2): a group's last sequence → its inputs (`groups.rs`), one per write
/// transaction that appended any.
pub(crate) const INPUT_GROUPS: TableDefinition<u64, &[u8]> = TableDefinition::new("input_groups");
/// Deduplication index: event id (the UUID's 16 bytes) → the sequence it was stored at.
pub(crate) const EVENT_IDS: TableDefinition<&[u8; 16], u64> = TableDefinition::new("event_ids");
/// Decision batches: last input sequence covered → `wire::decisions::encode_batch`.
pub(crate) const DECISIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("decisions");
/// Checkpoints: sequence → checkpoint record (see [`encode_checkpoint_record`]).
pub(crate) const CHECKPOINTS: TableDefinition<u64, &[u8]> = TableDefinition::new("checkpoints");
/// Checkpoints stored in files of their own (`checkpoint_files.rs`): sequence → the record's
/// length in bytes. Only an entry here makes a file in the checkpoint directory part of the log.
pub(crate) const CHECKPOINT_FILES: TableDefinition<u64, u64> =
    TableDefinition::new("checkpoint_files");
/// Small facts about the file itself, such as [`LAYOUT_VERSION_KEY`].
pub(crate) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// The key in [`META`] under which the log's base is stored: the checkpoint a retention window
/// made the start of the log; inputs at or before it are gone (absent: none are).
pub(crate) const BASE_SEQ_KEY: &str = "base_seq";
/// The key in [`META`] under which the base input's time is stored, in milliseconds since the
/// epoch: event ids older than it are refused unless the log still holds them.
pub(crate) const BASE_TIME_KEY: &str = "base_time_ms";
/// The key in [`META`] under which the layout version is stored.
pub(crate) const LAYOUT_VERSION_KEY: &str = "layout_version";
/// The table layout this build writes: 3, input groups compressed (`groups.rs`). It reads
/// layouts 1 (inputs one per key) and 2 (plain groups) too, never rewriting them, and raises an
/// older file it opens for writing to 3 before storing a group, so that a build that reads only
/// an older layout refuses the file rather than miss or misread its newer inputs.
pub(crate) const LAYOUT_VERSION: u64 = 3;
/// The layout of plain input groups.
pub(crate) const LAYOUT_VERSION_2: u64 = 2;
/// The first table layout: each input under its own key.
pub(crate) const LAYOUT_VERSION_1: u64 = 1;

/// Encodes a checkpoint as a marked frame (`flotilla_core::wire::checkpoint`).
pub(crate) fn encode_checkpoint_record(checkpoint: &Checkpoint) -> Result<Vec<u8>, CodecError> {
    checkpoint::encode(checkpoint.seq, &checkpoint.hash, &checkpoint.state)
}

/// Decodes a checkpoint record stored under key `seq` (marked, or 19da42c's `[01 00][body]`).
pub(crate) fn decode_checkpoint_record(seq: u64, bytes: &[u8]) -> Result<Checkpoint, LogError> {
    let decoded = checkpoint::decode(bytes).map_err(|source| LogError::Corrupt { seq, source })?;
    if decoded.seq != seq {
        // The key is derived from the record when it is written, so a mismatch means the file
        // was altered: refuse rather than hand the fold a state for the wrong position.
        return Err(LogError::Storage(format!(
            "checkpoint stored under sequence {seq} claims sequence {}",
            decoded.seq
        )));
    }
    Ok(Checkpoint {
        seq: decoded.seq,
        hash: decoded.hash,
        state: decoded.state,
    })
}

/// Builds the mapper from a storage-engine error to [`LogError::Storage`], naming what was being
/// done, so that every `?` on a redb call says where it failed. A storage with no room left is
/// [`LogError::StorageFull`] instead, with its `dir` left empty: only the writer knows where the
/// log lives, and fills it in ([`in_dir`]).
pub(crate) fn storage<E: Into<redb::Error>>(context: &str) -> impl FnOnce(E) -> LogError + '_ {
    move |error| {
        let error: redb::Error = error.into();
        let detail = format!("{context}: {error}");
        match &error {
            redb::Error::Io(io) if no_space(io) => LogError::StorageFull {
                dir: PathBuf::new(),
                detail,
            },
            _ => LogError::Storage(detail),
        }
    }
}

/// Whether an I/O error says the storage has no room: the file system is full (ENOSPC) or a
/// quota is reached (EDQUOT). Of all I/O failures only these pass by themselves, once someone
/// frees space; the writer reopens the file and goes on after them, and stops after any other.
pub(crate) fn no_space(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// Names `dir` in a [`LogError::StorageFull`] that does not name a directory yet.
pub(crate) fn in_dir(error: LogError, dir: &Path) -> LogError {
    match error {
        LogError::StorageFull { dir: named, detail } if named.as_os_str().is_empty() => {
            LogError::StorageFull {
                dir: dir.to_path_buf(),
                detail,
            }
        }
        other => other,
    }
}

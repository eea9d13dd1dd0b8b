//! The redb file layout: table definitions, the layout version, and the checkpoint record.
//!
//! Table names and value encodings are part of the stored format: they only grow. A change that
//! old files cannot be read under bumps [`LAYOUT_VERSION`], which [`super::RedbLog::open`]
//! checks before touching anything else.

use flotilla_core::codec::{CodecError, decode_checkpoint, encode_checkpoint};
use flotilla_core::{State, StateHash};
use redb::TableDefinition;
use serde::{Deserialize, Serialize};

use crate::{Checkpoint, LogError};

/// Input events: sequence → framed envelope (`codec::encode_envelope`).
pub(crate) const INPUTS: TableDefinition<u64, &[u8]> = TableDefinition::new("inputs");
/// Deduplication index: event id (the UUID's 16 bytes) → the sequence it was stored at.
pub(crate) const EVENT_IDS: TableDefinition<&[u8; 16], u64> = TableDefinition::new("event_ids");
/// Decision batches: last input sequence covered → `codec::encode_decisions` of the batch.
pub(crate) const DECISIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("decisions");
/// Checkpoints: sequence → checkpoint record (see [`encode_checkpoint_record`]).
pub(crate) const CHECKPOINTS: TableDefinition<u64, &[u8]> = TableDefinition::new("checkpoints");
/// Small facts about the file itself, such as [`LAYOUT_VERSION_KEY`].
pub(crate) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// The key in [`META`] under which the layout version is stored.
pub(crate) const LAYOUT_VERSION_KEY: &str = "layout_version";
/// The table layout this build writes and reads.
pub(crate) const LAYOUT_VERSION: u64 = 1;

/// The frame version of checkpoint records this build writes and reads.
const CHECKPOINT_FORMAT_VERSION: u16 = 1;

/// Borrowing twin of [`CheckpointBody`], so encoding a checkpoint does not clone the state.
/// Field order and types must match [`CheckpointBody`]: bincode encodes a struct as its fields.
#[derive(Serialize)]
struct CheckpointBodyRef<'a> {
    seq: u64,
    hash: &'a StateHash,
    state: &'a State,
}

/// A decoded checkpoint record.
#[derive(Deserialize)]
struct CheckpointBody {
    seq: u64,
    hash: StateHash,
    state: State,
}

/// Encodes a checkpoint as `[format version: u16 LE][codec::encode_checkpoint(seq, hash, state)]`.
///
/// The version frame lets a later build recognise (and refuse, or rebuild from the log) a
/// checkpoint whose state layout it no longer reads, instead of misreading it.
pub(crate) fn encode_checkpoint_record(checkpoint: &Checkpoint) -> Result<Vec<u8>, CodecError> {
    let body = CheckpointBodyRef {
        seq: checkpoint.seq,
        hash: &checkpoint.hash,
        state: &checkpoint.state,
    };
    let encoded = encode_checkpoint(&body)?;
    let mut out = Vec::with_capacity(encoded.len() + 2);
    out.extend_from_slice(&CHECKPOINT_FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&encoded);
    Ok(out)
}

/// Decodes a record written by [`encode_checkpoint_record`], stored under key `seq`.
pub(crate) fn decode_checkpoint_record(seq: u64, bytes: &[u8]) -> Result<Checkpoint, LogError> {
    let corrupt = |source| LogError::Corrupt { seq, source };
    let (head, body) = bytes
        .split_at_checked(2)
        .ok_or(CodecError::Truncated(bytes.len()))
        .map_err(corrupt)?;
    let version = u16::from_le_bytes([head[0], head[1]]);
    if version != CHECKPOINT_FORMAT_VERSION {
        return Err(corrupt(CodecError::UnknownVersion {
            found: version,
            max: CHECKPOINT_FORMAT_VERSION,
        }));
    }
    let decoded: CheckpointBody = decode_checkpoint(body).map_err(corrupt)?;
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
/// done, so that every `?` on a redb call says where it failed.
pub(crate) fn storage<E: std::fmt::Display>(context: &str) -> impl FnOnce(E) -> LogError + '_ {
    move |error| LogError::Storage(format!("{context}: {error}"))
}

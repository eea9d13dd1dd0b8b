//! The one place that owns the binary encoding of events, decisions and checkpoints.
//!
//! bincode is pinned to 2.0.1 and used with `config::legacy()` (fixed-width little-endian
//! integers, byte-compatible with bincode 1.x and wincode, which keeps an exit path open) and an
//! explicit size limit, so a corrupt length prefix cannot make a reader allocate gigabytes.
//! Checkpoints (and so the state hash) use `config::standard()` instead: variable-width
//! integers, a third smaller at a million clusters. A checkpoint is a cache this build alone
//! reads back (`wire::checkpoint`), so it needs no exit path.
//!
//! Stored events are marked frames (`[marker][kind E][schema version: u16 LE][bincode body]`, see
//! [`crate::wire`]); [`decode_envelope`] also reads the unmarked `[version: u16 LE][body]`
//! frames release 19da42c wrote, dispatches on the version and upcasts older bodies to the
//! current [`Envelope`] (see `docs/schema-evolution.md`). Nothing here does IO: it is bytes in,
//! bytes out.

use bincode::config::{Configuration, Fixint, Limit, LittleEndian, Varint};
use serde::{Serialize, de::DeserializeOwned};

pub mod frame;

use frame::RecordKind;

/// Largest encoded event or decision record accepted (16 MiB).
pub const RECORD_BYTES_MAX: usize = 16 * 1024 * 1024;
/// Largest encoded decision batch accepted (256 MiB): one input can decide a lot — creating a
/// PickAll placement over 100,000 clusters records a scheduling and a rollout decision for each.
pub const DECISIONS_BYTES_MAX: usize = 256 * 1024 * 1024;
/// Largest encoded checkpoint accepted (4 GiB).
pub const CHECKPOINT_BYTES_MAX: usize = 4 * 1024 * 1024 * 1024;

type RecordConfig = Configuration<LittleEndian, Fixint, Limit<RECORD_BYTES_MAX>>;
type DecisionsConfig = Configuration<LittleEndian, Fixint, Limit<DECISIONS_BYTES_MAX>>;
type CheckpointConfig = Configuration<LittleEndian, Varint, Limit<CHECKPOINT_BYTES_MAX>>;

const fn record_config() -> RecordConfig {
    bincode::config::legacy().with_limit::<RECORD_BYTES_MAX>()
}

const fn decisions_config() -> DecisionsConfig {
    bincode::config::legacy().with_limit::<DECISIONS_BYTES_MAX>()
}

const fn checkpoint_config() -> CheckpointConfig {
    bincode::config::standard().with_limit::<CHECKPOINT_BYTES_MAX>()
}

/// Why bytes could not be turned into a value (or back).
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The record is shorter than its frame header.
    #[error("record of {0} bytes is too short for its frame header")]
    Truncated(usize),
    /// The record was written by a newer flotilla than this one.
    #[error("schema version {found} is newer than this build understands (max {max})")]
    UnknownVersion {
        /// Version found in the frame.
        found: u16,
        /// Newest version this build reads.
        max: u16,
    },
    /// A checkpoint of an older `State` layout: checkpoints are a cache, so it is skipped and
    /// the state folded from the log (`docs/schema-evolution.md`, rule 5).
    #[error(
        "checkpoint of version {found} holds a state layout this build no longer reads (it reads {current})"
    )]
    RetiredCheckpoint {
        /// Version found.
        found: u16,
        /// The only checkpoint version this build reads.
        current: u16,
    },
    /// A marked frame names a record kind this build does not know.
    #[error("marked frame of unknown record kind {0:#04x}")]
    UnknownKind(u8),
    /// A marked frame of another record kind than the one being read.
    #[error("expected a {expected} frame, found a {found} frame")]
    WrongKind {
        /// The kind being read.
        expected: RecordKind,
        /// The kind the frame holds.
        found: RecordKind,
    },
    /// A marked frame written by a newer flotilla: not damage, a rolling upgrade.
    #[error("{kind} of version {version}, newer than this build reads (max {max})", max = kind.current_version())]
    Newer {
        /// The record kind.
        kind: RecordKind,
        /// Its version.
        version: u16,
    },
    /// bincode could not decode the body.
    #[error("cannot decode {what}: {source}")]
    Decode {
        /// What was being decoded.
        what: &'static str,
        /// The underlying error.
        source: bincode::error::DecodeError,
    },
    /// bincode could not encode the value.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The underlying error.
        source: bincode::error::EncodeError,
    },
    /// The value encodes to more bytes than its kind may have; nothing was written, since bincode
    /// only enforces limits when reading and the record would be unreadable.
    #[error("{what} of {bytes} bytes is over the limit of {max} bytes")]
    TooLarge {
        /// What was being encoded.
        what: &'static str,
        /// Its encoded size.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// Bytes were left over after the value, so the frame does not hold what it claims.
    #[error("{what}: {extra} trailing bytes after the value")]
    Trailing {
        /// What was being decoded.
        what: &'static str,
        /// Number of unexpected bytes.
        extra: usize,
    },
    /// A checkpoint decoded, but its state does not hash to the hash saved with it: the record
    /// was damaged into another state.
    #[error("checkpoint state hashes to {computed}, not to the {stored} saved with it (damaged)")]
    CheckpointHash {
        /// The hash saved with the checkpoint.
        stored: String,
        /// The hash of the state as decoded.
        computed: String,
    },
}

/// Encodes a value under the record size limit (decisions, small records).
///
/// # Errors
/// When the value exceeds [`RECORD_BYTES_MAX`] or cannot be encoded.
pub fn encode_record<T: Serialize>(what: &'static str, value: &T) -> Result<Vec<u8>, CodecError> {
    let bytes = bincode::serde::encode_to_vec(value, record_config())
        .map_err(|source| CodecError::Encode { what, source })?;
    within(what, bytes, RECORD_BYTES_MAX)
}

/// Decodes a value encoded by [`encode_record`]; the whole slice must be consumed.
///
/// # Errors
/// When the bytes do not decode into `T`.
pub fn decode_record<T: DeserializeOwned>(
    what: &'static str,
    bytes: &[u8],
) -> Result<T, CodecError> {
    let (value, used) = bincode::serde::decode_from_slice(bytes, record_config())
        .map_err(|source| CodecError::Decode { what, source })?;
    check_consumed(what, bytes.len(), used)?;
    Ok(value)
}

/// Encodes a batch of decisions (under [`DECISIONS_BYTES_MAX`]).
///
/// # Errors
/// When the batch exceeds the limit or cannot be encoded.
pub fn encode_decisions<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let bytes = bincode::serde::encode_to_vec(value, decisions_config()).map_err(|source| {
        CodecError::Encode {
            what: "decision batch",
            source,
        }
    })?;
    within("decision batch", bytes, DECISIONS_BYTES_MAX)
}

/// Decodes a value encoded by [`encode_decisions`]; the whole slice must be consumed.
///
/// # Errors
/// When the bytes do not decode into `T`.
pub fn decode_decisions<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    let (value, used) =
        bincode::serde::decode_from_slice(bytes, decisions_config()).map_err(|source| {
            CodecError::Decode {
                what: "decision batch",
                source,
            }
        })?;
    check_consumed("decision batch", bytes.len(), used)?;
    Ok(value)
}

/// Encodes a large value (a checkpoint of the folded state).
///
/// # Errors
/// When the value exceeds [`CHECKPOINT_BYTES_MAX`] or cannot be encoded.
pub fn encode_checkpoint<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let bytes = bincode::serde::encode_to_vec(value, checkpoint_config()).map_err(|source| {
        CodecError::Encode {
            what: "checkpoint",
            source,
        }
    })?;
    within("checkpoint", bytes, CHECKPOINT_BYTES_MAX)
}

/// Writes the [`encode_checkpoint`] encoding of `value` to `out` (no copy of a large state:
/// appended to a buffer, or written as it is encoded); returns the bytes written.
///
/// # Errors
/// As [`encode_checkpoint`], or when `out` fails; `out` may then hold a partial encoding.
pub fn encode_checkpoint_into<T: Serialize, W: std::io::Write>(
    value: &T,
    out: &mut W,
) -> Result<usize, CodecError> {
    let written = bincode::serde::encode_into_std_write(value, out, checkpoint_config()).map_err(
        |source| CodecError::Encode {
            what: "checkpoint",
            source,
        },
    )?;
    checkpoint_within(written)?;
    Ok(written)
}

/// Refuses a checkpoint encoding of `bytes` its reader would refuse.
///
/// # Errors
/// [`CodecError::TooLarge`] over [`CHECKPOINT_BYTES_MAX`].
pub(crate) fn checkpoint_within(bytes: usize) -> Result<(), CodecError> {
    if bytes > CHECKPOINT_BYTES_MAX {
        return Err(CodecError::TooLarge {
            what: "checkpoint",
            bytes,
            max: CHECKPOINT_BYTES_MAX,
        });
    }
    Ok(())
}

/// Decodes a value encoded by [`encode_checkpoint`].
///
/// # Errors
/// When the bytes do not decode into `T`.
pub fn decode_checkpoint<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    let (value, used) =
        bincode::serde::decode_from_slice(bytes, checkpoint_config()).map_err(|source| {
            CodecError::Decode {
                what: "checkpoint",
                source,
            }
        })?;
    check_consumed("checkpoint", bytes.len(), used)?;
    Ok(value)
}

/// Decodes a value at the start of a checkpoint encoding (the fields before the state) and
/// returns it with the bytes it used, for a caller that reads the rest itself.
///
/// # Errors
/// When the bytes do not begin with the value's encoding.
pub fn decode_checkpoint_prefix<T: DeserializeOwned>(
    bytes: &[u8],
) -> Result<(T, usize), CodecError> {
    bincode::serde::decode_from_slice(bytes, checkpoint_config()).map_err(|source| {
        CodecError::Decode {
            what: "checkpoint",
            source,
        }
    })
}

/// Refuses an encoding its reader would refuse (bincode checks limits on decode only).
fn within(what: &'static str, bytes: Vec<u8>, max: usize) -> Result<Vec<u8>, CodecError> {
    if bytes.len() > max {
        return Err(CodecError::TooLarge {
            what,
            bytes: bytes.len(),
            max,
        });
    }
    Ok(bytes)
}

fn check_consumed(what: &'static str, len: usize, used: usize) -> Result<(), CodecError> {
    if used == len {
        Ok(())
    } else {
        Err(CodecError::Trailing {
            what,
            extra: len - used,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_batch_may_be_larger_than_an_event() {
        // bincode enforces its limit when decoding: a batch over the event limit would be
        // written and then be unreadable, so decisions have their own, larger limit.
        let many: Vec<String> = (0..750_000).map(|i| format!("cluster-{i:08}")).collect();
        assert!(matches!(
            encode_record("decisions", &many),
            Err(CodecError::TooLarge { .. })
        ));
        let bytes = encode_decisions(&many).expect("within the decisions limit");
        assert!(bytes.len() > RECORD_BYTES_MAX);
        assert!(
            decode_record::<Vec<String>>("decisions", &bytes).is_err(),
            "over the event limit"
        );
        assert_eq!(
            decode_decisions::<Vec<String>>(&bytes).expect("decodes"),
            many
        );
    }
}

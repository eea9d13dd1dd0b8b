//! Checkpoints: the folded state at an input sequence, with its hash.
//!
//! A checkpoint is a marked frame of kind `C`. Release 19da42c wrote `[01 00][body]` (an
//! unmarked version 1) with the same body layout. A checkpoint is only an optimisation: the
//! stores skip one that does not decode — damaged, of a newer version, or of a `State` layout
//! this build no longer reads — and the hub folds from the log instead, so the version moves
//! whenever `State`'s encoding changes.

use std::io::{Seek, SeekFrom, Write};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::checkpoint_sections as sections;
use super::{Frame, RecordKind, marked_frame, split_frame};
use crate::codec::{CodecError, decode_checkpoint, decode_checkpoint_prefix, encode_checkpoint};
use crate::state::{State, StateHash};

pub use crate::codec::frame::CHECKPOINT_VERSION;

/// A decoded checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckpointBody {
    /// The last input sequence folded into `state`.
    pub seq: u64,
    /// `state.hash()` when it was written.
    pub hash: StateHash,
    /// The state.
    pub state: State,
}

/// Borrowing twin of [`CheckpointBody`]: field order and types must match it.
#[derive(Serialize)]
struct BodyRef<'a> {
    seq: u64,
    hash: &'a StateHash,
    state: &'a State,
}

/// Encodes a checkpoint as a marked frame of [`CHECKPOINT_VERSION`].
///
/// # Errors
/// When the state exceeds [`crate::codec::CHECKPOINT_BYTES_MAX`].
pub fn encode(seq: u64, hash: &StateHash, state: &State) -> Result<Vec<u8>, CodecError> {
    let mut body = encode_checkpoint(&BodyHead { seq, hash })?;
    let (_, offsets) = sections::encode(state, &mut body)?;
    body.extend_from_slice(&sections::table(offsets));
    Ok(marked_frame(
        RecordKind::Checkpoint,
        CHECKPOINT_VERSION,
        &body,
    ))
}

/// A checkpoint record encoded once, with the state hash taken from the same bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedCheckpoint {
    /// The last input sequence folded into the state.
    pub seq: u64,
    /// The state's hash.
    pub hash: StateHash,
    /// The record, exactly as [`encode`] writes it.
    pub record: Vec<u8>,
}

/// Encodes a checkpoint of `state` and its hash in one pass over the state: the record is
/// [`encode`]'s, byte for byte, but the state is encoded once (not once to hash it and once
/// more to store it) and never copied — on a large fleet the encoding is the cost.
///
/// # Errors
/// As [`encode`].
pub fn encode_once(seq: u64, state: &State) -> Result<EncodedCheckpoint, CodecError> {
    encode_once_into(seq, state, Vec::new())
}

/// [`encode_once`] into `record`, which is cleared first. A caller that reserves room for the
/// record (the last checkpoint's size, say) spares the doubling growth a large fleet's record
/// otherwise goes through, which holds the old buffer beside the new one at every step: at a
/// million clusters, half a gigabyte more at the peak, and a gigabyte of copying.
///
/// # Errors
/// As [`encode`].
pub fn encode_once_into(
    seq: u64,
    state: &State,
    mut record: Vec<u8>,
) -> Result<EncodedCheckpoint, CodecError> {
    record.clear();
    // The body is `seq`, the hash, then the state; the hash has a fixed length, so a
    // placeholder holds its place until the state's bytes exist to be hashed.
    let placeholder = StateHash("0".repeat(StateHash::CHARS));
    let head = encode_checkpoint(&BodyHead {
        seq,
        hash: &placeholder,
    })?;
    record.extend_from_slice(&marked_frame(
        RecordKind::Checkpoint,
        CHECKPOINT_VERSION,
        &head,
    ));
    let state_at = record.len();
    let (_, offsets) = sections::encode(state, &mut record)?;
    let hash = StateHash::of_encoding(&record[state_at..]);
    let hash_at = state_at - StateHash::CHARS;
    record[hash_at..state_at].copy_from_slice(hash.0.as_bytes());
    record.extend_from_slice(&sections::table(offsets));
    Ok(EncodedCheckpoint { seq, hash, record })
}

/// [`encode_once`] written to `out` as it is encoded, so the record is never held whole (at a
/// million clusters it is 650 MB, held beside the state while a checkpoint is written). The
/// bytes are [`encode`]'s: the hash's placeholder is overwritten once the state's bytes have
/// passed through the hash. Returns the state's hash and the record's length; `out` is left at
/// the record's end.
///
/// # Errors
/// As [`encode`], or when `out` fails; `out` may then hold a partial record.
pub fn encode_once_to<W: Write + Seek>(
    seq: u64,
    state: &State,
    out: &mut W,
) -> Result<(StateHash, u64), CodecError> {
    let placeholder = StateHash("0".repeat(StateHash::CHARS));
    let head = marked_frame(
        RecordKind::Checkpoint,
        CHECKPOINT_VERSION,
        &encode_checkpoint(&BodyHead {
            seq,
            hash: &placeholder,
        })?,
    );
    out.write_all(&head).map_err(write_error)?;
    let mut hashing = Hashing {
        out: &mut *out,
        digest: Sha256::new(),
    };
    let (state_bytes, offsets) = sections::encode(state, &mut hashing)?;
    let hash = StateHash(hex::encode(hashing.digest.finalize()));
    let hash_at = (head.len() - StateHash::CHARS) as u64;
    out.seek(SeekFrom::Start(hash_at)).map_err(write_error)?;
    out.write_all(hash.0.as_bytes()).map_err(write_error)?;
    let end = out.seek(SeekFrom::End(0)).map_err(write_error)?;
    debug_assert_eq!(end, (head.len() + state_bytes) as u64);
    out.write_all(&sections::table(offsets))
        .map_err(write_error)?;
    Ok((hash, end + sections::TABLE_BYTES as u64))
}

/// A writer that hashes what passes through it to `out`.
struct Hashing<'a, W> {
    out: &'a mut W,
    digest: Sha256,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self.out.write(bytes)?;
        self.digest.update(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A failure of the writer a checkpoint goes to, as an encoding error.
fn write_error(inner: std::io::Error) -> CodecError {
    CodecError::Encode {
        what: "checkpoint",
        source: bincode::error::EncodeError::Io { inner, index: 0 },
    }
}

/// The fields of [`BodyRef`] before the state.
#[derive(Serialize)]
struct BodyHead<'a> {
    seq: u64,
    hash: &'a StateHash,
}

/// Decodes a stored checkpoint, marked or the unmarked version 1.
///
/// # Errors
/// [`CodecError::Newer`] for a newer version; otherwise when it does not decode. Callers skip
/// the checkpoint either way.
pub fn decode(bytes: &[u8]) -> Result<CheckpointBody, CodecError> {
    match split_frame(bytes)? {
        Frame::Marked {
            kind,
            version,
            body,
        } => {
            super::expect_marked(RecordKind::Checkpoint, kind, version)?;
            match version {
                CHECKPOINT_VERSION => sectioned(body),
                UNSECTIONED_VERSION => verified(body),
                found if found < CHECKPOINT_VERSION => Err(CodecError::RetiredCheckpoint {
                    found,
                    current: CHECKPOINT_VERSION,
                }),
                found => Err(CodecError::UnknownVersion {
                    found,
                    max: CHECKPOINT_VERSION,
                }),
            }
        }
        Frame::Unmarked(bytes) => {
            let head = bytes.get(..2).ok_or(CodecError::Truncated(bytes.len()))?;
            match u16::from_le_bytes([head[0], head[1]]) {
                1 => Err(CodecError::RetiredCheckpoint {
                    found: 1,
                    current: CHECKPOINT_VERSION,
                }),
                found => Err(CodecError::UnknownVersion { found, max: 1 }),
            }
        }
    }
}

/// The version before sections: the same state encoding, without the section table.
const UNSECTIONED_VERSION: u16 = CHECKPOINT_VERSION - 1;

/// A checkpoint whose state is followed by its section table: the sections decode side by
/// side while the state's bytes are hashed, and the hash is checked as in [`verified`].
fn sectioned(body: &[u8]) -> Result<CheckpointBody, CodecError> {
    let (head, used): (Head, usize) = decode_checkpoint_prefix(body)?;
    let rest = body.get(used..).ok_or(CodecError::Truncated(body.len()))?;
    let (state_bytes, offsets) = sections::split(rest)?;
    let mut state = sections::decode(state_bytes, offsets, &head.hash)?;
    state.share_run_conditions();
    Ok(CheckpointBody {
        seq: head.seq,
        hash: head.hash,
        state,
    })
}

/// A damaged checkpoint can still decode — into another state (a flipped byte in a name, an
/// index, a count). The hash saved with it is that of the state's encoding, which is the rest
/// of the body after the hash, so hashing those bytes before decoding them tells damage from
/// the real thing (the store then skips it like any unreadable checkpoint), without encoding
/// the decoded state again: at fleet scale that second encoding cost as much as the decoding.
fn verified(body: &[u8]) -> Result<CheckpointBody, CodecError> {
    let (head, used): (Head, usize) = decode_checkpoint_prefix(body)?;
    let state_bytes = body.get(used..).ok_or(CodecError::Truncated(body.len()))?;
    let computed = StateHash::of_encoding(state_bytes);
    if computed != head.hash {
        return Err(CodecError::CheckpointHash {
            stored: head.hash.0,
            computed: computed.0,
        });
    }
    let mut state: State = decode_checkpoint(state_bytes)?;
    state.share_run_conditions();
    Ok(CheckpointBody {
        seq: head.seq,
        hash: head.hash,
        state,
    })
}

/// The fields of [`CheckpointBody`] before the state, as decoded.
#[derive(Deserialize)]
struct Head {
    seq: u64,
    hash: StateHash,
}

/// Encodes a checkpoint exactly as release 19da42c did (`[01 00][body]`), for fixtures and
/// tests of the legacy read path. Never used to write a store.
///
/// # Errors
/// As [`encode`].
pub fn encode_legacy_v1(seq: u64, hash: &StateHash, state: &State) -> Result<Vec<u8>, CodecError> {
    let mut out = 1_u16.to_le_bytes().to_vec();
    out.extend_from_slice(&encode_checkpoint(&BodyRef { seq, hash, state })?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_round_trip_marked_and_legacy() {
        let state = State::default();
        let hash = state.hash().expect("hashes");
        let body = decode(&encode(4, &hash, &state).expect("encodes")).expect("decodes");
        assert_eq!((body.seq, &body.hash, &body.state), (4, &hash, &state));
        let legacy = encode_legacy_v1(4, &hash, &state).expect("encodes");
        assert!(matches!(
            decode(&legacy),
            Err(CodecError::RetiredCheckpoint { found: 1, .. })
        ));
        let mut newer = encode(4, &hash, &state).expect("encodes");
        let [low, high] = (CHECKPOINT_VERSION + 1).to_le_bytes();
        newer[5] = low;
        newer[6] = high;
        assert!(matches!(decode(&newer), Err(CodecError::Newer { .. })));
        assert!(decode(b"not a checkpoint").is_err());
    }

    #[test]
    fn encoding_once_writes_the_same_record_and_hash() {
        let state = State {
            resource_version: 7,
            ..State::default()
        };
        let hash = state.hash().expect("hashes");
        let once = encode_once(11, &state).expect("encodes");
        assert_eq!(once.hash, hash);
        assert_eq!(once.record, encode(11, &hash, &state).expect("encodes"));
        let reused = vec![0xAB; 3 * once.record.len()];
        let into = encode_once_into(11, &state, reused).expect("encodes");
        assert_eq!(
            into, once,
            "a reused buffer's old bytes are not part of the record"
        );
    }

    /// Found by the seeded simulator (seed 8): a checkpoint with one byte flipped inside a
    /// binding's resource index decoded into a state whose binding names a snapshot that never
    /// existed, and a restarted hub folded on from it.

    #[test]
    fn a_checkpoint_damaged_into_another_state_is_refused() {
        let state = State {
            now: Some(chrono::DateTime::UNIX_EPOCH),
            ..State::default()
        };
        let hash = state.hash().expect("hashes");
        let good = encode(4, &hash, &state).expect("encodes");
        assert!(decode(&good).is_ok());
        // Every single flipped byte is refused, or decodes to the very same state (the sequence
        // is not hashed: the stores check it against the key it is stored under); some flips
        // decode into another state without the hash check, which is what the check is for.
        let mut decodes_wrongly = 0;
        for offset in 0..good.len() {
            let mut damaged = good.clone();
            damaged[offset] ^= 0x01;
            if let Ok(body) = decode(&damaged) {
                assert_eq!(body.state, state, "byte {offset}");
            }
            let unchecked = match split_frame(&damaged) {
                Ok(Frame::Marked { body, .. }) => body
                    .get(..body.len().saturating_sub(sections::TABLE_BYTES))
                    .and_then(|whole| decode_checkpoint::<CheckpointBody>(whole).ok()),
                _ => None,
            };
            decodes_wrongly += usize::from(unchecked.is_some_and(|b| b.state != state));
        }
        assert!(decodes_wrongly > 0);
        let other = State::default().hash().expect("hashes");
        let mislabelled = encode(4, &other, &state).expect("encodes");
        assert!(matches!(
            decode(&mislabelled),
            Err(CodecError::CheckpointHash { .. })
        ));
    }
}

//! Decision batches: the decisions of one fold batch, with the input range they cover.
//!
//! A batch is a marked frame of kind `D` whose body **always begins** with the batch's first
//! and last input sequence as two u64 LE (bincode's fixed-width encoding of the first two
//! fields), in every version: the range is readable even from a batch newer than this build,
//! which is what fencing and lookups by input sequence need. Release 19da42c wrote the same
//! body unmarked; it reads back as version 1 through [`decode_v1_body`], the one place that
//! knows what a version 1 decision looks like.

use serde::{Deserialize, Serialize};

use super::{Frame, RecordKind, marked_frame, split_frame};
use crate::codec::{CodecError, decode_decisions, encode_decisions};
use crate::decision::Decisions;

pub use crate::codec::frame::DECISION_VERSION;

/// A decoded decision batch, upcast to today's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedBatch {
    /// The version it was recorded under (1 = unmarked, 19da42c).
    pub version: u16,
    /// First input sequence covered.
    pub first_input_seq: u64,
    /// Last input sequence covered.
    pub last_input_seq: u64,
    /// `(input seq, decisions)` for every input that decided something, ascending.
    pub decisions: Vec<(u64, Decisions)>,
}

/// The body as written: borrowed, so encoding copies nothing.
#[derive(Serialize)]
struct BodyRef<'a> {
    first_input_seq: u64,
    last_input_seq: u64,
    decisions: &'a [(u64, Decisions)],
}

/// The body as read (versions 2 to 5).
#[derive(Deserialize)]
struct Body {
    first_input_seq: u64,
    last_input_seq: u64,
    decisions: Vec<(u64, Decisions)>,
}

/// Encodes a batch as a marked frame of [`DECISION_VERSION`].
///
/// # Errors
/// When the batch exceeds [`crate::codec::DECISIONS_BYTES_MAX`].
pub fn encode_batch(
    first_input_seq: u64,
    last_input_seq: u64,
    decisions: &[(u64, Decisions)],
) -> Result<Vec<u8>, CodecError> {
    let body = encode_decisions(&BodyRef {
        first_input_seq,
        last_input_seq,
        decisions,
    })?;
    Ok(marked_frame(
        RecordKind::DecisionBatch,
        DECISION_VERSION,
        &body,
    ))
}

/// Decodes a stored batch, marked or unmarked (version 1).
///
/// # Errors
/// [`CodecError::Newer`] for a batch of a newer version; otherwise when it does not decode.
pub fn decode_batch(bytes: &[u8]) -> Result<DecodedBatch, CodecError> {
    let (version, body) = versioned_body(bytes)?;
    match version {
        1 => decode_v1_body(body),
        2..=DECISION_VERSION => {
            let body: Body = decode_decisions(body)?;
            Ok(DecodedBatch {
                version,
                first_input_seq: body.first_input_seq,
                last_input_seq: body.last_input_seq,
                decisions: body.decisions,
            })
        }
        found => Err(CodecError::UnknownVersion {
            found,
            max: DECISION_VERSION,
        }),
    }
}

/// The body as 19da42c wrote it: its decisions in the frozen version 1 types.
#[derive(Deserialize)]
struct V1Body {
    first_input_seq: u64,
    last_input_seq: u64,
    decisions: Vec<(u64, Vec<super::decision_v1::Decision>)>,
}

/// Reads a version 1 (unmarked, 19da42c) body into the frozen version 1 types
/// ([`super::decision_v1`]) and upcasts every decision to today's.
///
/// # Errors
/// When the body does not decode.
pub fn decode_v1_body(body: &[u8]) -> Result<DecodedBatch, CodecError> {
    let body: V1Body = decode_decisions(body)?;
    let decisions = body
        .decisions
        .into_iter()
        .map(|(seq, decided)| (seq, decided.into_iter().map(Into::into).collect()))
        .collect();
    Ok(DecodedBatch {
        version: 1,
        first_input_seq: body.first_input_seq,
        last_input_seq: body.last_input_seq,
        decisions,
    })
}

/// The version and input range of a stored batch, read from the first 16 body bytes without
/// decoding the decisions: works for a batch newer than this build.
///
/// # Errors
/// When the record is too short, or is a marked frame of another kind.
pub fn batch_range(bytes: &[u8]) -> Result<(u16, u64, u64), CodecError> {
    let (version, body) = match split_frame(bytes)? {
        Frame::Marked {
            kind,
            version,
            body,
        } => {
            expect_kind(kind)?;
            (version, body)
        }
        Frame::Unmarked(body) => (1, body),
    };
    let seq = |at: usize| {
        body.get(at..at + 8)
            .and_then(|bytes| <[u8; 8]>::try_from(bytes).ok())
            .map(u64::from_le_bytes)
            .ok_or(CodecError::Truncated(bytes.len()))
    };
    Ok((version, seq(0)?, seq(8)?))
}

fn versioned_body(bytes: &[u8]) -> Result<(u16, &[u8]), CodecError> {
    match split_frame(bytes)? {
        Frame::Marked {
            kind,
            version,
            body,
        } => {
            super::expect_marked(RecordKind::DecisionBatch, kind, version)?;
            Ok((version, body))
        }
        Frame::Unmarked(body) => Ok((1, body)),
    }
}

fn expect_kind(kind: RecordKind) -> Result<(), CodecError> {
    if kind == RecordKind::DecisionBatch {
        Ok(())
    } else {
        Err(CodecError::WrongKind {
            expected: RecordKind::DecisionBatch,
            found: kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{RejectCode, rejected};

    fn decisions() -> Vec<(u64, Decisions)> {
        vec![(3, vec![rejected(RejectCode::NotFound, "gone")])]
    }

    #[test]
    fn batches_round_trip_and_show_their_range() {
        let bytes = encode_batch(2, 4, &decisions()).expect("encodes");
        let batch = decode_batch(&bytes).expect("decodes");
        assert_eq!(batch.version, DECISION_VERSION);
        assert_eq!((batch.first_input_seq, batch.last_input_seq), (2, 4));
        assert_eq!(batch.decisions, decisions());
        assert_eq!(
            batch_range(&bytes).expect("range"),
            (DECISION_VERSION, 2, 4)
        );
    }

    #[test]
    fn a_newer_batch_keeps_its_range_readable() {
        let newer = DECISION_VERSION + 1;
        let mut bytes = encode_batch(5, 9, &decisions()).expect("encodes");
        bytes[5..7].copy_from_slice(&newer.to_le_bytes());
        assert!(matches!(
            decode_batch(&bytes),
            Err(CodecError::Newer { version, .. }) if version == newer
        ));
        assert_eq!(batch_range(&bytes).expect("range"), (newer, 5, 9));
    }
}

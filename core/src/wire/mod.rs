//! The stored form of every record kind, behind one module: input events, decision batches and
//! checkpoints (see `docs/schema-evolution.md`).
//!
//! Every record this build writes is a **marked frame**:
//!
//! ```text
//! [MAGIC: F7 46 4C 4F][kind: u8][version: u16 LE][bincode body]
//! ```
//!
//! with `kind` one of [`RecordKind`] (`E` event, `D` decision batch, `C` checkpoint). The marker
//! is what tells flotilla's own frames from anything else on a shared stream: `F7` never begins
//! UTF-8 text (so never JSON, never whitespace), nor a legacy frame of release 19da42c, which
//! began `01 00` or `02 00` (events, checkpoints) or with a decision batch's first input
//! sequence as u64 LE (a marked frame read that way would be a sequence above 2^40). So a reader
//! can say of a record: ours and decodable, ours but **newer** than this build (a rolling
//! upgrade: decline, do not reject), an **unmarked legacy** record (decoded exactly as
//! 19da42c wrote it), or something else (rejected with a reason).
//!
//! Older versions are frozen here and upcast on read: [`v1`], [`v2`], [`v3`] and [`v5`] (events),
//! [`decisions::decode_v1_body`] (decision batches). Nothing here does IO.

pub mod checkpoint;
pub mod decision_v1;
pub mod decisions;
pub mod json;
pub mod json_fields;
pub mod json_principal;
pub mod json_property;
pub mod json_report;
pub mod record;
pub mod subject;
pub mod time_text;
pub mod v1;
pub mod v2;
pub mod v3;
pub mod v5;

pub use checkpoint::{CHECKPOINT_VERSION, CheckpointBody};
pub use decisions::{DECISION_VERSION, DecodedBatch};
pub use record::{InputOrigin, LogRecord, read_input};

use crate::codec::CodecError;

/// The first bytes of every marked frame.
pub const MAGIC: [u8; 4] = [0xF7, b'F', b'L', b'O'];
/// Bytes of a marked frame's header: marker, kind, version.
pub const HEADER_BYTES: usize = MAGIC.len() + 3;

/// What a stored record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecordKind {
    /// An input event ([`crate::Envelope`]).
    Event,
    /// The decisions of one fold batch.
    DecisionBatch,
    /// A checkpoint of the folded state.
    Checkpoint,
}

impl RecordKind {
    /// The kind byte in a frame header.
    #[must_use]
    pub const fn byte(self) -> u8 {
        match self {
            RecordKind::Event => b'E',
            RecordKind::DecisionBatch => b'D',
            RecordKind::Checkpoint => b'C',
        }
    }

    /// The kind a header byte names, if any.
    #[must_use]
    pub const fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            b'E' => Some(RecordKind::Event),
            b'D' => Some(RecordKind::DecisionBatch),
            b'C' => Some(RecordKind::Checkpoint),
            _ => None,
        }
    }

    /// A stable name for messages and logs.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            RecordKind::Event => "event",
            RecordKind::DecisionBatch => "decision batch",
            RecordKind::Checkpoint => "checkpoint",
        }
    }

    /// The version of this kind this build writes (and the newest it reads).
    #[must_use]
    pub const fn current_version(self) -> u16 {
        match self {
            RecordKind::Event => crate::event::SCHEMA_VERSION,
            RecordKind::DecisionBatch => DECISION_VERSION,
            RecordKind::Checkpoint => CHECKPOINT_VERSION,
        }
    }
}

impl std::fmt::Display for RecordKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A stored record split at its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A marked frame.
    Marked {
        /// Its kind.
        kind: RecordKind,
        /// Its version.
        version: u16,
        /// The bincode body.
        body: &'a [u8],
    },
    /// Anything without the marker: a legacy record, or not flotilla's at all.
    Unmarked(&'a [u8]),
}

/// Splits a record at its header.
///
/// # Errors
/// [`CodecError::Truncated`] for a marker with no complete header;
/// [`CodecError::UnknownKind`] for a marker followed by an unknown kind byte.
pub fn split_frame(bytes: &[u8]) -> Result<Frame<'_>, CodecError> {
    if !bytes.starts_with(&MAGIC) {
        return Ok(Frame::Unmarked(bytes));
    }
    let Some((header, body)) = bytes.split_at_checked(HEADER_BYTES) else {
        return Err(CodecError::Truncated(bytes.len()));
    };
    let kind_byte = header[MAGIC.len()];
    let kind = RecordKind::from_byte(kind_byte).ok_or(CodecError::UnknownKind(kind_byte))?;
    let version = u16::from_le_bytes([header[MAGIC.len() + 1], header[MAGIC.len() + 2]]);
    Ok(Frame::Marked {
        kind,
        version,
        body,
    })
}

/// Prepends a marked header to an encoded body.
#[must_use]
pub fn marked_frame(kind: RecordKind, version: u16, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
    out.extend_from_slice(&MAGIC);
    out.push(kind.byte());
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Checks a marked frame's kind and version against what this build reads.
pub(crate) fn expect_marked(
    kind: RecordKind,
    found: RecordKind,
    version: u16,
) -> Result<(), CodecError> {
    if found != kind {
        return Err(CodecError::WrongKind {
            expected: kind,
            found,
        });
    }
    if version > kind.current_version() {
        return Err(CodecError::Newer { kind, version });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_begins_no_legacy_frame_and_no_text() {
        assert_ne!(&MAGIC[..2], &1_u16.to_le_bytes());
        assert_ne!(&MAGIC[..2], &2_u16.to_le_bytes());
        assert!(MAGIC[0] >= 0xF5, "bytes F5..FF never occur in UTF-8");
        // A legacy decision batch starts with its first input sequence (u64 LE).
        let mut header = marked_frame(RecordKind::DecisionBatch, 1, &[0]);
        header.truncate(8);
        let as_seq = u64::from_le_bytes(header.try_into().expect("8 bytes"));
        assert!(as_seq > 1 << 40);
    }

    #[test]
    fn frames_split_back() {
        let bytes = marked_frame(RecordKind::Checkpoint, 7, b"body");
        assert_eq!(
            split_frame(&bytes).expect("splits"),
            Frame::Marked {
                kind: RecordKind::Checkpoint,
                version: 7,
                body: b"body"
            }
        );
        assert!(matches!(split_frame(&MAGIC), Err(CodecError::Truncated(4))));
        let mut unknown = bytes.clone();
        unknown[4] = b'Z';
        assert!(matches!(
            split_frame(&unknown),
            Err(CodecError::UnknownKind(b'Z'))
        ));
        assert_eq!(split_frame(b"{}").expect("splits"), Frame::Unmarked(b"{}"));
    }
}

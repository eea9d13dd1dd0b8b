//! Marked frames: the header every stored record begins with, and the record kinds and
//! versions it names (the layout is described in [`crate::wire`]).

use super::CodecError;

/// The decision batch version this build writes. Version 1 is the unmarked batch of release
/// 19da42c. The version also moves when a change intentionally alters what is decided, so
/// that decisions recorded under another version are compared in a stable form, not exactly.
///
/// Version 3 (a connected member's delete marks it leaving instead of removing it) has the
/// version 2 body layout, so both decode alike; so has version 4 (the agent's leave confirmation
/// and its `NotLeaving` rejection, appended; `ReportDiff` placements roll out on reported diffs);
/// so has version 5 (rollout safety's decisions, appended: `RolloutClusterFailed`,
/// `RolloutHalted`, `ClusterRolledBack`, `RollbackFinished`); so has version 6 (an override
/// that fails on a cluster keeps the cluster's work and fails its binding, which the rollout
/// then always takes; a deleted approval request is made again until its run accepted it).
pub const DECISION_VERSION: u16 = 6;

/// The checkpoint version this build writes. Version 1 is the
/// unmarked `[01 00][body]` of release 19da42c; versions 1 to 8 hold an older `State` layout
/// or encoding (1 and 2: before leaving members and scoped override placement references; 3:
/// before work statuses kept diffs, drifts and failure reasons; 4: before rollout safety's
/// fields and guards; 5: fixed-width integers, where 6 has variable-width ones; 6: each
/// binding's whole name, where 7 keeps the 4 bytes its placement's name and cluster do not
/// give; 7: a binding's decision with the cluster's name and a work status's details written
/// flat; 8: before a binding kept its override failure and the work its cluster keeps) and are
/// refused with [`CodecError::RetiredCheckpoint`], so the stores fold from the log instead.
/// Version 9 holds the state of version 10 without its section table (`wire::checkpoint`
/// still reads it, decoding the state in one piece).
pub const CHECKPOINT_VERSION: u16 = 10;

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

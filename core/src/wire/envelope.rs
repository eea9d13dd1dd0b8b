//! Input events as stored: the current schema version written as a marked frame, every older
//! version (and the unmarked frames of release 19da42c) read back and upcast to the current
//! [`Envelope`] (see `docs/schema-evolution.md`).

use super::{Frame, RecordKind};
use crate::codec::{CodecError, decode_record, encode_record};
use crate::event::{Envelope, SCHEMA_VERSION};

/// Encodes an input event as a marked frame of the current schema version.
///
/// # Errors
/// When the event exceeds [`RECORD_BYTES_MAX`].
pub fn encode_envelope(envelope: &Envelope) -> Result<Vec<u8>, CodecError> {
    let body = encode_record("event", envelope)?;
    Ok(super::marked_frame(
        RecordKind::Event,
        SCHEMA_VERSION,
        &body,
    ))
}

/// Decodes a stored input event — a marked frame, or an unmarked frame of release 19da42c —
/// upcasting older schema versions.
///
/// # Errors
/// On a truncated frame, a newer marked frame ([`CodecError::Newer`]), an unknown unmarked
/// version, another record kind, or a body that does not decode.
pub fn decode_envelope(bytes: &[u8]) -> Result<Envelope, CodecError> {
    match super::split_frame(bytes)? {
        Frame::Marked {
            kind,
            version,
            body,
        } => {
            super::expect_marked(RecordKind::Event, kind, version)?;
            decode_event_body(version, body)
        }
        Frame::Unmarked(bytes) => {
            let (head, body) = bytes
                .split_at_checked(2)
                .ok_or(CodecError::Truncated(bytes.len()))?;
            match u16::from_le_bytes([head[0], head[1]]) {
                version @ (1 | 2) => decode_event_body(version, body),
                found => Err(CodecError::UnknownVersion { found, max: 2 }),
            }
        }
    }
}

/// Decodes an event body of a known schema version into the current types.
fn decode_event_body(version: u16, body: &[u8]) -> Result<Envelope, CodecError> {
    match version {
        1 => decode_record::<super::v1::Envelope>("event", body).map(Envelope::from),
        2 => decode_record::<super::v2::Envelope>("event", body).map(Envelope::from),
        3 => decode_record::<super::v3::Envelope>("event", body).map(Envelope::from),
        // Version 5 only added a variant at the end: a version 4 body decodes as version 5's.
        4 | 5 => decode_record::<super::v5::Envelope>("event", body).map(Envelope::from),
        6 => decode_record::<super::v6::Envelope>("event", body).map(Envelope::from),
        SCHEMA_VERSION => decode_record("event", body),
        found => Err(CodecError::UnknownVersion {
            found,
            max: SCHEMA_VERSION,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Heartbeat, Input};
    use chrono::{TimeZone, Utc};
    use uuid::Uuid;

    fn sample() -> Envelope {
        let time = Utc
            .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
            .single()
            .unwrap_or_default();
        Envelope::new(
            Uuid::from_u128(7),
            time,
            "test",
            Input::Heartbeat(Heartbeat {
                cluster: "member1".into(),
                ..Heartbeat::default()
            }),
        )
    }

    #[test]
    fn envelope_round_trips() {
        let bytes = encode_envelope(&sample()).expect("encodes");
        assert_eq!(decode_envelope(&bytes).expect("decodes"), sample());
    }

    #[test]
    fn newer_version_is_refused_not_misread() {
        let mut bytes = encode_envelope(&sample()).expect("encodes");
        bytes[5] = 9;
        assert!(matches!(
            decode_envelope(&bytes),
            Err(CodecError::Newer {
                kind: RecordKind::Event,
                version: 9
            })
        ));
        // Unmarked, a version 9 is not flotilla's: 19da42c wrote 1 and 2 only.
        let mut legacy = 9_u16.to_le_bytes().to_vec();
        legacy.extend_from_slice(&bytes[crate::wire::HEADER_BYTES..]);
        assert!(matches!(
            decode_envelope(&legacy),
            Err(CodecError::UnknownVersion { found: 9, .. })
        ));
    }

    #[test]
    fn truncated_and_trailing_bytes_are_errors() {
        assert!(matches!(
            decode_envelope(&[1]),
            Err(CodecError::Truncated(1))
        ));
        let mut bytes = encode_envelope(&sample()).expect("encodes");
        bytes.push(0);
        assert!(matches!(
            decode_envelope(&bytes),
            Err(CodecError::Trailing { .. })
        ));
    }
}

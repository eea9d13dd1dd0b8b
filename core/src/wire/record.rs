//! Reading one stored input record: what the log hands the fold, whatever bytes it holds.
//!
//! The input log is shared with publishers the hub does not control, so a record is not assumed
//! to be an event. [`read_input`] never fails: every record reads back as a [`LogRecord`] —
//! an event, a rejected record (with the reason and its raw bytes), or a frame newer than this
//! build. The writer that first folds a record records the verdict (a `Rejected` decision with
//! `RejectCode::Undecodable`), so later builds follow it; a newer frame makes the runtime
//! decline the writer role instead, which keeps a rolling upgrade safe.
//!
//! Time: a marked frame or a JSON record on a stream takes the time the log stored it at (the
//! JetStream timestamp, [`InputOrigin::log_time`]); on redb the stored time already is the
//! log's (the writer assigned it). Unmarked legacy frames keep their stored time.

use chrono::{DateTime, Utc};

use super::json::{self, JsonDefaults};
use super::subject::input_subject;
use super::{Frame, RecordKind, split_frame};
use crate::codec::CodecError;
use crate::event::Envelope;
use crate::principal::Principal;
use crate::wire::decode_envelope;

/// The subject a record read from redb is reported under.
pub const REDB_SUBJECT: &str = "redb";
/// The source of a JSON record that names none.
pub const STREAM_SOURCE: &str = "nats";
/// Most leading bytes of a rejected record quoted in its reason.
const QUOTED_BYTES_MAX: usize = 16;

/// One stored input record, as the fold sees it.
// An event is nearly every record read, and each is moved once: boxing it (to shrink the rare
// rejected variant's padding) would cost an allocation per record.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRecord {
    /// A decoded event (upcast to the current schema).
    Event(Envelope),
    /// A record that is not an input this build accepts: answered with a rejection, skipped.
    Rejected {
        /// The NATS subject it was published on, or [`REDB_SUBJECT`].
        subject: String,
        /// Why, for people (names what was wrong).
        reason: String,
        /// The record as stored, so exports can carry it (as base64).
        bytes: Vec<u8>,
    },
    /// A marked frame written by a newer flotilla: this build must not decide it.
    Newer {
        /// Its record kind.
        kind: RecordKind,
        /// Its version.
        version: u16,
        /// The NATS subject it was published on, or [`REDB_SUBJECT`].
        subject: String,
        /// The record as stored, so that a writer that rejects it can export it.
        bytes: Vec<u8>,
    },
}

impl LogRecord {
    /// The event, if the record is one.
    #[must_use]
    pub fn event(&self) -> Option<&Envelope> {
        match self {
            LogRecord::Event(envelope) => Some(envelope),
            LogRecord::Rejected { .. } | LogRecord::Newer { .. } => None,
        }
    }
}

/// Where a record was read from.
#[derive(Debug, Clone, Copy)]
pub struct InputOrigin<'a> {
    /// Its sequence in the input log.
    pub seq: u64,
    /// The NATS subject it was published on; `None` on redb.
    pub subject: Option<&'a str>,
    /// The time the log stored it at (JetStream timestamp); `None` on redb.
    pub log_time: Option<DateTime<Utc>>,
}

/// Reads one stored input record. Never fails: see [`LogRecord`].
#[must_use]
pub fn read_input(bytes: &[u8], origin: &InputOrigin<'_>) -> LogRecord {
    let subject = origin.subject.unwrap_or(REDB_SUBJECT);
    let rejected = |reason: String| LogRecord::Rejected {
        subject: subject.to_owned(),
        reason,
        bytes: bytes.to_vec(),
    };
    let decoded = match split_frame(bytes) {
        Ok(Frame::Marked { .. }) => decode_marked(bytes, origin),
        Ok(Frame::Unmarked(_)) if looks_like_json(bytes) => decode_json(bytes, origin),
        Ok(Frame::Unmarked(_)) => decode_envelope(bytes).map_err(|error| {
            NotAnEvent::Reason(format!(
                "neither a flotilla frame nor the JSON form ({error}); first bytes {}",
                quote(bytes)
            ))
        }),
        Err(error) => Err(NotAnEvent::Reason(format!(
            "damaged flotilla frame: {error}"
        ))),
    };
    match decoded {
        Ok(envelope) => match subject_conflict(&envelope, origin.subject)
            .or_else(|| aimed_id(&envelope, origin))
        {
            Some(reason) => rejected(reason),
            None => LogRecord::Event(bound_principal(envelope, origin.subject)),
        },
        Err(NotAnEvent::Newer { kind, version }) => LogRecord::Newer {
            kind,
            version,
            subject: subject.to_owned(),
            bytes: bytes.to_vec(),
        },
        Err(NotAnEvent::Reason(reason)) => rejected(reason),
    }
}

/// Why a record did not decode into an event.
enum NotAnEvent {
    /// A newer build's frame.
    Newer { kind: RecordKind, version: u16 },
    /// Anything else, for people.
    Reason(String),
}

fn decode_marked(bytes: &[u8], origin: &InputOrigin<'_>) -> Result<Envelope, NotAnEvent> {
    match decode_envelope(bytes) {
        Ok(mut envelope) => {
            if let Some(time) = origin.log_time {
                envelope.time = time;
            }
            Ok(envelope)
        }
        Err(CodecError::Newer { kind, version }) => Err(NotAnEvent::Newer { kind, version }),
        Err(error) => Err(NotAnEvent::Reason(format!(
            "undecodable flotilla event frame: {error}"
        ))),
    }
}

fn decode_json(bytes: &[u8], origin: &InputOrigin<'_>) -> Result<Envelope, NotAnEvent> {
    let Some(time) = origin.log_time else {
        return Err(NotAnEvent::Reason(
            "a JSON record needs the time its stream stored it at".to_owned(),
        ));
    };
    let defaults = JsonDefaults {
        id: json::stream_record_id(origin.seq),
        time,
        source: STREAM_SOURCE,
    };
    // A JSON record's body never says who published it (`docs/security.md`).
    json::parse_event(bytes, &defaults)
        .map(|envelope| envelope.with_principal(Principal::Nats))
        .map_err(NotAnEvent::Reason)
}

/// On NATS the subject bounds who a record may say it is from (`Principal::bounded_to`); redb
/// is written by the hub alone.
fn bound_principal(mut envelope: Envelope, subject: Option<&str>) -> Envelope {
    if subject.is_some() {
        let cluster = envelope.payload.agent_subject_cluster().map(str::to_owned);
        envelope.principal = envelope.principal.bounded_to(cluster.as_deref());
    }
    envelope
}

/// Why a stream record's id is refused: it has the form of the ids the log gives records
/// published without one ([`json::stream_record_id`]), but not its own sequence's, so it could
/// only be aimed at another publisher's record.
fn aimed_id(envelope: &Envelope, origin: &InputOrigin<'_>) -> Option<String> {
    let minted = origin.subject.is_some() && json::is_stream_record_id(&envelope.id);
    (minted && envelope.id != json::stream_record_id(origin.seq)).then(|| {
        format!(
            "id {} has the form the log gives records published without an id; choose \
             another (a UUID v7, say)",
            envelope.id
        )
    })
}

/// JSON objects start with `{`, possibly after whitespace; flotilla's frames never do.
fn looks_like_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|byte| *byte == b'{' || *byte == b'[')
}

/// Why a body contradicts its subject: another kind, or another cluster, than the subject
/// names. Subjects are what account permissions are granted on.
fn subject_conflict(envelope: &Envelope, subject: Option<&str>) -> Option<String> {
    let subject = subject?;
    let expected = input_subject(envelope);
    (expected != subject).then(|| {
        format!(
            "the body is a {} that belongs on {expected}, but was published on {subject}",
            envelope.payload.kind_name()
        )
    })
}

fn quote(bytes: &[u8]) -> String {
    let shown: Vec<String> = bytes
        .iter()
        .take(QUOTED_BYTES_MAX)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("[{}] of {} bytes", shown.join(" "), bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Heartbeat, Input};
    use crate::wire::encode_envelope;
    use chrono::TimeZone;
    use uuid::Uuid;

    fn heartbeat(cluster: &str) -> Envelope {
        let time = Utc.timestamp_opt(1_000, 0).single().unwrap_or_default();
        let payload = Input::Heartbeat(Heartbeat {
            cluster: cluster.into(),
            ..Heartbeat::default()
        });
        Envelope::new(Uuid::from_u128(1), time, "test", payload)
    }

    fn on(subject: &str, seq: u64) -> InputOrigin<'_> {
        InputOrigin {
            seq,
            subject: Some(subject),
            log_time: Utc.timestamp_opt(2_000, 0).single(),
        }
    }

    #[test]
    fn an_id_of_the_minted_form_is_refused_unless_it_is_the_records_own() {
        let mut beat = heartbeat("m1");
        beat.id = json::stream_record_id(9);
        let frame = encode_envelope(&beat).expect("encodes");
        let aimed = read_input(&frame, &on("flotilla.in.heartbeat.m1", 3));
        assert!(
            matches!(&aimed, LogRecord::Rejected { reason, .. } if reason.contains("form the log gives")),
            "{aimed:?}"
        );
        let json = br#"{"type": "heartbeat", "cluster": "m1"}"#;
        let minted = read_input(json, &on("flotilla.in.heartbeat.m1", 9));
        assert!(
            matches!(&minted, LogRecord::Event(event) if event.id == json::stream_record_id(9)),
            "{minted:?}"
        );
        let on_redb = InputOrigin {
            seq: 3,
            subject: None,
            log_time: None,
        };
        assert!(matches!(read_input(&frame, &on_redb), LogRecord::Event(_)));
    }

    #[test]
    fn a_marked_frame_takes_the_stream_time() {
        let bytes = encode_envelope(&heartbeat("m1")).expect("encodes");
        let LogRecord::Event(event) = read_input(&bytes, &on("flotilla.in.heartbeat.m1", 3)) else {
            panic!("an event")
        };
        assert_eq!(event.time.timestamp(), 2_000);
    }

    #[test]
    fn json_on_the_stream_is_an_event_with_a_stable_id_and_a_claim() {
        let body = br#"{"type":"heartbeat","cluster":"member-2","time":"2030-01-01T00:00:00Z"}"#;
        let origin = on("flotilla.in.heartbeat.member-2", 10);
        let first = read_input(body, &origin);
        assert_eq!(first, read_input(body, &origin), "reading twice agrees");
        let LogRecord::Event(event) = first else {
            panic!("an event")
        };
        assert_eq!(event.id, json::stream_record_id(10));
        assert_eq!(event.time.timestamp(), 2_000, "the log's time");
        assert_eq!(
            event.claimed_time.map(|t| t.timestamp()),
            Some(1_893_456_000)
        );
        assert_eq!(event.source, STREAM_SOURCE);
    }

    #[test]
    fn a_body_that_contradicts_its_subject_is_rejected() {
        let body = br#"{"type":"heartbeat","cluster":"member-3"}"#;
        for subject in [
            "flotilla.in.heartbeat.member-2",
            "flotilla.in.report.member-3",
        ] {
            let record = read_input(body, &on(subject, 1));
            assert!(
                matches!(&record, LogRecord::Rejected { reason, .. } if reason.contains(subject)),
                "{record:?}"
            );
        }
    }

    #[test]
    fn garbage_is_rejected_with_its_bytes_and_newer_frames_are_told_apart() {
        let garbage = b"\x00\x01garbage";
        let LogRecord::Rejected { bytes, reason, .. } = read_input(garbage, &on("x", 1)) else {
            panic!("rejected")
        };
        assert_eq!(bytes, garbage);
        assert!(reason.contains("00 01"), "{reason}");
        let mut newer = encode_envelope(&heartbeat("m1")).expect("encodes");
        newer[5] = 200;
        assert_eq!(
            read_input(&newer, &on("flotilla.in.heartbeat.m1", 1)),
            LogRecord::Newer {
                kind: RecordKind::Event,
                version: 200,
                subject: "flotilla.in.heartbeat.m1".to_owned(),
                bytes: newer.clone(),
            }
        );
    }

    #[test]
    fn legacy_frames_keep_their_time_on_redb() {
        let mut legacy = 2_u16.to_le_bytes().to_vec();
        let v2 = super::super::v2::Envelope {
            id: Uuid::from_u128(5),
            time: Utc.timestamp_opt(1_000, 0).single().unwrap_or_default(),
            source: "old".into(),
            schema_version: 2,
            payload: super::super::v2::Input::Tick,
        };
        legacy.extend_from_slice(&crate::codec::encode_record("event", &v2).expect("encodes"));
        let origin = InputOrigin {
            seq: 1,
            subject: None,
            log_time: None,
        };
        let LogRecord::Event(event) = read_input(&legacy, &origin) else {
            panic!("an event")
        };
        assert_eq!(event.time.timestamp(), 1_000);
    }
}

//! Fuzzes the body `POST /v1/events` (and NATS `flotilla.ingest`) accepts, through
//! `ingest::parse_request`, the parser `submit_json` runs before it appends anything.
//! Properties: no panic; a rejected body is a `BadRequest` that says what is wrong; an accepted
//! body gives at most `EVENTS_PER_REQUEST_MAX` events, each at the receiver's time and
//! carrying the publisher's time only as a claim; each stores (bincode, as the hub appends it)
//! and lists (`flotilla events -o json`) without loss; and a single event reads the same
//! through the stream records' parser (`wire::json::parse_event`) whenever that accepts it.

#![no_main]

use chrono::{DateTime, TimeZone, Utc};
use flotilla_hub::ingest::{EVENTS_PER_REQUEST_MAX, IngestError, parse_request};
use flotilla_adapters::json_event::{JsonDefaults, JsonEnvelope, parse_event};
use flotilla_core::Envelope;
use flotilla_core::codec::{decode_envelope, encode_envelope};
use libfuzzer_sys::fuzz_target;
use uuid::Uuid;

const SOURCE: &str = "fuzz";

fn now() -> DateTime<Utc> {
    Utc.timestamp_opt(1_750_000_000, 0)
        .single()
        .unwrap_or_default()
}

fuzz_target!(|body: &[u8]| {
    let envelopes = match parse_request(body, SOURCE, now()) {
        Ok(envelopes) => envelopes,
        Err(IngestError::BadRequest(message)) => {
            assert!(!message.is_empty(), "a rejection says why");
            return;
        }
        Err(
            error @ (IngestError::TooLarge(_)
            | IngestError::StorageFull(_)
            | IngestError::Unavailable(_)),
        ) => panic!("parsing touched the log: {error}"),
    };
    // An empty array is a request with nothing to append, answered with an empty list.
    assert!(envelopes.len() <= EVENTS_PER_REQUEST_MAX);
    for envelope in &envelopes {
        assert_eq!(
            envelope.time,
            now(),
            "the receiver's time, not the publisher's"
        );
        stores_and_lists(envelope);
    }
    if let [single] = envelopes.as_slice() {
        stream_parser_agrees(body, single);
    }
});

/// What the hub appends decodes to the event, and its listed JSON form reads back as it.
fn stores_and_lists(envelope: &Envelope) {
    let stored = encode_envelope(envelope).expect("an accepted event encodes");
    assert_eq!(
        &decode_envelope(&stored).expect("decodes"),
        envelope,
        "stored form"
    );
    let listed = serde_json::to_vec(&JsonEnvelope::from_envelope(envelope)).expect("serializes");
    let read: JsonEnvelope = serde_json::from_slice(&listed).expect("the listed form parses");
    let defaults = JsonDefaults {
        id: Uuid::nil(),
        time: now(),
        source: SOURCE,
    };
    assert_eq!(
        &read.into_logged_envelope(&defaults),
        envelope,
        "listed form"
    );
}

/// A JSON record published straight onto the input stream is read by `parse_event`: when it
/// accepts the body too, it must read the same event.
fn stream_parser_agrees(body: &[u8], accepted: &Envelope) {
    let defaults = JsonDefaults {
        id: accepted.id,
        time: now(),
        source: SOURCE,
    };
    if let Ok(streamed) = parse_event(body, &defaults) {
        assert_eq!(&streamed, accepted, "HTTP and stream parsers agree");
    }
}

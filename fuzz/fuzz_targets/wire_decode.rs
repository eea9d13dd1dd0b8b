//! Fuzzes the decoder of every stored record kind with the same bytes: input events
//! (`codec::decode_envelope`, and `wire::read_input`, which the writer runs on every record of
//! the log), decision batches (`wire::decisions::decode_batch`, `batch_range`) and checkpoints
//! (`wire::checkpoint::decode`). Properties: no panic and no runaway allocation on any bytes;
//! whatever decodes re-encodes (in the current version) and decodes to the same value; the
//! range read without decoding a batch is the range its decoding gives; the log reader's event
//! is the codec's.

#![no_main]

use chrono::{TimeZone, Utc};
use flotilla_core::codec::{decode_envelope, encode_envelope};
use flotilla_core::wire::{self, InputOrigin, LogRecord, checkpoint, decisions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    event_round_trips(bytes);
    batch_round_trips(bytes);
    checkpoint_round_trips(bytes);
    log_reader_agrees(bytes);
});

fn event_round_trips(bytes: &[u8]) {
    let Ok(event) = decode_envelope(bytes) else {
        return;
    };
    let encoded = encode_envelope(&event).expect("a decoded event re-encodes");
    let again = decode_envelope(&encoded).expect("a re-encoded event decodes");
    assert_eq!(again, event, "event round trip");
}

fn batch_round_trips(bytes: &[u8]) {
    let Ok(batch) = decisions::decode_batch(bytes) else {
        return;
    };
    let range = decisions::batch_range(bytes).expect("a decoded batch has a range");
    assert_eq!(
        range,
        (batch.version, batch.first_input_seq, batch.last_input_seq),
        "batch range without decoding"
    );
    let encoded = decisions::encode_batch(
        batch.first_input_seq,
        batch.last_input_seq,
        &batch.decisions,
    )
    .expect("a decoded batch re-encodes");
    let again = decisions::decode_batch(&encoded).expect("a re-encoded batch decodes");
    assert_eq!(again.version, wire::DECISION_VERSION);
    assert_eq!(
        (
            again.first_input_seq,
            again.last_input_seq,
            &again.decisions
        ),
        (
            batch.first_input_seq,
            batch.last_input_seq,
            &batch.decisions
        ),
        "batch round trip"
    );
}

fn checkpoint_round_trips(bytes: &[u8]) {
    let Ok(body) = checkpoint::decode(bytes) else {
        return;
    };
    let encoded = checkpoint::encode(body.seq, &body.hash, &body.state)
        .expect("a decoded checkpoint re-encodes");
    let again = checkpoint::decode(&encoded).expect("a re-encoded checkpoint decodes");
    assert_eq!(again, body, "checkpoint round trip");
}

/// The writer reads every record through `read_input`; on redb (no subject, no log time) an
/// event it accepts is exactly what the codec decodes, and any other bytes are answered, never
/// dropped. On a stream, a marked frame takes the time the log stored it at.
fn log_reader_agrees(bytes: &[u8]) {
    let redb = InputOrigin {
        seq: 1,
        subject: None,
        log_time: None,
    };
    match wire::read_input(bytes, &redb) {
        LogRecord::Event(event) => {
            if let Ok(decoded) = decode_envelope(bytes) {
                assert_eq!(decoded, event, "reader and codec agree");
            }
        }
        LogRecord::Rejected {
            reason,
            bytes: kept,
            ..
        } => {
            assert!(!reason.is_empty(), "a rejection says why");
            assert_eq!(kept, bytes, "a rejection keeps the record");
        }
        LogRecord::Newer { version, kind, .. } => {
            assert!(version > kind.current_version(), "newer than this build");
        }
    }
    let stream = InputOrigin {
        seq: 7,
        subject: Some("flotilla.in.fuzz"),
        log_time: Utc.timestamp_opt(1_750_000_000, 0).single(),
    };
    let record = wire::read_input(bytes, &stream);
    if let (LogRecord::Event(event), true) = (record, bytes.starts_with(&wire::MAGIC)) {
        assert_eq!(
            Some(event.time),
            stream.log_time,
            "a stream record takes the log's time"
        );
    }
}

//! Test-only given times on NATS (`flotilla serve --nats … --test-clock`).
//!
//! A stream open to any publisher cannot trust a time a publisher claims, so the log's time is
//! the JetStream timestamp. A test that records an incident needs exact times, though, and
//! JetStream's clock cannot be set. So a stream *created* with
//! [`NatsOptions::test_given_times`](super::NatsOptions::test_given_times) is marked in its
//! metadata, and on a marked stream — and only there — an event appended with
//! [`AppendTime::AsGiven`](crate::AppendTime::AsGiven) carries its time in the
//! [`GIVEN_TIME_HEADER`] header, which every reader then takes as the event's time. The mark is
//! set by whoever creates the stream (stream-admin rights); a publisher cannot set it, and on an
//! unmarked stream the header is ignored. Never mark a stream that holds a real fleet.

use std::collections::HashMap;

use async_nats::HeaderMap;
use async_nats::jetstream::message::StreamMessage;
use chrono::{DateTime, SecondsFormat, Utc};

/// The stream metadata key that marks a test stream keeping given times.
pub const GIVEN_TIMES_METADATA: &str = "flotilla-test-given-times";
/// The header carrying an event's given time (RFC 3339) on a marked stream.
pub const GIVEN_TIME_HEADER: &str = "Flotilla-Given-Time";

/// Marks a stream configuration's metadata as keeping given times.
pub(crate) fn mark(metadata: &mut HashMap<String, String>) {
    metadata.insert(GIVEN_TIMES_METADATA.to_owned(), "true".to_owned());
}

/// Whether a stream's metadata marks it as keeping given times.
pub(crate) fn is_marked(metadata: &HashMap<String, String>) -> bool {
    metadata.get(GIVEN_TIMES_METADATA).map(String::as_str) == Some("true")
}

/// Adds the header carrying `time`.
pub(crate) fn add_header(headers: &mut HeaderMap, time: DateTime<Utc>) {
    let text = time.to_rfc3339_opts(SecondsFormat::AutoSi, true);
    headers.insert(GIVEN_TIME_HEADER, text.as_str());
}

/// The time a read message carries: its given time on a marked stream when it has one,
/// otherwise its JetStream timestamp (`None` only if out of chrono's range).
pub(crate) fn log_time(message: &StreamMessage, marked: bool) -> Option<DateTime<Utc>> {
    let given = marked
        .then(|| message.headers.get(GIVEN_TIME_HEADER))
        .flatten()
        .and_then(|value| DateTime::parse_from_rfc3339(value.as_str()).ok())
        .map(|time| time.with_timezone(&Utc));
    given.or_else(|| {
        DateTime::from_timestamp(message.time.unix_timestamp(), message.time.nanosecond())
    })
}

//! Appends as one JetStream atomic batch (nats-server 2.12 and later, on a stream with
//! `allow_atomic`): every message of the batch carries `Nats-Batch-Id` and its place in the
//! batch, the last one `Nats-Batch-Commit`, and the server stores them all, at consecutive
//! sequences, or none, with one acknowledgement for the batch.
//!
//! Why: with `sync_interval: always` a stream fsyncs per stored message when they come one by
//! one, so one publisher's rate is bound by the disk's fsync rate (about 860 heartbeats a
//! second here, pipelined); a batch is written and synced as one (4,400 a second in batches of
//! 100, 10,300 in batches of 1,000; `docs/benchmarks.md`). Each event is still its own message,
//! with its own id and sequence, so nothing downstream changes.
//!
//! A batch is refused whole if any message in it is a duplicate by `Nats-Msg-Id` (an event a
//! publisher sent before) or if the server's batch limits are reached; the caller then publishes
//! the same messages one by one, where duplicates are answered with the sequence they already
//! have. A batch whose acknowledgement never comes is handled the same way: if it was stored,
//! the one-by-one copies are duplicates; if it is stored later, it is refused for holding their
//! ids. Either way each event is stored once.

use std::time::Duration;

use async_nats::header::{NATS_EXPECTED_STREAM, NATS_MESSAGE_ID};
use async_nats::{Client, HeaderMap};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use uuid::Uuid;

use super::given_times;
use crate::Appended;

/// Most messages in one batch: the server's default `max_msgs` for atomic batches.
pub const ATOMIC_BATCH_MAX: usize = 1000;

/// One event ready to publish: subject, id, encoded envelope, and its time when kept as given.
pub(crate) type Outgoing = (String, String, Bytes, Option<DateTime<Utc>>);

/// The server's answer to a batch's commit.
#[derive(Deserialize)]
struct BatchAck {
    /// The sequence of the batch's last message.
    #[serde(default)]
    seq: u64,
    /// How many messages the batch stored.
    #[serde(default)]
    count: usize,
    /// Why the batch was refused.
    error: Option<BatchRefusal>,
}

#[derive(Deserialize)]
struct BatchRefusal {
    #[serde(default)]
    description: String,
}

/// Why a batch was not stored as one (the caller publishes its events one by one instead).
#[derive(Debug)]
pub(crate) struct NotStored(pub(crate) String);

/// Publishes `chunk` (at most [`ATOMIC_BATCH_MAX`] events) to `stream` as one atomic batch and
/// returns each event's sequence, in order.
///
/// # Errors
/// [`NotStored`] when the batch was refused, its answer was unreadable, or none came within
/// `timeout`; the batch may then still be stored, which the one-by-one retry finds by id.
pub(crate) async fn publish(
    client: &Client,
    stream: &str,
    chunk: &[Outgoing],
    timeout: Duration,
) -> Result<Vec<Appended>, NotStored> {
    let Some((last, rest)) = chunk.split_last() else {
        return Ok(Vec::new());
    };
    let batch_id = Uuid::now_v7().simple().to_string();
    for (place, event) in rest.iter().enumerate() {
        let headers = batch_headers(stream, &batch_id, place + 1, event);
        client
            .publish_with_headers(event.0.clone(), headers, event.2.clone())
            .await
            .map_err(|err| NotStored(format!("publish to batch {batch_id}: {err}")))?;
    }
    let mut headers = batch_headers(stream, &batch_id, chunk.len(), last);
    headers.insert(async_nats::header::NATS_BATCH_COMMIT, "1");
    let request = client.request_with_headers(last.0.clone(), headers, last.2.clone());
    let answer = tokio::time::timeout(timeout, request)
        .await
        .map_err(|_| NotStored(format!("batch {batch_id}: no answer within {timeout:?}")))?
        .map_err(|err| NotStored(format!("commit batch {batch_id}: {err}")))?;
    let ack: BatchAck = serde_json::from_slice(&answer.payload)
        .map_err(|err| NotStored(format!("batch {batch_id}: unreadable answer: {err}")))?;
    if let Some(refusal) = ack.error {
        return Err(NotStored(format!(
            "batch {batch_id} refused: {}",
            refusal.description
        )));
    }
    stored_sequences(&ack, chunk.len())
        .ok_or_else(|| NotStored(format!("batch {batch_id}: answer does not cover the batch")))
}

fn batch_headers(stream: &str, batch_id: &str, place: usize, event: &Outgoing) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(async_nats::header::NATS_BATCH_ID, batch_id);
    headers.insert(
        async_nats::header::NATS_BATCH_SEQUENCE,
        place.to_string().as_str(),
    );
    headers.insert(NATS_MESSAGE_ID, event.1.as_str());
    headers.insert(NATS_EXPECTED_STREAM, stream);
    if let Some(time) = event.3 {
        given_times::add_header(&mut headers, time);
    }
    headers
}

/// The batch's messages sit at the `count` sequences ending at `seq`.
fn stored_sequences(ack: &BatchAck, len: usize) -> Option<Vec<Appended>> {
    if ack.count != len || ack.seq < len as u64 {
        return None;
    }
    let first = ack.seq - len as u64 + 1;
    Some(
        (first..=ack.seq)
            .map(|seq| Appended {
                seq,
                duplicate: false,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(text: &str) -> BatchAck {
        serde_json::from_str(text).unwrap_or_else(|err| panic!("{text}: {err}"))
    }

    #[test]
    fn a_committed_batch_covers_the_sequences_ending_at_its_ack() {
        let answer = ack(r#"{"stream":"T","seq":6000,"batch":"b","count":3}"#);
        let seqs: Vec<u64> = stored_sequences(&answer, 3)
            .unwrap_or_default()
            .iter()
            .map(|appended| appended.seq)
            .collect();
        assert_eq!(seqs, vec![5998, 5999, 6000]);
    }

    #[test]
    fn an_answer_for_another_count_is_not_taken() {
        let answer = ack(r#"{"stream":"T","seq":6000,"batch":"b","count":2}"#);
        assert!(stored_sequences(&answer, 3).is_none());
        let refused = ack(
            r#"{"error":{"code":400,"err_code":10201,"description":"atomic publish batch contains duplicate message id"},"stream":"T","seq":0}"#,
        );
        assert!(refused.error.is_some());
    }
}

//! Publishes as one JetStream atomic batch (nats-server 2.12 and later, on a stream with
//! `allow_atomic`): every message of the batch carries `Nats-Batch-Id` and its place in the
//! batch, the last one `Nats-Batch-Commit`, and the server stores them all, at consecutive
//! sequences, or none, with one acknowledgement for the batch. Used for the input stream's
//! appends and for the folded event ids' creates (`event_ids.rs`).
//!
//! Why: with `sync_interval: always` a stream fsyncs per stored message when they come one by
//! one, so one publisher's rate is bound by the disk's fsync rate (about 3,000 messages a second
//! here, pipelined); a batch is written and synced as one (about 38,000 a second in batches of
//! 1,000; `docs/benchmarks.md`). Each message is still its own, with its own sequence (and for
//! an event its own id), so nothing downstream changes.
//!
//! A batch is refused whole if any message in it fails its own check — an event that is a
//! duplicate by `Nats-Msg-Id` (a publisher's retry), a key create that finds the key — or if the
//! server's batch limits are reached; the caller then publishes the same messages one by one,
//! where each gets its own answer. A batch whose acknowledgement never comes is handled the same
//! way: if it was stored, the one-by-one copies find their first copies (a duplicate, an
//! existing key); if it is stored later, it is refused for theirs. Either way each is stored
//! once.

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

/// One message of a batch: subject, its own headers (the batch's are added), payload.
pub(crate) type BatchMessage = (String, HeaderMap, Bytes);

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
    err_code: u64,
    #[serde(default)]
    description: String,
}

/// Why a batch was not stored as one: the caller publishes its messages one by one instead,
/// unless the stream is at its limits (`full`), where one by one would store a prefix.
#[derive(Debug)]
pub(crate) struct NotStored {
    /// What went wrong.
    pub(crate) why: String,
    /// The stream refused the batch at its limits ([`super::limits::at_limits`]).
    pub(crate) full: bool,
}

impl NotStored {
    fn because(why: String) -> Self {
        Self { why, full: false }
    }
}

/// Publishes `chunk` (at most [`ATOMIC_BATCH_MAX`] events) to the input stream `stream` as one
/// atomic batch, each event under its id, and returns each event's sequence, in order.
///
/// # Errors
/// As [`publish_batch`].
pub(crate) async fn publish(
    client: &Client,
    stream: &str,
    chunk: &[Outgoing],
    timeout: Duration,
) -> Result<Vec<Appended>, NotStored> {
    let messages: Vec<BatchMessage> = chunk
        .iter()
        .map(|(subject, id, payload, given_time)| {
            let mut headers = HeaderMap::new();
            headers.insert(NATS_MESSAGE_ID, id.as_str());
            headers.insert(NATS_EXPECTED_STREAM, stream);
            if let Some(time) = given_time {
                given_times::add_header(&mut headers, *time);
            }
            (subject.clone(), headers, payload.clone())
        })
        .collect();
    let last_seq = publish_batch(client, messages, timeout).await?;
    stored_sequences(last_seq, chunk.len())
        .ok_or_else(|| NotStored::because("the batch's answer does not cover it".to_owned()))
}

/// Publishes `messages` (at most [`ATOMIC_BATCH_MAX`]) as one atomic batch; the sequence of its
/// last message once all are stored.
///
/// # Errors
/// [`NotStored`] when the batch was refused, its answer was unreadable or did not count every
/// message, or none came within `timeout`; the batch may then still be stored, which the
/// caller's one-by-one retry must tolerate.
pub(crate) async fn publish_batch(
    client: &Client,
    messages: Vec<BatchMessage>,
    timeout: Duration,
) -> Result<u64, NotStored> {
    let count = messages.len();
    let batch_id = Uuid::now_v7().simple().to_string();
    let mut commit = None;
    for (index, (subject, mut headers, payload)) in messages.into_iter().enumerate() {
        let place = index + 1;
        headers.insert(async_nats::header::NATS_BATCH_ID, batch_id.as_str());
        headers.insert(
            async_nats::header::NATS_BATCH_SEQUENCE,
            place.to_string().as_str(),
        );
        if place == count {
            headers.insert(async_nats::header::NATS_BATCH_COMMIT, "1");
            commit = Some(client.request_with_headers(subject, headers, payload));
            break;
        }
        client
            .publish_with_headers(subject, headers, payload)
            .await
            .map_err(|err| NotStored::because(format!("publish to batch {batch_id}: {err}")))?;
    }
    let Some(commit) = commit else {
        return Err(NotStored::because("an empty batch".to_owned()));
    };
    let answer = tokio::time::timeout(timeout, commit)
        .await
        .map_err(|_| NotStored::because(format!("batch {batch_id}: no answer within {timeout:?}")))?
        .map_err(|err| NotStored::because(format!("commit batch {batch_id}: {err}")))?;
    let ack: BatchAck = serde_json::from_slice(&answer.payload)
        .map_err(|err| NotStored::because(format!("batch {batch_id}: unreadable answer: {err}")))?;
    if let Some(refusal) = ack.error {
        return Err(NotStored {
            full: super::limits::at_limits(refusal.err_code, &refusal.description),
            why: format!("batch {batch_id} refused: {}", refusal.description),
        });
    }
    if ack.count != count {
        return Err(NotStored::because(format!(
            "batch {batch_id}: {} of {count} messages counted",
            ack.count
        )));
    }
    Ok(ack.seq)
}

/// The batch's `len` messages sit at the sequences ending at `last_seq`.
fn stored_sequences(last_seq: u64, len: usize) -> Option<Vec<Appended>> {
    let first = last_seq.checked_sub(len as u64)? + 1;
    Some(
        (first..=last_seq)
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

    #[test]
    fn a_committed_batch_covers_the_sequences_ending_at_its_ack() {
        let seqs: Vec<u64> = stored_sequences(6000, 3)
            .unwrap_or_default()
            .iter()
            .map(|appended| appended.seq)
            .collect();
        assert_eq!(seqs, vec![5998, 5999, 6000]);
        assert!(stored_sequences(2, 3).is_none());
    }

    #[test]
    fn a_refusal_is_read_from_the_answer() {
        let text = r#"{"error":{"code":400,"err_code":10201,"description":"atomic publish batch contains duplicate message id"},"stream":"T","seq":0}"#;
        let refused: BatchAck = serde_json::from_str(text).unwrap_or_else(|err| panic!("{err}"));
        assert!(
            refused
                .error
                .is_some_and(|refusal| refusal.description.contains("duplicate"))
        );
        let ack: BatchAck =
            serde_json::from_str(r#"{"stream":"T","seq":6000,"batch":"b","count":3}"#)
                .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!((ack.seq, ack.count), (6000, 3));
    }
}

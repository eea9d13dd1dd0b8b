//! Batched direct get (JetStream ADR-31, nats-server 2.11+): read up to N consecutive messages
//! of a stream from a sequence in one request, with no consumer state on the server.
//!
//! async-nats 0.51 has single-message direct gets only, so the request is sent by hand: a JSON
//! body `{"seq", "batch", "max_bytes"}` to `$JS.API.DIRECT.GET.<stream>` with a private reply
//! inbox. The server answers with one message per stored message (headers `Nats-Sequence`,
//! `Nats-Subject`, `Nats-Time-Stamp`, …), then an end-of-batch status `204`; a `404` means no
//! message at or after `seq`. Any replica may answer (`allow_direct`), so a lagging follower can
//! return a shorter prefix — never a gap or an uncommitted message, because followers only
//! apply committed entries. Callers treat a short batch as "that is all for now".

use std::time::Duration;

use async_nats::jetstream::message::StreamMessage;
use async_nats::{Client, StatusCode};
use futures::StreamExt;
use tokio::time::Instant;

use crate::LogError;

/// Most bytes one batched read asks the server for; the server stops early and ends the batch.
pub(crate) const BATCH_BYTES_MAX: usize = 8 * 1024 * 1024;

/// The end-of-batch status of a batched direct get.
const END_OF_BATCH: u16 = 204;

/// The request body (JSON field names are the server's).
#[derive(serde::Serialize)]
struct BatchRequest {
    seq: u64,
    batch: usize,
    max_bytes: usize,
}

/// Reads up to `max` consecutive messages of `stream` starting at sequence `from`, in one
/// request. Returns fewer when the stream (or the answering replica) ends, or the byte cap is
/// hit; fails if the stream has a gap (the log's streams are dense).
pub(crate) async fn get_batch(
    client: &Client,
    stream: &str,
    from: u64,
    max: usize,
    timeout: Duration,
) -> Result<Vec<StreamMessage>, LogError> {
    if max == 0 {
        return Ok(Vec::new());
    }
    let deadline = Instant::now() + timeout;
    let inbox = client.new_inbox();
    // Subscribe before asking, so no answer can arrive unheard; dropping the subscriber
    // unsubscribes, and a late end-of-batch marker then goes nowhere.
    let mut answers = client
        .subscribe(inbox.clone())
        .await
        .map_err(nats("subscribe"))?;
    let request = BatchRequest {
        seq: from,
        batch: max,
        max_bytes: BATCH_BYTES_MAX,
    };
    let body = serde_json::to_vec(&request)
        .map_err(|err| LogError::Nats(format!("encode direct get request: {err}")))?;
    client
        .publish_with_reply(format!("$JS.API.DIRECT.GET.{stream}"), inbox, body.into())
        .await
        .map_err(nats("direct get request"))?;

    let mut messages = Vec::with_capacity(max.min(1024));
    while messages.len() < max {
        let answer = tokio::time::timeout_at(deadline, answers.next())
            .await
            .map_err(|_| {
                LogError::Nats(format!(
                    "direct get of {stream} from {from}: no end of batch within {timeout:?} \
                     (the server must be 2.11 or newer)"
                ))
            })?
            .ok_or(LogError::Closed)?;
        match answer.status {
            None => {
                let message = StreamMessage::try_from(answer).map_err(|err| {
                    LogError::Nats(format!("direct get of {stream}: malformed answer: {err}"))
                })?;
                // Both log streams are dense (no deletes, no purges): anything else is damage.
                let expected = from + messages.len() as u64;
                if message.sequence != expected {
                    return Err(LogError::Nats(format!(
                        "direct get of {stream}: expected sequence {expected}, got {}",
                        message.sequence
                    )));
                }
                messages.push(message);
            }
            Some(status) if status == END_OF_BATCH || status == StatusCode::NOT_FOUND => break,
            Some(status) => {
                let description = answer.description.unwrap_or_default();
                return Err(LogError::Nats(format!(
                    "direct get of {stream} from {from}: status {status} {description}"
                )));
            }
        }
    }
    Ok(messages)
}

fn nats<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> LogError {
    move |err| LogError::Nats(format!("{what}: {err}"))
}

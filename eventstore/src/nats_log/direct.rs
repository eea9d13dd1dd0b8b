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
//!
//! A request can be lost unanswered when the replica it was routed to is lost, or while the
//! stream elects a leader (see [`super::resend`]): a batch that has not begun to arrive within
//! [`RESEND_WAIT_FIRST`] (doubling) is asked for again, within the caller's timeout. A batch
//! that has begun is read to its end, however long that takes within the timeout.

use std::time::Duration;

use async_nats::jetstream::message::StreamMessage;
use async_nats::{Client, StatusCode};
use futures::StreamExt;
use tokio::time::Instant;

use super::RESEND_WAIT_FIRST;
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

/// Reads up to `max` consecutive messages of `stream` starting at sequence `from`, or at the
/// stream's first when that is later (what lies before was removed). Returns fewer when the
/// stream (or the answering replica) ends, or the byte cap is hit; fails if the stream has a
/// gap (the log's streams are dense), or no batch is read within `timeout`.
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
    let mut first_answer_wait = RESEND_WAIT_FIRST;
    // Bounded by the deadline: an unanswered attempt ends by it, and the last one fails.
    loop {
        let first_answer_by = deadline.min(Instant::now() + first_answer_wait);
        let request = Request {
            stream,
            from,
            max,
            deadline,
        };
        if let Some(messages) = request.send(client, first_answer_by, timeout).await? {
            return Ok(messages);
        }
        first_answer_wait = first_answer_wait.saturating_mul(2);
    }
}

/// One batched direct get.
struct Request<'a> {
    stream: &'a str,
    from: u64,
    max: usize,
    deadline: Instant,
}

impl Request<'_> {
    /// Sends the request once; `None` when nothing was answered by `first_answer_by` (before
    /// the deadline), so it may be sent again.
    async fn send(
        &self,
        client: &Client,
        first_answer_by: Instant,
        timeout: Duration,
    ) -> Result<Option<Vec<StreamMessage>>, LogError> {
        let Self {
            stream,
            from,
            max,
            deadline,
        } = *self;
        let inbox = client.new_inbox();
        // Subscribe before asking, so no answer can arrive unheard; dropping the subscriber
        // unsubscribes, and a late answer then goes nowhere.
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

        let mut messages: Vec<StreamMessage> = Vec::with_capacity(max.min(1024));
        let mut answered = false;
        while messages.len() < max {
            let wait_until = if answered { deadline } else { first_answer_by };
            let Ok(answer) = tokio::time::timeout_at(wait_until, answers.next()).await else {
                if !answered && wait_until < deadline {
                    return Ok(None);
                }
                return Err(LogError::Nats(format!(
                    "direct get of {stream} from {from}: no end of batch within {timeout:?} \
                     (the server must be 2.11 or newer)"
                )));
            };
            answered = true;
            let answer = answer.ok_or(LogError::Closed)?;
            match answer.status {
                None => {
                    let message = StreamMessage::try_from(answer).map_err(|err| {
                        LogError::Nats(format!("direct get of {stream}: malformed answer: {err}"))
                    })?;
                    // Both log streams are dense from their first message (no deletes;
                    // a retention cut or max_age removes only a prefix): the first may come
                    // after `from`, and anything else is damage.
                    let expected = match messages.last() {
                        Some(previous) => previous.sequence + 1,
                        None => message.sequence.max(from),
                    };
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
        Ok(Some(messages))
    }
}

fn nats<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> LogError {
    move |err| LogError::Nats(format!("{what}: {err}"))
}

//! The decisions stream: where this writer stands in it (its fence), the fenced publish, and
//! reads by input sequence.
//!
//! Batches are stored in input order and cover consecutive input ranges, so the stream is
//! sorted by `last_input_seq` and a lookup by input sequence is a binary search over stream
//! sequences, read from the stream leader.

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::header::{NATS_EXPECTED_LAST_SEQUENCE, NATS_EXPECTED_STREAM, NATS_MESSAGE_ID};
use async_nats::jetstream;
use async_nats::jetstream::context::PublishError;
use async_nats::jetstream::publish::PublishAck;
use async_nats::jetstream::stream::{LastRawMessageErrorKind, Stream};
use flotilla_core::codec::{decode_decisions, encode_decisions};

use super::direct;
use super::subjects::DECISIONS_SUBJECT;
use crate::{DecisionBatch, LogError};

/// What this writer knows of the decisions stream; advanced only by its own appends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fence {
    /// The decisions stream's last sequence.
    pub(crate) stream_seq: u64,
    /// The last input sequence decided.
    pub(crate) last_decided: u64,
}

/// Publishes `batch` fenced on `fence`: the server refuses it with a wrong-last-sequence error
/// if the stream has moved since. The inner result is the server's answer.
pub(crate) async fn publish(
    context: &jetstream::Context,
    stream: &Stream,
    fence: Fence,
    msg_id: &str,
    batch: &DecisionBatch,
) -> Result<Result<PublishAck, PublishError>, LogError> {
    let record = encode_decisions(batch)?;
    let mut headers = HeaderMap::new();
    headers.insert(
        NATS_EXPECTED_LAST_SEQUENCE,
        fence.stream_seq.to_string().as_str(),
    );
    headers.insert(
        NATS_EXPECTED_STREAM,
        stream.cached_info().config.name.as_str(),
    );
    headers.insert(NATS_MESSAGE_ID, msg_id);
    let ack = context
        .publish_with_headers(DECISIONS_SUBJECT, headers, record.into())
        .await
        .map_err(|err| LogError::Nats(format!("publish decision batch: {err}")))?;
    Ok(ack.await)
}

/// The decisions stream's last batch, as its stream leader has it.
pub(crate) struct LastDecision {
    /// Its position.
    pub(crate) fence: Fence,
    /// The `Nats-Msg-Id` it was published with (`<writer id>:<first>-<last>`).
    pub(crate) msg_id: Option<String>,
}

/// Reads the decisions stream's last message and the last input it decided.
pub(crate) async fn last_decision(decisions: &Stream) -> Result<LastDecision, LogError> {
    match decisions
        .get_last_raw_message_by_subject(DECISIONS_SUBJECT)
        .await
    {
        Ok(message) => {
            let batch = decode_batch(message.sequence, &message.payload)?;
            let msg_id = message
                .headers
                .get(NATS_MESSAGE_ID)
                .map(|id| id.as_str().to_owned());
            let fence = Fence {
                stream_seq: message.sequence,
                last_decided: batch.last_input_seq,
            };
            Ok(LastDecision { fence, msg_id })
        }
        Err(err) if err.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(LastDecision {
            fence: Fence {
                stream_seq: 0,
                last_decided: 0,
            },
            msg_id: None,
        }),
        Err(err) => Err(LogError::Nats(format!("last decision batch: {err}"))),
    }
}

fn decode_batch(stream_seq: u64, payload: &[u8]) -> Result<DecisionBatch, LogError> {
    decode_decisions(payload).map_err(|source| LogError::Corrupt {
        seq: stream_seq,
        source,
    })
}

/// Reads up to `max` batches starting at decisions stream sequence `from`.
pub(crate) async fn read_batches(
    client: &async_nats::Client,
    stream: &Stream,
    from: u64,
    max: usize,
    timeout: Duration,
) -> Result<Vec<DecisionBatch>, LogError> {
    let name = stream.cached_info().config.name.as_str();
    let messages = direct::get_batch(client, name, from, max, timeout).await?;
    messages
        .into_iter()
        .map(|message| decode_batch(message.sequence, &message.payload))
        .collect()
}

/// The first decisions stream sequence whose batch covers an input `>= input_seq`; `None` if
/// there is none.
pub(crate) async fn first_batch_covering(
    stream: &Stream,
    input_seq: u64,
) -> Result<Option<u64>, LogError> {
    let info = stream.get_info().await;
    let state = info
        .map_err(|err| LogError::Nats(format!("decisions stream info: {err}")))?
        .state;
    let (mut low, mut high) = (state.first_sequence.max(1), state.last_sequence);
    if state.messages == 0 || batch_at(stream, high).await?.last_input_seq < input_seq {
        return Ok(None);
    }
    // Invariant: the batch at `high` covers `input_seq` or later; every batch before `low`
    // ends before it. Bounded by log2(stream length) probes.
    while low < high {
        let middle = low + (high - low) / 2;
        if batch_at(stream, middle).await?.last_input_seq >= input_seq {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    Ok(Some(high))
}

/// The batch at a decisions stream sequence, read from the stream leader.
async fn batch_at(stream: &Stream, stream_seq: u64) -> Result<DecisionBatch, LogError> {
    let message = stream
        .get_raw_message(stream_seq)
        .await
        .map_err(|err| LogError::Nats(format!("decision batch at {stream_seq}: {err}")))?;
    decode_batch(stream_seq, &message.payload)
}

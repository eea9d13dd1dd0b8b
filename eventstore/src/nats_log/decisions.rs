//! The decisions stream: where this writer stands in it (its fence), the fenced publish, and
//! reads by input sequence.
//!
//! Batches are stored in input order and cover consecutive input ranges, so the stream is
//! sorted by `last_input_seq` and a lookup by input sequence is a binary search over stream
//! sequences, read from the stream leader.
//!
//! One input can decide a lot (a PickAll placement created over 75,000 clusters decides 75,000
//! bindings, ~7 MB), more than the server's `max_payload` (1 MiB by default). Such a batch is
//! put into the batch object store first (chunked, digest-checked), and the fenced message in
//! the stream carries only its range and a [`BATCH_OBJECT_HEADER`] naming the object. A crash
//! between the two leaves an unreferenced object, which is harmless: the object is named after
//! the writer's message id, so a retry rewrites the same object.

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::header::{NATS_EXPECTED_LAST_SEQUENCE, NATS_EXPECTED_STREAM, NATS_MESSAGE_ID};
use async_nats::jetstream;
use async_nats::jetstream::context::PublishError;
use async_nats::jetstream::object_store::{ObjectMetadata, ObjectStore};
use async_nats::jetstream::publish::PublishAck;
use async_nats::jetstream::stream::{LastRawMessageErrorKind, Stream};
use flotilla_core::codec::{CodecError, DECISIONS_BYTES_MAX};
use flotilla_core::wire::decisions::{batch_range, decode_batch as decode_frame, encode_batch};
use tokio::io::AsyncReadExt;

use super::subjects::DECISIONS_SUBJECT;
use super::{direct, resend};
use crate::{DecisionBatch, LogError};

/// Header naming the object that holds a batch too large for one message.
pub(crate) const BATCH_OBJECT_HEADER: &str = "Flotilla-Batch-Object";
/// Room left under `max_payload` for the headers of a decisions message.
const HEADER_ROOM_BYTES: usize = 16 * 1024;
/// Chunk size of batch objects: under the default 1 MiB `max_payload`.
const BATCH_CHUNK_BYTES: usize = 512 * 1024;

/// Where decision batches are published.
pub(crate) struct Target<'a> {
    /// The JetStream context.
    pub(crate) context: &'a jetstream::Context,
    /// The decisions stream.
    pub(crate) stream: &'a Stream,
    /// The bucket for batches over `max_payload`.
    pub(crate) batches: &'a ObjectStore,
    /// The server's `max_payload`.
    pub(crate) max_payload: usize,
    /// How long a publish may go unanswered in all, sent again meanwhile (see [`resend`]).
    pub(crate) budget: Duration,
}

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
///
/// A publish left unanswered (its ack lost while the stream elects a leader) is sent again
/// early, within the target's budget: both headers make that exact. A copy arriving after the
/// first was stored is refused as a wrong last sequence, which the caller recognises as its own
/// batch by the message id.
pub(crate) async fn publish(
    target: &Target<'_>,
    fence: Fence,
    msg_id: &str,
    batch: &DecisionBatch,
) -> Result<Result<PublishAck, PublishError>, LogError> {
    let Target {
        context, stream, ..
    } = target;
    let mut record = encode_batch(
        batch.first_input_seq,
        batch.last_input_seq,
        &batch.decisions,
    )?;
    let mut headers = HeaderMap::new();
    if record.len() + HEADER_ROOM_BYTES > target.max_payload {
        let name = batch_object_name(msg_id);
        let meta = ObjectMetadata {
            name: name.clone(),
            description: Some(format!(
                "flotilla decisions for inputs {}..={}",
                batch.first_input_seq, batch.last_input_seq
            )),
            chunk_size: Some(BATCH_CHUNK_BYTES),
            ..ObjectMetadata::default()
        };
        target
            .batches
            .put(meta, &mut record.as_slice())
            .await
            .map_err(|err| LogError::Nats(format!("put decision batch object {name}: {err}")))?;
        headers.insert(BATCH_OBJECT_HEADER, name.as_str());
        // The message keeps the range, so that the fence and lookups never read the object.
        record = encode_batch(batch.first_input_seq, batch.last_input_seq, &[])?;
    }
    headers.insert(
        NATS_EXPECTED_LAST_SEQUENCE,
        fence.stream_seq.to_string().as_str(),
    );
    headers.insert(
        NATS_EXPECTED_STREAM,
        stream.cached_info().config.name.as_str(),
    );
    headers.insert(NATS_MESSAGE_ID, msg_id);
    let record = bytes::Bytes::from(record);
    resend::ask_until_answered(target.budget, || async {
        let ack = context
            .publish_with_headers(DECISIONS_SUBJECT, headers.clone(), record.clone())
            .await?;
        ack.await
    })
    .await
    .map_err(|unanswered| unanswered.error("publish decision batch", target.budget))
}

/// The decisions stream's last batch, as its stream leader has it.
pub(crate) struct LastDecision {
    /// The stream's last message (whatever it is) and the last input decided by a batch.
    pub(crate) fence: Fence,
    /// The `Nats-Msg-Id` the last batch was published with (`<writer id>:<first>-<last>`).
    pub(crate) msg_id: Option<String>,
}

/// Most messages [`last_decision`] and [`last_input_at`] step back over to find a batch: a
/// longer run of records that are not batches is damage an operator must look at.
const NOT_BATCHES_MAX: u64 = 10_000;

/// Reads the decisions stream's last message and the last input decided, from the leader
/// (sent again while unanswered, within `budget`: see [`resend`]). Messages that are not
/// decision batches (undecodable: a bug of one build, a disk error, a stray publish) are
/// stepped over: the decisions record the fold, so one that cannot be read is skipped with a
/// warning, never a reason to stop every hub.
pub(crate) async fn last_decision(
    decisions: &Stream,
    budget: Duration,
) -> Result<LastDecision, LogError> {
    let last = resend::ask_until_answered(budget, || {
        decisions.get_last_raw_message_by_subject(DECISIONS_SUBJECT)
    })
    .await
    .map_err(|unanswered| unanswered.error("last decision batch", budget))?;
    let message = match last {
        Ok(message) => message,
        Err(err) if err.kind() == LastRawMessageErrorKind::NoMessageFound => {
            return Ok(LastDecision {
                fence: Fence {
                    stream_seq: 0,
                    last_decided: 0,
                },
                msg_id: None,
            });
        }
        Err(err) => return Err(LogError::Nats(format!("last decision batch: {err}"))),
    };
    let tail = message.sequence;
    let mut candidate = message;
    loop {
        if let Some((_, last_input_seq)) = batch_range_of(candidate.sequence, &candidate.payload) {
            let msg_id = candidate
                .headers
                .get(NATS_MESSAGE_ID)
                .map(|id| id.as_str().to_owned());
            let fence = Fence {
                stream_seq: tail,
                last_decided: last_input_seq,
            };
            return Ok(LastDecision { fence, msg_id });
        }
        if candidate.sequence <= 1 || tail - candidate.sequence >= NOT_BATCHES_MAX {
            return not_batches(tail, candidate.sequence);
        }
        candidate = raw_message_at(decisions, candidate.sequence - 1, budget).await?;
    }
}

/// What [`last_decision`] answers when no batch is found before the stream's start.
fn not_batches(tail: u64, from: u64) -> Result<LastDecision, LogError> {
    if from <= 1 {
        return Ok(LastDecision {
            fence: Fence {
                stream_seq: tail,
                last_decided: 0,
            },
            msg_id: None,
        });
    }
    Err(LogError::Storage(format!(
        "the decisions stream's messages {from}..={tail} are none of them decision batches"
    )))
}

/// The raw message at a decisions stream sequence, from the leader.
async fn raw_message_at(
    stream: &Stream,
    stream_seq: u64,
    budget: Duration,
) -> Result<async_nats::jetstream::message::StreamMessage, LogError> {
    let what = || format!("decision batch at {stream_seq}");
    resend::ask_until_answered(budget, || stream.get_raw_message(stream_seq))
        .await
        .map_err(|unanswered| unanswered.error(&what(), budget))?
        .map_err(|err| LogError::Nats(format!("{}: {err}", what())))
}

/// A decision batch's `(first, last)` input range, or `None` (with a warning) for a message
/// that is not one: it must decode whole, or be a newer build's batch whose range reads.
fn batch_range_of(stream_seq: u64, payload: &[u8]) -> Option<(u64, u64)> {
    let range = match decode_frame(payload) {
        Ok(batch) => Some((batch.first_input_seq, batch.last_input_seq)),
        Err(CodecError::Newer { .. }) => range_of(stream_seq, payload).ok(),
        Err(_) => None,
    };
    let range = range.filter(|(first, last)| *first >= 1 && first <= last);
    if range.is_none() && first_sighting(stream_seq) {
        tracing::warn!(
            stream_seq,
            bytes = payload.len(),
            "the decisions stream holds a message that is not a decision batch; skipping it \
             (the decisions record the fold; the inputs are its source)"
        );
    }
    range
}

/// Decodes a batch; one recorded by a newer build is [`LogError::Newer`].
fn decode_batch(stream_seq: u64, payload: &[u8]) -> Result<DecisionBatch, LogError> {
    match decode_frame(payload) {
        Ok(batch) => Ok(DecisionBatch {
            version: batch.version,
            first_input_seq: batch.first_input_seq,
            last_input_seq: batch.last_input_seq,
            decisions: batch.decisions,
        }),
        Err(CodecError::Newer { kind, version }) => Err(LogError::Newer {
            seq: stream_seq,
            kind,
            version,
        }),
        Err(source) => Err(LogError::Corrupt {
            seq: stream_seq,
            source,
        }),
    }
}

/// A batch's `(first, last)` input range, readable in every version (newer ones too).
fn range_of(stream_seq: u64, payload: &[u8]) -> Result<(u64, u64), LogError> {
    batch_range(payload)
        .map(|(_, first, last)| (first, last))
        .map_err(|source| LogError::Corrupt {
            seq: stream_seq,
            source,
        })
}

/// Whether this process has not yet reported the message at `stream_seq` (standbys and
/// followers look at the stream's tail every round: one warning per message is enough).
fn first_sighting(stream_seq: u64) -> bool {
    /// Messages remembered; past that, every further one is reported.
    const REMEMBERED_MAX: usize = 4096;
    static REPORTED: std::sync::Mutex<std::collections::BTreeSet<u64>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let Ok(mut reported) = REPORTED.lock() else {
        return true;
    };
    if reported.len() >= REMEMBERED_MAX {
        return true;
    }
    reported.insert(stream_seq)
}

/// The object a large batch is stored under: named after the publishing writer's message id.
fn batch_object_name(msg_id: &str) -> String {
    format!("decisions-{}", msg_id.replace(':', "-"))
}

/// Reads up to `max` batches starting at decisions stream sequence `from`, fetching large ones
/// from the batch object store.
pub(crate) async fn read_batches(
    client: &async_nats::Client,
    stream: &Stream,
    batches: &ObjectStore,
    (from, max): (u64, usize),
    timeout: Duration,
) -> Result<Vec<DecisionBatch>, LogError> {
    let name = stream.cached_info().config.name.as_str();
    let messages = direct::get_batch(client, name, from, max, timeout).await?;
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let object = message
            .headers
            .get(BATCH_OBJECT_HEADER)
            .map(|name| name.as_str().to_owned());
        if batch_range_of(message.sequence, &message.payload).is_none() {
            continue;
        }
        let batch = match object {
            Some(object) => read_object(batches, message.sequence, &object, timeout).await?,
            None => decode_batch(message.sequence, &message.payload)?,
        };
        out.push(batch);
    }
    Ok(out)
}

/// Reads and decodes a large batch's object (its SHA-256 digest is checked by the store).
async fn read_object(
    batches: &ObjectStore,
    stream_seq: u64,
    name: &str,
    timeout: Duration,
) -> Result<DecisionBatch, LogError> {
    let mut object = batches
        .get(name)
        .await
        .map_err(|err| LogError::Nats(format!("get decision batch object {name}: {err}")))?;
    let mut record = Vec::new();
    let limit = u64::try_from(DECISIONS_BYTES_MAX).unwrap_or(u64::MAX);
    // Chunks arrive one request each: allow a timeout per 16 chunks of a maximal batch.
    let rounds = u32::try_from(1 + DECISIONS_BYTES_MAX / BATCH_CHUNK_BYTES / 16).unwrap_or(1);
    tokio::time::timeout(
        timeout.saturating_mul(rounds),
        (&mut object).take(limit + 1).read_to_end(&mut record),
    )
    .await
    .map_err(|_| LogError::Nats(format!("reading decision batch object {name} timed out")))?
    .map_err(|err| LogError::Nats(format!("read decision batch object {name}: {err}")))?;
    decode_batch(stream_seq, &record)
}

/// The first decisions stream sequence whose batch covers an input `>= input_seq`; `None` if
/// there is none.
pub(crate) async fn first_batch_covering(
    stream: &Stream,
    input_seq: u64,
    budget: Duration,
) -> Result<Option<u64>, LogError> {
    let info = resend::ask_until_answered(budget, || stream.get_info()).await;
    let state = info
        .map_err(|unanswered| unanswered.error("decisions stream info", budget))?
        .map_err(|err| LogError::Nats(format!("decisions stream info: {err}")))?
        .state;
    let (mut low, mut high) = (state.first_sequence.max(1), state.last_sequence);
    if state.messages == 0 || last_input_at(stream, high, budget).await? < input_seq {
        return Ok(None);
    }
    // Invariant: the batch at `high` covers `input_seq` or later; every batch before `low`
    // ends before it. Bounded by log2(stream length) probes.
    while low < high {
        let middle = low + (high - low) / 2;
        if last_input_at(stream, middle, budget).await? >= input_seq {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    Ok(Some(high))
}

/// The last input covered by the batch at a decisions stream sequence, from the stream leader.
/// A message that is not a batch counts as the nearest batch before it (the inputs it covers
/// are the same), so the binary search over the stream stays sorted.
pub(crate) async fn last_input_at(
    stream: &Stream,
    stream_seq: u64,
    budget: Duration,
) -> Result<u64, LogError> {
    let mut at = stream_seq;
    loop {
        let message = raw_message_at(stream, at, budget).await?;
        if let Some((_, last)) = batch_range_of(at, &message.payload) {
            return Ok(last);
        }
        if at <= 1 {
            return Ok(0);
        }
        if stream_seq - at >= NOT_BATCHES_MAX {
            return Err(LogError::Storage(format!(
                "the decisions stream's messages {at}..={stream_seq} are none of them decision \
                 batches"
            )));
        }
        at -= 1;
    }
}

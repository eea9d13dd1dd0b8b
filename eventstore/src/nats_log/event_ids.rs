//! The `<prefix>_EVENT_IDS` key-value bucket: event id → the input sequence it was first
//! folded at, written by the single writer. How the writer recognises a duplicate the stream's
//! duplicate window no longer catches ([`crate::LogReader::first_seq_of`]).
//!
//! Both calls go through [`resend`]: a get is a read, and a create sent twice is refused as
//! already existing, which is the answer a re-fold gets anyway.

use std::collections::BTreeMap;
use std::time::Duration;

use async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE;
use async_nats::jetstream::kv;
use async_nats::{Client, HeaderMap};
use bytes::Bytes;
use futures::StreamExt;
use uuid::Uuid;

use super::atomic::{self, ATOMIC_BATCH_MAX};
use super::{EVENT_ID_REQUESTS_IN_FLIGHT_MAX, resend};
use crate::LogError;

/// The first folded sequence of each of `ids` the bucket knows, each lookup sent again while
/// unanswered within `budget`.
pub(crate) async fn first_seq_of(
    store: &kv::Store,
    ids: &[Uuid],
    budget: Duration,
) -> Result<BTreeMap<Uuid, u64>, LogError> {
    let lookups = futures::stream::iter(ids.iter().copied())
        .map(|id| async move {
            let what = || format!("look up event id {id}");
            let value = resend::ask_until_answered(budget, || store.get(id.to_string()))
                .await
                .map_err(|unanswered| unanswered.error(&what(), budget))?
                .map_err(|err| LogError::Nats(format!("{}: {err}", what())))?;
            Ok::<_, LogError>(value.map(|value| (id, value)))
        })
        .buffered(EVENT_ID_REQUESTS_IN_FLIGHT_MAX);
    let found: Vec<_> = lookups.collect().await;
    let mut out = BTreeMap::new();
    for entry in found {
        if let Some((id, value)) = entry? {
            out.insert(id, parse_seq(id, &value)?);
        }
    }
    Ok(out)
}

/// Records the first folded sequence of each event; an id recorded before keeps its sequence.
///
/// Each key is created (`Nats-Expected-Last-Subject-Sequence: 0`). When the bucket's stream
/// takes atomic batches, up to [`ATOMIC_BATCH_MAX`] creates go as one batch, stored and synced
/// as one; a batch refused (an id recorded before: a re-fold after a restart) or unanswered is
/// created one by one, where an existing key is kept.
pub(crate) async fn record_folded(
    client: &Client,
    store: &kv::Store,
    folded: &[(Uuid, u64)],
    budget: Duration,
) -> Result<(), LogError> {
    // A bucket reached through another JetStream API prefix (a domain) is left to the client's
    // own creates, which know the prefix.
    let atomic =
        store.stream.cached_info().config.allow_atomic_publish && !store.use_jetstream_prefix;
    for chunk in folded.chunks(ATOMIC_BATCH_MAX) {
        if chunk.len() > 1 && atomic {
            let creates = chunk
                .iter()
                .map(|(id, seq)| create_message(store, *id, *seq));
            match atomic::publish_batch(client, creates.collect(), budget).await {
                Ok(_) => continue,
                Err(refused) => {
                    let why = refused.why;
                    tracing::debug!(%why, "event id batch not stored; creating one by one");
                }
            }
        }
        create_one_by_one(store, chunk, budget).await?;
    }
    Ok(())
}

/// A create of `id`'s key, as `kv::Store::create` sends it (default API prefix).
fn create_message(store: &kv::Store, id: Uuid, seq: u64) -> atomic::BatchMessage {
    let mut subject = store.put_prefix.as_ref().unwrap_or(&store.prefix).clone();
    subject.push_str(&id.to_string());
    let mut headers = HeaderMap::new();
    headers.insert(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, "0");
    (subject, headers, Bytes::from(seq.to_string()))
}

/// Creates each key with its own request; an existing key keeps its value.
async fn create_one_by_one(
    store: &kv::Store,
    folded: &[(Uuid, u64)],
    budget: Duration,
) -> Result<(), LogError> {
    let creates = futures::stream::iter(folded.iter().copied())
        .map(|(id, seq)| async move {
            let value = Bytes::from(seq.to_string());
            let created =
                resend::ask_until_answered(budget, || store.create(id.to_string(), value.clone()))
                    .await
                    .map_err(|unanswered| {
                        unanswered.error(&format!("record event id {id}"), budget)
                    })?;
            match created {
                Ok(_) => Ok(()),
                // Recorded before (a re-fold after a restart, or our own create sent again
                // after its answer was lost): the first sequence stays.
                Err(err) if err.kind() == kv::CreateErrorKind::AlreadyExists => Ok(()),
                Err(err) => Err(LogError::Nats(format!("record event id {id}: {err}"))),
            }
        })
        .buffered(EVENT_ID_REQUESTS_IN_FLIGHT_MAX);
    let results: Vec<_> = creates.collect().await;
    results.into_iter().collect()
}

/// The sequence stored for an event id (decimal text).
fn parse_seq(id: Uuid, value: &[u8]) -> Result<u64, LogError> {
    std::str::from_utf8(value)
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| LogError::Nats(format!("event id {id}: stored sequence is not a number")))
}

//! The input stream's append path: each chunk as one atomic batch when the stream takes them,
//! else (or when a batch is not stored) one by one, pipelined.

use async_nats::HeaderMap;
use async_nats::header::{NATS_EXPECTED_STREAM, NATS_MESSAGE_ID};
use async_nats::jetstream::context::PublishAckFuture;

use super::{APPEND_PIPELINE_MAX, NatsLog, atomic, given_times};
use crate::{Appended, LogError, event_size};

impl NatsLog {
    /// Publishes one chunk of events and awaits their acks, in order: as one atomic batch when
    /// the stream allows it, else (or when the batch is not stored) one by one.
    pub(super) async fn append_chunk(
        &self,
        chunk: &[atomic::Outgoing],
    ) -> Result<Vec<Appended>, LogError> {
        let permits = u32::try_from(chunk.len()).unwrap_or(u32::MAX);
        // All permits at once: holding some while waiting for more could deadlock two appends.
        let _permits = self
            .in_flight
            .acquire_many(permits)
            .await
            .map_err(|_| LogError::Closed)?;
        let stream_name = self.input.cached_info().config.name.as_str();
        if chunk.len() > 1 && self.allows_atomic_batches() {
            let timeout = self.options.request_timeout;
            match atomic::publish(&self.client, stream_name, chunk, timeout).await {
                Ok(outcomes) => return Ok(outcomes),
                Err(atomic::NotStored(why)) => {
                    tracing::debug!(%why, "atomic batch not stored; publishing one by one");
                }
            }
        }
        let mut outcomes = Vec::with_capacity(chunk.len());
        for part in chunk.chunks(APPEND_PIPELINE_MAX) {
            outcomes.extend(self.publish_pipelined(part, stream_name).await?);
        }
        Ok(outcomes)
    }

    /// Refuses the whole append when any event is over what the server and the stream store
    /// ([`event_size::nats_limit`]), before anything is published: otherwise the events before
    /// it would be stored and the request half-appended (a publish over `max_payload` fails on
    /// the client, after the batch's earlier messages went out, and the one-by-one fallback
    /// stores those).
    pub(super) fn check_sizes(&self, encoded: &[atomic::Outgoing]) -> Result<(), LogError> {
        let max_payload = self.client.server_info().max_payload;
        let max_msg_size = self.input.cached_info().config.max_message_size;
        let limit = event_size::nats_limit(max_payload, max_msg_size);
        event_size::check(
            encoded.iter().map(|(_, _, payload, _)| payload.len()),
            limit,
        )
    }

    /// Whether the input stream takes atomic batches (a stream created before it did not).
    pub(super) fn allows_atomic_batches(&self) -> bool {
        self.input.cached_info().config.allow_atomic_publish
    }

    /// Publishes events one by one, all before awaiting their acks.
    async fn publish_pipelined(
        &self,
        part: &[atomic::Outgoing],
        stream_name: &str,
    ) -> Result<Vec<Appended>, LogError> {
        let mut acks: Vec<PublishAckFuture> = Vec::with_capacity(part.len());
        for (subject, id, payload, given_time) in part {
            let mut headers = HeaderMap::new();
            headers.insert(NATS_MESSAGE_ID, id.as_str());
            headers.insert(NATS_EXPECTED_STREAM, stream_name);
            if let Some(time) = given_time {
                given_times::add_header(&mut headers, *time);
            }
            let ack = self
                .context
                .publish_with_headers(subject.clone(), headers, payload.clone())
                .await
                .map_err(|err| LogError::Nats(format!("publish event {id}: {err}")))?;
            acks.push(ack);
        }
        let mut outcomes = Vec::with_capacity(part.len());
        for (ack, (_, id, _, _)) in acks.into_iter().zip(part) {
            let ack = ack
                .await
                .map_err(|err| LogError::Nats(format!("ack of event {id}: {err}")))?;
            outcomes.push(Appended {
                seq: ack.sequence,
                duplicate: ack.duplicate,
            });
        }
        Ok(outcomes)
    }
}

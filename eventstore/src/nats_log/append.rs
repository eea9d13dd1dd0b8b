//! The input stream's append path: each chunk as one atomic batch when the stream takes them,
//! else (or when a batch is not stored) one by one, pipelined. A stream at its limits refuses
//! the batch whole, and the append with it ([`super::limits`]).

use async_nats::HeaderMap;
use async_nats::header::{NATS_EXPECTED_STREAM, NATS_MESSAGE_ID};
use async_nats::jetstream::context::PublishAckFuture;

use bytes::Bytes;
use flotilla_core::Envelope;
use flotilla_core::wire::encode_envelope;

use super::subjects::input_subject;
use super::{APPEND_PIPELINE_MAX, ATOMIC_BATCH_MAX, NatsLog, atomic, given_times, limits};
use crate::{AppendTime, Appended, LogError, event_size};

impl NatsLog {
    /// [`crate::EventLog::append`]: encodes every event first (a bad one fails the call before
    /// anything is written), checks their sizes, then publishes them in chunks.
    pub(super) async fn append_events(
        &self,
        events: &[Envelope],
        time: AppendTime,
    ) -> Result<Vec<Appended>, LogError> {
        if time == AppendTime::AsGiven && !self.keeps_given_times {
            return Err(LogError::Refused(
                "NATS does not keep times as given: anyone can publish to the input stream, so \
                 every event's time is its JetStream timestamp; append with AppendTime::Assigned"
                    .to_owned(),
            ));
        }
        // After a retention cut, an old id may repeat a removed input (`retention`).
        self.refuse_forgotten(events).await?;
        let given = time == AppendTime::AsGiven;
        // Encode everything first, so a bad event fails the call before anything is written.
        let encoded = events
            .iter()
            .map(|event| {
                let payload = Bytes::from(encode_envelope(event)?);
                let given_time = given.then_some(event.time);
                Ok((
                    input_subject(event),
                    event.id.to_string(),
                    payload,
                    given_time,
                ))
            })
            .collect::<Result<Vec<_>, LogError>>()?;
        self.check_sizes(&encoded)?;
        // A failed chunk fails the call, with earlier chunks written: publishers retry the
        // whole call, and deduplication by id makes the retry exact.
        let mut outcomes = Vec::with_capacity(encoded.len());
        let chunk_size = if self.allows_atomic_batches() {
            ATOMIC_BATCH_MAX
        } else {
            APPEND_PIPELINE_MAX
        };
        for chunk in encoded.chunks(chunk_size) {
            outcomes.extend(self.append_chunk(chunk).await?);
        }
        Ok(outcomes)
    }

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
                Ok(outcomes) => {
                    self.limits.stored(stream_name);
                    return Ok(outcomes);
                }
                // One by one, the events that fit would be stored and the rest not.
                Err(refused) if refused.full => {
                    return Err(self.limits.refused(stream_name, refused.why));
                }
                Err(refused) => {
                    let why = refused.why;
                    tracing::debug!(%why, "atomic batch not stored; publishing one by one");
                }
            }
        }
        let mut outcomes = Vec::with_capacity(chunk.len());
        for part in chunk.chunks(APPEND_PIPELINE_MAX) {
            outcomes.extend(self.publish_pipelined(part, stream_name).await?);
        }
        self.limits.stored(stream_name);
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
            let ack = ack.await.map_err(|err| {
                let detail = format!("ack of event {id}: {err}");
                if limits::publish_at_limits(&err) {
                    self.limits.refused(stream_name, detail)
                } else {
                    LogError::Nats(detail)
                }
            })?;
            outcomes.push(Appended {
                seq: ack.sequence,
                duplicate: ack.duplicate,
            });
        }
        Ok(outcomes)
    }
}

//! The agent's side of a NATS hub: events are published straight onto the input stream on the
//! cluster's own subjects (JetStream publish with the event id as `Nats-Msg-Id`, so a retry is
//! stored once), and the cluster's Works and membership are followed in the works bucket
//! (`crate::nats_works`) with an ordered consumer filtered on the cluster's keys, delivering
//! the last value of each key first — so an agent that was away catches up from what is
//! current. Rejections of what it published arrive on `flotilla.rejected.*.<cluster>`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::header::NATS_MESSAGE_ID;
use async_nats::jetstream::{self, consumer, consumer::push::OrderedConfig};
use flotilla_core::wire::subject::cluster_token;
use flotilla_eventstore::nats_log::NatsOptions;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::hub::{HEARTBEAT_PERIOD_DEFAULT_SECS, HubError, Membership, POST_ATTEMPTS_MAX};
use super::watch::{BACKOFF_MAX, BACKOFF_MIN, WorkChange};
use flotilla_adapters::nats_names::{REJECTED_SUBJECT_PREFIX, cluster_key, works_bucket_name};

/// How long a heartbeat waits for the membership record before it gives up this round.
pub const MEMBERSHIP_WAIT: Duration = Duration::from_secs(5);
/// Bound on one publish's acknowledgement.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(10);

/// A NATS hub as one cluster's agent sees it.
#[derive(Clone)]
pub struct NatsLink {
    cluster: String,
    client: async_nats::Client,
    jetstream: jetstream::Context,
    bucket: String,
    /// The membership as last read from the bucket; `None` until known.
    membership: Arc<watch::Sender<Option<Membership>>>,
}

impl std::fmt::Debug for NatsLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsLink")
            .field("cluster", &self.cluster)
            .field("bucket", &self.bucket)
            .finish_non_exhaustive()
    }
}

fn nats_error(what: &str, error: impl std::fmt::Display) -> HubError {
    HubError::Protocol {
        url: "nats".to_owned(),
        message: format!("{what}: {error}"),
    }
}

impl NatsLink {
    /// A link over `client` for `cluster`, with the log's default stream prefix.
    #[must_use]
    pub fn new(client: async_nats::Client, cluster: &str) -> Self {
        let (membership, _) = watch::channel(None);
        Self {
            cluster: cluster.to_owned(),
            jetstream: jetstream::new(client.clone()),
            client,
            bucket: works_bucket_name(&NatsOptions::default()),
            membership: Arc::new(membership),
        }
    }

    /// The membership, waiting up to [`MEMBERSHIP_WAIT`] for the first record.
    ///
    /// # Errors
    /// When the hub has not published this cluster's membership yet.
    pub async fn membership(&self) -> Result<Membership, HubError> {
        let mut known = self.membership.subscribe();
        let found = tokio::time::timeout(MEMBERSHIP_WAIT, known.wait_for(Option::is_some)).await;
        match found {
            Ok(Ok(membership)) => (*membership).ok_or_else(|| unknown_member(&self.cluster)),
            _ => Err(unknown_member(&self.cluster)),
        }
    }

    /// Publishes events on their subjects (retrying with the same ids); one answer per event:
    /// `{id, seq, duplicate}` from the stream's acknowledgement.
    ///
    /// # Errors
    /// When an event has no subject of this cluster, or every attempt failed.
    pub async fn post_events(&self, events: &[Value]) -> Result<Vec<Value>, HubError> {
        let mut answers = Vec::with_capacity(events.len());
        for event in events {
            answers.push(self.publish_one(event).await?);
        }
        Ok(answers)
    }

    async fn publish_one(&self, event: &Value) -> Result<Value, HubError> {
        let kind = event["type"].as_str().unwrap_or_default();
        let subject = format!("flotilla.in.{kind}.{}", cluster_token(&self.cluster));
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        let body = bytes::Bytes::from(event.to_string().into_bytes());
        let mut attempt = 1;
        loop {
            let mut headers = HeaderMap::new();
            headers.insert(NATS_MESSAGE_ID, id.as_str());
            let sent = self
                .jetstream
                .publish_with_headers(subject.clone(), headers, body.clone())
                .await;
            let acked = match sent {
                Ok(ack) => tokio::time::timeout(ACK_TIMEOUT, ack)
                    .await
                    .map_err(|e| nats_error(&subject, e))
                    .and_then(|ack| ack.map_err(|e| nats_error(&subject, e))),
                Err(error) => Err(nats_error(&subject, error)),
            };
            match acked {
                Ok(ack) => {
                    return Ok(json!({"id": id, "seq": ack.sequence, "duplicate": ack.duplicate}));
                }
                Err(error) if attempt >= POST_ATTEMPTS_MAX => return Err(error),
                Err(_) => attempt += 1,
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// Follows the cluster's keys until the receiver is dropped; failures are printed after
    /// `label` and retried after a bounded backoff, with a fresh consumer that starts again from
    /// the current values.
    pub async fn follow(self, label: String, changes: mpsc::Sender<WorkChange>) {
        let rejections = tokio::spawn(print_rejections(
            self.client.clone(),
            self.cluster.clone(),
            label.clone(),
        ));
        let mut backoff = BACKOFF_MIN;
        while !changes.is_closed() {
            match self.consume(&changes).await {
                Ok(()) => backoff = BACKOFF_MIN,
                Err(error) => {
                    println!("{label} following works failed: {error}; again in {backoff:?}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
        rejections.abort();
    }

    /// One consumer's life: the current values as one `All`, then every change.
    async fn consume(&self, changes: &mpsc::Sender<WorkChange>) -> Result<(), HubError> {
        let key = cluster_key(&self.cluster);
        let config = OrderedConfig {
            deliver_subject: self.client.new_inbox(),
            name: Some(format!("agent-{}", uuid::Uuid::now_v7().simple())),
            filter_subject: format!("$KV.{}.{key}.>", self.bucket),
            deliver_policy: consumer::DeliverPolicy::LastPerSubject,
            replay_policy: consumer::ReplayPolicy::Instant,
            ..OrderedConfig::default()
        };
        let stream = format!("KV_{}", self.bucket);
        let consumer = self
            .jetstream
            .create_consumer_on_stream(config, stream)
            .await
            .map_err(|e| nats_error("create the works consumer", e))?;
        let mut initial = consumer.cached_info().num_pending;
        let mut messages = consumer
            .messages()
            .await
            .map_err(|e| nats_error("follow the works", e))?;
        let mut current: BTreeMap<String, Value> = BTreeMap::new();
        let mut member_seen = false;
        while initial > 0 {
            let Some(message) = messages.next().await else {
                return Ok(());
            };
            let message = message.map_err(|e| nats_error("works stream", e))?;
            initial = message.info().map_or(0, |info| info.pending);
            match self.entry(&message) {
                Entry::Work(name, Some(work)) => {
                    current.insert(name, work);
                }
                Entry::Work(name, None) => {
                    current.remove(&name);
                }
                Entry::Member(membership) => {
                    member_seen = true;
                    self.membership.send_replace(Some(membership));
                }
                Entry::Other => {}
            }
        }
        if !member_seen {
            self.membership.send_replace(None);
        }
        if changes
            .send(WorkChange::All(current.into_values().collect()))
            .await
            .is_err()
        {
            return Ok(());
        }
        while let Some(message) = messages.next().await {
            let message = message.map_err(|e| nats_error("works stream", e))?;
            let change = match self.entry(&message) {
                Entry::Work(_, Some(work)) => WorkChange::Upsert(work),
                Entry::Work(name, None) => WorkChange::Delete(name),
                Entry::Member(membership) => {
                    self.membership.send_replace(Some(membership));
                    continue;
                }
                Entry::Other => continue,
            };
            if changes.send(change).await.is_err() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// What one bucket message says.
    fn entry(&self, message: &async_nats::Message) -> Entry {
        let prefix = format!("$KV.{}.{}.", self.bucket, cluster_key(&self.cluster));
        let Some(rest) = message.subject.as_str().strip_prefix(&prefix) else {
            return Entry::Other;
        };
        let deleted = message
            .headers
            .as_ref()
            .and_then(|headers| headers.get("KV-Operation"))
            .is_some_and(|op| matches!(op.as_str(), "DEL" | "PURGE"));
        if rest == "member" {
            return Entry::Member(if deleted {
                Membership::Gone
            } else {
                membership_of(&message.payload)
            });
        }
        let Some(name) = rest.strip_prefix("work.") else {
            return Entry::Other;
        };
        let work = (!deleted)
            .then(|| serde_json::from_slice::<Value>(&message.payload).ok())
            .flatten();
        Entry::Work(name.to_owned(), work)
    }
}

/// One message of the cluster's keys.
enum Entry {
    /// A Work put (`Some`) or withdrawn (`None`), by name.
    Work(String, Option<Value>),
    /// The membership record.
    Member(Membership),
    /// Anything else.
    Other,
}

fn membership_of(payload: &[u8]) -> Membership {
    let record: Value = serde_json::from_slice(payload).unwrap_or(Value::Null);
    Membership::Member {
        heartbeat_period_secs: record["heartbeatPeriodSeconds"]
            .as_u64()
            .filter(|period| *period > 0)
            .unwrap_or(HEARTBEAT_PERIOD_DEFAULT_SECS),
        leaving: record["leaving"].as_bool().unwrap_or(false),
    }
}

fn unknown_member(cluster: &str) -> HubError {
    HubError::Protocol {
        url: "nats".to_owned(),
        message: format!("the hub has not published MemberCluster {cluster} (yet)"),
    }
}

/// Prints every rejection of this cluster's inputs.
async fn print_rejections(client: async_nats::Client, cluster: String, label: String) {
    let subject = format!("{REJECTED_SUBJECT_PREFIX}.*.{}", cluster_token(&cluster));
    let Ok(mut notices) = client.subscribe(subject).await else {
        return;
    };
    while let Some(notice) = notices.next().await {
        let text = String::from_utf8_lossy(&notice.payload);
        println!("{label} the hub rejected an event: {text}");
    }
}

//! Work distribution on NATS. The writer publishes what each member cluster's agent needs in
//! the `<prefix>_WORKS` key-value bucket, one key per cluster and Work:
//!
//! | key | value |
//! |---|---|
//! | `<cluster>.member` | `{"heartbeatPeriodSeconds": 60, "leaving": false}`; deleted when the MemberCluster is gone |
//! | `<cluster>.work.<work name>` | the Work object (KubeFleet's shape, without `resourceVersion`, its status reduced to its conditions' types); deleted when withdrawn |
//!
//! `<cluster>` is [`flotilla_adapters::nats_names::cluster_key`]: the input subjects' cluster token with `%`
//! written as `=` and `~` as `/`, the bytes key-value keys allow. An agent reads only its own keys (an ordered
//! consumer filtered on `$KV.<bucket>.<cluster>.>`, delivering the last value per key), so an
//! agent that was away catches up from what is current, and its NATS permissions can name
//! exactly that filter. Values change only when what the agent acts on changes (not on every
//! report: once per content, when the hub comes to hold a report on it), and deletions stay as markers, so an agent that missed one still sees it.

use std::collections::BTreeMap;
use std::time::Duration;

use async_nats::jetstream::{self, kv, stream::StorageType};
use bytes::Bytes;
use flotilla_core::State;
use flotilla_eventstore::nats_log::NatsOptions;
use serde_json::{Value, json};

use crate::runtime::Hub;
use flotilla_adapters::nats_names::{member_key, work_key, works_bucket_name};
use flotilla_adapters::store::AnyLog;

/// How long the publisher waits after a fold for more folds before publishing, so a burst of
/// folds costs one comparison.
pub const PUBLISH_COALESCE: Duration = Duration::from_millis(50);

/// Why publishing failed.
#[derive(Debug, thiserror::Error)]
#[error("works bucket {bucket}: {message}")]
pub struct PublishError {
    /// The bucket.
    pub bucket: String,
    /// What failed.
    pub message: String,
}

/// Binds to the works bucket, creating it when missing: one value per key, file storage, the
/// log's replicas, no age limit (a Work is current until it is withdrawn).
///
/// # Errors
/// When the bucket can be neither bound nor created.
pub async fn works_bucket(
    context: &jetstream::Context,
    options: &NatsOptions,
) -> Result<kv::Store, PublishError> {
    let bucket = works_bucket_name(options);
    if let Ok(store) = context.get_key_value(&bucket).await {
        return Ok(store);
    }
    let config = kv::Config {
        bucket: bucket.clone(),
        description: "flotilla: each member cluster's desired works".to_owned(),
        history: 1,
        storage: StorageType::File,
        num_replicas: options.replicas,
        ..kv::Config::default()
    };
    flotilla_eventstore::nats_log::placing::patiently(&bucket, || {
        context.create_key_value(config.clone())
    })
    .await
    .map_err(|err| PublishError {
        bucket,
        message: err.to_string(),
    })
}

/// Every key and value the bucket should hold for `state`.
#[must_use]
pub fn desired_entries(state: &State) -> BTreeMap<String, Vec<u8>> {
    let mut entries = BTreeMap::new();
    for (name, member) in state.members() {
        let record = json!({
            "heartbeatPeriodSeconds": member.spec.heartbeat_period_seconds,
            "leaving": member.is_leaving(),
        });
        entries.insert(member_key(name), record.to_string().into_bytes());
    }
    for (cluster, mut work) in flotilla_projections::all_works(state) {
        let Some(name) = work["metadata"]["name"].as_str().map(str::to_owned) else {
            continue;
        };
        strip_volatile(&mut work);
        entries.insert(work_key(&cluster, &name), work.to_string().into_bytes());
    }
    entries
}

/// Drops what changes without changing what the agent does: the report's details and the
/// resource version. Of the status only the condition types stay, which change when the hub
/// comes to hold a report on the Work or stops holding one (a cluster bound afresh to content
/// it applied already): the agent reports again when the Work says none is held.
fn strip_volatile(work: &mut Value) {
    if let Some(object) = work.as_object_mut()
        && let Some(status) = object.remove("status")
    {
        let kinds: Vec<Value> = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|condition| json!({"type": condition["type"]}))
            .collect();
        let status = if kinds.is_empty() {
            json!({})
        } else {
            json!({"conditions": kinds})
        };
        object.insert("status".into(), status);
    }
    if let Some(metadata) = work.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("resourceVersion");
    }
}

/// Publishes the works while this hub is the writer, until shutdown. On becoming the writer it
/// rewrites every current key once and deletes keys nothing wants (what the bucket held is
/// not trusted to match this state); afterwards it writes only what changed.
pub async fn run(hub: Hub<AnyLog>, store: kv::Store) {
    let mut folded = hub.folded_updates();
    let mut shutdown = hub.shutdown_signal();
    // `None` until this hub writes: then what the bucket holds, as far as this hub knows.
    let mut published: Option<BTreeMap<String, Vec<u8>>> = None;
    loop {
        tokio::select! {
            _ = folded.changed() => {}
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = shutdown.changed() => return,
        }
        tokio::time::sleep(PUBLISH_COALESCE).await;
        if !hub.is_writing() {
            published = None;
            continue;
        }
        let known = match published.take() {
            Some(known) => known,
            None => match current_keys(&store).await {
                Ok(keys) => keys,
                Err(error) => {
                    tracing::warn!(%error, "cannot list the works bucket; retrying");
                    continue;
                }
            },
        };
        let desired = match hub.view() {
            Ok(view) => desired_entries(&view.folder.state),
            Err(_) => return,
        };
        published = Some(publish_changes(&store, known, desired).await);
    }
}

/// The bucket's keys, each with an empty value (unknown content: rewritten once).
async fn current_keys(store: &kv::Store) -> Result<BTreeMap<String, Vec<u8>>, PublishError> {
    use futures::TryStreamExt;
    let error = |err: &dyn std::fmt::Display| PublishError {
        bucket: String::new(),
        message: err.to_string(),
    };
    let keys = store.keys().await.map_err(|e| error(&e))?;
    let keys: Vec<String> = keys.try_collect().await.map_err(|e| error(&e))?;
    Ok(keys.into_iter().map(|key| (key, Vec::new())).collect())
}

/// Writes the differences between `known` and `desired`; returns what the bucket now holds as
/// far as this hub knows (a failed write stays unknown, so it is retried next round).
async fn publish_changes(
    store: &kv::Store,
    mut known: BTreeMap<String, Vec<u8>>,
    desired: BTreeMap<String, Vec<u8>>,
) -> BTreeMap<String, Vec<u8>> {
    let withdrawn: Vec<String> = known
        .keys()
        .filter(|key| !desired.contains_key(*key))
        .cloned()
        .collect();
    for key in withdrawn {
        match store.delete(&key).await {
            Ok(()) => {
                known.remove(&key);
            }
            Err(error) => tracing::warn!(%error, key, "cannot withdraw a work"),
        }
    }
    for (key, value) in desired {
        if known.get(&key) == Some(&value) {
            continue;
        }
        match store.put(&key, Bytes::from(value.clone())).await {
            Ok(_) => {
                known.insert(key, value);
            }
            Err(error) => {
                tracing::warn!(%error, key, "cannot publish a work");
                known.remove(&key);
            }
        }
    }
    known
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_work_keeps_only_its_condition_types() {
        let mut reported = json!({"metadata": {"name": "w", "resourceVersion": "7"},
            "status": {"conditions": [
                {"type": "Applied", "status": "True", "lastTransitionTime": "t"},
                {"type": "Available", "status": "False", "lastTransitionTime": "t"}]}});
        strip_volatile(&mut reported);
        assert_eq!(
            reported,
            json!({"metadata": {"name": "w"},
                "status": {"conditions": [{"type": "Applied"}, {"type": "Available"}]}})
        );
        let mut fresh = json!({"metadata": {"name": "w"}, "status": {}});
        strip_volatile(&mut fresh);
        assert_eq!(fresh, json!({"metadata": {"name": "w"}, "status": {}}));
    }
}

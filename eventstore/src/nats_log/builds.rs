//! The builds that have written to this log: the hub-only signal of a rolling upgrade.
//!
//! Publishers (agents, external systems) write the input stream, so a frame there that claims a
//! newer version proves nothing about who is upgrading. A hub announces its build instead in the
//! `<prefix>_BUILDS` key-value bucket, which only hub credentials may write (an agent's NATS
//! permissions allow its own input subjects and its Works consumer, nothing else; see
//! `docs/security.md`). Its one key, [`NEWEST_KEY`], holds the newest versions any hub of the log
//! runs (JSON `{"schema", "decisions", "checkpoint", "by"}`), raised by every hub at start and
//! never lowered. A writer that meets a frame newer than it reads declines the writer role only
//! when this record names a newer build; otherwise the frame is rejected like any other
//! undecodable input.

use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::kv;
use bytes::Bytes;
use flotilla_core::SCHEMA_VERSION;
use flotilla_core::wire::{CHECKPOINT_VERSION, DECISION_VERSION};
use serde::{Deserialize, Serialize};

use super::NatsOptions;
use super::placing::{create_key_value, key_value_config};
use crate::LogError;

/// The bucket's one key.
pub const NEWEST_KEY: &str = "newest";

/// The bucket's name.
#[must_use]
pub fn builds_bucket_name(options: &NatsOptions) -> String {
    format!("{}_BUILDS", options.stream_prefix)
}

/// The versions a build reads and writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildVersions {
    /// Event schema version (`flotilla_core::SCHEMA_VERSION`).
    pub schema: u16,
    /// Decision batch version (`flotilla_core::wire::DECISION_VERSION`).
    pub decisions: u16,
    /// Checkpoint version (`flotilla_core::wire::CHECKPOINT_VERSION`).
    pub checkpoint: u16,
    /// Which hub announced it (free text, for people).
    #[serde(default)]
    pub by: String,
}

impl BuildVersions {
    /// This build's versions, announced by `by`.
    #[must_use]
    pub fn this_build(by: &str) -> Self {
        Self {
            schema: SCHEMA_VERSION,
            decisions: DECISION_VERSION,
            checkpoint: CHECKPOINT_VERSION,
            by: by.to_owned(),
        }
    }

    /// Whether any version is newer than `other`'s.
    #[must_use]
    pub fn newer_than(&self, other: &Self) -> bool {
        self.schema > other.schema
            || self.decisions > other.decisions
            || self.checkpoint > other.checkpoint
    }

    /// The newest of each version in both.
    #[must_use]
    fn merged(&self, other: &Self) -> Self {
        Self {
            schema: self.schema.max(other.schema),
            decisions: self.decisions.max(other.decisions),
            checkpoint: self.checkpoint.max(other.checkpoint),
            by: other.by.clone(),
        }
    }
}

/// Binds to (or creates) the builds bucket.
///
/// # Errors
/// When the bucket can be neither bound nor created.
pub(crate) async fn bucket(
    context: &jetstream::Context,
    options: &NatsOptions,
) -> Result<kv::Store, LogError> {
    let bucket = builds_bucket_name(options);
    if let Ok(store) = context.get_key_value(&bucket).await {
        return Ok(store);
    }
    let description = "flotilla: the newest build of any hub of this log";
    let config = key_value_config(&bucket, description, Duration::ZERO, options);
    create_key_value(context, config, "key-value bucket").await
}

/// The newest build announced, if any hub announced one. A value that is not the JSON form is
/// reported and ignored: it cannot prove a newer build.
///
/// # Errors
/// When the server cannot be asked.
pub(crate) async fn newest(store: &kv::Store) -> Result<Option<(BuildVersions, u64)>, LogError> {
    let entry = store
        .entry(NEWEST_KEY)
        .await
        .map_err(|err| LogError::Nats(format!("read the announced builds: {err}")))?;
    let Some(entry) = entry.filter(|entry| entry.operation == kv::Operation::Put) else {
        return Ok(None);
    };
    match serde_json::from_slice::<BuildVersions>(&entry.value) {
        Ok(versions) => Ok(Some((versions, entry.revision))),
        Err(err) => {
            tracing::warn!(%err, "the announced builds record is not readable; ignoring it");
            Ok(None)
        }
    }
}

/// Raises the announced versions to this build's where they are lower (compare-and-set, tried
/// again a few times when another hub wrote between the read and the write).
///
/// # Errors
/// When the server cannot be asked.
pub(crate) async fn announce(store: &kv::Store, mine: &BuildVersions) -> Result<(), LogError> {
    const ATTEMPTS: usize = 5;
    for _ in 0..ATTEMPTS {
        let stored = newest(store).await?;
        let next = match &stored {
            Some((versions, _)) if !mine.newer_than(versions) => return Ok(()),
            Some((versions, _)) => versions.merged(mine),
            None => mine.clone(),
        };
        let body = serde_json::to_vec(&next)
            .map_err(|err| LogError::Storage(format!("encode the announced build: {err}")))?;
        let written = match stored {
            Some((_, revision)) => store
                .update(NEWEST_KEY, Bytes::from(body), revision)
                .await
                .map(|_| ())
                .map_err(|err| err.to_string()),
            None => store
                .create(NEWEST_KEY, Bytes::from(body))
                .await
                .map(|_| ())
                .map_err(|err| err.to_string()),
        };
        match written {
            Ok(()) => return Ok(()),
            Err(err) => {
                tracing::debug!(%err, "the announced builds changed meanwhile; reading again")
            }
        }
    }
    Err(LogError::Nats(
        "announce this build: the record kept changing".to_owned(),
    ))
}

/// Why this build must not decide a newer frame: the newer build announced, if any.
#[must_use]
pub fn decline_reason(announced: Option<&BuildVersions>) -> Option<String> {
    let mine = BuildVersions::this_build("");
    announced
        .filter(|announced| announced.newer_than(&mine))
        .map(|announced| {
            format!(
                "a hub of a newer build ({}) announced itself (events {}, decisions {}, \
                 checkpoints {})",
                announced.by, announced.schema, announced.decisions, announced.checkpoint
            )
        })
}

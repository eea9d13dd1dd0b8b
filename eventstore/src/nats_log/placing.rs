//! Creating streams and buckets while a NATS cluster is still placing them.
//!
//! A cluster that has just formed — or lost a node for a moment — answers a create of a
//! replicated stream with "no suitable peers for placement" (JetStream error code 10005) until
//! every peer is known again. That is a transient state a retry fixes, not a reason for a hub
//! to exit; any other error is returned at once.

use std::future::Future;
use std::time::Duration;

use async_nats::jetstream::{self, kv, stream::StorageType};

use super::NatsOptions;
use crate::LogError;

/// How long a create is retried while the cluster has no peers to place it on.
pub const PLACING_PATIENCE: Duration = Duration::from_secs(30);
/// First pause between two tries; it doubles up to a second.
const PAUSE_FIRST: Duration = Duration::from_millis(100);

/// Whether an error says the cluster could not place the stream yet.
fn is_placement(error: &str) -> bool {
    error.contains("no suitable peers") || error.contains("10005")
}

/// Runs `create` until it succeeds, fails for another reason, or [`PLACING_PATIENCE`] ran out.
///
/// # Errors
/// The last error of `create`.
pub async fn patiently<T, E, F, Fut>(what: &str, mut create: F) -> Result<T, E>
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let started = tokio::time::Instant::now();
    let mut pause = PAUSE_FIRST;
    loop {
        match create().await {
            Err(error)
                if is_placement(&error.to_string()) && started.elapsed() < PLACING_PATIENCE =>
            {
                tracing::warn!(%error, what, "the NATS cluster cannot place it yet; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            result => return result,
        }
    }
}

/// A key-value bucket as the log keeps its buckets: one value per key, entries older than
/// `max_age` dropped (zero: never), on file storage with the log's replicas. A caller sets
/// anything else over it.
pub(crate) fn key_value_config(
    bucket: &str,
    description: &str,
    max_age: Duration,
    options: &NatsOptions,
) -> kv::Config {
    kv::Config {
        bucket: bucket.to_owned(),
        description: description.to_owned(),
        history: 1,
        max_age,
        storage: StorageType::File,
        num_replicas: options.replicas,
        ..kv::Config::default()
    }
}

/// Creates the key-value bucket `config` describes, [`patiently`]; the error names it as
/// `create {what} {bucket}`.
pub(crate) async fn create_key_value(
    context: &jetstream::Context,
    config: kv::Config,
    what: &str,
) -> Result<kv::Store, LogError> {
    let bucket = config.bucket.clone();
    patiently(&bucket, || context.create_key_value(config.clone()))
        .await
        .map_err(|err| LogError::Nats(format!("create {what} {bucket}: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_placement_error_is_retried_and_others_are_not() {
        let mut tries = 0;
        let result: Result<u8, String> = patiently("stream", || {
            tries += 1;
            let answer = match tries {
                1 | 2 => Err("no suitable peers for placement, peer offline (10005)".to_owned()),
                _ => Ok(7),
            };
            async move { answer }
        })
        .await;
        assert_eq!((result, tries), (Ok(7), 3));
        let mut tries = 0;
        let result: Result<u8, String> = patiently("stream", || {
            tries += 1;
            async { Err("permissions violation".to_owned()) }
        })
        .await;
        assert_eq!(
            (result, tries),
            (Err("permissions violation".to_owned()), 1)
        );
    }
}

//! Following the cluster's Works: list, then watch from the list's `resourceVersion`; when the
//! stream ends or fails, list again and watch again, after a bounded backoff. Each list is sent
//! whole, so an agent that was away (or a deletion the hub's watch does not replay) catches up
//! from what is current, not by replaying every change.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::hub::{HubClient, HubError};

/// The first pause after a failure; doubled per failure up to [`BACKOFF_MAX`].
pub const BACKOFF_MIN: Duration = Duration::from_millis(250);
/// The longest pause between two attempts.
pub const BACKOFF_MAX: Duration = Duration::from_secs(10);
/// The longest watch line accepted (one Work object).
pub const LINE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// A change of the cluster's desired Works.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkChange {
    /// Every current Work (after a list): any other is withdrawn.
    All(Vec<Value>),
    /// One Work added or changed.
    Upsert(Value),
    /// One Work deleted, by name.
    Delete(String),
}

/// Lists and watches until the receiver is dropped; failures are printed after `label`.
pub async fn follow(hub: HubClient, label: String, changes: mpsc::Sender<WorkChange>) {
    let mut backoff = BACKOFF_MIN;
    while !changes.is_closed() {
        match list_and_watch(&hub, &changes).await {
            Ok(()) => backoff = BACKOFF_MIN,
            Err(error) => {
                println!("{label} following works failed: {error}; listing again in {backoff:?}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}

/// Why one list-and-watch round ended early.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The hub failed.
    #[error(transparent)]
    Hub(#[from] HubError),
    /// The stream broke.
    #[error("watch stream: {0}")]
    Stream(#[from] reqwest::Error),
    /// A line was not a watch event.
    #[error("watch stream: {0}")]
    Malformed(String),
}

async fn list_and_watch(
    hub: &HubClient,
    changes: &mpsc::Sender<WorkChange>,
) -> Result<(), WatchError> {
    let (works, version) = hub.list_works().await?;
    if changes.send(WorkChange::All(works)).await.is_err() {
        return Ok(());
    }
    let mut response = hub.watch_works(&version).await?;
    let mut pending: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            if let Some(change) = parse_line(&line)?
                && changes.send(change).await.is_err()
            {
                return Ok(());
            }
        }
        if pending.len() > LINE_BYTES_MAX {
            return Err(WatchError::Malformed(
                "a line longer than allowed".to_owned(),
            ));
        }
    }
    Ok(())
}

/// One watch line as a change; `None` for a bookmark or a blank line.
fn parse_line(line: &[u8]) -> Result<Option<WorkChange>, WatchError> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let event: Value =
        serde_json::from_slice(line).map_err(|e| WatchError::Malformed(e.to_string()))?;
    let object = event["object"].clone();
    match event["type"].as_str() {
        Some("ADDED" | "MODIFIED") => Ok(Some(WorkChange::Upsert(object))),
        Some("DELETED") => {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            Ok(Some(WorkChange::Delete(name.to_owned())))
        }
        Some("BOOKMARK") => Ok(None),
        Some("ERROR") => Err(WatchError::Malformed(object.to_string())),
        other => Err(WatchError::Malformed(format!(
            "unknown event type {other:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_lines_become_changes() -> Result<(), WatchError> {
        let added = br#"{"type":"ADDED","object":{"metadata":{"name":"w"}}}"#;
        assert!(matches!(parse_line(added)?, Some(WorkChange::Upsert(_))));
        let deleted = br#"{"type":"DELETED","object":{"metadata":{"name":"w"}}}"#;
        assert_eq!(parse_line(deleted)?, Some(WorkChange::Delete("w".into())));
        assert_eq!(parse_line(br#"{"type":"BOOKMARK","object":{}}"#)?, None);
        assert!(parse_line(b"not json").is_err());
        Ok(())
    }
}

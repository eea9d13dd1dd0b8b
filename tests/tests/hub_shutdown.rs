//! A stop asked before the hub's background tasks first ran still stops them: `flotilla serve`
//! spawns the clock and the analysis adapter at start, and each subscribes to the shutdown
//! signal when first polled. A stop that came earlier (SIGTERM right after start, on a loaded
//! machine) used to be no change to wait for, and serve waited for them forever (seen once in
//! CI: `tokens.rs`, `beyond_loopback_tokens_are_required`).

use std::sync::Arc;
use std::time::Duration;

use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_hub::runtime::{Hub, HubConfig, analysis, clock};

/// Far more than a task needs to notice a stop; far less than forever.
const STOP_BOUND: Duration = Duration::from_secs(10);

#[tokio::test]
async fn tasks_started_after_the_stop_still_stop() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = RedbLog::open(&dir.path().join("log.redb"), RedbOptions::default());
    let log = Arc::new(log.map_err(|e| e.to_string())?);
    let hub = Hub::open(log, HubConfig::default())
        .await
        .map_err(|e| e.to_string())?;
    hub.shutdown();

    let mut signal = hub.shutdown_signal();
    tokio::time::timeout(STOP_BOUND, signal.changed())
        .await
        .map_err(|_| "a signal taken after the stop never reported it")?
        .map_err(|e| e.to_string())?;
    assert!(*signal.borrow());

    let ticking = tokio::spawn(clock::run(hub.clone()));
    let measuring = tokio::spawn(analysis::run(hub.clone()));
    tokio::time::timeout(STOP_BOUND, ticking)
        .await
        .map_err(|_| "the clock did not stop")?
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    tokio::time::timeout(STOP_BOUND, measuring)
        .await
        .map_err(|_| "the analysis adapter did not stop")?
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(())
}

//! The running hub delivers the tick a partitioned pass asks for when it stops at maxNew: with
//! `maxNew: 10` and 35 clusters that never report, the writer and the clock give every cluster
//! its work in four passes, without any further input.

use std::sync::Arc;
use std::time::Duration;

use flotilla_core::query::placement::BindingState;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_hub::ingest::submit_json;
use flotilla_hub::runtime::{Hub, HubConfig, clock};
use serde_json::{Value, json};

const CLUSTERS: usize = 35;

fn fleet() -> Value {
    let mut events = Vec::new();
    for i in 0..CLUSTERS {
        let name = format!("cluster-{i:02}");
        events.push(json!({"type": "apply", "manifest": {
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
            "metadata": {"name": name}, "spec": {}}}));
        events.push(json!({"type": "heartbeat", "cluster": name}));
    }
    events.push(
        json!({"type": "apply", "manifest": {"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "test-ns"}}}),
    );
    events.push(json!({"type": "apply", "manifest": {
        "apiVersion": "placement.kubernetes-fleet.io/v1", "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp"},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                 "strategy": {"type": "Partitioned", "rolloutStrategy": {"maxNew": 10}}}}}));
    Value::Array(events)
}

fn bound<L: flotilla_eventstore::EventLog>(hub: &Hub<L>) -> Result<usize, String> {
    let view = hub.view().map_err(|e| e.to_string())?;
    Ok(view
        .folder
        .state
        .placements()
        .values()
        .flat_map(|p| p.bindings.values())
        .filter(|b| b.state == BindingState::Bound)
        .count())
}

#[tokio::test]
async fn the_clock_delivers_the_next_batch_of_a_pass_stopped_at_max_new() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = RedbLog::open(&dir.path().join("log.redb"), RedbOptions::default());
    let log = Arc::new(log.map_err(|e| e.to_string())?);
    let hub = Hub::open(Arc::clone(&log), HubConfig::default())
        .await
        .map_err(|e| e.to_string())?;
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });
    let ticks = tokio::spawn(clock::run(hub.clone()));
    let body = fleet().to_string();
    submit_json(&hub, body.as_bytes(), "test", true)
        .await
        .map_err(|e| e.to_string())?;
    let mut seen = 0;
    for _ in 0..200 {
        seen = bound(&hub)?;
        if seen == CLUSTERS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        seen, CLUSTERS,
        "every cluster got work without another input"
    );
    hub.shutdown();
    for task in [writer, ticks] {
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

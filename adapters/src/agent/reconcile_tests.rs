//! The reconciler against a stand-in hub (an axum router on a loopback port that counts posted
//! events) and a `sim` cluster without delays: the same Work twice is applied and reported once;
//! a changed Work removes the manifests it dropped and leaves the rest alone; a withdrawn Work
//! removes what it placed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};

use super::hub::HubClient;
use super::link::HubLink;
use super::reconcile::Reconciler;
use super::sim::{SIM_FILE, SimApplier, SimCluster, SimConfig};
use super::state::{StateFile, read_json};
use super::watch::WorkChange;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A hub that answers every event posted and counts them.
async fn stand_in_hub() -> Result<(String, Arc<AtomicUsize>), std::io::Error> {
    let posted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&posted);
    let app = axum::Router::new().route(
        "/v1/events",
        post(move |Json(events): Json<Vec<Value>>| {
            let counter = Arc::clone(&counter);
            async move {
                let seq = counter.fetch_add(events.len(), Ordering::SeqCst);
                let answers: Vec<Value> = events
                    .iter()
                    .map(|e| json!({"id": e["id"], "seq": seq + 1, "duplicate": false}))
                    .collect();
                Json(answers)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, posted))
}

fn config_map(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "app"}, "data": {"k": name}})
}

fn work(name: &str, index: u64, manifests: &[Value]) -> Value {
    json!({"metadata": {"name": name, "labels": {
            "kubernetes-fleet.io/parent-CRP": "crp",
            "kubernetes-fleet.io/parent-resource-snapshot-index": index.to_string()}},
        "spec": {"workload": {"manifests": manifests}}})
}

fn applies(state: &std::path::Path) -> Result<Vec<(String, u32)>, Box<dyn std::error::Error>> {
    let cluster: SimCluster = read_json(&state.join(SIM_FILE))?.unwrap_or_default();
    Ok(cluster
        .objects
        .values()
        .map(|o| (o.id.name.clone(), o.applies))
        .collect())
}

#[tokio::test]
async fn works_are_applied_once_changed_narrowly_and_withdrawn_whole() -> TestResult {
    let (url, posted) = stand_in_hub().await?;
    let state = tempfile::tempdir()?;
    let config = SimConfig {
        seed: 1,
        apply_delay_ms_max: 0,
        available_delay_ms_max: 0,
        failure_rate: 0.0,
        bad_image_marker: ":bad".into(),
        nodes: 1,
    };
    let applier = SimApplier::open("m1", state.path(), config)?;
    let file = StateFile::open(state.path(), "m1")?;
    let mut reconciler = Reconciler::new(
        "m1",
        HubLink::Http(HubClient::new(&url, "m1")?),
        applier,
        file,
    );

    let first = work("w", 0, &[config_map("a"), config_map("b")]);
    reconciler
        .on_change(WorkChange::All(vec![first.clone()]))
        .await;
    reconciler.on_change(WorkChange::Upsert(first)).await;
    assert_eq!(applies(state.path())?, [("a".into(), 1), ("b".into(), 1)]);
    assert_eq!(
        posted.load(Ordering::SeqCst),
        1,
        "one report for the same work twice"
    );

    reconciler
        .on_change(WorkChange::Upsert(work("w", 1, &[config_map("a")])))
        .await;
    assert_eq!(
        applies(state.path())?,
        [("a".into(), 1)],
        "b dropped, a untouched"
    );
    assert_eq!(
        posted.load(Ordering::SeqCst),
        2,
        "a report on the new index"
    );

    reconciler.on_change(WorkChange::Delete("w".into())).await;
    assert!(applies(state.path())?.is_empty());
    assert!(StateFile::open(state.path(), "m1")?.state.works.is_empty());
    Ok(())
}

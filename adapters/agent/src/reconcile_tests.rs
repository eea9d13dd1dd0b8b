//! The reconciler against a stand-in hub (an axum router on a loopback port that counts posted
//! events, and refuses them while it is "down") and a `sim` cluster without delays: the same
//! Work twice is applied and reported once; a changed Work removes the manifests it dropped and
//! leaves the rest alone; a withdrawn Work removes what it placed; a Work re-rendered at the
//! same resource index (other override snapshots) is reported again even when its report says
//! the same, and so is a Work the hub serves again without a report; and a report whose publish failed stays owed — across an agent restart — until the
//! hub takes it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::Json;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::post;
use serde_json::{Value, json};

use super::hub::HubClient;
use super::link::HubLink;
use super::reconcile::Reconciler;
use super::sim::{SIM_FILE, SimApplier, SimCluster, SimConfig};
use super::state::{StateFile, read_json};
use super::watch::WorkChange;
use super::work::ANNOTATION_CRO_HASH;

type TestError = Box<dyn std::error::Error>;
type TestResult = Result<(), TestError>;

/// A stand-in hub: the events it took, the posts it refused (503) while down, and whether it
/// is down.
struct StandIn {
    url: String,
    posted: Arc<AtomicUsize>,
    refused: Arc<AtomicUsize>,
    down: Arc<AtomicBool>,
}

/// A hub that answers every event posted and counts them, unless it is down.
async fn stand_in_hub() -> Result<StandIn, std::io::Error> {
    let posted = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let down = Arc::new(AtomicBool::new(false));
    let counters = (Arc::clone(&posted), Arc::clone(&refused), Arc::clone(&down));
    let app = axum::Router::new().route(
        "/v1/events",
        post(move |Json(events): Json<Vec<Value>>| {
            let (counter, refusals, refusing) = counters.clone();
            async move {
                if refusing.load(Ordering::SeqCst) {
                    refusals.fetch_add(1, Ordering::SeqCst);
                    return StatusCode::SERVICE_UNAVAILABLE.into_response();
                }
                let seq = counter.fetch_add(events.len(), Ordering::SeqCst);
                let answers: Vec<Value> = events
                    .iter()
                    .map(|e| json!({"id": e["id"], "seq": seq + 1, "duplicate": false}))
                    .collect();
                Json(answers).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(StandIn {
        url,
        posted,
        refused,
        down,
    })
}

/// A reconciler for `m1` on the state in `state`, with a `sim` cluster without delays.
fn open_reconciler(
    url: &str,
    state: &std::path::Path,
) -> Result<Reconciler<SimApplier>, TestError> {
    let config = SimConfig {
        seed: 1,
        apply_delay_ms_max: 0,
        available_delay_ms_max: 0,
        failure_rate: 0.0,
        bad_image_marker: ":bad".into(),
        nodes: 1,
        ..SimConfig::default()
    };
    let applier = SimApplier::open("m1", state, config)?;
    let file = StateFile::open(state, "m1")?;
    let hub = HubLink::Http(HubClient::new(url, "m1")?);
    Ok(Reconciler::new("m1", hub, applier, file))
}

fn config_map(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "app"}, "data": {"k": name}})
}

fn work(name: &str, index: u64, manifests: &[Value]) -> Value {
    json!({"metadata": {"name": name, "labels": {
            "kubernetes-fleet.io/parent-CRP": "crp",
            "kubernetes-fleet.io/parent-resource-snapshot-index": index.to_string()}},
        "spec": {"workload": {"manifests": manifests}}, "status": {}})
}

/// `work` as the hub serves it once it holds the agent's report on it.
fn reported(mut work: Value) -> Value {
    work["status"] = json!({"conditions": [{"type": "Applied", "status": "True"}]});
    work
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
    let StandIn { url, posted, .. } = stand_in_hub().await?;
    let state = tempfile::tempdir()?;
    let mut reconciler = open_reconciler(&url, state.path())?;

    let first = work("w", 0, &[config_map("a"), config_map("b")]);
    reconciler
        .on_change(WorkChange::All(vec![first.clone()]))
        .await;
    reconciler
        .on_change(WorkChange::Upsert(reported(first)))
        .await;
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

#[tokio::test]
async fn a_work_served_again_without_a_report_is_reported_again() -> TestResult {
    let hub = stand_in_hub().await?;
    let state = tempfile::tempdir()?;
    let mut reconciler = open_reconciler(&hub.url, state.path())?;
    let served = work("w", 0, &[config_map("a")]);
    reconciler
        .on_change(WorkChange::Upsert(served.clone()))
        .await;
    reconciler
        .on_change(WorkChange::Upsert(reported(served.clone())))
        .await;
    assert_eq!(hub.posted.load(Ordering::SeqCst), 1);

    // The cluster was evicted and picked again within one fold: the same content, a binding
    // without a report.
    reconciler.on_change(WorkChange::All(vec![served])).await;
    assert_eq!(hub.posted.load(Ordering::SeqCst), 2, "reported again");
    assert_eq!(applies(state.path())?, [("a".into(), 1)], "not re-applied");
    assert!(!reconciler.has_pending());
    Ok(())
}

/// `work` rendered with the cluster resource override snapshots whose list hashes to `hash`.
fn overridden(mut work: Value, hash: &str) -> Value {
    work["metadata"]["annotations"] = json!({ANNOTATION_CRO_HASH: hash});
    work
}

#[tokio::test]
async fn a_work_re_rendered_at_the_same_index_is_reported_again() -> TestResult {
    let hub = stand_in_hub().await?;
    let state = tempfile::tempdir()?;
    let mut reconciler = open_reconciler(&hub.url, state.path())?;
    reconciler
        .on_change(WorkChange::Upsert(work("w", 0, &[config_map("a")])))
        .await;
    assert_eq!(hub.posted.load(Ordering::SeqCst), 1);

    // An override changed the manifest; the index and what the report says stay the same.
    let mut labelled = config_map("a");
    labelled["metadata"]["labels"] = json!({"served-by": "m1"});
    let first = overridden(work("w", 0, &[labelled]), "h1");
    reconciler
        .on_change(WorkChange::Upsert(first.clone()))
        .await;
    assert_eq!(
        hub.posted.load(Ordering::SeqCst),
        2,
        "the new content's report"
    );
    reconciler
        .on_change(WorkChange::Upsert(reported(first.clone())))
        .await;
    assert_eq!(
        hub.posted.load(Ordering::SeqCst),
        2,
        "the same content once"
    );

    // Other override snapshots that render the same manifests are still new content.
    let mut second = first;
    second["metadata"]["annotations"][ANNOTATION_CRO_HASH] = json!("h2");
    reconciler.on_change(WorkChange::Upsert(second)).await;
    assert_eq!(hub.posted.load(Ordering::SeqCst), 3);
    assert!(!reconciler.has_pending());
    Ok(())
}

#[tokio::test]
async fn a_report_whose_publish_failed_stays_owed_across_a_restart() -> TestResult {
    let hub = stand_in_hub().await?;
    let state = tempfile::tempdir()?;
    let mut reconciler = open_reconciler(&hub.url, state.path())?;
    reconciler
        .on_change(WorkChange::Upsert(work("w", 0, &[config_map("a")])))
        .await;
    assert_eq!(hub.posted.load(Ordering::SeqCst), 1);

    hub.down.store(true, Ordering::SeqCst);
    let next = work("w", 1, &[config_map("b")]);
    reconciler.on_change(WorkChange::Upsert(next.clone())).await;
    assert!(reconciler.has_pending(), "index 1's report is owed");
    assert_eq!(applies(state.path())?, [("b".into(), 1)]);
    assert_eq!(hub.refused.load(Ordering::SeqCst), 1);
    // A recheck within the backoff does not post again.
    reconciler.recheck().await;
    assert_eq!(hub.refused.load(Ordering::SeqCst), 1);
    drop(reconciler);

    // Restarted on the same state, with the hub back: the report is sent, nothing re-applied.
    hub.down.store(false, Ordering::SeqCst);
    let mut restarted = open_reconciler(&hub.url, state.path())?;
    restarted.on_change(WorkChange::All(vec![next])).await;
    assert_eq!(hub.posted.load(Ordering::SeqCst), 2, "the owed report");
    assert_eq!(applies(state.path())?, [("b".into(), 1)]);
    assert!(!restarted.has_pending());
    let file = StateFile::open(state.path(), "m1")?;
    let stored = file.state.works.get("w").ok_or("no work w")?;
    assert_eq!(stored.acknowledged().map(|r| r.resource_index), Some(1));
    Ok(())
}

//! Logs written by release 19da42c stay readable: a hub opened on that release's redb data
//! directory and NATS JetStream store (`tests/fixtures/compat-19da42c`, made by
//! `scripts/make-compat-fixtures`) serves the objects that release served, re-verifies the
//! decisions it recorded, and goes on folding new events.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use flotilla_adapters::store::AnyLog;
use flotilla_core::{Decision, Envelope, Heartbeat, Input};
use flotilla_eventstore::EventLog;
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_hub::runtime::{Hub, HubConfig};
use flotilla_tests::support::copy_dir;
use serde_json::Value;
use uuid::Uuid;

type TestResult = Result<(), String>;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/compat-19da42c")
}

/// What 19da42c served, kind by kind (`GET /v1/objects/{kind}`).
fn expected(file: &str) -> Result<serde_json::Map<String, Value>, String> {
    let text = std::fs::read_to_string(fixtures().join(file)).map_err(|e| e.to_string())?;
    let mut objects: serde_json::Map<String, Value> =
        serde_json::from_str(&text).map_err(|e| e.to_string())?;
    objects.remove("_seq");
    for value in objects.values_mut() {
        intended_changes(value);
    }
    Ok(objects)
}

/// What this build serves differently from 19da42c on purpose, applied to 19da42c's objects:
/// approval requests are labelled `kubernetes-fleet.io/targetupdaterun`, as the seed and
/// KubeFleet spell it (19da42c wrote `targetUpdateRun`), and their uid is UUID-shaped (derived
/// from the name the hub gives them, which 19da42c served as the uid); Approval tasks carry no
/// `waitTime` (KubeFleet's CRD forbids one; 19da42c served `0s`).
fn intended_changes(objects: &mut Value) {
    drop_approval_wait_times(objects);
    for object in objects.as_array_mut().into_iter().flatten() {
        if object["kind"] == "ClusterApprovalRequest" {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            let (kind, name) = (text(&object["kind"]), text(&object["metadata"]["name"]));
            let uid = uuid_of(&format!(
                "{}/{kind}/{name}",
                text(&object["metadata"]["uid"])
            ));
            object["metadata"]["uid"] = Value::from(uid);
        }
        let labels = object
            .get_mut("metadata")
            .and_then(|m| m.get_mut("labels"))
            .and_then(Value::as_object_mut);
        if let Some(labels) = labels
            && let Some(run) = labels.remove("kubernetes-fleet.io/targetUpdateRun")
        {
            labels.insert("kubernetes-fleet.io/targetupdaterun".into(), run);
        }
    }
}

/// Removes `waitTime` from every Approval task in `value`.
fn drop_approval_wait_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("type").is_some_and(|t| t == "Approval") {
                map.remove("waitTime");
            }
            map.values_mut().for_each(drop_approval_wait_times);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_approval_wait_times),
        _ => {}
    }
}

/// SHA-256 of `text`, its first 16 bytes as a version-8 UUID (how the hub derives uids).
fn uuid_of(text: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(text.as_bytes());
    let mut bytes = [0_u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::new_v8(bytes).hyphenated().to_string()
}

/// Serves the hub's API on a loopback port without its writer or clock, so the objects are
/// exactly those restored from the log.
async fn serve_api<L: EventLog>(hub: &Hub<L>) -> Result<String, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let router = flotilla_hub::http::router(hub.clone());
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            eprintln!("API stopped: {error}");
        }
    });
    Ok(format!("http://{address}"))
}

async fn assert_same_objects(url: &str, file: &str) -> TestResult {
    let client = flotilla_tests::support::http_client();
    for (kind, want) in expected(file)? {
        let got: Value = client
            .get(format!("{url}/v1/objects/{kind}"))
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        assert_eq!(got, want, "{kind} differs from what 19da42c served");
    }
    Ok(())
}

/// Folds new events after the old ones: a heartbeat and the approval the staged run waits for.
async fn continue_folding<L: EventLog>(hub: &Hub<L>) -> TestResult {
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });
    let events = vec![
        Envelope::new(
            Uuid::now_v7(),
            Utc::now(),
            "test",
            Input::Heartbeat(Heartbeat {
                cluster: "member-1".into(),
                ..Heartbeat::default()
            }),
        ),
        Envelope::new(
            Uuid::now_v7(),
            Utc::now(),
            "test",
            Input::Approve {
                name: "staged-run-after-staging".into(),
                namespace: None,
                reason: None,
                message: None,
            },
        ),
    ];
    let appended = hub.submit(events).await.map_err(|e| e.to_string())?;
    let last = appended.last().map_or(0, |a| a.seq);
    assert!(
        hub.wait_folded(last, Duration::from_secs(20)).await,
        "the writer did not fold the new events"
    );
    let approved = hub
        .view()
        .map_err(|e| e.to_string())?
        .decisions_for(last)
        .unwrap_or_default();
    assert!(
        approved
            .iter()
            .any(|d| matches!(d, Decision::ApprovalGranted { .. })),
        "{approved:?}"
    );
    hub.shutdown();
    writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redb_log_of_19da42c_opens_serves_verifies_and_continues() -> TestResult {
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    copy_dir(&fixtures().join("redb"), data.path())?;
    let log = AnyLog::open_embedded(data.path()).map_err(|e| e.to_string())?;
    let hub = Hub::open(Arc::new(log), HubConfig::default())
        .await
        .map_err(|e| e.to_string())?;
    let url = serve_api(&hub).await?;
    assert_same_objects(&url, "redb-objects.json").await?;
    flotilla_replay::verify(hub.log().as_ref())
        .await
        .map_err(|e| e.to_string())?;
    continue_folding(&hub).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_store_of_19da42c_opens_serves_verifies_and_continues() -> TestResult {
    let mut nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    nats.kill().map_err(|e| e.to_string())?;
    let store = nats.store_dir();
    if store.exists() {
        std::fs::remove_dir_all(&store).map_err(|e| e.to_string())?;
    }
    copy_dir(&fixtures().join("nats/jetstream"), &store)?;
    nats.restart().map_err(|e| e.to_string())?;
    let log = AnyLog::connect_nats(&nats.url(), None)
        .await
        .map_err(|e| e.to_string())?;
    let hub = Hub::open(Arc::new(log), HubConfig::default())
        .await
        .map_err(|e| e.to_string())?;
    let url = serve_api(&hub).await?;
    assert_same_objects(&url, "nats-objects.json").await?;
    flotilla_replay::verify(hub.log().as_ref())
        .await
        .map_err(|e| e.to_string())?;
    continue_folding(&hub).await
}

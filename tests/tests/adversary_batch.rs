//! A request is appended whole or not at all (`docs/security.md`), on the embedded store and on
//! NATS alike, against real `flotilla serve` processes (and a real `nats-server`):
//! - four applies of which the third is 1.2 MB encoded answer 413 and append nothing (the log's
//!   sequence does not move, `flotilla events` lists none of them); the fixed request appends
//!   each once, and its retry appends nothing more;
//! - the same ConfigMap through the Kubernetes API answers a 413 `Status` with reason
//!   `RequestEntityTooLarge`, as does a body over the API's limit on both APIs;
//! - an event with a top-level field its form does not define is refused over HTTP (400, the
//!   field named) and, published onto the input stream with nats-py, recorded as rejected and
//!   announced with that reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::agents::wait_for;
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HubProcess, http_client, stderr, stdout};
use serde_json::{Value, json};

/// Over the log's 1 MiB (less header room) per event: the issue's 1.2 MB ConfigMap.
const OVERSIZED_BYTES: usize = 1_200_000;
/// Over the API's 2 MiB body limit.
const OVER_BODY_LIMIT_BYTES: usize = 3 * 1024 * 1024;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn config_map(name: &str, data_bytes: usize) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"blob": "x".repeat(data_bytes)},
    })
}

/// Four applies with ids of their own (a retrying publisher reuses them); the third carries
/// `third_bytes` of data.
fn four_applies(third_bytes: usize) -> Value {
    let sizes = [16, 16, third_bytes, 16];
    Value::Array(
        sizes
            .iter()
            .enumerate()
            .map(|(index, size)| {
                json!({
                    "id": id(index),
                    "type": "apply",
                    "manifest": config_map(&format!("batch-{index}"), *size),
                })
            })
            .collect(),
    )
}

fn id(index: usize) -> String {
    format!("0190b3d2-0000-7000-8000-00000000000{index}")
}

/// POSTs `body` to `path` and returns the status and the answer as JSON (`null` if it is not).
fn post(
    hub: &HubProcess,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<(u16, Value), String> {
    let url = format!("{}{path}", hub.url);
    let content_type = content_type.to_owned();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let response = http_client()
            .post(url)
            .header("content-type", content_type)
            .body(body)
            .timeout(std::time::Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| e.to_string())?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    })
}

fn post_json(hub: &HubProcess, path: &str, body: &Value) -> Result<(u16, Value), String> {
    post(hub, path, "application/json", body.to_string().into_bytes())
}

fn log_seq(hub: &HubProcess) -> Result<u64, String> {
    hub.status()?["logSeq"]
        .as_u64()
        .ok_or_else(|| "no logSeq in /v1/status".to_owned())
}

/// The listing of `flotilla events`, as text.
fn events_listing(hub: &HubProcess) -> Result<String, String> {
    let listed = hub.cli(&["events", "-o", "json"])?;
    if !listed.status.success() {
        return Err(stderr(&listed));
    }
    Ok(stdout(&listed))
}

/// The oversized request appends nothing; the fixed one appends each event once, its retry
/// nothing more.
fn all_or_nothing(hub: &HubProcess) -> Result<(), String> {
    let before = log_seq(hub)?;
    let (status, answer) = post_json(hub, "/v1/events?wait=true", &four_applies(OVERSIZED_BYTES))?;
    assert_eq!(status, 413, "{answer}");
    let message = answer["error"].as_str().unwrap_or_default();
    assert!(message.contains("event 2 "), "names the event: {answer}");
    assert!(message.contains("nothing was appended"), "{answer}");
    assert_eq!(
        log_seq(hub)?,
        before,
        "a refused request appended something"
    );
    let listed = events_listing(hub)?;
    for index in 0..4 {
        assert!(!listed.contains(&id(index)), "event {index} is in the log");
    }

    let fixed = four_applies(1024);
    let (status, first) = post_json(hub, "/v1/events?wait=true", &fixed)?;
    assert_eq!(status, 200, "{first}");
    let seqs: Vec<u64> = (0..4).filter_map(|i| first[i]["seq"].as_u64()).collect();
    assert_eq!(
        seqs,
        (before + 1..=before + 4).collect::<Vec<_>>(),
        "{first}"
    );
    assert!((0..4).all(|i| first[i]["duplicate"] == false), "{first}");
    let (status, again) = post_json(hub, "/v1/events?wait=true", &fixed)?;
    assert_eq!(status, 200, "{again}");
    assert!((0..4).all(|i| again[i]["duplicate"] == true), "{again}");
    assert_eq!(log_seq(hub)?, before + 4, "the retry appended again");
    let listed = events_listing(hub)?;
    for index in 0..4 {
        assert_eq!(listed.matches(&id(index)).count(), 1, "event {index} once");
    }
    Ok(())
}

/// The same ConfigMap through the Kubernetes API: kubectl's error and the `Status` itself.
fn oversized_object_through_the_kubernetes_api(hub: &HubProcess, dir: &Path) -> Result<(), String> {
    let before = log_seq(hub)?;
    let kubectl = Kubectl::for_hub(hub, dir)?;
    let file = dir.join("big-configmap.json");
    let object = config_map("big", OVERSIZED_BYTES);
    std::fs::write(&file, object.to_string()).map_err(|e| e.to_string())?;
    let refused = kubectl.fails(&["create", "-f", &file.display().to_string()])?;
    assert!(refused.contains("(RequestEntityTooLarge)"), "{refused}");
    let path = "/api/v1/namespaces/default/configmaps";
    let (status, answer) = post_json(hub, path, &object)?;
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["kind"], "Status", "{answer}");
    assert_eq!(answer["reason"], "RequestEntityTooLarge", "{answer}");
    assert_eq!(answer["code"], 413, "{answer}");
    assert_eq!(log_seq(hub)?, before, "a refused object was appended");
    Ok(())
}

/// A body over the API's limit: 413 as JSON on `/v1/events`, as a `Status` on the
/// Kubernetes API.
fn body_over_the_limit(hub: &HubProcess) -> Result<(), String> {
    let big = config_map("huge", OVER_BODY_LIMIT_BYTES);
    let (status, answer) = post_json(
        hub,
        "/v1/events",
        &json!({"type": "apply", "manifest": big}),
    )?;
    assert_eq!(status, 413, "{answer}");
    assert!(answer["error"].is_string(), "{answer}");
    let (status, answer) = post_json(hub, "/api/v1/namespaces/default/configmaps", &big)?;
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["reason"], "RequestEntityTooLarge", "{answer}");
    Ok(())
}

/// A heartbeat with a misspelt top-level field is refused over HTTP, naming it.
fn unknown_field_over_http(hub: &HubProcess) -> Result<(), String> {
    let before = log_seq(hub)?;
    let event = json!([
        {"type": "heartbeat", "cluster": "member-1"},
        {"type": "heartbeat", "cluster": "member-1", "propertees": {"a": "1"}},
    ]);
    let (status, answer) = post_json(hub, "/v1/events", &event)?;
    assert_eq!(status, 400, "{answer}");
    let message = answer["error"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("event 1:") && message.contains("`propertees`"),
        "{answer}"
    );
    assert_eq!(
        log_seq(hub)?,
        before,
        "a refused request appended something"
    );
    Ok(())
}

#[test]
fn an_oversized_event_appends_nothing_on_redb() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    all_or_nothing(&hub)?;
    oversized_object_through_the_kubernetes_api(&hub, dir.path())?;
    body_over_the_limit(&hub)?;
    unknown_field_over_http(&hub)?;
    hub.stop()
}

#[test]
fn an_oversized_event_appends_nothing_on_nats() -> Result<(), String> {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let url = nats.url();
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &["--nats", &url])?;
    wait_for("the hub to write", || {
        Ok((hub.status()?["following"] == false).then_some(()))
    })?;
    all_or_nothing(&hub)?;
    oversized_object_through_the_kubernetes_api(&hub, dir.path())?;
    unknown_field_over_http(&hub)?;
    hub.stop()
}

#[test]
fn an_unknown_top_level_field_on_the_input_stream_is_rejected_and_announced() -> Result<(), String>
{
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let url = nats.url();
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &["--nats", &url])?;
    wait_for("the hub to write", || {
        Ok((hub.status()?["following"] == false).then_some(()))
    })?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adversary_publish.py");
    let payload = r#"{"type":"heartbeat","cluster":"member-1","propertees":{"a":"1"}}"#;
    let output = Command::new("python3")
        .arg(&script)
        .args([&url, "flotilla.in.heartbeat.member-1", payload, "15"])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    assert!(output.status.success(), "{}", stderr(&output));
    let printed: Value = serde_json::from_str(stdout(&output).trim())
        .map_err(|e| format!("{e}: {}", stdout(&output)))?;
    let rejected = &printed["rejected"];
    assert_eq!(rejected["seq"], printed["published"], "{printed}");
    assert_eq!(rejected["code"], "Undecodable", "{printed}");
    let reason = rejected["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("unknown field `propertees`"), "{printed}");
    let listed = events_listing(&hub)?;
    assert!(
        listed.contains("propertees"),
        "the rejection is listed: {listed}"
    );
    hub.stop()
}

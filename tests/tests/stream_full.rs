//! A hub on NATS whose input stream is at its limits degrades and never breaks: with
//! `max_bytes` set on the stream, writes through the flotilla API and the Kubernetes API answer
//! 507 with a `Status` naming the stream, reads answer 200 and `/metrics` shows the condition;
//! once the limit is raised the same hub process takes writes again, and every acknowledged
//! event is in the log exactly once.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use async_nats::jetstream;
use flotilla_eventstore::nats_log::NatsOptions;
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::refusal::{self, send};
use flotilla_tests::scrape::scrape;
use flotilla_tests::support::{HarnessResult, HubProcess};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Room the input stream is given beyond what it holds.
const ROOM_BYTES: u64 = 4096;
/// Most heartbeats posted before one is refused (the room holds a few dozen).
const POSTS_TO_FILL_MAX: usize = 1_000;
/// How long the hub may take to write again once the limit is raised.
const RESUME_WITHIN: Duration = Duration::from_secs(20);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn input_stream() -> String {
    format!("{}_INPUT", NatsOptions::default().stream_prefix)
}

/// Sets the input stream's `max_bytes`: what it holds and [`ROOM_BYTES`] more, or no limit.
async fn limit_input(nats_url: &str, limited: bool) -> HarnessResult<()> {
    let client = async_nats::connect(nats_url)
        .await
        .map_err(|e| e.to_string())?;
    let context = jetstream::new(client);
    let mut stream = context
        .get_stream(input_stream())
        .await
        .map_err(|e| e.to_string())?;
    let info = stream.info().await.map_err(|e| e.to_string())?.clone();
    let mut config = info.config;
    config.max_bytes = if limited {
        i64::try_from(info.state.bytes + ROOM_BYTES).map_err(|e| e.to_string())?
    } else {
        -1
    };
    context
        .update_stream(&config)
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Posts one heartbeat to `/v1/events`; records its id when the hub acknowledged it.
async fn beat(
    client: &reqwest::Client,
    url: &str,
    acked: &mut BTreeMap<String, u64>,
) -> HarnessResult<(StatusCode, Value)> {
    let id = uuid::Uuid::now_v7().to_string();
    let event = json!([{"id": id, "type": "heartbeat", "cluster": "member-1"}]);
    let post = format!("{url}/v1/events");
    let (status, body) = send(
        client,
        Method::POST,
        post,
        Some(("application/json", &event)),
    )
    .await?;
    if status.is_success() {
        acked.insert(id, body[0]["seq"].as_u64().ok_or("no seq")?);
    }
    Ok((status, body))
}

/// Every input id of the hub's log (through `/v1/log`), with the sequences it is at.
async fn logged(client: &reqwest::Client, url: &str) -> HarnessResult<BTreeMap<String, Vec<u64>>> {
    let mut logged: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut from = 1;
    for _ in 0..1_000 {
        let page = format!("{url}/v1/log?from={from}");
        let (_, page) = send(client, Method::GET, page, None).await?;
        let events = page["events"].as_array().cloned().unwrap_or_default();
        let Some(last) = events.last().and_then(|e| e["seq"].as_u64()) else {
            return Ok(logged);
        };
        for event in &events {
            let id = event["event"]["id"].as_str().unwrap_or_default().to_owned();
            logged
                .entry(id)
                .or_default()
                .push(event["seq"].as_u64().unwrap_or(0));
        }
        from = last + 1;
    }
    Err("more than a million inputs".into())
}

/// While the stream is full: writes answer 507 naming it, reads 200, `/metrics` shows it.
async fn while_full(hub: &HubProcess, client: &reqwest::Client) -> HarnessResult<()> {
    let url = &hub.url;
    let map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "while-full", "namespace": "default"}, "data": {"d": "x"}});
    let path = format!("{url}/api/v1/namespaces/default/configmaps");
    let (status, body) = send(client, Method::POST, path, Some(("application/json", &map))).await?;
    let message = refusal::insufficient_storage(status, &body, "kube create");
    assert!(message.contains(&input_stream()), "{message}");
    assert!(message.contains("Raise the stream's limits"), "{message}");
    for path in [
        "/healthz",
        "/v1/status",
        "/v1/objects/MemberCluster",
        "/api/v1/namespaces",
    ] {
        let (status, body) = send(client, Method::GET, format!("{url}{path}"), None).await?;
        assert_eq!(status, StatusCode::OK, "GET {path}: {body}");
    }
    let metrics = scrape(hub)?;
    assert_eq!(
        metrics.get("flotilla_storage_full"),
        Some(&1.0),
        "{metrics:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_stream_answers_507_keeps_reads_and_resumes_without_a_restart() -> HarnessResult<()>
{
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (nats_url, monitoring) = (nats.url(), nats.monitoring_url());
    let extra = ["--nats", &nats_url, "--nats-monitoring", &monitoring];
    let hub = HubProcess::start(&binary(), data.path(), &extra)?;
    let member = json!([{"type": "apply", "manifest": {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
        "metadata": {"name": "member-1"}, "spec": {"heartbeatPeriodSeconds": 60}}}]);
    hub.post_events(&member)?;
    let client = flotilla_tests::support::http_client();
    let mut acked = BTreeMap::new();

    limit_input(&nats_url, true).await?;
    let mut refused = None;
    for _ in 0..POSTS_TO_FILL_MAX {
        let (status, body) = beat(&client, &hub.url, &mut acked).await?;
        if !status.is_success() {
            refused = Some((status, body));
            break;
        }
    }
    let (status, body) = refused.ok_or("the stream never filled up")?;
    let message = refusal::insufficient_storage(status, &body, "a heartbeat");
    assert!(message.contains(&input_stream()), "{message}");
    while_full(&hub, &client).await?;

    limit_input(&nats_url, false).await?;
    let began = Instant::now();
    while !beat(&client, &hub.url, &mut acked).await?.0.is_success() {
        assert!(began.elapsed() < RESUME_WITHIN, "writes did not resume");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let metrics = scrape(&hub)?;
    assert_eq!(
        metrics.get("flotilla_storage_full"),
        Some(&0.0),
        "{metrics:?}"
    );
    let logged = logged(&client, &hub.url).await?;
    for (id, seq) in &acked {
        assert_eq!(logged.get(id), Some(&vec![*seq]), "acknowledged event {id}");
    }
    hub.stop()
}

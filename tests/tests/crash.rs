//! Crash safety of the embedded hub: `kill -9` of `flotilla serve` while many publishers are
//! appending loses no acknowledged event, and the restarted hub (newest checkpoint + tail)
//! reaches the same state hash as a clean fold of the log from zero.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_eventstore::LogReader;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_tests::support::HubProcess;
use serde_json::{Value, json};

const PUBLISHERS: usize = 8;
const MEMBERS: usize = 20;
const PUBLISH_FOR: Duration = Duration::from_millis(1500);
const EVENTS_PER_PUBLISHER_MAX: usize = 5_000;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn member(i: usize) -> Value {
    json!({"type": "apply", "manifest": {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
        "metadata": {"name": format!("member-{i}")}, "spec": {"heartbeatPeriodSeconds": 60}}})
}

/// Publishes heartbeats one by one until the hub dies or time runs out; returns acked ids.
async fn publish(url: String, publisher: usize, acked: Arc<Mutex<BTreeSet<String>>>) {
    let client = flotilla_tests::support::http_client();
    let started = Instant::now();
    for n in 0..EVENTS_PER_PUBLISHER_MAX {
        if started.elapsed() > PUBLISH_FOR * 3 {
            return;
        }
        let id = uuid::Uuid::now_v7().to_string();
        let event = json!({"id": id, "source": format!("publisher-{publisher}"), "type": "heartbeat",
            "cluster": format!("member-{}", (publisher + n) % MEMBERS)});
        let Ok(response) = client
            .post(format!("{url}/v1/events"))
            .json(&event)
            .send()
            .await
        else {
            return;
        };
        if !response.status().is_success() {
            return;
        }
        let Ok(body) = response.json::<Value>().await else {
            return;
        };
        if body[0]["seq"].as_u64().is_some()
            && let Ok(mut acked) = acked.lock()
        {
            acked.insert(id);
        }
    }
}

async fn logged_ids(url: &str) -> Result<BTreeSet<String>, String> {
    let client = flotilla_tests::support::http_client();
    let mut ids = BTreeSet::new();
    let mut from = 1;
    loop {
        let page: Value = client
            .get(format!("{url}/v1/log?from={from}"))
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        let events = page["events"].as_array().cloned().unwrap_or_default();
        let Some(last) = events.last().and_then(|e| e["seq"].as_u64()) else {
            return Ok(ids);
        };
        ids.extend(
            events
                .iter()
                .filter_map(|e| e["event"]["id"].as_str().map(str::to_owned)),
        );
        from = last + 1;
    }
}

async fn wait_caught_up(hub: &HubProcess) -> Result<Value, String> {
    for _ in 0..200 {
        let status = hub.status()?;
        if status["seq"] == status["logSeq"] {
            return Ok(status);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("the restarted hub did not catch up".into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_loses_no_acknowledged_event_and_restart_matches_a_clean_fold() -> Result<(), String>
{
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), data.path(), &["--checkpoint-every", "200"])?;
    let url = hub.url.clone();
    let fleet: Vec<Value> = (0..MEMBERS).map(member).collect();
    flotilla_tests::support::http_client()
        .post(format!("{url}/v1/events?wait=true"))
        .json(&fleet)
        .send()
        .await
        .map_err(|e| e.to_string())?;

    let acked = Arc::new(Mutex::new(BTreeSet::new()));
    let tasks: Vec<_> = (0..PUBLISHERS)
        .map(|p| tokio::spawn(publish(url.clone(), p, Arc::clone(&acked))))
        .collect();
    tokio::time::sleep(PUBLISH_FOR).await;
    hub.kill_hard();
    for task in tasks {
        task.await.map_err(|e| e.to_string())?;
    }
    let acked = acked.lock().map_err(|e| e.to_string())?.clone();
    assert!(
        acked.len() > 100,
        "the load was too small to mean anything: {}",
        acked.len()
    );

    let restarted = HubProcess::start(&binary(), data.path(), &[])?;
    let status = wait_caught_up(&restarted).await?;
    let logged = logged_ids(&restarted.url).await?;
    let lost: Vec<_> = acked.difference(&logged).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged events lost, e.g. {:?}",
        lost.len(),
        lost.first()
    );
    let restarted_hash = status["stateHash"].as_str().unwrap_or_default().to_owned();
    restarted.stop()?;

    let log = RedbLog::open(&data.path().join("flotilla.redb"), RedbOptions::default())
        .map_err(|e| e.to_string())?;
    let last = log.last_seq().await.map_err(|e| e.to_string())?;
    assert_eq!(Some(last), status["logSeq"].as_u64());
    let (_, clean) = flotilla_replay::hash_from_zero(&log)
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(clean.0, restarted_hash, "restart and clean fold disagree");
    let checked = flotilla_replay::verify(&log)
        .await
        .map_err(|e| e.to_string())?
        .checked;
    assert_eq!(checked, last, "not every recorded decision was checked");
    Ok(())
}

/// `flotilla replay --data DIR ARGS` on the directory of a hub that was killed.
fn replay_on(dir: &std::path::Path, args: &[&str]) -> Result<String, String> {
    let output = std::process::Command::new(binary())
        .arg("replay")
        .arg("--data")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(text)
    } else {
        let error = String::from_utf8_lossy(&output.stderr);
        Err(format!("replay {args:?}: {text}{error}"))
    }
}

#[test]
fn replay_reads_the_directory_of_a_hub_killed_with_kill_9() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    let hub = HubProcess::start(&binary(), &data, &[])?;
    let members: Vec<Value> = (0..20)
        .map(|i| {
            json!({"type": "apply", "manifest": {
                "apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
                "metadata": {"name": format!("m{i}")}, "spec": {}}})
        })
        .collect();
    hub.post_events(&Value::Array(members))?;
    let seq = hub.status()?["seq"].as_u64().ok_or("no seq")?;
    hub.kill_hard();
    // The file is left as the crash left it: a read-only open alone cannot repair it.
    let before = std::fs::read(data.join("flotilla.redb")).map_err(|e| e.to_string())?;
    let verified = replay_on(&data, &["verify"])?;
    assert!(verified.contains("verified"), "{verified}");
    let at = seq.to_string();
    let state = replay_on(&data, &["state", "--at", &at, "membercluster", "m19"])?;
    assert!(state.contains("m19"), "{state}");
    let after = std::fs::read(data.join("flotilla.redb")).map_err(|e| e.to_string())?;
    assert!(
        before == after,
        "replay left the crashed hub's file untouched"
    );
    // The hub restarts on it and repairs it itself.
    let restarted = HubProcess::start(&binary(), &data, &[])?;
    assert!(restarted.status()?["seq"].as_u64() >= Some(seq));
    restarted.stop()
}

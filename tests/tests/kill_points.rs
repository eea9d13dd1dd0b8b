//! `kill -9` of `flotilla serve` (embedded redb) at seeded random points during mixed ingest —
//! applies, heartbeats, availability reports and approvals of a staged run, from concurrent
//! publishers — loses no acknowledged event, and every restarted hub (newest checkpoint + tail)
//! reaches the state hash of a clean fold of its log from zero.
//!
//! `cargo test` runs [`KILL_POINTS_DEFAULT`] kill points; `KILL_POINTS=n` runs `n` (what
//! `scripts/kill-points N` does) and `SEED=s` picks the seed, printed at the start and in every
//! failure. The seed fixes each point's kill time and the publishers' event mix; the processes'
//! scheduling is the machine's, so a seed replays the same plan, not the same interleaving.
//! Every [`POINTS_PER_LOG`] kill points start from a fresh data directory, which bounds the
//! clean fold each point does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_eventstore::redb_log::reader::RedbReader;
use flotilla_tests::support::{HubProcess, http_client};
use serde_json::{Value, json};

type TestResult = Result<(), String>;

/// Kill points a plain `cargo test` runs.
const KILL_POINTS_DEFAULT: u64 = 3;
/// The seed a plain `cargo test` runs.
const SEED_DEFAULT: u64 = 16;
/// Kill points on one data directory before a fresh one.
const POINTS_PER_LOG: u64 = 10;
/// Concurrent publishers.
const PUBLISHERS: u64 = 4;
/// Member clusters of the fleet.
const MEMBERS: u64 = 6;
/// Latest kill, after the publishers start.
const KILL_AFTER_MAX: Duration = Duration::from_millis(400);
/// Most requests one publisher sends in a round (a publisher outliving its hub stops earlier).
const REQUESTS_PER_PUBLISHER_MAX: u64 = 2_000;
/// The hub checkpoints this often, so kills land around checkpoint writes too.
const CHECKPOINT_EVERY: &str = "40";
/// Polls while waiting for a restarted hub to fold its log.
const CATCH_UP_POLLS_MAX: usize = 400;

/// Acknowledged events of the current data directory: sequence → event id.
type Acked = Arc<Mutex<BTreeMap<u64, String>>>;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

/// splitmix64, so a seed means the same plan on every machine.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % bound.max(1)
    }
}

fn apply(manifest: Value) -> Value {
    json!({"type": "apply", "manifest": manifest})
}

/// The fleet, a placement with an external strategy, and a two-stage strategy with approvals.
fn setup() -> Vec<Value> {
    let mut events: Vec<Value> = (0..MEMBERS)
        .map(|i| {
            let stage = if i < 2 { "staging" } else { "canary" };
            apply(json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
                "kind": "MemberCluster", "metadata": {"name": format!("member-{i}"),
                "labels": {"environment": stage}}, "spec": {"heartbeatPeriodSeconds": 60}}))
        })
        .collect();
    events.push(apply(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "kill-points"}})));
    events.push(apply(
        json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "web"},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1",
            "name": "kill-points"}],
            "policy": {"placementType": "PickAll"}, "strategy": {"type": "External"}}}),
    ));
    let stage = |name: &str| {
        json!({"name": name, "labelSelector": {"matchLabels": {"environment": name}},
            "afterStageTasks": [{"type": "Approval"}]})
    };
    events.push(apply(
        json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy", "metadata": {"name": "two-stages"},
        "spec": {"stages": [stage("staging"), stage("canary")]}}),
    ));
    events
}

/// A staged update run for kill point `point`, whose approvals the publishers send.
fn run(point: u64) -> Value {
    apply(
        json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun", "metadata": {"name": format!("run-{point}")},
        "spec": {"placementName": "web", "resourceSnapshotIndex": "0",
            "stagedRolloutStrategyName": "two-stages", "state": "Run"}}),
    )
}

/// One event of the mix: mostly heartbeats and reports, some approvals and applies.
fn mixed_event(rng: &mut Rng, point: u64) -> Value {
    let member = format!("member-{}", rng.below(MEMBERS));
    match rng.below(10) {
        0..=3 => json!({"type": "heartbeat", "cluster": member}),
        4..=6 => json!({"type": "report", "cluster": member, "placement": "web",
            "applied": true, "available": rng.below(4) != 0}),
        7 | 8 => {
            let stage = if rng.below(2) == 0 {
                "staging"
            } else {
                "canary"
            };
            json!({"type": "approve", "name": format!("run-{point}-after-{stage}")})
        }
        _ => apply(json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster", "metadata": {"name": member,
            "labels": {"environment": "canary", "generation": rng.below(1_000).to_string()}},
            "spec": {"heartbeatPeriodSeconds": 60}})),
    }
}

/// POSTs `events` (each given an id); records the acknowledged ones. False once the hub is gone.
async fn post(client: &reqwest::Client, url: &str, mut events: Vec<Value>, acked: &Acked) -> bool {
    let mut ids = Vec::with_capacity(events.len());
    for (n, event) in events.iter_mut().enumerate() {
        let id = uuid::Uuid::now_v7().to_string();
        event["id"] = json!(id);
        event["source"] = json!(format!("kill-points-{n}"));
        ids.push(id);
    }
    let Ok(response) = client
        .post(format!("{url}/v1/events"))
        .json(&events)
        .send()
        .await
    else {
        return false;
    };
    if !response.status().is_success() {
        return false;
    }
    let Ok(body) = response.json::<Value>().await else {
        return false;
    };
    let Some(answers) = body.as_array() else {
        return false;
    };
    let Ok(mut acked) = acked.lock() else {
        return false;
    };
    for (id, answer) in ids.into_iter().zip(answers) {
        if let Some(seq) = answer["seq"].as_u64() {
            acked.insert(seq, id);
        }
    }
    true
}

/// One publisher: batches of 1–4 mixed events until the hub dies.
async fn publish(url: String, seed: u64, point: u64, acked: Acked) {
    let client = http_client();
    let mut rng = Rng(seed);
    let started = Instant::now();
    for _ in 0..REQUESTS_PER_PUBLISHER_MAX {
        if started.elapsed() > KILL_AFTER_MAX * 10 {
            return;
        }
        let events = (0..=rng.below(4))
            .map(|_| mixed_event(&mut rng, point))
            .collect();
        if !post(&client, &url, events, &acked).await {
            return;
        }
    }
}

/// Every input of the log from `from` on: sequence → event id.
async fn logged(url: &str, from: u64) -> Result<BTreeMap<u64, String>, String> {
    let client = http_client();
    let mut ids = BTreeMap::new();
    let mut next = from;
    // Bounded: every page moves `next` forward, and the log is finite.
    loop {
        let page: Value = client
            .get(format!("{url}/v1/log?from={next}"))
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
        for event in &events {
            if let (Some(seq), Some(id)) = (event["seq"].as_u64(), event["event"]["id"].as_str()) {
                ids.insert(seq, id.to_owned());
            }
        }
        next = last + 1;
    }
}

/// Waits until the hub has folded its whole log; returns the folded sequence and state hash.
async fn caught_up(hub: &HubProcess) -> Result<(u64, String), String> {
    for _ in 0..CATCH_UP_POLLS_MAX {
        let status = hub.status()?;
        if status["seq"] == status["logSeq"] {
            let seq = status["seq"].as_u64().ok_or("status without seq")?;
            let hash = status["stateHash"].as_str().ok_or("status without hash")?;
            return Ok((seq, hash.to_owned()));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Err("the restarted hub did not catch up".into())
}

/// The hash of a clean fold from zero to `seq` of the log the hub is writing.
async fn clean_hash(data: &Path, seq: u64) -> Result<String, String> {
    let reader = RedbReader::open(&data.join("flotilla.redb")).map_err(|e| e.to_string())?;
    let folder = flotilla_replay::fold_from_zero(&reader, seq)
        .await
        .map_err(|e| e.to_string())?;
    Ok(folder.state.hash().map_err(|e| e.to_string())?.0)
}

/// What one kill point did.
struct Outcome {
    acked: usize,
}

/// Runs kill point `point` against the running `hub` and returns the restarted hub.
async fn kill_point(
    hub: HubProcess,
    data: &Path,
    seed: u64,
    point: u64,
    acked: &Acked,
) -> Result<(HubProcess, Outcome), String> {
    let mut rng = Rng(seed ^ point.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let before = acked.lock().map_err(|e| e.to_string())?.len();
    post(&http_client(), &hub.url, vec![run(point)], acked).await;
    let tasks: Vec<_> = (0..PUBLISHERS)
        .map(|p| {
            tokio::spawn(publish(
                hub.url.clone(),
                rng.below(u64::MAX) ^ p,
                point,
                Arc::clone(acked),
            ))
        })
        .collect();
    let kill_after = rng.below(u64::try_from(KILL_AFTER_MAX.as_micros()).unwrap_or(1));
    tokio::time::sleep(Duration::from_micros(kill_after)).await;
    hub.kill_hard();
    for task in tasks {
        task.await.map_err(|e| e.to_string())?;
    }
    let restarted = HubProcess::start(&binary(), data, &["--checkpoint-every", CHECKPOINT_EVERY])?;
    let (seq, hash) = caught_up(&restarted).await?;
    let acked = acked.lock().map_err(|e| e.to_string())?.clone();
    let from = acked.keys().next().copied().unwrap_or(1);
    let logged = logged(&restarted.url, from).await?;
    let lost: Vec<_> = acked
        .iter()
        .filter(|(seq, id)| logged.get(seq) != Some(id))
        .collect();
    if !lost.is_empty() {
        return Err(format!(
            "{} acknowledged events lost, e.g. {:?}",
            lost.len(),
            lost[0]
        ));
    }
    let clean = clean_hash(data, seq).await?;
    if clean != hash {
        return Err(format!(
            "at input {seq} the restarted hub has {hash}, a clean fold {clean}"
        ));
    }
    Ok((
        restarted,
        Outcome {
            acked: acked.len() - before,
        },
    ))
}

/// Runs `count` kill points from `seed`, a fresh data directory every [`POINTS_PER_LOG`].
async fn kill_points(seed: u64, count: u64) -> Result<usize, String> {
    let mut acked_total = 0;
    let mut point = 0;
    while point < count {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let acked: Acked = Arc::default();
        let mut hub = HubProcess::start(
            &binary(),
            dir.path(),
            &["--checkpoint-every", CHECKPOINT_EVERY],
        )?;
        if !post(&http_client(), &hub.url, setup(), &acked).await {
            return Err("the hub refused the setup".into());
        }
        for _ in 0..POINTS_PER_LOG.min(count - point) {
            let (restarted, outcome) = kill_point(hub, dir.path(), seed, point, &acked)
                .await
                .map_err(|error| format!("SEED={seed} kill point {point}: {error}"))?;
            hub = restarted;
            acked_total += outcome.acked;
            point += 1;
        }
        hub.stop()?;
    }
    Ok(acked_total)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_at_random_points_loses_no_acknowledged_event_and_restarts_match_a_clean_fold()
-> TestResult {
    let seed = env_u64("SEED").unwrap_or(SEED_DEFAULT);
    let count = env_u64("KILL_POINTS").unwrap_or(KILL_POINTS_DEFAULT);
    println!("kill points: SEED={seed} KILL_POINTS={count}");
    let started = Instant::now();
    let acked = kill_points(seed, count).await?;
    println!(
        "kill points: {count} kill points, {acked} acknowledged events, none lost, every \
         restart matched a clean fold ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    assert!(
        u64::try_from(acked).unwrap_or(u64::MAX) >= count,
        "too little was acknowledged to mean anything: {acked}"
    );
    Ok(())
}

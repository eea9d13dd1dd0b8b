//! A writer under read load on R3 streams: a three-node `nats-server` cluster, a writer and a
//! standby (`flotilla serve --nats-replicas 3`, real processes), six publishers writing
//! heartbeats straight onto the input stream, and `flotilla replay --nats … verify` run over
//! and over beside them; at a third and at two thirds of the run the input stream's leader is
//! killed (`kill -9`) and restarted. Reads are direct gets that any replica answers, while the
//! end of the log is the leader's count (answered by a lagging replica while the stream
//! elects a leader); the writer must ride out their disagreement and never exit.
//!
//! `FLOTILLA_READ_LOAD_SECS` sets how long the load runs (30 s by default, so the suite stays
//! within its time; `scripts/adversary-read-load` runs it for 5 minutes).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use flotilla_eventstore::nats_log::server_urls;
use flotilla_eventstore::nats_test_cluster::NatsTestCluster;
use flotilla_tests::adversary::{folded_through, settled};
use flotilla_tests::agents::{ok, wait_for};
use flotilla_tests::support::HubProcess;

type TestResult = Result<(), String>;

const PUBLISHERS: usize = 6;
const INPUT_STREAM: &str = "FLOTILLA_INPUT";
/// Pause between two publishes of one publisher.
const PUBLISH_EVERY: Duration = Duration::from_millis(5);
/// Bound on one publish and its ack.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the hubs are asked whether they are still up.
const CHECK_EVERY: Duration = Duration::from_millis(500);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// Starts a hub, again (at most three times) while a fresh cluster cannot yet place the
/// log's R3 streams ("no suitable peers for placement" until every peer is known).
fn start_hub(data: &std::path::Path, args: &[&str]) -> Result<HubProcess, String> {
    let mut attempt = 1;
    loop {
        match HubProcess::start(&binary(), data, args) {
            Ok(hub) => return Ok(hub),
            Err(error) if attempt < 3 => {
                eprintln!("the hub did not start ({error}); trying again");
                attempt += 1;
                std::thread::sleep(Duration::from_secs(2));
            }
            Err(error) => return Err(error),
        }
    }
}

fn load_duration() -> Duration {
    let secs = std::env::var("FLOTILLA_READ_LOAD_SECS")
        .ok()
        .and_then(|secs| secs.parse().ok())
        .unwrap_or(30);
    Duration::from_secs(secs)
}

/// Publishes heartbeats of `member` until `stop`, counting acknowledged ones.
async fn publish(urls: String, member: String, stop: Arc<AtomicBool>, acked: Arc<AtomicU64>) {
    let Ok(client) = async_nats::ConnectOptions::new()
        .connect(server_urls(&urls))
        .await
    else {
        return;
    };
    let js = jetstream::new(client);
    let subject = format!("flotilla.in.heartbeat.{member}");
    let body = format!(r#"{{"type": "heartbeat", "cluster": "{member}"}}"#);
    // Bounded by `stop`, which the test sets after the load's duration.
    while !stop.load(Ordering::Relaxed) {
        let sent = tokio::time::timeout(PUBLISH_TIMEOUT, async {
            js.publish(subject.clone(), body.clone().into())
                .await
                .ok()?
                .await
                .ok()
        })
        .await;
        if matches!(sent, Ok(Some(_))) {
            acked.fetch_add(1, Ordering::Relaxed);
        }
        tokio::time::sleep(PUBLISH_EVERY).await;
    }
}

/// `flotilla replay --nats URLS verify`, started in the background.
fn verify(urls: &str) -> Result<Child, String> {
    Command::new(binary())
        .args(["replay", "--nats", urls, "verify"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())
}

fn up(hub: &HubProcess, name: &str) -> TestResult {
    let status = hub
        .status()
        .map_err(|e| format!("the {name} is gone: {e}"))?;
    if status["fenced"].is_null() {
        Ok(())
    } else {
        Err(format!("the {name} stopped writing: {status}"))
    }
}

#[test]
fn a_writer_under_read_load_on_r3_never_exits() -> TestResult {
    let mut cluster = NatsTestCluster::start().map_err(|e| e.to_string())?;
    let urls = cluster.urls();
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let args = [
        "--nats",
        urls.as_str(),
        "--nats-replicas",
        "3",
        // Longer than a stream's leader election (about 5 s): losing the lease is a designed
        // stop (a supervisor restarts the hub as a standby), not what this test is about.
        "--lease-seconds",
        "15",
    ];
    let writer = start_hub(&scratch.path().join("writer"), &args)?;
    wait_for("the writer", || {
        Ok(writer
            .status()
            .ok()
            .filter(|s| s["following"] == false)
            .map(|_| ()))
    })?;
    let standby = HubProcess::start(&binary(), &scratch.path().join("standby"), &args)?;
    let members: Vec<String> = (1..=PUBLISHERS).map(|n| format!("member-{n}")).collect();
    let fleet: String = members
        .iter()
        .map(|m| {
            format!("apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {{name: {m}}}\nspec: {{}}\n---\n")
        })
        .collect();
    let file = scratch.path().join("fleet.yaml");
    std::fs::write(&file, fleet).map_err(|e| e.to_string())?;
    ok(&writer, &["apply", "-f", &file.display().to_string()])?;

    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let publishers: Vec<_> = members
        .iter()
        .map(|member| {
            runtime.spawn(publish(
                urls.clone(),
                member.clone(),
                Arc::clone(&stop),
                Arc::clone(&acked),
            ))
        })
        .collect();
    let outcome = under_load(&urls, &writer, &standby, &mut cluster);
    stop.store(true, Ordering::Relaxed);
    for publisher in publishers {
        let _ = runtime.block_on(publisher);
    }
    let verifies = outcome?;
    let acked = acked.load(Ordering::Relaxed);
    assert!(
        acked > 100,
        "the publishers were refused: {acked} acknowledged"
    );
    assert!(verifies > 0, "no verify ran");
    let status = settled(&writer, Duration::from_secs(60))?;
    assert!(
        status["fenced"].is_null() && status["declined"].is_null(),
        "{status}"
    );
    let seq = status["seq"].as_u64().ok_or("no seq")?;
    folded_through(&standby, seq, Duration::from_secs(60))?;
    up(&standby, "standby")?;
    writer.stop()?;
    standby.stop()
}

/// Runs verifies one after another for the load's duration, checking that both hubs stay up
/// and killing the input stream's leader twice; how many verifies ran.
fn under_load(
    urls: &str,
    writer: &HubProcess,
    standby: &HubProcess,
    cluster: &mut NatsTestCluster,
) -> Result<u64, String> {
    let started = Instant::now();
    let duration = load_duration();
    let mut kills = vec![duration * 2 / 3, duration / 3];
    let mut verifies = 0;
    let mut running = verify(urls)?;
    while started.elapsed() < duration {
        std::thread::sleep(CHECK_EVERY);
        up(writer, "writer")?;
        up(standby, "standby")?;
        if running.try_wait().map_err(|e| e.to_string())?.is_some() {
            verifies += 1;
            running = verify(urls)?;
        }
        if kills.last().is_some_and(|at| started.elapsed() >= *at) {
            kills.pop();
            kill_input_leader(cluster)?;
        }
    }
    let _ = running.kill();
    let _ = running.wait();
    Ok(verifies)
}

/// `kill -9` of the input stream's leader, restarted after a pause.
fn kill_input_leader(cluster: &mut NatsTestCluster) -> TestResult {
    let leader = cluster
        .wait_stream_leader(INPUT_STREAM, None)
        .map_err(|e| e.to_string())?;
    cluster.kill(leader).map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_secs(2));
    cluster.restart(leader).map_err(|e| e.to_string())
}

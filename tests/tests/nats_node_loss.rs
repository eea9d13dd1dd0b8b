//! Node loss on NATS: a hub (`flotilla serve`, a real process) on R3 streams in a real
//! three-node `nats-server` cluster, with four `sim` agents and a publisher of heartbeats that
//! records every acknowledged event. Mid-rollout a follower of the input stream is killed
//! (`kill -9`) and restarted, then the stream's leader. Every acknowledged event is in the
//! stream at its acknowledged sequence, the hub folds past an event acknowledged after each loss
//! within a bound, the staged run completes, and a clean fold of the stream gives the hub's
//! state hash.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_eventstore::nats_log::{NatsLog, NatsOptions, READ_BATCH_MAX, server_urls};
use flotilla_eventstore::nats_test_cluster::NatsTestCluster;
use flotilla_eventstore::{LogReader, StoredEvent};
use flotilla_replay::Folder;
use flotilla_tests::agents::{Agent, get_json, items, ok, run_succeeded, wait_for};
use flotilla_tests::support::{HubProcess, fixture};
use uuid::Uuid;

const MEMBERS: [&str; 4] = ["member-1", "member-2", "member-3", "gitops-1"];
const INPUT_STREAM: &str = "FLOTILLA_INPUT";
/// How long the hub may take to fold an event acknowledged after a node was lost.
const ADVANCE_MAX: Duration = Duration::from_secs(20);
/// Pause after every publish attempt, acknowledged or not: a heartbeat every 50 ms, and a
/// failed attempt (`no responders` while the stream elects a leader comes back in well under a
/// millisecond) retried no faster.
const PUBLISH_EVERY: Duration = Duration::from_millis(50);
/// Bound on the publisher's attempts (about two minutes at [`PUBLISH_EVERY`], longer than the
/// whole test may take).
const PUBLISH_ATTEMPTS_MAX: usize = 2_400;
/// Bound on one publish and its ack.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(2);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn text<E: std::fmt::Display>(error: E) -> String {
    error.to_string()
}

/// What the publisher saw: every acknowledged event (id, sequence, when) and the failed
/// attempts.
#[derive(Debug, Default)]
struct Acks {
    acked: Vec<(Uuid, u64, Instant)>,
    failed_attempts: usize,
    /// The newest failure, to name in an error.
    last_failure: Option<String>,
    /// Why the publisher stopped, once it has.
    ended: Option<String>,
}

/// Publishes heartbeats of the members straight onto the input stream, each with its id as
/// `Nats-Msg-Id`, retrying a failed publish with the same id until it is acknowledged; records
/// why it ended in `acks`.
async fn publish(
    urls: String,
    acks: Arc<Mutex<Acks>>,
    stop: Arc<AtomicBool>,
) -> Result<(), String> {
    let ended = publish_until_stopped(&urls, &acks, &stop).await;
    let why = match &ended {
        Ok(()) if stop.load(Ordering::Relaxed) => "stopped by the test".to_owned(),
        Ok(()) => format!("gave up after {PUBLISH_ATTEMPTS_MAX} attempts"),
        Err(error) => error.clone(),
    };
    acks.lock().map_err(text)?.ended = Some(why);
    ended
}

async fn publish_until_stopped(
    urls: &str,
    acks: &Mutex<Acks>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let client = async_nats::ConnectOptions::new()
        .name("node-loss-publisher")
        .connect(server_urls(urls))
        .await
        .map_err(text)?;
    let js = async_nats::jetstream::ContextBuilder::new()
        .timeout(PUBLISH_TIMEOUT)
        .build(client);
    let mut attempts = 0;
    let mut event = 0;
    let mut id = Uuid::now_v7();
    while !stop.load(Ordering::Relaxed) && attempts < PUBLISH_ATTEMPTS_MAX {
        attempts += 1;
        let member = MEMBERS[event % MEMBERS.len()];
        let body = serde_json::json!({
            "id": id, "source": "test/node-loss-publisher", "type": "heartbeat", "cluster": member,
        });
        // The same id until acknowledged: a retry of a publish that was stored is a duplicate.
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(async_nats::header::NATS_MESSAGE_ID, id.to_string().as_str());
        let subject = format!("flotilla.in.heartbeat.{member}");
        let sent = js
            .publish_with_headers(subject, headers, body.to_string().into())
            .await;
        let acked = match sent {
            Ok(ack) => ack.await.map_err(|error| format!("ack: {error}")),
            Err(error) => Err(format!("publish: {error}")),
        };
        {
            let mut acks = acks.lock().map_err(text)?;
            match acked {
                Ok(ack) => {
                    acks.acked.push((id, ack.sequence, Instant::now()));
                    event += 1;
                    id = Uuid::now_v7();
                }
                Err(error) => {
                    acks.failed_attempts += 1;
                    acks.last_failure = Some(error);
                }
            }
        }
        tokio::time::sleep(PUBLISH_EVERY).await;
    }
    Ok(())
}

/// The sequence of the newest acknowledged event, if any.
fn last_acked(acks: &Mutex<Acks>) -> Result<Option<(u64, Instant)>, String> {
    let acks = acks.lock().map_err(text)?;
    Ok(acks.acked.last().map(|(_, seq, at)| (*seq, *at)))
}

/// The first event acknowledged at a sequence after `before`, if any.
fn first_acked_after(acks: &Mutex<Acks>, before: u64) -> Result<Option<(u64, Instant)>, String> {
    let acks = acks.lock().map_err(text)?;
    Ok(acks
        .acked
        .iter()
        .find(|(_, seq, _)| *seq > before)
        .map(|(_, seq, at)| (*seq, *at)))
}

/// How the cluster and the hub came through one lost node.
struct Recovery {
    /// From the kill to the first acknowledgement of a publish made after it.
    first_ack: Duration,
    /// From the kill to the hub folding past that event.
    folded: Duration,
}

/// After a node is lost: waits for an event acknowledged from now on, then for the hub to fold
/// past it.
fn hub_goes_on(hub: &HubProcess, acks: &Mutex<Acks>, lost_at: Instant) -> Result<Recovery, String> {
    let before = last_acked(acks)?.map_or(0, |(seq, _)| seq);
    let deadline = lost_at + ADVANCE_MAX;
    let mut target = None;
    while Instant::now() < deadline {
        if target.is_none() {
            target = first_acked_after(acks, before)?;
        }
        if let Some((seq, acked_at)) = target {
            let folded = hub.status().ok().and_then(|s| s["seq"].as_u64());
            if folded.is_some_and(|folded| folded >= seq) {
                return Ok(Recovery {
                    first_ack: acked_at.duration_since(lost_at),
                    folded: lost_at.elapsed(),
                });
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let acks = acks.lock().map_err(text)?;
    Err(format!(
        "the hub did not fold an event acknowledged after the loss within {ADVANCE_MAX:?} \
         (acknowledged after it: {target:?}; publisher: {} failed attempts, the last: {:?}; \
         ended: {:?})",
        acks.failed_attempts, acks.last_failure, acks.ended
    ))
}

/// Reads the whole input stream up to `last`, through `log` (a lagging replica may answer a
/// read short: read on).
async fn read_all(log: &NatsLog, last: u64) -> Result<Vec<StoredEvent>, String> {
    let mut all = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while (all.len() as u64) < last {
        if Instant::now() > deadline {
            return Err(format!("read only {} of {last} records", all.len()));
        }
        all.extend(
            log.read(all.len() as u64 + 1, READ_BATCH_MAX)
                .await
                .map_err(text)?,
        );
    }
    Ok(all)
}

/// Every acknowledged event is in the stream, at its acknowledged sequence.
async fn check_acknowledged(log: &NatsLog, acked: &[(Uuid, u64, Instant)]) -> Result<u64, String> {
    let last = log.last_seq().await.map_err(text)?;
    let records = read_all(log, last).await?;
    for (id, seq, _) in acked {
        let stored = usize::try_from(*seq - 1)
            .ok()
            .and_then(|index| records.get(index))
            .and_then(StoredEvent::event)
            .map(|event| event.id);
        assert_eq!(
            stored,
            Some(*id),
            "acknowledged event {id} at sequence {seq}"
        );
    }
    Ok(last)
}

/// The state hash of a clean fold of the stream from sequence 1 to `seq`.
async fn clean_fold_hash(log: &NatsLog, seq: u64) -> Result<String, String> {
    let mut folder = Folder::default();
    folder.catch_up(log, seq).await.map_err(text)?;
    assert_eq!(folder.seq, seq, "the clean fold reached the hub's sequence");
    Ok(folder.state.hash().map_err(text)?.0)
}

/// Kills node `node`, checks the hub goes on, restarts the node and waits until it caught up.
fn lose_node(
    cluster: &mut NatsTestCluster,
    node: usize,
    hub: &HubProcess,
    acks: &Mutex<Acks>,
    role: &str,
) -> Result<(), String> {
    let name = cluster.name(node).map_err(text)?.to_owned();
    cluster.kill(node).map_err(text)?;
    let lost_at = Instant::now();
    let leader = cluster
        .wait_stream_leader(INPUT_STREAM, Some(node))
        .map_err(text)?;
    let elected = lost_at.elapsed();
    let recovery = hub_goes_on(hub, acks, lost_at)
        .map_err(|error| format!("{error}\nnode logs:\n{}", cluster.log_tails()))?;
    cluster.restart(node).map_err(text)?;
    cluster.wait_stream_current(INPUT_STREAM).map_err(text)?;
    println!(
        "killed the {role} {name}: {INPUT_STREAM} led by {} after {elected:?}; the first publish \
         acknowledged after the loss {:?} after it, folded by the hub {:?} after it; {name} \
         restarted and caught up",
        cluster.name(leader).map_err(text)?,
        recovery.first_ack,
        recovery.folded,
    );
    Ok(())
}

#[test]
fn an_r3_hub_survives_losing_a_follower_and_the_stream_leader() -> Result<(), String> {
    let mut cluster = NatsTestCluster::start().map_err(text)?;
    let urls = cluster.urls();
    let scratch = tempfile::tempdir().map_err(text)?;
    let hub_args = ["--nats", urls.as_str(), "--nats-replicas", "3"];
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &hub_args)?;
    wait_for("the hub to take the writer role", || {
        Ok((hub.status()?["following"] == false).then_some(()))
    })?;
    ok(&hub, &["apply", "-f", &fixture("agents-fleet.yaml")])?;
    let mut agents = Vec::new();
    for member in MEMBERS {
        let state = scratch.path().join(format!("state-{member}"));
        agents.push(Agent::start(
            &binary(),
            &["--nats", urls.as_str()],
            member,
            "sim",
            &state,
        )?);
    }
    wait_for("four bindings", || {
        Ok((items(&get_json(&hub, &["clusterresourcebindings"])?).len() == 4).then_some(()))
    })?;

    let runtime = tokio::runtime::Runtime::new().map_err(text)?;
    let acks = Arc::new(Mutex::new(Acks::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let publisher = runtime.spawn(publish(urls.clone(), Arc::clone(&acks), Arc::clone(&stop)));

    ok(&hub, &["apply", "-f", &fixture("agents-run.yaml")])?;
    ok(&hub, &["run", "start", "shop-run"])?;
    let request = wait_for("the approval request after staging", || {
        let requests = items(&get_json(&hub, &["careq"])?);
        Ok(requests
            .first()
            .and_then(|r| r["metadata"]["name"].as_str().map(str::to_owned)))
    })?;

    // Mid-rollout: the staging stage is done, production waits for the approval.
    let leader = cluster
        .wait_stream_leader(INPUT_STREAM, None)
        .map_err(text)?;
    let follower = (leader + 1) % 3;
    lose_node(&mut cluster, follower, &hub, &acks, "follower")?;
    let leader = cluster
        .wait_stream_leader(INPUT_STREAM, None)
        .map_err(text)?;
    lose_node(&mut cluster, leader, &hub, &acks, "stream leader")?;

    wait_for("the approval to be accepted", || {
        Ok(ok(&hub, &["approve", &request]).ok())
    })?;
    wait_for("the run to succeed", || {
        Ok(run_succeeded(&hub)?.then_some(()))
    })?;

    stop.store(true, Ordering::Relaxed);
    runtime.block_on(publisher).map_err(text)??;
    drop(agents);
    let (acked, failed) = {
        let acks = acks.lock().map_err(text)?;
        (acks.acked.clone(), acks.failed_attempts)
    };
    let status = hub.status()?;
    assert_eq!(
        status["following"], false,
        "the hub is still the writer: {status}"
    );
    let seq = status["seq"].as_u64().ok_or("no seq")?;
    let hash = status["stateHash"].as_str().ok_or("no hash")?.to_owned();
    let (last, clean) = runtime.block_on(async {
        let options = NatsOptions {
            replicas: 3,
            ..NatsOptions::default()
        };
        let log = NatsLog::connect(&urls, options).await.map_err(text)?;
        let last = check_acknowledged(&log, &acked).await?;
        Ok::<_, String>((last, clean_fold_hash(&log, seq).await?))
    })?;
    println!(
        "{} heartbeats acknowledged ({failed} failed attempts retried), all in the stream of {last} \
         records; the hub's state at {seq} equals a clean fold",
        acked.len()
    );
    assert!(!acked.is_empty(), "the publisher had nothing acknowledged");
    assert_eq!(hash, clean, "the hub's state equals a clean fold at {seq}");
    hub.stop()
}

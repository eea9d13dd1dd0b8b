//! Restart from a checkpoint equals a fold from zero: a hub that checkpoints every few events
//! is stopped (cleanly, and also with events appended after its last checkpoint) and reopened;
//! its state hash equals the hash of folding the whole log from sequence 1. A writer that starts
//! far behind the log (it reads each round while folding the one before) ends in that same state,
//! with the decisions a fold from zero recomputes.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, EventLog, LogReader};
use flotilla_hub::runtime::{Hub, HubConfig};
use uuid::Uuid;

const MEMBERS: u64 = 50;
const ROUNDS: u64 = 20;

fn events(first_id: u64, rounds: u64) -> Vec<Envelope> {
    let start = Utc
        .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut id = u128::from(first_id);
    let mut push = |time, input| {
        id += 1;
        out.push(Envelope::new(Uuid::from_u128(id), time, "test", input));
    };
    if first_id == 0 {
        for m in 0..MEMBERS {
            let period = 10 + m % 7;
            let manifest = format!(
                r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"member-{m}"}},"spec":{{"heartbeatPeriodSeconds":{period}}}}}"#
            );
            push(start, Input::Apply { manifest });
        }
    }
    for round in 0..rounds {
        let time =
            start + chrono::Duration::seconds(i64::try_from(first_id + round * 20).unwrap_or(0));
        // Every third member beats only at the very start, so its heartbeat times out; every
        // fifth is silent in odd rounds.
        let beating = |m: &u64| match (m % 3, m % 5) {
            (0, _) => first_id == 0 && round == 0,
            (_, 0) => round % 2 == 0,
            _ => true,
        };
        for m in (0..MEMBERS).filter(beating) {
            let beat = Heartbeat {
                cluster: format!("member-{m}"),
                ..Heartbeat::default()
            };
            push(time, Input::Heartbeat(beat));
        }
        push(time, Input::Tick);
    }
    out
}

async fn open(path: &std::path::Path) -> Result<(Arc<RedbLog>, Hub<RedbLog>), String> {
    let log = Arc::new(RedbLog::open(path, RedbOptions::default()).map_err(|e| e.to_string())?);
    let config = HubConfig {
        checkpoint_every: 97,
        ..HubConfig::default()
    };
    let hub = Hub::open(Arc::clone(&log), config)
        .await
        .map_err(|e| e.to_string())?;
    Ok((log, hub))
}

async fn fold_and_stop(hub: &Hub<RedbLog>, batch: Vec<Envelope>) -> Result<u64, String> {
    let writer = start_writer(hub);
    // The test owns time (heartbeat timeouts follow its event times), like the scenario runner.
    let appended = hub
        .log()
        .append(batch, AppendTime::AsGiven)
        .await
        .map_err(|e| e.to_string())?;
    let last = appended.iter().map(|a| a.seq).max().unwrap_or(0);
    stop_when_folded(hub, writer, last).await?;
    Ok(last)
}

type Writer = tokio::task::JoinHandle<Result<(), flotilla_hub::runtime::HubError>>;

fn start_writer(hub: &Hub<RedbLog>) -> Writer {
    let hub = hub.clone();
    tokio::spawn(async move { hub.run_writer().await })
}

/// Waits (at most 30 s) until the writer folded `last`, then stops it.
async fn stop_when_folded(hub: &Hub<RedbLog>, writer: Writer, last: u64) -> Result<(), String> {
    assert!(
        hub.wait_folded(last, Duration::from_secs(30)).await,
        "writer did not fold in time"
    );
    hub.shutdown();
    writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

fn hash_of(hub: &Hub<RedbLog>) -> Result<String, String> {
    let view = hub.view().map_err(|e| e.to_string())?;
    Ok(view.folder.state.hash().map_err(|e| e.to_string())?.0)
}

#[tokio::test]
async fn restart_from_checkpoint_equals_fold_from_zero() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("log.redb");

    let (log, hub) = open(&path).await?;
    let last = fold_and_stop(&hub, events(0, ROUNDS)).await?;
    let before = hash_of(&hub)?;
    let checkpoint = log
        .load_checkpoint()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no checkpoint")?;
    assert_eq!(
        checkpoint.seq, last,
        "clean shutdown writes a final checkpoint"
    );
    assert_eq!(checkpoint.hash.0, before);
    // Events appended while no writer runs: the next start must fold them after the checkpoint.
    let tail = events(10_000, 3);
    log.append(tail, AppendTime::AsGiven)
        .await
        .map_err(|e| e.to_string())?;
    drop(hub);
    drop(log);

    let (log, hub) = open(&path).await?;
    let restored_seq = hub.view().map_err(|e| e.to_string())?.folder.seq;
    assert_eq!(
        restored_seq, last,
        "the undecided tail waits for the writer"
    );
    let last = fold_and_stop(&hub, events(20_000, 1)).await?;
    let restarted = hash_of(&hub)?;
    let folder = flotilla_replay::fold_from_zero(log.as_ref(), last)
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(folder.seq, last);
    assert_eq!(folder.state.hash().map_err(|e| e.to_string())?.0, restarted);
    assert_eq!(
        flotilla_replay::verify(log.as_ref())
            .await
            .map_err(|e| e.to_string())?
            .checked,
        last
    );
    // Unhealthy members prove the timeline did something worth checking.
    let state = &folder.state;
    assert!(state.members().values().any(|m| !m.is_eligible()));
    assert!(state.members().values().any(|member| member.is_eligible()));
    Ok(())
}

#[tokio::test]
async fn a_writer_reading_ahead_of_a_backlog_decides_as_a_fold_from_zero() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = Arc::new(
        RedbLog::open(&dir.path().join("log.redb"), RedbOptions::default())
            .map_err(|e| e.to_string())?,
    );
    // The whole backlog is in the log before the writer starts, so every round but the last
    // is full and the next one is read while it folds.
    let appended = log
        .append(events(0, ROUNDS), AppendTime::AsGiven)
        .await
        .map_err(|e| e.to_string())?;
    let last = appended.iter().map(|a| a.seq).max().unwrap_or(0);
    let config = HubConfig {
        fold_round_max: 16,
        fold_batch_max: 5,
        ..HubConfig::default()
    };
    assert!(last > 10 * 16, "a backlog of many rounds ({last} inputs)");
    let hub = Hub::open(Arc::clone(&log), config)
        .await
        .map_err(|e| e.to_string())?;
    stop_when_folded(&hub, start_writer(&hub), last).await?;
    let from_zero = flotilla_replay::fold_to(log.as_ref(), last)
        .await
        .map_err(|e| e.to_string())?;
    let expected = from_zero.state.hash().map_err(|e| e.to_string())?.0;
    assert_eq!(hash_of(&hub)?, expected);
    flotilla_replay::verify(log.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The checkpoints a running writer takes in the background are written into the log's files
/// as they are encoded: each one the log loads is the state a fold from zero reaches at its
/// sequence.
#[tokio::test]
async fn a_background_checkpoint_is_the_fold_at_its_sequence() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("log.redb");
    let (log, hub) = open(&path).await?;
    let writer = start_writer(&hub);
    let appended = log
        .append(events(0, ROUNDS), AppendTime::AsGiven)
        .await
        .map_err(|e| e.to_string())?;
    let last = appended.iter().map(|a| a.seq).max().unwrap_or(0);
    assert!(hub.wait_folded(last, Duration::from_secs(30)).await);
    // Bounded wait for the background save (the writer is still running: no final one yet).
    let mut checkpoint = None;
    for _ in 0..300 {
        checkpoint = log.load_checkpoint().await.map_err(|e| e.to_string())?;
        if checkpoint.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let checkpoint = checkpoint.ok_or("no background checkpoint within 3 s")?;
    let folder = flotilla_replay::fold_from_zero(log.as_ref(), checkpoint.seq)
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(
        checkpoint.hash,
        folder.state.hash().map_err(|e| e.to_string())?
    );
    assert!(checkpoint.state == folder.state, "the loaded state differs");
    hub.shutdown();
    writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

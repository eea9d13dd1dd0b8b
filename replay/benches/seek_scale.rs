//! Seek, diff and timeline at scale: a log of N heartbeats over C member clusters (default
//! 10,000,000 over 10,000 under `cargo bench`; 2,000 over 100 otherwise, so `cargo test
//! --all-targets` stays cheap) is written and folded as the hub does — decisions recorded per
//! batch of 1,000, a checkpoint every 10,000 inputs, the redb log keeping one per 50,000 — and
//! then the state at random points is sought (`fold_to`), beside the raw ceiling it avoids:
//! folding from the first input to the same point; two points are diffed; and the first input
//! after which one cluster's heartbeat reached a time is found by bisection, beside folding
//! from zero to it. Prints one line per measure.
//!
//! `cargo bench -p flotilla-replay --bench seek_scale` (env `SEEK_EVENTS`, `SEEK_CLUSTERS`,
//! `SEEK_DIR` to keep the log and reuse it on the next run).

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use flotilla_core::State;
use flotilla_core::wire::DECISION_VERSION;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, DecisionBatch, EventLog, LogReader};
use flotilla_replay::bisect::Answer;
use flotilla_replay::{Folder, bisect, diff, first_folded, fold_on, fold_to};
use uuid::Uuid;

/// Inputs per append and per decided batch (the hub folding as fast as inputs arrive).
const BATCH: usize = 1_000;
/// Inputs between checkpoints (the hub's default `checkpoint_every`).
const CHECKPOINT_EVERY: u64 = 10_000;
/// Points sought.
const SEEKS: u64 = 20;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default()
}

/// Input `index` (0-based): the clusters registered first, then heartbeats round-robin, each
/// cluster beating every 60 s of log time.
fn input(index: u64, clusters: u64) -> Envelope {
    let cluster = format!("member-{:06}", index % clusters);
    let payload = if index < clusters {
        Input::Apply {
            manifest: format!(
                r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{cluster}"}},"spec":{{"heartbeatPeriodSeconds":60}}}}"#
            ),
        }
    } else {
        Input::Heartbeat(Heartbeat {
            cluster,
            ..Heartbeat::default()
        })
    };
    let spacing_us = 60_000_000 / i64::try_from(clusters).unwrap_or(1);
    let time = start() + TimeDelta::microseconds(i64::try_from(index).unwrap_or(0) * spacing_us);
    Envelope::new(
        Uuid::from_u128(u128::from(index) + 1),
        time,
        "bench",
        payload,
    )
}

/// Writes and folds the log as the hub does; returns the seconds it took.
async fn record(log: &RedbLog, events: u64, clusters: u64) -> f64 {
    let began = Instant::now();
    let mut folder = Folder::default();
    let mut next = log.last_seq().await.unwrap_or(0);
    if next >= events {
        return 0.0;
    }
    while next < events {
        let upto = (next + BATCH as u64).min(events);
        let batch: Vec<Envelope> = (next..upto).map(|i| input(i, clusters)).collect();
        log.append(batch, AppendTime::AsGiven)
            .await
            .expect("append");
        let stored = log.read(next + 1, BATCH).await.expect("read back");
        let first = first_folded(log, &stored).await.expect("ids");
        let folded = folder.fold_records(&stored, first, &[]).expect("fold");
        let decisions = folded
            .decisions
            .into_iter()
            .filter(|(_, d)| !d.is_empty())
            .collect();
        let batch = DecisionBatch {
            version: DECISION_VERSION,
            first_input_seq: next + 1,
            last_input_seq: upto,
            decisions,
        };
        log.append_decisions(&batch).await.expect("decide");
        if upto.is_multiple_of(CHECKPOINT_EVERY) {
            log.save_checkpoint(&folder.checkpoint().expect("checkpoint"))
                .await
                .expect("save checkpoint");
        }
        next = upto;
    }
    began.elapsed().as_secs_f64()
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

async fn measure(log: &RedbLog, events: u64) {
    // Points spread over the log, off the checkpoint grid.
    let points: Vec<u64> = (1..=SEEKS)
        .map(|k| k * events / (SEEKS + 1) + 7_777 % events.max(1))
        .collect();
    let mut seeks = Vec::new();
    for &point in &points {
        let began = Instant::now();
        let folder = fold_to(log, point).await.expect("seek");
        seeks.push(began.elapsed());
        assert_eq!(folder.seq, point.min(events));
    }
    seeks.sort();
    let median = seeks[seeks.len() / 2];
    let worst = seeks[seeks.len() - 1];
    let last = points[points.len() - 1];
    let began = Instant::now();
    let mut from_zero = Folder::default();
    fold_on(log, &mut from_zero, last)
        .await
        .expect("fold from zero");
    let ceiling = began.elapsed();
    println!(
        "seek: median {:.1} ms, worst {:.1} ms over {SEEKS} points; folding from zero to #{last}: {:.1} ms",
        millis(median),
        millis(worst),
        millis(ceiling)
    );
    for apart in [10, 1_000] {
        let a = points[SEEKS as usize / 2];
        let b = a + apart;
        let began = Instant::now();
        let first = fold_to(log, a).await.expect("seek a");
        let mut second = first.clone();
        fold_on(log, &mut second, b).await.expect("fold on to b");
        let sought = began.elapsed();
        let changed = diff(&first.state, &second.state);
        println!(
            "diff #{a} -> #{b}: {:.1} ms ({:.1} ms of it seeking; {} objects changed)",
            millis(began.elapsed()),
            millis(sought),
            changed.changed.len()
        );
    }
}

/// Bisects for the first input after which one cluster's latest heartbeat is at or after the
/// time of input `target` (a predicate that stays true once true), and checks the answer.
async fn measure_bisect(log: &RedbLog, events: u64, clusters: u64) {
    let cluster = format!("member-{:06}", clusters / 2);
    let target = events * 731 / 1_000;
    let when = input(target, clusters).time;
    let holds = |state: &State| {
        let beat = state
            .members()
            .get(cluster.as_str())?
            .agent
            .as_ref()?
            .last_heartbeat;
        (beat >= when).then(|| format!("{cluster} beat at {beat}"))
    };
    let began = Instant::now();
    let search = bisect(log, &holds, 1..=events).await.expect("bisect");
    let took = began.elapsed();
    let Answer::First(hit) = &search.answer else {
        panic!("the predicate holds once {cluster} beats after #{target}");
    };
    // The cluster's first heartbeat at or after input `target`'s time is its next turn.
    let expected = target + (clusters / 2 + clusters - target % clusters) % clusters + 1;
    assert_eq!(hit.seq, expected, "bisect found the first heartbeat");
    let began = Instant::now();
    let mut from_zero = Folder::default();
    fold_on(log, &mut from_zero, hit.seq)
        .await
        .expect("fold from zero");
    println!(
        "bisect: first after #{} in {:.1} ms ({} probes, {} inputs folded, {} checkpoints); folding from zero to it: {:.1} ms",
        hit.seq,
        millis(took),
        search.probes,
        search.inputs_folded,
        search.checkpoints_used,
        millis(began.elapsed())
    );
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let events = env_or("SEEK_EVENTS", if full { 10_000_000 } else { 2_000 });
    let clusters = env_or("SEEK_CLUSTERS", if full { 10_000 } else { 100 });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let dir = std::env::var_os("SEEK_DIR").map_or_else(|| scratch.path().to_owned(), Into::into);
    std::fs::create_dir_all(&dir).expect("the log directory");
    let path = dir.join("seek.redb");
    runtime.block_on(async {
        let log = RedbLog::open(&path, RedbOptions::default()).expect("open the log");
        let took = record(&log, events, clusters).await;
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!(
            "log: {events} inputs over {clusters} clusters, {:.0} MiB, recorded in {took:.1} s",
            bytes as f64 / 1_048_576.0
        );
        measure(&log, events).await;
        measure_bisect(&log, events, clusters).await;
    });
}

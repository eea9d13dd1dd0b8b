//! Proves how fast a stored log comes back: reading and decoding 100,000 events from a redb file
//! in pages, and folding them from zero with `fold_from_zero`, each measured in the same run
//! beside the in-memory work it cannot avoid — decoding the same pre-encoded envelopes (and,
//! for the fold, decoding then folding them) — so the ratio is the cost of the storage path.
//!
//! `cargo bench -p flotilla-replay --bench replay`. Under `cargo test` (criterion's test mode)
//! the log is scaled down to 2,000 events so that the setup stays cheap.

use std::hint::black_box;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use flotilla_core::wire::{decode_envelope, encode_envelope};
use flotilla_core::{Envelope, Heartbeat, Input, State, step};
use flotilla_eventstore::redb_log::{READ_MAX, RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, EventLog, LogReader};
use flotilla_replay::fold_from_zero;
use tokio::runtime::Runtime;
use uuid::Uuid;

/// Event time between consecutive events. With 1,000 clusters heartbeating round-robin, each
/// is seen every 100 s of event time, inside the 300 s timeout: a healthy fleet's log.
const EVENT_SPACING_MS: i64 = 100;
/// Events per append call while filling the log (setup only).
const FILL_BATCH: usize = 1_000;

/// Log length and fleet size.
struct Scale {
    events: usize,
    fleet: usize,
}

/// `cargo bench` passes `--bench`; `cargo test --all-targets` does not and runs each benchmark
/// once, where filling a 100,000-event log would only cost time.
fn scale() -> Scale {
    if std::env::args().any(|arg| arg == "--bench") {
        Scale {
            events: 100_000,
            fleet: 1_000,
        }
    } else {
        Scale {
            events: 2_000,
            fleet: 100,
        }
    }
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .expect("a valid start time")
}

/// The log's content: every cluster registered, then heartbeats round-robin.
fn history(scale: &Scale) -> Vec<Envelope> {
    (0..scale.events)
        .map(|index| {
            let cluster = format!("member-{:06}", index % scale.fleet);
            let payload = if index < scale.fleet {
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
            let offset = i64::try_from(index).expect("index fits i64") * EVENT_SPACING_MS;
            let time = start() + TimeDelta::milliseconds(offset);
            let id = Uuid::from_u128(u128::try_from(index).expect("index fits u128") + 1);
            Envelope::new(id, time, "bench", payload)
        })
        .collect()
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Reads the whole log in pages of [`READ_MAX`], decoding every event (inside `read`).
async fn read_all(log: &RedbLog, last: u64) -> usize {
    let mut from = 1;
    let mut read = 0;
    while from <= last {
        let page = log.read(from, READ_MAX).await.expect("read a page");
        let Some(tail) = page.last() else { break };
        from = tail.seq + 1;
        read += page.len();
        black_box(page);
    }
    read
}

fn replay(c: &mut Criterion) {
    let scale = scale();
    let rt = runtime();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = RedbLog::open(&dir.path().join("log.redb"), RedbOptions::default())
        .expect("open the redb log");
    let events = history(&scale);
    let encoded: Vec<Vec<u8>> = events
        .iter()
        .map(|event| encode_envelope(event).expect("an event encodes"))
        .collect();
    for chunk in events.chunks(FILL_BATCH) {
        rt.block_on(log.append(chunk.to_vec(), AppendTime::AsGiven))
            .expect("fill the log");
    }
    let last = rt.block_on(log.last_seq()).expect("the last sequence");
    assert_eq!(last, scale.events as u64, "every event stored once");

    let mut group = c.benchmark_group(format!("replay_{}_events", scale.events));
    // One iteration is the whole log (tens to hundreds of milliseconds): flat sampling with few
    // samples keeps the run bounded.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(scale.events as u64));

    group.bench_function("read_decode_redb_log", |b| {
        b.iter(|| assert_eq!(rt.block_on(read_all(&log, last)), scale.events));
    });
    group.bench_function("ceiling_decode_in_memory", |b| {
        b.iter(|| {
            for bytes in &encoded {
                black_box(decode_envelope(bytes).expect("an event decodes"));
            }
        });
    });
    group.bench_function("fold_from_zero_redb_log", |b| {
        b.iter(|| {
            let folder = rt
                .block_on(fold_from_zero(&log, last))
                .expect("fold the log");
            assert_eq!(folder.seq, last, "folded to the end");
            folder
        });
    });
    group.bench_function("ceiling_decode_and_fold_in_memory", |b| {
        b.iter(|| {
            let mut state = State::default();
            for bytes in &encoded {
                let event = decode_envelope(bytes).expect("an event decodes");
                black_box(step(&mut state, &event));
            }
            state
        });
    });
    group.finish();
    log.close().expect("close the log");
}

criterion_group!(benches, replay);
criterion_main!(benches);

//! Proves how fast events get in end to end: 64 and 512 concurrent publishers each submitting
//! single heartbeats through `Hub::submit` to a redb log, and 64 gateways each submitting 16
//! clusters' heartbeats per call (an agent gateway, or an HTTP ingest request with many events),
//! timed until the hub's writer has folded them and recorded their decisions (`wait_folded`),
//! measured in the same run beside a bare redb
//! transaction of 1,000 records (the storage ceiling of any grouping) and beside single-record
//! transactions (the disk's fsync rate, which per-event durability would be stuck at without
//! group commit).
//!
//! `cargo bench -p flotilla-hub --bench ingest`. Under `cargo test` (criterion's test mode)
//! each benchmark runs once.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use flotilla_core::wire::encode_envelope;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_hub::runtime::{Hub, HubConfig};
use redb::{Builder, Database, Durability, TableDefinition};
use tokio::runtime::Runtime;
use uuid::Uuid;

/// The allocator the `flotilla` binary runs with (`src/main.rs`), so the hub is measured as it
/// ships: the writer thread frees events that the publishers' threads allocated.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Concurrent publishers, each submitting one event per call.
const PUBLISHERS: [usize; 2] = [64, 512];
/// Concurrent gateways, each submitting [`GATEWAY_BATCH`] events per call.
const GATEWAYS: usize = 64;
/// Heartbeats per gateway call: with every gateway queued, a commit can hold 1,024 events, the
/// size of the ceiling's transaction.
const GATEWAY_BATCH: usize = 16;
/// Registered member clusters the heartbeats come from.
const FLEET: usize = 1_000;
/// Rounds of the paired measurement under `cargo bench`: a hub iteration, then as many records
/// through the bare ceiling.
const PAIRED_ROUNDS: usize = 15;
/// Records per transaction in the batched ceiling (the `append` bench's batch).
const CEILING_BATCH: usize = 1_000;
/// Event time between heartbeats: the fleet goes round in 1 s, far inside the 300 s timeout.
const EVENT_SPACING_MS: i64 = 1;
/// Longest an iteration waits for the fold before the benchmark fails.
const FOLD_WAIT: Duration = Duration::from_secs(60);
/// The ceiling's table: the shape of the log's `inputs` table.
const RECORDS: TableDefinition<u64, &[u8]> = TableDefinition::new("records");

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .expect("a valid start time")
}

/// Heartbeats shaped like a member agent's, round-robin over the fleet, fresh v7 ids.
struct Events {
    made: usize,
}

impl Events {
    fn time(&self) -> DateTime<Utc> {
        let offset = i64::try_from(self.made).expect("event count fits i64") * EVENT_SPACING_MS;
        start() + TimeDelta::milliseconds(offset)
    }

    fn wrap(&mut self, payload: Input) -> Envelope {
        let envelope = Envelope::new(Uuid::now_v7(), self.time(), "agent/bench", payload);
        self.made += 1;
        envelope
    }

    fn registrations(&mut self) -> Vec<Envelope> {
        (0..FLEET)
            .map(|index| {
                self.wrap(Input::Apply {
                    manifest: format!(
                        r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"member-{index:06}"}},"spec":{{"heartbeatPeriodSeconds":60}}}}"#
                    ),
                })
            })
            .collect()
    }

    fn heartbeats(&mut self, count: usize) -> Vec<Envelope> {
        (0..count)
            .map(|_| {
                let beat = Heartbeat {
                    cluster: format!("member-{:06}", self.made % FLEET),
                    properties: [("kubernetes-fleet.io/node-count", "5")]
                        .into_iter()
                        .collect(),
                    resource_usage: None,
                };
                self.wrap(Input::Heartbeat(beat))
            })
            .collect()
    }
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// A hub over a fresh redb log, its writer running, the fleet registered and folded.
async fn running_hub(
    dir: &Path,
    events: &mut Events,
) -> (
    Hub<RedbLog>,
    tokio::task::JoinHandle<Result<(), flotilla_hub::runtime::HubError>>,
) {
    let log =
        RedbLog::open(&dir.join("log.redb"), RedbOptions::default()).expect("open the redb log");
    let hub = Hub::open(Arc::new(log), HubConfig::default())
        .await
        .expect("open the hub");
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });
    let appended = hub
        .submit(events.registrations())
        .await
        .expect("register the fleet");
    let last = appended.last().map_or(0, |a| a.seq);
    assert!(
        hub.wait_folded(last, FOLD_WAIT).await,
        "the fleet is folded"
    );
    (hub, writer)
}

/// Every publisher submits its events `per_call` at a time; returns the highest sequence
/// appended.
async fn publish(hub: &Hub<RedbLog>, loads: Vec<Vec<Envelope>>, per_call: usize) -> u64 {
    let tasks: Vec<_> = loads
        .into_iter()
        .map(|load| {
            let hub = hub.clone();
            tokio::spawn(async move {
                let mut last = 0;
                let mut load = load.into_iter().peekable();
                while load.peek().is_some() {
                    let call: Vec<Envelope> = load.by_ref().take(per_call).collect();
                    let appended = hub.submit(call).await.expect("submit the events");
                    last = appended.iter().map(|a| a.seq).max().unwrap_or(last);
                }
                last
            })
        })
        .collect();
    let mut last = 0;
    for task in tasks {
        last = last.max(task.await.expect("a publisher task finished"));
    }
    last
}

/// The raw storage ceiling: a bare redb file, one u64 → bytes table, durable commits.
struct BareRedb {
    db: Database,
    next_key: u64,
}

impl BareRedb {
    fn open(dir: &Path) -> Self {
        let db = Builder::new()
            .set_cache_size(RedbOptions::default().cache_size_bytes)
            .create(dir.join("bare.redb"))
            .expect("create the bare redb file");
        Self { db, next_key: 1 }
    }

    fn commit(&mut self, records: &[Vec<u8>]) {
        let mut txn = self.db.begin_write().expect("begin write transaction");
        txn.set_durability(Durability::Immediate)
            .expect("set durability");
        {
            let mut table = txn.open_table(RECORDS).expect("open the records table");
            for record in records {
                table
                    .insert(self.next_key, record.as_slice())
                    .expect("insert a record");
                self.next_key += 1;
            }
        }
        txn.commit().expect("commit");
    }
}

fn encoded(events: &mut Events, count: usize) -> Vec<Vec<u8>> {
    events
        .heartbeats(count)
        .iter()
        .map(|event| encode_envelope(event).expect("a heartbeat encodes"))
        .collect()
}

/// Calls each publisher makes per timed iteration. An iteration ends with the fold of its last
/// commit and the record of that round's decisions (about 4 ms here), which the ceiling has no
/// counterpart of: at 64 calls that tail is a few percent of an iteration, at 16 it was about a
/// tenth. `cargo bench` passes `--bench`; `cargo test --all-targets` runs each benchmark once,
/// where one call is enough.
fn submits_per_publisher() -> usize {
    if std::env::args().any(|arg| arg == "--bench") {
        64
    } else {
        1
    }
}

fn ingest(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut events = Events { made: 0 };
    let (hub, writer) = rt.block_on(running_hub(dir.path(), &mut events));
    let submits_per_publisher = submits_per_publisher();

    let mut group = c.benchmark_group("ingest");
    // An iteration is a thousand or more durable events (milliseconds): flat sampling with few
    // samples bounds the run; compare the ratios, not the absolute figures.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    let loads: Vec<(String, Load)> = PUBLISHERS
        .iter()
        .map(|&publishers| (format!("{publishers}_publishers"), publishers, 1))
        .chain([(
            format!("{GATEWAYS}_gateways_x{GATEWAY_BATCH}"),
            GATEWAYS,
            GATEWAY_BATCH,
        )])
        .map(|(name, publishers, per_call)| {
            let events_each = submits_per_publisher * per_call;
            let load = Load {
                publishers,
                per_call,
                events_each,
            };
            (name, load)
        })
        .collect();
    for (name, load) in &loads {
        bench_hub(&mut group, &rt, &hub, &mut events, name, load);
    }

    let mut bare = BareRedb::open(dir.path());
    group.throughput(Throughput::Elements(CEILING_BATCH as u64));
    group.bench_function("ceiling_bare_redb_txn_1000", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let records = encoded(&mut events, CEILING_BATCH);
                let started = Instant::now();
                bare.commit(&records);
                timed += started.elapsed();
            }
            timed
        });
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("ceiling_bare_redb_txn_1_fsync_rate", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let record = encoded(&mut events, 1);
                let started = Instant::now();
                bare.commit(&record);
                timed += started.elapsed();
            }
            timed
        });
    });
    group.finish();

    let rounds = if submits_per_publisher > 1 {
        PAIRED_ROUNDS
    } else {
        1
    };
    for (name, load) in &loads {
        let pairs: Vec<Pair> = (0..rounds)
            .map(|_| Pair {
                hub: hub_iteration(&rt, &hub, &mut events, load),
                bare: bare_records(&mut bare, &mut events, load.total()),
            })
            .collect();
        report_pairs(name, load.total(), &pairs);
    }

    hub.shutdown();
    rt.block_on(writer)
        .expect("the writer task finished")
        .expect("the writer stopped cleanly");
}

/// What one timed iteration submits.
struct Load {
    publishers: usize,
    per_call: usize,
    events_each: usize,
}

impl Load {
    /// Events one iteration submits.
    fn total(&self) -> usize {
        self.publishers * self.events_each
    }

    /// Each publisher's events, made in the order they are sent (call by call, publisher by
    /// publisher), so their v7 ids rise as a real publisher's do, minted when it sends.
    fn make(&self, events: &mut Events) -> Vec<Vec<Envelope>> {
        let mut loads = vec![Vec::with_capacity(self.events_each); self.publishers];
        for _ in 0..self.events_each / self.per_call {
            for load in &mut loads {
                load.extend(events.heartbeats(self.per_call));
            }
        }
        loads
    }
}

/// One iteration of `load` through the hub, timed from the first submit until folded.
fn hub_iteration(rt: &Runtime, hub: &Hub<RedbLog>, events: &mut Events, load: &Load) -> Duration {
    let loads = load.make(events);
    let started = Instant::now();
    rt.block_on(async {
        let last = publish(hub, loads, load.per_call).await;
        assert!(hub.wait_folded(last, FOLD_WAIT).await, "folded in time");
    });
    started.elapsed()
}

/// `count` records committed to the bare file in transactions of [`CEILING_BATCH`], timed.
fn bare_records(bare: &mut BareRedb, events: &mut Events, count: usize) -> Duration {
    let mut timed = Duration::ZERO;
    for start in (0..count).step_by(CEILING_BATCH) {
        let records = encoded(events, CEILING_BATCH.min(count - start));
        let started = Instant::now();
        bare.commit(&records);
        timed += started.elapsed();
    }
    timed
}

/// One hub iteration and, right after it, as many records through the bare ceiling.
struct Pair {
    hub: Duration,
    bare: Duration,
}

/// Prints the hub's rate over the ceiling's, round by round: the disk's speed drifts within a
/// run (its fsync rate has read from 300 to 7,000 per second on this machine), so a ratio of
/// figures taken a minute apart measures the drift as much as the hub.
fn report_pairs(name: &str, events_each_round: usize, pairs: &[Pair]) {
    let mut ratios: Vec<f64> = pairs
        .iter()
        .map(|pair| pair.bare.as_secs_f64() / pair.hub.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let rate = |time: Duration| {
        (events_each_round * pairs.len()) as f64 / time.as_secs_f64().max(f64::EPSILON) / 1e3
    };
    let hub: Duration = pairs.iter().map(|pair| pair.hub).sum();
    let bare: Duration = pairs.iter().map(|pair| pair.bare).sum();
    println!(
        "ingest/paired/{name}: hub {:.1} k/s, bare txn of {CEILING_BATCH} {:.1} k/s; ratio median \
         {:.2} (min {:.2}, max {:.2}) over {} rounds",
        rate(hub),
        rate(bare),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
        ratios.len()
    );
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Times `load` through the hub until folded, then prints how many events a commit held.
fn bench_hub(
    group: &mut Group<'_>,
    rt: &Runtime,
    hub: &Hub<RedbLog>,
    events: &mut Events,
    name: &str,
    load: &Load,
) {
    let total = load.total();
    let commits_before = hub.log().commit_count();
    let mut ingested = 0_u64;
    group.throughput(Throughput::Elements(total as u64));
    group.bench_function(format!("hub_submit_until_folded/{name}"), |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                timed += hub_iteration(rt, hub, events, load);
                ingested += total as u64;
            }
            timed
        });
    });
    // Commits include the writer's decision records and checkpoints, which share the queue.
    let commits = hub.log().commit_count() - commits_before;
    println!(
        "ingest/hub_submit_until_folded/{name}: {ingested} events in {commits} commits (inputs, \
         decisions and checkpoints), {:.1} events per commit",
        ingested as f64 / commits.max(1) as f64
    );
}

criterion_group!(benches, ingest);
criterion_main!(benches);

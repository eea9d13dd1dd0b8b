//! Proves how fast `RedbLog` appends durably — 1,000 events per call, one event per call, and
//! one event per call from many concurrent tasks (group commit) — each measured in the same run
//! beside a bare redb write transaction with `Durability::Immediate` doing the same number of
//! records, so the ratio shows what the log adds (event-id index, encoding, the writer hand-off)
//! over the storage engine's own cost, and whether group commit beats the disk's fsync rate.
//!
//! `cargo bench -p flotilla-eventstore --bench append`. Under `cargo test` (criterion's test
//! mode) every benchmark runs once on small inputs.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use flotilla_core::wire::encode_envelope;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, EventLog};
use redb::{Builder, Database, Durability, ReadableTable, TableDefinition};
use tokio::runtime::Runtime;
use uuid::Uuid;

/// Events per call in the batched case, and records per transaction in its ceiling.
const BATCH_EVENTS: usize = 1_000;
/// Concurrent publishers in the group-commit cases.
const PUBLISHERS: [usize; 2] = [64, 512];
/// The ceiling's table: the same shape as the log's `inputs` table, without its id index.
const RECORDS: TableDefinition<u64, &[u8]> = TableDefinition::new("records");
/// The second ceiling's id index: the same shape as the log's `event_ids` table.
const IDS: TableDefinition<&[u8; 16], u64> = TableDefinition::new("ids");
/// Page cache for both the log and the bare database, so neither has more memory than the other.
const CACHE_SIZE_BYTES: usize = 256 * 1024 * 1024;

/// Makes heartbeats shaped like a member agent's (a node-count property), with fresh v7 ids
/// as the edges mint them: a repeated id would be deduplicated and write nothing.
struct Events {
    made: i64,
}

impl Events {
    fn next(&mut self) -> Envelope {
        self.made += 1;
        let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + self.made, 0)
            .expect("a representable event time");
        let beat = Heartbeat {
            cluster: format!("member-{:06}", self.made % 100_000),
            properties: [("kubernetes-fleet.io/node-count", "5")]
                .into_iter()
                .collect(),
            resource_usage: None,
        };
        Envelope::new(Uuid::now_v7(), time, "agent/bench", Input::Heartbeat(beat))
    }

    fn batch(&mut self, count: usize) -> Vec<Envelope> {
        (0..count).map(|_| self.next()).collect()
    }

    /// Pre-encoded records with their ids, for the ceiling with an id index.
    fn encoded_with_ids(&mut self, count: usize) -> Vec<([u8; 16], Vec<u8>)> {
        self.batch(count)
            .iter()
            .map(|event| {
                let bytes = encode_envelope(event).expect("a heartbeat encodes");
                (event.id.into_bytes(), bytes)
            })
            .collect()
    }

    /// Pre-encoded records for the ceiling, which must not pay for encoding.
    fn encoded(&mut self, count: usize) -> Vec<Vec<u8>> {
        self.batch(count)
            .iter()
            .map(|event| encode_envelope(event).expect("a heartbeat encodes"))
            .collect()
    }
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn open_log(dir: &Path) -> RedbLog {
    let options = RedbOptions {
        cache_size_bytes: CACHE_SIZE_BYTES,
        ..RedbOptions::default()
    };
    RedbLog::open(&dir.join("log.redb"), options).expect("open the redb log")
}

/// The raw ceiling: a bare redb file with one u64 → bytes table.
struct BareRedb {
    db: Database,
    next_key: u64,
}

impl BareRedb {
    fn open(dir: &Path, file: &str) -> Self {
        let db = Builder::new()
            .set_cache_size(CACHE_SIZE_BYTES)
            .create(dir.join(file))
            .expect("create the bare redb file");
        Self { db, next_key: 1 }
    }

    /// One durable transaction inserting `records` under the next keys: what any append of
    /// that many events must at least cost on this disk.
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

    /// The same, plus what deduplication by id needs: look each id up, then index it. This is
    /// the storage work the log's append contract requires, without its encoding and hand-off.
    fn commit_indexed(&mut self, records: &[([u8; 16], Vec<u8>)]) {
        let mut txn = self.db.begin_write().expect("begin write transaction");
        txn.set_durability(Durability::Immediate)
            .expect("set durability");
        {
            let mut table = txn.open_table(RECORDS).expect("open the records table");
            let mut ids = txn.open_table(IDS).expect("open the ids table");
            for (id, record) in records {
                let known = ids.get(id).expect("look up an id").is_some();
                assert!(!known, "ids are fresh");
                table
                    .insert(self.next_key, record.as_slice())
                    .expect("insert a record");
                ids.insert(id, self.next_key).expect("index an id");
                self.next_key += 1;
            }
        }
        txn.commit().expect("commit");
    }
}

fn configure(group: &mut Group<'_>) {
    // An iteration is one or more durable commits (milliseconds): flat sampling with few
    // samples bounds the run, and the ratios, not the absolute figures, are what is compared.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn batched(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = open_log(dir.path());
    let mut bare = BareRedb::open(dir.path(), "bare.redb");
    let mut events = Events { made: 0 };
    let mut group = c.benchmark_group("append_batched_1000");
    configure(&mut group);
    group.throughput(Throughput::Elements(BATCH_EVENTS as u64));
    group.bench_function("redb_log", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let batch = events.batch(BATCH_EVENTS);
                let started = Instant::now();
                let appended = rt
                    .block_on(log.append(batch, AppendTime::Assigned))
                    .expect("append a batch");
                timed += started.elapsed();
                assert_eq!(appended.len(), BATCH_EVENTS, "one outcome per event");
            }
            timed
        });
    });
    group.bench_function("ceiling_bare_redb_txn", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let records = events.encoded(BATCH_EVENTS);
                let started = Instant::now();
                bare.commit(&records);
                timed += started.elapsed();
            }
            timed
        });
    });
    let mut indexed = BareRedb::open(dir.path(), "bare-indexed.redb");
    group.bench_function("ceiling_bare_redb_txn_with_id_index", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let records = events.encoded_with_ids(BATCH_EVENTS);
                let started = Instant::now();
                indexed.commit_indexed(&records);
                timed += started.elapsed();
            }
            timed
        });
    });
    group.finish();
    log.close().expect("close the log");
}

fn unbatched(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = open_log(dir.path());
    let mut bare = BareRedb::open(dir.path(), "bare.redb");
    let mut events = Events { made: 0 };
    let mut group = c.benchmark_group("append_unbatched_1");
    configure(&mut group);
    group.throughput(Throughput::Elements(1));
    group.bench_function("redb_log", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let single = events.batch(1);
                let started = Instant::now();
                black_box(
                    rt.block_on(log.append(single, AppendTime::Assigned))
                        .expect("append one event"),
                );
                timed += started.elapsed();
            }
            timed
        });
    });
    // One record per durable transaction: the disk's fsync rate as redb sees it.
    group.bench_function("ceiling_bare_redb_txn", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let record = events.encoded(1);
                let started = Instant::now();
                bare.commit(&record);
                timed += started.elapsed();
            }
            timed
        });
    });
    group.finish();
    log.close().expect("close the log");
}

/// Many publishers each appending single events, one after another: the writer thread gathers
/// whatever is queued into one transaction, so a commit can hold at most one event per
/// publisher. The ceiling for P publishers is therefore a bare transaction of P records (perfect
/// grouping); the batched group above has the 1,000-record ceiling and the unbatched group the
/// fsync rate.
fn concurrent(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = Arc::new(open_log(dir.path()));
    let mut bare = BareRedb::open(dir.path(), "bare.redb");
    let mut events = Events { made: 0 };
    let appends_per_publisher = appends_per_publisher();
    let mut group = c.benchmark_group("append_concurrent");
    configure(&mut group);
    for publishers in PUBLISHERS {
        let total = publishers * appends_per_publisher;
        let commits_before = log.commit_count();
        let mut appended_events = 0_u64;
        group.throughput(Throughput::Elements(total as u64));
        group.bench_function(format!("redb_log/{publishers}_publishers"), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let loads: Vec<Vec<Envelope>> = (0..publishers)
                        .map(|_| events.batch(appends_per_publisher))
                        .collect();
                    let started = Instant::now();
                    rt.block_on(publish_concurrently(&log, loads));
                    timed += started.elapsed();
                    appended_events += total as u64;
                }
                timed
            });
        });
        let commits = log.commit_count() - commits_before;
        println!(
            "append_concurrent/redb_log/{publishers}_publishers: {appended_events} events in \
             {commits} commits, {:.1} events per commit",
            appended_events as f64 / commits.max(1) as f64
        );
        group.throughput(Throughput::Elements(publishers as u64));
        group.bench_function(format!("ceiling_bare_redb_txn/{publishers}_records"), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let records = events.encoded(publishers);
                    let started = Instant::now();
                    bare.commit(&records);
                    timed += started.elapsed();
                }
                timed
            });
        });
    }
    group.finish();
}

/// `cargo bench` passes `--bench`; `cargo test --all-targets` runs each benchmark once, where
/// one append per publisher is enough to prove the path works.
fn appends_per_publisher() -> usize {
    if std::env::args().any(|arg| arg == "--bench") {
        16
    } else {
        1
    }
}

async fn publish_concurrently(log: &Arc<RedbLog>, loads: Vec<Vec<Envelope>>) {
    let tasks: Vec<_> = loads
        .into_iter()
        .map(|load| {
            let log = Arc::clone(log);
            tokio::spawn(async move {
                for event in load {
                    log.append(vec![event], AppendTime::Assigned)
                        .await
                        .expect("append one event");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a publisher task finished");
    }
}

criterion_group!(benches, batched, unbatched, concurrent);
criterion_main!(benches);

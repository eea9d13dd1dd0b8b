//! The PostgreSQL peer row: the append workload of `append.rs` — 1,000 events per call, one
//! event per call, and 64 and 512 concurrent publishers each appending single events durably —
//! appended to a PostgreSQL `events` table as teams often build an event store
//! (`postgres_peer/table.rs`), beside `RedbLog` doing the same in the same process, and beside
//! each engine's raw ceilings (PostgreSQL: `COPY` in one transaction, a bare one-row insert,
//! i.e. its fsync rate; redb: a bare transaction of the same records). The bench starts its own server (`postgres_peer/server.rs`) on a loopback port
//! with temporary data, and stops it at the end.
//!
//! `cargo bench -p flotilla-eventstore --bench postgres_peer`. Without PostgreSQL's binaries it
//! says how to install them and exits 0. Under `cargo test` (criterion's test mode) each
//! benchmark runs once, with 4 publishers instead of 64 and 512.

#[path = "postgres_peer/server.rs"]
mod server;
#[path = "postgres_peer/table.rs"]
mod table;

#[path = "shared/timed.rs"]
mod timed;

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use criterion::{Criterion, SamplingMode, Throughput};
use flotilla_core::wire::encode_envelope;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, EventLog};
use redb::{Builder, Database, Durability, TableDefinition};
use tokio::runtime::Runtime;

use timed::timed;
use uuid::Uuid;

use server::PgServer;
use table::{Publisher, Row};

/// Events per call in the batched case, and rows per `COPY` in its ceiling.
const BATCH_EVENTS: usize = 1_000;
/// Page cache of the redb log (and PostgreSQL's `shared_buffers`, see `server.rs`).
const CACHE_SIZE_BYTES: usize = 256 * 1024 * 1024;

/// The redb ceilings' table: the shape of the log's `inputs` table, as in `append.rs`.
const RECORDS: TableDefinition<u64, &[u8]> = TableDefinition::new("records");

/// A bare redb file, one `u64 → bytes` table, durable commits: redb's own ceiling in the same
/// run, so each store's figure has its engine's beside it (`append.rs` has the full set).
struct BareRedb {
    db: Database,
    next_key: u64,
}

impl BareRedb {
    fn open(dir: &Path) -> Self {
        let db = Builder::new()
            .set_cache_size(CACHE_SIZE_BYTES)
            .create(dir.join("bare.redb"))
            .expect("create the bare redb file");
        Self { db, next_key: 1 }
    }

    fn commit(&mut self, rows: &[Row]) {
        let mut txn = self.db.begin_write().expect("begin write transaction");
        txn.set_durability(Durability::Immediate)
            .expect("set durability");
        {
            let mut table = txn.open_table(RECORDS).expect("open the records table");
            for row in rows {
                table
                    .insert(self.next_key, row.payload.as_slice())
                    .expect("insert a record");
                self.next_key += 1;
            }
        }
        txn.commit().expect("commit");
    }
}

/// Heartbeats as `append.rs` makes them (a node-count property, fresh v7 ids).
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

    /// Rows ready for the ceilings, which must not pay for encoding.
    fn rows(&mut self, count: usize) -> Vec<Row> {
        self.batch(count).iter().map(row).collect()
    }
}

/// An event as the PostgreSQL store keeps it: encoded as redb stores it, under its subject.
fn row(event: &Envelope) -> Row {
    let Input::Heartbeat(beat) = &event.payload else {
        unreachable!("the bench makes heartbeats only");
    };
    Row {
        id: event.id,
        subject: format!("flotilla.in.heartbeat.{}", beat.cluster),
        time: event.time,
        payload: encode_envelope(event).expect("a heartbeat encodes"),
    }
}

/// Whether criterion runs for real (`cargo bench` passes `--bench`) or in test mode.
fn benching() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}

/// Concurrent publishers; a handful in test mode, where connecting 512 would be the run.
fn publisher_counts() -> Vec<usize> {
    if benching() { vec![64, 512] } else { vec![4] }
}

/// Single-event appends each publisher makes per timed iteration (as `append.rs`).
fn appends_per_publisher() -> usize {
    if benching() { 16 } else { 1 }
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    // Durable commits take milliseconds: flat sampling, few samples, as `append.rs`.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
}

fn open_log(dir: &Path) -> RedbLog {
    let options = RedbOptions {
        cache_size_bytes: CACHE_SIZE_BYTES,
        ..RedbOptions::default()
    };
    RedbLog::open(&dir.join("log.redb"), options).expect("open the redb log")
}

/// What every group shares: the runtime, the events, the redb log, one PostgreSQL connection.
struct Bench {
    rt: Runtime,
    events: Events,
    log: Arc<RedbLog>,
    bare: BareRedb,
    pg: Publisher,
    conninfo: String,
    /// Rows the `events` table must hold at the end.
    pg_appended: i64,
}

fn batched(c: &mut Criterion, b: &mut Bench) {
    let mut group = c.benchmark_group("peer_batched_1000");
    configure(&mut group);
    group.throughput(Throughput::Elements(BATCH_EVENTS as u64));
    let Bench {
        rt,
        events,
        log,
        bare,
        pg,
        pg_appended,
        ..
    } = b;
    group.bench_function("redb_log", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.batch(BATCH_EVENTS),
                |batch| {
                    let appended = rt
                        .block_on(log.append(batch, AppendTime::Assigned))
                        .expect("append a batch");
                    assert_eq!(appended.len(), BATCH_EVENTS, "one outcome per event");
                },
            )
        });
    });
    group.bench_function("postgres_insert_unnest", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.batch(BATCH_EVENTS),
                |batch| {
                    let rows: Vec<Row> = batch.iter().map(row).collect();
                    let new = rt.block_on(pg.append_many(&rows));
                    assert_eq!(new, BATCH_EVENTS, "every event is new");
                    *pg_appended += BATCH_EVENTS as i64;
                },
            )
        });
    });
    group.bench_function("ceiling_postgres_copy_with_id_index", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.rows(BATCH_EVENTS),
                |rows| {
                    rt.block_on(pg.copy(&rows, true));
                },
            )
        });
    });
    group.bench_function("ceiling_postgres_copy_bare", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.rows(BATCH_EVENTS),
                |rows| {
                    rt.block_on(pg.copy(&rows, false));
                },
            )
        });
    });
    group.bench_function("ceiling_bare_redb_txn", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.rows(BATCH_EVENTS),
                |rows| bare.commit(&rows),
            )
        });
    });
    group.finish();
}

fn unbatched(c: &mut Criterion, b: &mut Bench) {
    let mut group = c.benchmark_group("peer_unbatched_1");
    configure(&mut group);
    group.throughput(Throughput::Elements(1));
    let Bench {
        rt,
        events,
        log,
        bare,
        pg,
        pg_appended,
        ..
    } = b;
    group.bench_function("redb_log", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.batch(1),
                |single| {
                    black_box(
                        rt.block_on(log.append(single, AppendTime::Assigned))
                            .expect("append one event"),
                    );
                },
            )
        });
    });
    group.bench_function("postgres_insert", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.next(),
                |event| {
                    let seq = rt.block_on(pg.append_one(&row(&event)));
                    assert!(seq.is_some(), "a fresh id is appended");
                    *pg_appended += 1;
                },
            )
        });
    });
    // One row per transaction, no id index: the fsync rate as PostgreSQL sees it.
    group.bench_function("ceiling_postgres_bare_insert", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || events.rows(1),
                |rows| {
                    rt.block_on(pg.insert_bare(&rows[0]));
                },
            )
        });
    });
    // One record per durable transaction: the fsync rate as redb sees it.
    group.bench_function("ceiling_bare_redb_txn", |bencher| {
        bencher.iter_custom(|iters| timed(iters, || events.rows(1), |rows| bare.commit(&rows)));
    });
    group.finish();
}

/// P publishers each append single events one after another: redb's writer groups what is
/// queued into one transaction; PostgreSQL's P backends commit separately and group their
/// WAL flushes (a flush covers every commit record written before it). The ceiling is a
/// `COPY` of P rows in one transaction (perfect grouping), and redb's a bare transaction of P.
fn concurrent(c: &mut Criterion, b: &mut Bench) {
    let per_publisher = appends_per_publisher();
    let mut group = c.benchmark_group("peer_concurrent");
    configure(&mut group);
    for publishers in publisher_counts() {
        let total = publishers * per_publisher;
        let Bench {
            rt,
            events,
            log,
            bare,
            pg,
            conninfo,
            pg_appended,
        } = &mut *b;
        let pool: Arc<Vec<Publisher>> = Arc::new(rt.block_on(async {
            let mut pool = Vec::with_capacity(publishers);
            for _ in 0..publishers {
                pool.push(Publisher::connect(conninfo).await);
            }
            pool
        }));
        let loads = |events: &mut Events| -> Vec<Vec<Envelope>> {
            (0..publishers)
                .map(|_| events.batch(per_publisher))
                .collect()
        };
        group.throughput(Throughput::Elements(total as u64));
        let commits_before = log.commit_count();
        let mut redb_events = 0_u64;
        group.bench_function(format!("redb_log/{publishers}_publishers"), |bencher| {
            bencher.iter_custom(|iters| {
                timed(
                    iters,
                    || loads(events),
                    |loads| {
                        rt.block_on(redb_concurrently(log, loads));
                        redb_events += total as u64;
                    },
                )
            });
        });
        let commits = log.commit_count() - commits_before;
        println!(
            "peer_concurrent/redb_log/{publishers}_publishers: {redb_events} events in \
             {commits} commits, {:.1} events per commit",
            redb_events as f64 / commits.max(1) as f64
        );
        group.bench_function(
            format!("postgres_insert/{publishers}_publishers"),
            |bencher| {
                bencher.iter_custom(|iters| {
                    timed(
                        iters,
                        || loads(events),
                        |loads| {
                            rt.block_on(postgres_concurrently(&pool, loads));
                            *pg_appended += total as i64;
                        },
                    )
                });
            },
        );
        group.throughput(Throughput::Elements(publishers as u64));
        group.bench_function(
            format!("ceiling_postgres_copy/{publishers}_rows"),
            |bencher| {
                bencher.iter_custom(|iters| {
                    timed(
                        iters,
                        || events.rows(publishers),
                        |rows| {
                            rt.block_on(pg.copy(&rows, false));
                        },
                    )
                });
            },
        );
        group.bench_function(
            format!("ceiling_bare_redb_txn/{publishers}_records"),
            |bencher| {
                bencher.iter_custom(|iters| {
                    timed(iters, || events.rows(publishers), |rows| bare.commit(&rows))
                });
            },
        );
        // Close the publishers' connections before the next, larger pool connects.
        drop(pool);
    }
    group.finish();
}

async fn redb_concurrently(log: &Arc<RedbLog>, loads: Vec<Vec<Envelope>>) {
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

async fn postgres_concurrently(pool: &Arc<Vec<Publisher>>, loads: Vec<Vec<Envelope>>) {
    let tasks: Vec<_> = loads
        .into_iter()
        .enumerate()
        .map(|(index, load)| {
            let pool = Arc::clone(pool);
            tokio::spawn(async move {
                for event in load {
                    let seq = pool[index].append_one(&row(&event)).await;
                    assert!(seq.is_some(), "a fresh id is appended");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a publisher task finished");
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_owned()
}

fn main() {
    let Some(bin) = server::find_binaries() else {
        println!(
            "postgres_peer: PostgreSQL's initdb and postgres were not found (looked in {}, or \
             else the newest /usr/lib/postgresql/*/bin); install them with `apt-get install -y \
             postgresql`. Skipping the PostgreSQL peer benchmark.",
            std::env::var(server::BIN_DIR_ENV)
                .unwrap_or_else(|_| format!("{} unset", server::BIN_DIR_ENV))
        );
        return;
    };
    let mut server = PgServer::start(&bin).expect("start the benchmark's PostgreSQL server");
    println!("postgres_peer: {} from {}", server.version, bin.display());
    println!("postgres_peer: settings {}", server::settings_line());
    println!("postgres_peer: load average at start {}", load_average());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let conninfo = server.conninfo();
    // Prepared statements name their tables: create them first.
    let pg = rt.block_on(async {
        table::create_schema(&table::connect(&conninfo).await).await;
        Publisher::connect(&conninfo).await
    });
    let mut bench = Bench {
        events: Events { made: 0 },
        log: Arc::new(open_log(dir.path())),
        bare: BareRedb::open(dir.path()),
        pg,
        conninfo,
        pg_appended: 0,
        rt,
    };
    let mut criterion = Criterion::default().configure_from_args();
    batched(&mut criterion, &mut bench);
    unbatched(&mut criterion, &mut bench);
    concurrent(&mut criterion, &mut bench);
    criterion.final_summary();
    let stored = bench.rt.block_on(bench.pg.count("events"));
    assert_eq!(
        stored, bench.pg_appended,
        "every PostgreSQL append is stored once"
    );
    println!(
        "postgres_peer: {stored} events in PostgreSQL's events table; load average at end {}",
        load_average()
    );
    drop(bench);
    server.stop();
}

//! Proves how fast the one-threaded fold absorbs heartbeats from a large fleet (10,000 and
//! 100,000 member clusters), measured beside the irreducible work of a heartbeat — a map lookup
//! and update plus a deadline-set remove and insert over the same names — so the ratio says how
//! much the fold adds on top of its own data structures.
//!
//! `cargo bench -p flotilla-core --bench fold`. Under `cargo test` (criterion's test mode) the
//! fleet is scaled down to 1,000 clusters so that compiling and smoke-running this stays cheap.

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use flotilla_core::model::StringMap;
use flotilla_core::query::member::HEARTBEAT_TIMEOUT_PERIODS;
use flotilla_core::{Envelope, Heartbeat, Input, ResourceUsage, State, step};
use uuid::Uuid;

/// `heartbeatPeriodSeconds` of every benchmark cluster (KubeFleet's default).
const PERIOD_SECS: i64 = 60;
/// Event time between two consecutive heartbeats. At 1 ms a round over 100,000 clusters takes
/// 100 s of event time, well inside the 300 s timeout, so no cluster expires: this measures the
/// steady state of a healthy fleet, not a storm of health changes.
const EVENT_SPACING_MS: i64 = 1;

/// Fleet sizes and heartbeats folded per timed iteration.
struct Scale {
    fleets: &'static [usize],
    batch: usize,
}

/// `cargo bench` passes `--bench`; `cargo test --all-targets` does not and runs each benchmark
/// once, where a 100,000-cluster setup would only cost time.
fn scale() -> Scale {
    if std::env::args().any(|arg| arg == "--bench") {
        Scale {
            fleets: &[10_000, 100_000],
            batch: 10_000,
        }
    } else {
        Scale {
            fleets: &[1_000],
            batch: 1_000,
        }
    }
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .expect("a valid start time")
}

fn cluster_name(index: usize) -> String {
    format!("member-{index:06}")
}

fn member_manifest(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}","labels":{{"environment":"prod"}}}},"spec":{{"heartbeatPeriodSeconds":{PERIOD_SECS}}}}}"#
    )
}

/// What a heartbeat carries besides the cluster name.
#[derive(Clone, Copy)]
enum Payload {
    /// Name only: the liveness path alone.
    Bare,
    /// A node count and resource usage, as KubeFleet's agent sends with every heartbeat.
    WithProperties,
}

fn properties_of(payload: Payload) -> (StringMap, Option<ResourceUsage>) {
    match payload {
        Payload::Bare => (StringMap::new(), None),
        Payload::WithProperties => {
            let quantities =
                |cpu: &str, memory: &str| [("cpu", cpu), ("memory", memory)].into_iter().collect();
            let usage = ResourceUsage {
                capacity: quantities("40", "160Gi"),
                allocatable: quantities("38", "150Gi"),
                available: quantities("12", "64Gi"),
            };
            (
                [("kubernetes-fleet.io/node-count", "5")]
                    .into_iter()
                    .collect(),
                Some(usage),
            )
        }
    }
}

/// Makes heartbeats in round-robin over the fleet with advancing event time, continuing where
/// the previous batch stopped so that every timed batch moves the fleet forward.
struct HeartbeatSource {
    names: Vec<String>,
    payload: Payload,
    /// Events made so far: the next event's id, time offset and cluster (round-robin).
    made: u64,
}

impl HeartbeatSource {
    fn new(fleet: usize, payload: Payload) -> Self {
        Self {
            names: (0..fleet).map(cluster_name).collect(),
            payload,
            made: 0,
        }
    }

    fn time_of(&self, made: u64) -> DateTime<Utc> {
        let offset_ms = i64::try_from(made).expect("fewer than 2^63 events") * EVENT_SPACING_MS;
        start() + TimeDelta::milliseconds(offset_ms)
    }

    fn next_event(&mut self, payload: Input) -> Envelope {
        let envelope = Envelope::new(
            Uuid::from_u128(u128::from(self.made)),
            self.time_of(self.made),
            "bench",
            payload,
        );
        self.made += 1;
        envelope
    }

    fn batch(&mut self, count: usize) -> Vec<Envelope> {
        let (properties, resource_usage) = properties_of(self.payload);
        (0..count)
            .map(|_| {
                let index =
                    usize::try_from(self.made).expect("event count fits usize") % self.names.len();
                let beat = Heartbeat {
                    cluster: self.names[index].clone(),
                    properties: properties.clone(),
                    resource_usage: resource_usage.clone(),
                };
                self.next_event(Input::Heartbeat(beat))
            })
            .collect()
    }

    /// A state where every cluster is registered and has joined with one heartbeat.
    fn joined_fleet(&mut self) -> State {
        let mut state = State::default();
        let applies: Vec<Input> = self
            .names
            .iter()
            .map(|name| Input::Apply {
                manifest: member_manifest(name),
            })
            .collect();
        for apply in applies {
            step(&mut state, &self.next_event(apply));
        }
        let fleet = self.names.len();
        for beat in self.batch(fleet) {
            step(&mut state, &beat);
        }
        assert_eq!(state.members().len(), fleet, "every cluster registered");
        assert_eq!(
            state.heartbeat_deadlines().len(),
            fleet,
            "every cluster joined"
        );
        state
    }
}

/// The irreducible work of a heartbeat over the fold's own structures: string-keyed ordered map
/// and a `(deadline, name)` set, with the name copied into the set as the fold does.
struct StringKeyedCeiling {
    now: DateTime<Utc>,
    last_heartbeat: BTreeMap<String, DateTime<Utc>>,
    deadlines: BTreeSet<(DateTime<Utc>, String)>,
}

/// The same work over interned clusters: the name is looked up once, then everything is keyed by
/// a `u32` index and millisecond integers (DESIGN.md "Scale": interned names, integer indices).
struct InternedCeiling {
    now_ms: i64,
    index_of: BTreeMap<String, u32>,
    last_heartbeat_ms: Vec<i64>,
    deadlines: BTreeSet<(i64, u32)>,
}

fn timeout() -> TimeDelta {
    TimeDelta::seconds(HEARTBEAT_TIMEOUT_PERIODS * PERIOD_SECS)
}

fn beat_of(event: &Envelope) -> &str {
    match &event.payload {
        Input::Heartbeat(beat) => &beat.cluster,
        _ => unreachable!("the benchmark folds heartbeats only"),
    }
}

impl StringKeyedCeiling {
    fn joined(source: &mut HeartbeatSource) -> Self {
        let mut ceiling = Self {
            now: start(),
            last_heartbeat: BTreeMap::new(),
            deadlines: BTreeSet::new(),
        };
        for event in source.batch(source.names.len()) {
            ceiling
                .last_heartbeat
                .insert(beat_of(&event).to_owned(), event.time);
            ceiling
                .deadlines
                .insert((event.time + timeout(), beat_of(&event).to_owned()));
        }
        ceiling
    }

    fn heartbeat(&mut self, event: &Envelope) {
        self.now = self.now.max(event.time);
        // The fold also checks the earliest deadline before each event; keep that look.
        if self
            .deadlines
            .first()
            .is_some_and(|(deadline, _)| *deadline <= self.now)
        {
            unreachable!("no cluster expires in the steady state");
        }
        let name = beat_of(event);
        let last = self
            .last_heartbeat
            .get_mut(name)
            .expect("a registered cluster");
        self.deadlines.remove(&(*last + timeout(), name.to_owned()));
        *last = (*last).max(self.now);
        self.deadlines.insert((*last + timeout(), name.to_owned()));
    }
}

impl InternedCeiling {
    fn joined(source: &mut HeartbeatSource) -> Self {
        let fleet = source.names.len();
        let mut ceiling = Self {
            now_ms: 0,
            index_of: BTreeMap::new(),
            last_heartbeat_ms: vec![0; fleet],
            deadlines: BTreeSet::new(),
        };
        for (index, event) in source.batch(fleet).iter().enumerate() {
            let index = u32::try_from(index).expect("fleet fits u32");
            let at_ms = event.time.timestamp_millis();
            ceiling.index_of.insert(beat_of(event).to_owned(), index);
            ceiling.last_heartbeat_ms[index as usize] = at_ms;
            ceiling
                .deadlines
                .insert((at_ms + timeout().num_milliseconds(), index));
        }
        ceiling
    }

    fn heartbeat(&mut self, event: &Envelope) {
        self.now_ms = self.now_ms.max(event.time.timestamp_millis());
        if self
            .deadlines
            .first()
            .is_some_and(|(deadline, _)| *deadline <= self.now_ms)
        {
            unreachable!("no cluster expires in the steady state");
        }
        let index = *self
            .index_of
            .get(beat_of(event))
            .expect("a registered cluster");
        let last = &mut self.last_heartbeat_ms[index as usize];
        self.deadlines
            .remove(&(*last + timeout().num_milliseconds(), index));
        *last = (*last).max(self.now_ms);
        self.deadlines
            .insert((*last + timeout().num_milliseconds(), index));
    }
}

fn fold_heartbeats(c: &mut Criterion) {
    let scale = scale();
    let mut group = c.benchmark_group("fold_heartbeats");
    // Each iteration folds a whole batch (milliseconds of work), so flat sampling with few
    // samples keeps the run bounded while still giving a spread.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(scale.batch as u64));
    for &fleet in scale.fleets {
        bench_fold(&mut group, fleet, scale.batch, Payload::Bare, "fold");
        bench_string_keyed(&mut group, fleet, scale.batch);
        bench_interned(&mut group, fleet, scale.batch);
    }
    // Properties only at the largest fleet: they add per-heartbeat allocation, not per-fleet work.
    if let Some(&largest) = scale.fleets.last() {
        bench_fold(
            &mut group,
            largest,
            scale.batch,
            Payload::WithProperties,
            "fold_with_properties",
        );
    }
    group.finish();
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn bench_fold(group: &mut Group<'_>, fleet: usize, batch: usize, payload: Payload, name: &str) {
    let mut source = HeartbeatSource::new(fleet, payload);
    let mut state = source.joined_fleet();
    group.bench_function(format!("{name}/{fleet}_clusters"), |b| {
        b.iter_batched(
            || source.batch(batch),
            |events| {
                for event in &events {
                    black_box(step(&mut state, event));
                }
                // Returned so that dropping the batch is not timed.
                events
            },
            BatchSize::PerIteration,
        );
    });
    assert_eq!(
        state.heartbeat_deadlines().len(),
        fleet,
        "no cluster expired during the benchmark"
    );
}

fn bench_string_keyed(group: &mut Group<'_>, fleet: usize, batch: usize) {
    let mut source = HeartbeatSource::new(fleet, Payload::Bare);
    let mut ceiling = StringKeyedCeiling::joined(&mut source);
    group.bench_function(format!("ceiling_string_keyed/{fleet}_clusters"), |b| {
        b.iter_batched(
            || source.batch(batch),
            |events| {
                for event in &events {
                    ceiling.heartbeat(event);
                }
                events
            },
            BatchSize::PerIteration,
        );
    });
    black_box(&ceiling.deadlines);
}

fn bench_interned(group: &mut Group<'_>, fleet: usize, batch: usize) {
    let mut source = HeartbeatSource::new(fleet, Payload::Bare);
    let mut ceiling = InternedCeiling::joined(&mut source);
    group.bench_function(format!("ceiling_interned/{fleet}_clusters"), |b| {
        b.iter_batched(
            || source.batch(batch),
            |events| {
                for event in &events {
                    ceiling.heartbeat(event);
                }
                events
            },
            BatchSize::PerIteration,
        );
    });
    black_box(&ceiling.deadlines);
}

criterion_group!(benches, fold_heartbeats);
criterion_main!(benches);

//! What one event costs a hub with many placements and many resources: 1,000 PickAll
//! placements (each selecting its own namespace) over 100 member clusters, and 10,000 hub
//! resources (1,000 namespaces of one Namespace and 9 ConfigMaps). Two events are timed: an
//! apply that changes one ConfigMap, and a heartbeat whose properties changed. Every tenth
//! placement requires a property (`kubernetes-fleet.io/node-count` ≥ 0), so a property change
//! concerns 100 of them. The state is cloned outside the timed part and dropped after it.
//!
//! `cargo bench -p flotilla-core --bench scans`; under `cargo test` it runs once at a tenth of
//! the size. Figures in docs/benchmarks.md.

use std::hint::black_box;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use flotilla_core::{Envelope, Heartbeat, Input, State, step};
use uuid::Uuid;

/// Placements (and namespaces), and member clusters.
fn scale() -> (usize, usize) {
    if std::env::args().any(|arg| arg == "--bench") {
        (1_000, 100)
    } else {
        (100, 10)
    }
}

/// ConfigMaps per namespace: with its Namespace, 10 resources each.
const CONFIG_MAPS_PER_NAMESPACE: usize = 9;

const NODE_COUNT: &str = "kubernetes-fleet.io/node-count";

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default()
}

/// Folds inputs with increasing ids at one time.
struct Hub {
    state: State,
    id: u128,
}

impl Hub {
    fn event(&mut self, input: Input) -> Envelope {
        self.id += 1;
        Envelope::new(Uuid::from_u128(self.id), start(), "bench", input)
    }

    fn fold(&mut self, input: Input) {
        let event = self.event(input);
        step(&mut self.state, &event);
    }

    fn apply(&mut self, manifest: String) {
        self.fold(Input::Apply { manifest });
    }
}

fn heartbeat(cluster: usize, node_count: usize) -> Input {
    let mut beat = Heartbeat {
        cluster: format!("member-{cluster:03}"),
        ..Heartbeat::default()
    };
    beat.properties
        .insert(NODE_COUNT, node_count.to_string().into());
    Input::Heartbeat(beat)
}

fn config_map(namespace: usize, index: usize, value: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"config-{index}","namespace":"ns-{namespace:04}"}},"data":{{"value":"{value}"}}}}"#
    )
}

fn placement(index: usize) -> String {
    let affinity = if index.is_multiple_of(10) {
        format!(
            r#","affinity":{{"clusterAffinity":{{"requiredDuringSchedulingIgnoredDuringExecution":{{"clusterSelectorTerms":[{{"propertySelector":{{"matchExpressions":[{{"name":"{NODE_COUNT}","operator":"Ge","values":["0"]}}]}}}}]}}}}}}"#
        )
    } else {
        String::new()
    };
    format!(
        r#"{{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{{"name":"placement-{index:04}"}},"spec":{{"resourceSelectors":[{{"group":"","kind":"Namespace","version":"v1","name":"ns-{index:04}"}}],"policy":{{"placementType":"PickAll"{affinity}}}}}}}"#
    )
}

fn hub(placements: usize, clusters: usize) -> Hub {
    let mut hub = Hub {
        state: State::default(),
        id: 0,
    };
    for cluster in 0..clusters {
        hub.apply(format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"member-{cluster:03}","labels":{{"zone":"zone-{}"}}}},"spec":{{}}}}"#,
            cluster % 10
        ));
        hub.fold(heartbeat(cluster, 1));
    }
    for namespace in 0..placements {
        hub.apply(format!(
            r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"ns-{namespace:04}"}}}}"#
        ));
        for index in 0..CONFIG_MAPS_PER_NAMESPACE {
            hub.apply(config_map(namespace, index, "v1"));
        }
    }
    for index in 0..placements {
        hub.apply(placement(index));
    }
    hub
}

fn scans(c: &mut Criterion) {
    let (placements, clusters) = scale();
    let mut hub = hub(placements, clusters);
    println!(
        "{placements} placements, {} resources, {clusters} clusters",
        hub.state.resources().len()
    );
    let apply = hub.event(Input::Apply {
        manifest: config_map(placements / 2, 0, "v2"),
    });
    let beat = hub.event(heartbeat(clusters / 2, 2));
    let mut group = c.benchmark_group("one_event");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    for (name, event) in [
        ("apply_one_resource", &apply),
        ("heartbeat_with_changed_properties", &beat),
    ] {
        group.bench_function(format!("{name}/{placements}"), |b| {
            b.iter_batched(
                || hub.state.clone(),
                |mut state| {
                    let decisions = step(&mut state, event);
                    black_box((state, decisions))
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, scans);
criterion_main!(benches);

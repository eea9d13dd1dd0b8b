//! One scheduling pass over a large fleet: PickN (N = 100, a required affinity term, one
//! topology spread constraint over 10 zones) and PickAll, at 10,000 and 100,000 member
//! clusters, plus the state's size per member cluster. The pass is measured as the fold of the
//! event that creates the placement (policy snapshot, resource snapshot, scheduling, and the
//! rollout pass that binds what was picked), on a fleet that has already joined; freeing the
//! cloned state is not timed. Figures in docs/benchmarks.md.

use std::hint::black_box;

/// The `flotilla` binary's allocator, so the pass is timed as the hub runs it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Duration;

use chrono::{TimeZone, Utc};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use flotilla_core::codec::encode_checkpoint;
use flotilla_core::{Envelope, Heartbeat, Input, State, step};
use uuid::Uuid;

fn benchmarking() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn fleet(size: usize) -> (State, u128) {
    let time = Utc
        .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default();
    let mut state = State::default();
    let mut id = 0_u128;
    let mut fold = |state: &mut State, input: Input| {
        id += 1;
        step(
            state,
            &Envelope::new(Uuid::from_u128(id), time, "bench", input),
        );
    };
    fold(
        &mut state,
        Input::Apply {
            manifest: r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#.into(),
        },
    );
    for i in 0..size {
        let manifest = format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"member-{i:06}","labels":{{"env":"{}","zone":"zone-{}"}}}},"spec":{{}}}}"#,
            if i % 4 == 0 { "dev" } else { "prod" },
            i % 10
        );
        fold(&mut state, Input::Apply { manifest });
        let beat = Heartbeat {
            cluster: format!("member-{i:06}"),
            ..Heartbeat::default()
        };
        fold(&mut state, Input::Heartbeat(beat));
    }
    (state, id)
}

const PICK_N: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{"name":"pick-n"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}],"policy":{"placementType":"PickN","numberOfClusters":100,"affinity":{"clusterAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"clusterSelectorTerms":[{"labelSelector":{"matchLabels":{"env":"prod"}}}]}}},"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}}}"#;
const PICK_ALL: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{"name":"pick-all"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}],"policy":{"placementType":"PickAll","affinity":{"clusterAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"clusterSelectorTerms":[{"labelSelector":{"matchLabels":{"env":"prod"}}}]}}}}}}"#;

fn pass(c: &mut Criterion) {
    let sizes: &[usize] = if benchmarking() {
        &[10_000, 100_000]
    } else {
        &[200]
    };
    let mut group = c.benchmark_group("scheduling_pass");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for &size in sizes {
        let (state, id) = fleet(size);
        let bytes = encode_checkpoint(&state).map(|b| b.len()).unwrap_or(0);
        println!(
            "fleet of {size}: checkpoint {bytes} bytes, {} bytes per member cluster",
            bytes / size
        );
        let time = state.now().unwrap_or_default();
        // The floor of any pass: one walk over the members reading each one's `env` label, as the affinity filter does.
        group.bench_function(format!("ceiling_walk_members_read_label/{size}"), |b| {
            b.iter(|| {
                let members = state.members().values();
                black_box(
                    members
                        .filter(|m| m.meta.labels.get("env").is_some_and(|env| env == "prod"))
                        .count(),
                )
            });
        });
        for (name, manifest) in [
            ("pick_n_100_affinity_spread", PICK_N),
            ("pick_all_affinity", PICK_ALL),
        ] {
            let event = Envelope::new(
                Uuid::from_u128(id + 1),
                time,
                "bench",
                Input::Apply {
                    manifest: manifest.into(),
                },
            );
            group.bench_function(format!("{name}/{size}"), |b| {
                // The state is returned so that criterion drops it outside the timed part:
                // freeing a 100,000-cluster state costs more than the pass being measured.
                b.iter_batched(
                    || state.clone(),
                    |mut state| {
                        let decisions = step(&mut state, &event);
                        black_box((state, decisions))
                    },
                    BatchSize::LargeInput,
                );
            });
            let mut scheduled = state.clone();
            step(&mut scheduled, &event);
            let after = encode_checkpoint(&scheduled).map(|b| b.len()).unwrap_or(0);
            println!(
                "  {name}: state grows by {} bytes ({} per member cluster)",
                after - bytes,
                (after - bytes) / size
            );
        }
    }
    group.finish();
}

criterion_group!(benches, pass);
criterion_main!(benches);

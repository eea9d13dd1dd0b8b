//! What a checkpoint costs the writer: the time to take `State::snapshot` (members and
//! bindings shared, the rest copied) of a fleet whose staged update run went through every
//! cluster, part by part, beside the encoding the writer used to do under its lock
//! (`encode_once`), and a raw ceiling in the same run: copying a `Vec<String>` of the fleet's
//! names, the least a snapshot that copies its keys can cost. A single timed run per part;
//! `cargo bench -p flotilla-core --bench snapshot` (100,000, 300,000 and 1,000,000 clusters; 100 under
//! `cargo test`). Figures in docs/benchmarks.md.

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use flotilla_core::{Envelope, Input, State, step};
use uuid::Uuid;

const RUN: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterStagedUpdateRun","metadata":{"name":"r"},"spec":{"placementName":"everywhere","stagedRolloutStrategyName":"s","state":"Run"}}"#;
const STRATEGY: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterStagedUpdateStrategy","metadata":{"name":"s"},"spec":{"stages":[{"name":"all","labelSelector":{"matchLabels":{"env":"prod"}},"maxConcurrency":"100%"}]}}"#;
const PLACEMENT: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourcePlacement","metadata":{"name":"everywhere"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}],"strategy":{"type":"External"}}}"#;
const NAMESPACE: &str = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#;

/// A fleet of `size` joined clusters, one External PickAll placement, and a one-stage run
/// that bound every cluster, each of which reported its work available.
fn fleet(size: usize) -> State {
    let mut state = State::default();
    let start = Utc
        .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default();
    let mut id = 0_u128;
    let mut send = |state: &mut State, input: Input| {
        id += 1;
        let time = start + chrono::Duration::milliseconds(i64::try_from(id).unwrap_or(0) / 100);
        step(
            state,
            &Envelope::new(Uuid::from_u128(id), time, "bench", input),
        );
    };
    let apply = |manifest: &str| Input::Apply {
        manifest: manifest.to_owned(),
    };
    send(&mut state, apply(NAMESPACE));
    for input in support::join_fleet(size, |_| r#"{"env":"prod"}"#.to_owned()) {
        send(&mut state, input);
    }
    for manifest in [PLACEMENT, STRATEGY, RUN] {
        send(&mut state, apply(manifest));
    }
    let clusters: Vec<String> = state.members().keys().map(ToString::to_string).collect();
    for cluster in clusters {
        send(&mut state, support::available(cluster, 0));
    }
    state
}

/// Runs `work` once and returns how long it took, dropping its output outside the timing.
fn timed<T>(work: impl FnOnce() -> T) -> Duration {
    // A benchmark measures wall time; the clock ban is for the fold itself.
    #[allow(clippy::disallowed_methods)]
    let began = Instant::now();
    let output = work();
    let took = began.elapsed();
    drop(output);
    took
}

fn run(size: usize) {
    let state = fleet(size);
    let names: Vec<flotilla_core::state::ClusterName> = state.members().keys().cloned().collect();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let ceiling = timed(|| names.clone());
    let snapshot = timed(|| state.snapshot());
    let members = timed(|| state.members().clone());
    let deadlines = timed(|| state.heartbeat_deadlines().clone());
    let placements = timed(|| state.placements().clone());
    let runs = timed(|| state.update_runs().clone());
    let encoding = timed(|| flotilla_core::wire::checkpoint::encode_once(1, &state));
    println!("checkpoint cost, {size} clusters, a run over all of them (ms):");
    println!(
        "  snapshot (the writer's pause now)        {:9.1}",
        ms(snapshot)
    );
    println!(
        "    members                                {:9.1}",
        ms(members)
    );
    println!(
        "    heartbeat deadlines                    {:9.1}",
        ms(deadlines)
    );
    println!(
        "    placements (bindings)                  {:9.1}",
        ms(placements)
    );
    println!(
        "    update runs                            {:9.1}",
        ms(runs)
    );
    println!(
        "  encode_once (the writer's pause before)  {:9.1}",
        ms(encoding)
    );
    println!(
        "  ceiling: copy {size} names                {:9.1}",
        ms(ceiling)
    );
}

fn main() {
    for size in support::sizes(&[100_000, 300_000, 1_000_000], &[100]) {
        run(size);
    }
}

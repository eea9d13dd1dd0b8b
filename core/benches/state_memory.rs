//! The heap the folded state holds per member cluster, part by part, in the steady state of
//! `flotilla simulate --strategy staged`: the `MemberCluster` objects, their agents' first
//! heartbeats (agent status and heartbeat deadline), one External PickAll placement's bindings
//! (with the rollout's index of them), a staged update run binding them all (its per-cluster
//! status), and every cluster's report that the work is available. Counted by wrapping the
//! system allocator: bytes requested and not yet freed, so what the fold allocated and dropped
//! on the way does not count (RSS would keep it). Also the inline sizes of the two types stored
//! in the largest maps, the checkpoint bytes per cluster, and what each further PickAll
//! placement with a rolling update costs once rolled out and reported (the issue's fleet has
//! ten placements per cluster).
//!
//! `cargo bench -p flotilla-core --bench state_memory` (100,000 clusters; 1,000 under
//! `cargo test`). Figures in docs/benchmarks.md.

use std::alloc::System;

use chrono::{DateTime, TimeZone, Utc};
use flotilla_core::query::member::Member;
use flotilla_core::query::placement::binding::Binding;
use flotilla_core::{Envelope, Heartbeat, Input, State, WorkReport, step};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use uuid::Uuid;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const NAMESPACE: &str = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#;
const PICK_ALL: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{"name":"pick-all"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}],"policy":{"placementType":"PickAll"},"strategy":{"type":"External"}}}"#;
/// One stage over every cluster, all at once: the run binds every cluster in its first step.
const STRATEGY: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterStagedUpdateStrategy","metadata":{"name":"pick-all"},"spec":{"stages":[{"name":"all","labelSelector":{},"maxConcurrency":"100%"}]}}"#;
const RUN: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterStagedUpdateRun","metadata":{"name":"pick-all-run-0"},"spec":{"placementName":"pick-all","resourceSnapshotIndex":"0","stagedRolloutStrategyName":"pick-all","state":"Run"}}"#;

/// Folds inputs one after another, each with a fresh id, at one event time.
struct Folder {
    state: State,
    next_id: u128,
    time: DateTime<Utc>,
}

impl Folder {
    fn fold(&mut self, input: Input) {
        self.next_id += 1;
        let event = Envelope::new(Uuid::from_u128(self.next_id), self.time, "bench", input);
        step(&mut self.state, &event);
    }
}

/// A member cluster shaped like `flotilla simulate`'s: two labels, a heartbeat period.
fn member_cluster(i: usize) -> Input {
    let manifest = format!(
        r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"sim-{i:07}","labels":{{"environment":"production","zone":"zone-{}"}}}},"spec":{{"heartbeatPeriodSeconds":60}}}}"#,
        i % 10
    );
    Input::Apply { manifest }
}

/// Heap bytes held after `grow` ran, less those held before, per cluster.
fn held_per_cluster(folder: &mut Folder, size: usize, grow: impl FnOnce(&mut Folder)) -> i128 {
    let region = Region::new(GLOBAL);
    grow(folder);
    let change = region.change();
    // A reallocation's growth is counted in `bytes_allocated` and its shrinking in
    // `bytes_deallocated` (`bytes_reallocated` is their net, already included).
    let allocated = i128::try_from(change.bytes_allocated).unwrap_or(i128::MAX);
    let freed = i128::try_from(change.bytes_deallocated).unwrap_or(0);
    (allocated - freed) / i128::try_from(size.max(1)).unwrap_or(1)
}

fn main() {
    let size = if std::env::args().any(|arg| arg == "--bench") {
        100_000
    } else {
        1_000
    };
    let time = Utc
        .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default();
    let mut folder = Folder {
        state: State::default(),
        next_id: 0,
        time,
    };
    folder.fold(Input::Apply {
        manifest: NAMESPACE.into(),
    });
    let members = held_per_cluster(&mut folder, size, |folder| {
        (0..size).for_each(|i| folder.fold(member_cluster(i)));
    });
    let heartbeats = held_per_cluster(&mut folder, size, |folder| {
        for i in 0..size {
            folder.fold(Input::Heartbeat(Heartbeat {
                cluster: format!("sim-{i:07}"),
                ..Heartbeat::default()
            }));
        }
    });
    let bindings = held_per_cluster(&mut folder, size, |folder| {
        folder.fold(Input::Apply {
            manifest: PICK_ALL.into(),
        });
    });
    folder.fold(Input::Apply {
        manifest: STRATEGY.into(),
    });
    let run = held_per_cluster(&mut folder, size, |folder| {
        folder.fold(Input::Apply {
            manifest: RUN.into(),
        });
    });
    // Each report at its own time, so that no two clusters share a `Succeeded` condition (a
    // batch of reports appended together shares one; this counts the worst case).
    let reports = held_per_cluster(&mut folder, size, |folder| {
        for i in 0..size {
            folder.time += chrono::Duration::milliseconds(1);
            let report = WorkReport::available(format!("sim-{i:07}"), "pick-all", 0);
            folder.fold(Input::WorkReport(report));
        }
    });
    let checkpoint = flotilla_core::codec::encode_checkpoint(&folder.state)
        .map(|bytes| bytes.len() / size.max(1))
        .unwrap_or_default();
    let more = FURTHER_PLACEMENTS;
    let further = held_per_cluster(&mut folder, size * more, |folder| {
        (1..=more).for_each(|p| rolled_out(folder, &format!("pick-all-{p}")));
    });
    let bound: usize = (folder.state.placements().values())
        .map(|placement| placement.bindings.len())
        .sum();
    assert_eq!(
        bound,
        size * (more + 1),
        "every placement binds every cluster"
    );
    println!("state memory, {size} member clusters, heap bytes held per cluster:");
    println!("  MemberCluster applied                      {members:>6}");
    println!("  first heartbeat (agent status, deadline)   {heartbeats:>6}");
    println!("  PickAll placement scheduled (binding)      {bindings:>6}");
    println!("  staged run binds all (run's status)        {run:>6}");
    println!("  work reported available (report)           {reports:>6}");
    println!(
        "  total                                      {:>6}",
        members + heartbeats + bindings + run + reports
    );
    println!(
        "inline sizes: Member {} bytes, Binding {} bytes; checkpoint {checkpoint} bytes per cluster",
        std::mem::size_of::<Member>(),
        std::mem::size_of::<Binding>()
    );
    // The issue's fleet: every cluster in ten placements, none of them staged.
    let ten = members + heartbeats + 10 * further;
    println!(
        "each of {more} further PickAll placements (RollingUpdate), rolled out and reported: \
         {further} bytes per cluster; ten such placements: {ten} bytes per cluster, \
         {:.2} GiB at 1,000,000 clusters",
        ten as f64 * 1e6 / f64::from(1u32 << 30)
    );
}

/// How many PickAll placements with a rolling update the bench adds after the staged one.
const FURTHER_PLACEMENTS: usize = 9;

/// Applies a PickAll placement `name` (RollingUpdate, the defaults) and reports every work it
/// gives available until nothing is owed.
fn rolled_out(folder: &mut Folder, name: &str) {
    let manifest = format!(
        r#"{{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{{"name":"{name}"}},"spec":{{"resourceSelectors":[{{"group":"","kind":"Namespace","version":"v1","name":"app"}}],"policy":{{"placementType":"PickAll"}}}}}}"#
    );
    folder.fold(Input::Apply { manifest });
    loop {
        let owed: Vec<(String, u64)> = (folder.state.placements().iter())
            .filter(|(key, _)| &*key.name == name)
            .flat_map(|(_, placement)| placement.bindings.values())
            .filter_map(|binding| {
                let index = binding.resource_index?;
                let reported = binding.report.as_ref().map(|r| r.resource_index);
                (reported != Some(index)).then(|| (binding.cluster.to_string(), index))
            })
            .collect();
        if owed.is_empty() {
            return;
        }
        // At one time: the members' heartbeats stop at the bench's start, so ten placements'
        // reports a millisecond apart would outlast their heartbeat deadlines.
        for (cluster, index) in owed {
            let report = WorkReport::available(cluster, name, index);
            folder.fold(Input::WorkReport(report));
        }
    }
}

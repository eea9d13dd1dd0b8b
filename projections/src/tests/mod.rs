//! Unit tests: states are built by folding events with `flotilla_core::step`, exactly as the hub
//! builds them, and the rendered output is compared in full.

use chrono::{DateTime, Duration, TimeZone, Utc};
use flotilla_core::model::StringMap;
use flotilla_core::{
    Decisions, Envelope, Heartbeat, Input, ResourceUsage, State, WorkReport, step,
};
use serde_json::Value;
use uuid::Uuid;

/// A hub under test: a state and a counter for event ids.
pub(crate) struct Hub {
    pub(crate) state: State,
    next_id: u128,
}

/// The seed's sample time, 2024-04-29T09:58:20Z, plus `seconds`.
pub(crate) fn at(seconds: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 4, 29, 9, 58, 20)
        .single()
        .expect("valid time")
        + Duration::seconds(seconds)
}

impl Hub {
    pub(crate) fn new() -> Self {
        Self {
            state: State::default(),
            next_id: 1,
        }
    }

    pub(crate) fn fold(&mut self, seconds: i64, source: &str, input: Input) -> Decisions {
        let envelope = Envelope::new(Uuid::from_u128(self.next_id), at(seconds), source, input);
        self.next_id += 1;
        let before = self.state.clone();
        let decisions = step(&mut self.state, &envelope);
        if let Err(violation) =
            flotilla_core::invariants::check_step(&before, &envelope, &self.state)
        {
            panic!("invariant broken by {envelope:?}: {violation}");
        }
        decisions
    }

    pub(crate) fn apply(&mut self, seconds: i64, manifest: &Value) -> Decisions {
        let decisions = self.fold(
            seconds,
            "test",
            Input::Apply {
                manifest: manifest.to_string(),
            },
        );
        assert!(
            !decisions
                .iter()
                .any(|d| matches!(d, flotilla_core::Decision::Rejected { .. })),
            "apply rejected: {decisions:?}"
        );
        decisions
    }

    pub(crate) fn heartbeat(&mut self, seconds: i64, beat: Heartbeat) -> Decisions {
        let source = format!("agent/{}", beat.cluster);
        self.fold(seconds, &source, Input::Heartbeat(beat))
    }

    pub(crate) fn tick(&mut self, seconds: i64) -> Decisions {
        self.fold(seconds, "clock", Input::Tick)
    }

    /// A member agent's report on a `ClusterResourcePlacement`'s work at resource index 0, as
    /// `agents` sends it: applied (or failed), available, trackable or not, with a message.
    pub(crate) fn report(&mut self, seconds: i64, report: Report<'_>) -> Decisions {
        let source = format!("agent/{}", report.cluster);
        let input = Input::WorkReport(WorkReport {
            cluster: report.cluster.to_owned(),
            placement: report.placement.to_owned(),
            namespace: report.namespace.map(str::to_owned),
            resource_index: report.resource_index,
            applied: report.applied,
            available: report.available,
            trackable: report.trackable,
            message: report.message.to_owned(),
            failed_manifests: Vec::new(),
            differences: Default::default(),
        });
        self.fold(seconds, &source, input)
    }
}

/// What a test's member agent reports (see [`Hub::report`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Report<'a> {
    pub(crate) cluster: &'a str,
    pub(crate) placement: &'a str,
    pub(crate) namespace: Option<&'a str>,
    pub(crate) resource_index: u64,
    pub(crate) applied: Option<bool>,
    pub(crate) available: Option<bool>,
    pub(crate) trackable: bool,
    pub(crate) message: &'a str,
}

impl<'a> Report<'a> {
    /// Applied and available but not trackable (a Namespace and a ConfigMap), the seed's case.
    pub(crate) fn untrackable(cluster: &'a str, placement: &'a str) -> Self {
        Self {
            cluster,
            placement,
            namespace: None,
            resource_index: 0,
            applied: Some(true),
            available: Some(true),
            trackable: false,
            message: "",
        }
    }
}

/// A heartbeat carrying the seed's section 7 sample properties.
pub(crate) fn sample_heartbeat(cluster: &str) -> Heartbeat {
    let map = |pairs: &[(&str, &str)]| -> StringMap { pairs.iter().copied().collect() };
    Heartbeat {
        cluster: cluster.to_owned(),
        properties: map(&[("kubernetes-fleet.io/node-count", "2")]),
        resource_usage: Some(ResourceUsage {
            capacity: map(&[("cpu", "40"), ("memory", "20Gi")]),
            allocatable: map(&[("cpu", "32"), ("memory", "16Gi")]),
            available: map(&[("cpu", "2"), ("memory", "800Mi")]),
        }),
    }
}

/// The v1 `ClusterResourcePlacement` `crp-1` the tests apply, with `spec`.
pub(crate) fn crp_1(spec: Value) -> Value {
    serde_json::json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp-1"},
        "spec": spec
    })
}

/// A `MemberCluster` manifest with nothing but its name.
pub(crate) fn member_cluster(name: &str) -> Value {
    serde_json::json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name},
        "spec": {}
    })
}

/// Applies a `MemberCluster` with `labels` at `seconds` and joins it with a heartbeat one second
/// later (two events).
pub(crate) fn join(hub: &mut Hub, seconds: i64, name: &str, labels: &Value) {
    hub.apply(
        seconds,
        &serde_json::json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": name, "labels": labels},
            "spec": {}
        }),
    );
    hub.heartbeat(seconds + 1, sample_heartbeat(name));
}

/// A condition as the placement's controllers set it at t=20s (09:58:40), when the tests'
/// placements are applied.
pub(crate) fn at_20(kind: &str, status: &str, reason: &str, message: &str) -> Value {
    serde_json::json!({
        "lastTransitionTime": "2024-04-29T09:58:40Z",
        "message": message,
        "observedGeneration": 1,
        "reason": reason,
        "status": status,
        "type": kind
    })
}

/// A policy snapshot's `Scheduled` condition once every cluster it asks for was found.
pub(crate) fn policy_fulfilled() -> Value {
    at_20(
        "Scheduled",
        "True",
        "SchedulingPolicyFulfilled",
        "found all the clusters needed as specified by the scheduling policy",
    )
}

/// KubeFleet's sample namespace `test`, as `kubectl get -o yaml` shows it.
pub(crate) fn test_namespace() -> Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "test", "labels": {"kubernetes.io/metadata.name": "test"}},
        "spec": {"finalizers": ["kubernetes"]}
    })
}

/// The uid the hub gives an object created by event number `n` of a [`Hub`].
pub(crate) fn uid(n: u128) -> String {
    Uuid::from_u128(n).to_string()
}

mod derived;
mod describe;
mod differences;
mod envelope;
mod eviction;
mod kinds;
mod member_cluster;
mod partitioned;
mod placement;
mod placement_status;
mod progress;
mod resource_placement;
mod resources;
mod staged_runs;
mod table;
mod timeline;
mod work;

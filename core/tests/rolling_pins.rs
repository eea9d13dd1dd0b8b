//! KubeFleet's RollingUpdate rules (`spec.strategy.rollingUpdate`) that worked without a test
//! holding them: `maxUnavailable` is at least 1 ("Minimum value for MaxUnavailable is set to 1 to
//! avoid stuck rollout during in-place resource update"), and work whose availability cannot be
//! tracked counts as ready only once `unavailablePeriodSeconds` have passed since its cluster
//! reported it applied.

mod common;

use common::{Hub, namespace};
use flotilla_core::next_deadline;
use flotilla_core::{Input, WorkReport};
use serde_json::{Value, json};

fn config(version: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "test-ns"}, "data": {"version": version}})
}

/// Three joined clusters, `test-ns` with its ConfigMap, and a PickAll placement rolling out
/// with `rolling_update`.
fn fleet(rolling_update: &Value) -> Hub {
    let mut hub = Hub::new();
    for cluster in ["member-1", "member-2", "member-3"] {
        hub.join(cluster, json!({}), json!([]));
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&config("1"));
    hub.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "crp"},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                 "policy": {"placementType": "PickAll"},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling_update}}}));
    hub
}

/// The resource index each cluster's work carries, by cluster.
fn indexes(hub: &Hub) -> Vec<(String, Option<u64>)> {
    hub.placement("crp")
        .bindings
        .values()
        .map(|b| (b.cluster.to_string(), b.resource_index))
        .collect()
}

fn on_latest(hub: &Hub) -> usize {
    let latest = hub.placement("crp").latest_resources().map(|s| s.index);
    indexes(hub).iter().filter(|(_, i)| *i == latest).count()
}

/// `cluster` reports its current work applied and available, trackable as given (an agent
/// that cannot track availability reports it available but not trackable).
fn report(hub: &mut Hub, cluster: &str, trackable: bool) {
    let resource_index = hub
        .placement("crp")
        .bindings
        .get(cluster)
        .and_then(|b| b.resource_index)
        .unwrap_or(0);
    hub.send(Input::WorkReport(WorkReport {
        cluster: cluster.into(),
        placement: "crp".into(),
        namespace: None,
        resource_index,
        applied: Some(true),
        available: Some(true),
        trackable,
        message: String::new(),
        failed_manifests: Vec::new(),
        differences: Default::default(),
    }));
}

/// The cluster whose work is on the latest snapshot and that has not reported on it.
fn updated_unreported(hub: &Hub) -> Vec<String> {
    let latest = hub.placement("crp").latest_resources().map(|s| s.index);
    hub.placement("crp")
        .bindings
        .values()
        .filter(|b| b.resource_index == latest)
        .filter(|b| b.report.as_ref().map(|r| r.resource_index) != b.resource_index)
        .map(|b| b.cluster.to_string())
        .collect()
}

#[test]
fn max_unavailable_zero_still_updates_one_cluster_at_a_time() {
    for zero in [json!(0), json!("0%")] {
        let mut hub = fleet(&json!({"maxUnavailable": zero, "maxSurge": 0}));
        for cluster in ["member-1", "member-2", "member-3"] {
            report(&mut hub, cluster, true);
        }
        hub.apply(&config("2"));
        assert_eq!(
            on_latest(&hub),
            1,
            "maxUnavailable {zero} acts as 1: not stuck"
        );
        for step in 2..=3 {
            let updated = updated_unreported(&hub);
            assert_eq!(updated.len(), 1, "one at a time");
            report(&mut hub, &updated[0], true);
            assert_eq!(on_latest(&hub), step);
        }
    }
}

#[test]
fn untrackable_work_counts_as_ready_after_the_unavailable_period() {
    let mut hub =
        fleet(&json!({"maxUnavailable": 1, "maxSurge": 0, "unavailablePeriodSeconds": 30}));
    for cluster in ["member-1", "member-2", "member-3"] {
        report(&mut hub, cluster, false);
    }
    // Initial placement needs no readiness; now an update, one cluster at a time.
    hub.advance(30);
    hub.apply(&config("2"));
    assert_eq!(on_latest(&hub), 1);
    let first = updated_unreported(&hub);
    report(&mut hub, &first[0], false);
    let reported_at = hub.now;
    assert_eq!(on_latest(&hub), 1, "not trackable: not ready yet");
    assert_eq!(
        next_deadline(&hub.state),
        Some(reported_at + chrono::Duration::seconds(30)),
        "the core asks to be woken when the period ends"
    );
    hub.advance(29);
    assert_eq!(on_latest(&hub), 1, "29 s: still waiting");
    hub.advance(1);
    assert_eq!(
        on_latest(&hub),
        2,
        "30 s: ready, the next cluster is updated"
    );
}

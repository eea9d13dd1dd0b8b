//! KubeFleet's documented scheduling statements and examples, each
//! with the outcome the seeds (and, where they are silent, KubeFleet) state.

mod common;

use common::{Hub, crp, names, namespace};
use flotilla_core::decision::Decision;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::placement::BindingState;
use serde_json::json;

fn four_clusters(hub: &mut Hub, labels: [serde_json::Value; 4]) {
    hub.apply(&namespace("test-ns"));
    for (i, labels) in labels.into_iter().enumerate() {
        hub.join(&format!("cluster-{}", i + 1), labels, json!([]));
    }
}

#[test]
fn pick_n_with_affinity_picks_n_matching_clusters_larger_names_first() {
    // KubeFleet's safe-rollout example 1: four env=prod clusters, PickN 3. Equal scores: KubeFleet
    // picks the lexicographically larger names first.
    let mut hub = Hub::new();
    let prod = || json!({"env": "prod"});
    four_clusters(&mut hub, [prod(), prod(), prod(), prod()]);
    hub.apply(&crp(
        "crp-1",
        json!({
            "placementType": "PickN", "numberOfClusters": 3,
            "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]}}}
        }),
    ));
    assert_eq!(
        hub.selected("crp-1"),
        names(&["cluster-2", "cluster-3", "cluster-4"])
    );
    let (status, reason, message) = hub.scheduled("crp-1");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "SchedulingPolicyFulfilled")
    );
    assert_eq!(
        message,
        "found all the clusters needed as specified by the scheduling policy"
    );
    let snapshot = hub
        .placement("crp-1")
        .latest_policy()
        .expect("a policy snapshot");
    assert_eq!(snapshot.not_selected.len(), 1);
    assert_eq!(snapshot.not_selected[0].cluster, "cluster-1");
    assert_eq!(
        snapshot.not_selected[0].reason,
        "cluster does not score high enough"
    );
}

#[test]
fn pick_n_policy_change_from_west_to_east_picks_new_clusters_and_unschedules_the_old() {
    // KubeFleet's safe-rollout example 2.
    let mut hub = Hub::new();
    let west = || json!({"loc": "west"});
    let east = || json!({"loc": "east"});
    four_clusters(&mut hub, [west(), west(), east(), east()]);
    let policy = |loc: &str| {
        json!({
            "placementType": "PickN", "numberOfClusters": 2,
            "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"loc": loc}}}]}}}
        })
    };
    hub.apply(&crp("crp-1", policy("west")));
    assert_eq!(hub.selected("crp-1"), names(&["cluster-1", "cluster-2"]));
    let decisions = hub.apply(&crp("crp-1", policy("east")));
    assert!(decisions.contains(&Decision::PolicySnapshotTaken {
        placement: ObjectKey::cluster_scoped(
            "placement.kubernetes-fleet.io",
            "ClusterResourcePlacement",
            "crp-1"
        ),
        index: 1
    }));
    assert_eq!(hub.selected("crp-1"), names(&["cluster-3", "cluster-4"]));
    assert_eq!(hub.unscheduled("crp-1"), names(&["cluster-1", "cluster-2"]));
    let placement = hub.placement("crp-1");
    assert_eq!(placement.policy_snapshots.len(), 2);
    assert_eq!(
        placement
            .bindings
            .get("cluster-1")
            .expect("a binding")
            .previous_state,
        Some(BindingState::Bound),
        "the previous state is kept for a later re-pick"
    );
}

#[test]
fn a_taint_keeps_new_placements_away_unless_tolerated_and_never_evicts() {
    // KubeFleet's taints and tolerations.
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    hub.join(
        "member-1",
        json!({}),
        json!([{"key": "gpu-workload", "value": "true", "effect": "NoSchedule"}]),
    );
    hub.join("member-2", json!({}), json!([]));
    hub.apply(&crp("plain", json!({"placementType": "PickAll"})));
    assert_eq!(hub.selected("plain"), names(&["member-2"]));
    let reason = &hub
        .placement("plain")
        .latest_policy()
        .expect("snapshot")
        .not_selected[0]
        .reason;
    assert_eq!(
        reason,
        "ClusterUnschedulable, taint &{Key:gpu-workload Value:true Effect:NoSchedule} cannot be tolerated"
    );
    hub.apply(&crp(
        "tolerant",
        json!({"placementType": "PickAll",
        "tolerations": [{"key": "gpu-workload", "operator": "Exists"}]}),
    ));
    assert_eq!(hub.selected("tolerant"), names(&["member-1", "member-2"]));
    hub.apply(&crp(
        "equal",
        json!({"placementType": "PickAll",
        "tolerations": [{"key": "gpu-workload", "operator": "Equal", "value": "false"}]}),
    ));
    assert_eq!(
        hub.selected("equal"),
        names(&["member-2"]),
        "Equal needs the same value"
    );
    // A new taint on member-2 does not evict what is already placed there.
    hub.apply(&common::member(
        "member-2",
        json!({}),
        json!([{"key": "maintenance", "effect": "NoSchedule"}]),
    ));
    assert_eq!(hub.selected("plain"), names(&["member-2"]));
    assert!(hub.unscheduled("plain").is_empty());
}

#[test]
fn pick_fixed_ignores_taints_and_reports_names_that_are_not_members() {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    hub.join(
        "prod-cluster-1",
        json!({}),
        json!([{"key": "gpu", "effect": "NoSchedule"}]),
    );
    hub.apply(&crp(
        "fixed",
        json!({"placementType": "PickFixed",
        "clusterNames": ["prod-cluster-1", "prod-cluster-2"]}),
    ));
    assert_eq!(hub.selected("fixed"), names(&["prod-cluster-1"]));
    let (status, reason, message) = hub.scheduled("fixed");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "SchedulingPolicyUnfulfilled")
    );
    assert_eq!(
        message,
        "could not find all clusters needed as specified by the scheduling policy, found 1 cluster(s) instead"
    );
    let snapshot = hub.placement("fixed").latest_policy().expect("snapshot");
    assert_eq!(snapshot.not_selected.len(), 1);
    assert_eq!(snapshot.not_selected[0].cluster, "prod-cluster-2");
    assert_eq!(
        snapshot.not_selected[0].reason,
        "specified cluster is not found"
    );
    // The missing cluster joins: PickFixed is not fully scheduled, so it schedules again.
    hub.join("prod-cluster-2", json!({}), json!([]));
    assert_eq!(
        hub.selected("fixed"),
        names(&["prod-cluster-1", "prod-cluster-2"])
    );
    assert_eq!(hub.scheduled("fixed").0, "True");
}

#[test]
fn pick_n_scale_out_keeps_existing_bindings_and_the_policy_snapshot() {
    // KubeFleet's scheduler: a scale-out updates the current snapshot's cluster count.
    let mut hub = Hub::new();
    let any = || json!({});
    four_clusters(&mut hub, [any(), any(), any(), any()]);
    hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 2}),
    ));
    assert_eq!(hub.selected("crp-1"), names(&["cluster-3", "cluster-4"]));
    let before: Vec<String> = hub
        .placement("crp-1")
        .bindings
        .values()
        .map(|b| b.name("crp-1"))
        .collect();
    let decisions = hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 3}),
    ));
    assert!(
        !decisions
            .iter()
            .any(|d| matches!(d, Decision::PolicySnapshotTaken { .. }))
    );
    assert_eq!(
        hub.selected("crp-1"),
        names(&["cluster-2", "cluster-3", "cluster-4"])
    );
    let placement = hub.placement("crp-1");
    assert_eq!(placement.policy_snapshots.len(), 1);
    assert_eq!(
        placement.latest_policy().and_then(|p| p.number_of_clusters),
        Some(3)
    );
    for name in before {
        assert!(
            placement.bindings.values().any(|b| b.name("crp-1") == name),
            "binding {name} moved"
        );
    }
    // Scale in: Scheduled bindings with the lowest scores, then names ascending, go first.
    hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 1}),
    ));
    assert_eq!(hub.selected("crp-1"), names(&["cluster-4"]));
}

#[test]
fn pick_n_without_enough_clusters_says_how_many_it_found_and_fills_up_later() {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    hub.join("cluster-1", json!({}), json!([]));
    hub.join("cluster-2", json!({}), json!([]));
    hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 3}),
    ));
    let (status, _, message) = hub.scheduled("crp-1");
    assert_eq!(status, "False");
    assert_eq!(
        message,
        "could not find all clusters needed as specified by the scheduling policy, found 2 cluster(s) instead"
    );
    hub.join("cluster-3", json!({}), json!([]));
    assert_eq!(
        hub.selected("crp-1"),
        names(&["cluster-1", "cluster-2", "cluster-3"])
    );
    assert_eq!(hub.scheduled("crp-1").0, "True");
}

#[test]
fn a_newly_joined_eligible_cluster_is_picked_up_by_pick_all() {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    hub.join("member-1", json!({"env": "prod"}), json!([]));
    hub.apply(&crp(
        "all",
        json!({"placementType": "PickAll",
        "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]}}}}),
    ));
    assert_eq!(hub.selected("all"), names(&["member-1"]));
    hub.apply(&common::member(
        "member-2",
        json!({"env": "prod"}),
        json!([]),
    ));
    assert_eq!(hub.selected("all"), names(&["member-1"]), "not joined yet");
    let decisions = hub.beat("member-2");
    assert!(decisions.contains(&Decision::ClusterScheduled {
        placement: ObjectKey::cluster_scoped(
            "placement.kubernetes-fleet.io",
            "ClusterResourcePlacement",
            "all"
        ),
        cluster: "member-2".into()
    }));
    assert_eq!(hub.selected("all"), names(&["member-1", "member-2"]));
    hub.join("member-3", json!({"env": "dev"}), json!([]));
    assert_eq!(hub.selected("all"), names(&["member-1", "member-2"]));
    // A label change that makes it match counts as the cluster becoming eligible.
    hub.apply(&common::member(
        "member-3",
        json!({"env": "prod"}),
        json!([]),
    ));
    assert_eq!(
        hub.selected("all"),
        names(&["member-1", "member-2", "member-3"])
    );
}

#[test]
fn a_cluster_that_stops_heartbeating_is_not_picked_but_keeps_what_it_has() {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    hub.join("member-1", json!({}), json!([]));
    hub.apply(&crp("before", json!({"placementType": "PickAll"})));
    hub.advance(60);
    hub.join("member-2", json!({}), json!([]));
    hub.advance(250);
    // member-1 has been silent for 310 s (> 5 × 60 s): ineligible; member-2 is fine.
    hub.beat("member-2");
    assert!(!hub.state.members()["member-1"].is_eligible());
    hub.apply(&crp("after", json!({"placementType": "PickAll"})));
    assert_eq!(hub.selected("after"), names(&["member-2"]));
    let reason = &hub
        .placement("after")
        .latest_policy()
        .expect("snapshot")
        .not_selected[0]
        .reason;
    assert_eq!(
        reason,
        "ClusterUnschedulable, cluster is not connected to the fleet: no recent heartbeat signals (last received 5.17 minutes ago)"
    );
    // IgnoredDuringExecution: the earlier placement keeps member-1.
    assert_eq!(hub.selected("before"), names(&["member-1", "member-2"]));
    // Back again: PickAll picks it up for "after" too.
    hub.beat("member-1");
    assert_eq!(hub.selected("after"), names(&["member-1", "member-2"]));
}

#[test]
fn a_cluster_leaving_loses_its_bindings_at_once_and_pick_n_refills() {
    let mut hub = Hub::new();
    let any = || json!({});
    four_clusters(&mut hub, [any(), any(), any(), any()]);
    hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 2}),
    ));
    assert_eq!(hub.selected("crp-1"), names(&["cluster-3", "cluster-4"]));
    hub.delete("MemberCluster", "cluster-4");
    assert_eq!(hub.selected("crp-1"), names(&["cluster-2", "cluster-3"]));
    // Released and removed in the same step: nothing is left on the leaving cluster.
    assert!(hub.unscheduled("crp-1").is_empty());
    assert!(!hub.placement("crp-1").bindings.contains_key("cluster-4"));
}

#[test]
fn topology_spread_picks_one_at_a_time_across_domains() {
    // KubeFleet's crp-1 sample: PickN 2 spread over "env" with maxSkew 1.
    let mut hub = Hub::new();
    four_clusters(
        &mut hub,
        [
            json!({"env": "a"}),
            json!({"env": "a"}),
            json!({"env": "b"}),
            json!({"env": "b"}),
        ],
    );
    hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 2,
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "env",
            "whenUnsatisfiable": "DoNotSchedule"}]}),
    ));
    let selected = hub.selected("crp-1");
    assert_eq!(
        selected,
        names(&["cluster-2", "cluster-4"]),
        "one per domain, larger names first"
    );
    let placement = hub.placement("crp-1");
    let second = &placement
        .bindings
        .get("cluster-2")
        .expect("a binding")
        .decision;
    assert_eq!(
        second.score.map(|s| s.topology_spread),
        Some(1),
        "it reduced the skew"
    );
}

#[test]
fn preferred_affinity_with_a_property_sorter_scores_by_node_count() {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    for (name, nodes) in [("small", "2"), ("medium", "6"), ("large", "10")] {
        hub.apply(&common::member(name, json!({}), json!([])));
        hub.beat_with(name, &[("kubernetes-fleet.io/node-count", nodes)]);
    }
    hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 2,
        "affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 20, "preference": {"propertySorter":
                {"name": "kubernetes-fleet.io/node-count", "sortOrder": "Descending"}}}]}}}),
    ));
    assert_eq!(hub.selected("crp-1"), names(&["large", "medium"]));
    let bindings = &hub.placement("crp-1").bindings;
    assert_eq!(
        bindings
            .get("large")
            .expect("a binding")
            .decision
            .score
            .map(|s| s.affinity),
        Some(20)
    );
    assert_eq!(
        bindings
            .get("medium")
            .expect("a binding")
            .decision
            .score
            .map(|s| s.affinity),
        Some(10)
    );
}

#[test]
fn required_property_selectors_filter_by_quantity() {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    for (name, nodes) in [("small", "2"), ("large", "10")] {
        hub.apply(&common::member(name, json!({}), json!([])));
        hub.beat_with(name, &[("kubernetes-fleet.io/node-count", nodes)]);
    }
    hub.apply(&crp("crp-1", json!({"placementType": "PickAll",
        "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"clusterSelectorTerms": [{"propertySelector": {"matchExpressions": [
                {"name": "kubernetes-fleet.io/node-count", "operator": "Ge", "values": ["5"]}]}}]}}}})));
    assert_eq!(hub.selected("crp-1"), names(&["large"]));
}

#[test]
fn resource_only_changes_take_a_snapshot_but_never_reschedule() {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    hub.join("member-1", json!({}), json!([]));
    hub.apply(&crp(
        "crp-1",
        json!({"placementType": "PickN", "numberOfClusters": 1}),
    ));
    let resources_before = hub.placement("crp-1").resource_snapshots.len();
    let decisions = hub.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "test-ns"}, "data": {"k": "v"}}));
    assert!(
        decisions
            .iter()
            .any(|d| matches!(d, Decision::ResourceSnapshotTaken { index: 1, .. }))
    );
    assert!(!decisions.iter().any(|d| matches!(
        d,
        Decision::ClusterScheduled { .. }
            | Decision::ClusterUnscheduled { .. }
            | Decision::PolicySnapshotTaken { .. }
    )));
    assert_eq!(
        hub.placement("crp-1").resource_snapshots.len(),
        resources_before + 1
    );
    let latest = hub.placement("crp-1").latest_resources().expect("snapshot");
    let kinds: Vec<&str> = latest
        .resources
        .iter()
        .map(|r| r.key.kind.as_str())
        .collect();
    assert_eq!(kinds, ["Namespace", "ConfigMap"]);
}

#[test]
fn selecting_a_reserved_namespace_is_invalid() {
    let mut hub = Hub::new();
    hub.apply(
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}),
    );
    let mut placement = crp("crp-1", json!({"placementType": "PickAll"}));
    placement["spec"]["resourceSelectors"][0]["name"] = json!("kube-system");
    hub.apply(&placement);
    let (status, reason, message) = hub.scheduled("crp-1");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidResourceSelectors")
    );
    assert_eq!(
        message,
        "The resource selectors are invalid: failed to process the request due to a client error: \
         invalid clusterRresourcePlacement crp-1: namespace kube-system is not allowed to propagate"
    );
    assert!(hub.placement("crp-1").policy_snapshots.is_empty());
}

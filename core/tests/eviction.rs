//! Proves KubeFleet's eviction rules as flotilla folds them: each validity check and execution
//! rule with its exact condition and message, that an eviction is terminal once reconciled,
//! that an executed eviction lets the scheduler pick the cluster again unless a taint keeps it
//! out, that involuntary disruptions count against the budget, and that every validation rule
//! of the two kinds answers with a message naming the field.

mod common;
mod eviction_support;

use common::Hub;
use eviction_support::{
    PLACEMENT, allowed, blocked, budget, clusters_in, conditions, evict, eviction, executed, fleet,
    invalid, not_executed, pick_all, pick_n, place, removed, report, tainted,
};
use flotilla_core::decision::{Decision, RejectCode};
use flotilla_core::query::placement::BindingState;
use serde_json::{Value, json};

const THREE: [&str; 3] = ["member-1", "member-2", "member-3"];
const FOUR: [&str; 4] = ["member-1", "member-2", "member-3", "member-4"];

fn rejection(decisions: &[Decision]) -> (RejectCode, String) {
    match decisions {
        [Decision::Rejected { code, message }] => (*code, message.clone()),
        other => panic!("expected one rejection, got {other:?}"),
    }
}

// ---- validity checks, in order ----

#[test]
fn an_eviction_of_a_missing_placement_is_invalid() {
    let mut hub = fleet(&THREE);
    let decisions = hub.apply(&eviction("evict", "nope", "member-1"));
    assert_eq!(
        conditions(&hub, "evict"),
        invalid("Failed to find ClusterResourcePlacement targeted by eviction")
    );
    assert!(decisions.iter().any(|d| matches!(
        d,
        Decision::EvictionReconciled {
            valid: false,
            executed: false,
            ..
        }
    )));
}

#[test]
fn an_eviction_of_a_pick_fixed_placement_is_invalid_and_keeps_the_binding() {
    let mut hub = fleet(&THREE);
    place(
        &mut hub,
        &json!({"placementType": "PickFixed", "clusterNames": ["member-1", "member-2"]}),
        &Value::Null,
    );
    let decisions = evict(&mut hub, "evict", "member-1");
    assert_eq!(
        conditions(&hub, "evict"),
        invalid(
            "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction"
        )
    );
    assert!(!removed(&decisions, "member-1"));
    assert_eq!(
        clusters_in(&hub, BindingState::Bound),
        ["member-1", "member-2"]
    );
}

#[test]
fn an_eviction_from_a_cluster_without_a_binding_is_invalid() {
    let mut hub = fleet(&THREE);
    pick_n(&mut hub, 2);
    // Equal scores pick the larger names first: member-2 and member-3.
    evict(&mut hub, "evict", "member-1");
    assert_eq!(
        conditions(&hub, "evict"),
        invalid("Failed to find scheduler decision for placement in cluster targeted by eviction")
    );
}

// ---- execution rules, first match wins ----

#[test]
fn nothing_placed_yet_is_not_executed() {
    let mut hub = fleet(&THREE);
    // An External strategy leaves the bindings Scheduled: nothing reached the clusters.
    place(
        &mut hub,
        &json!({"placementType": "PickAll"}),
        &json!({"type": "External"}),
    );
    assert_eq!(clusters_in(&hub, BindingState::Scheduled), THREE);
    let decisions = evict(&mut hub, "evict", "member-1");
    assert_eq!(
        conditions(&hub, "evict"),
        not_executed(
            "Eviction is blocked, placement has not propagated resources to target cluster yet"
        )
    );
    assert!(!removed(&decisions, "member-1"));
}

#[test]
fn an_unscheduled_binding_that_was_bound_is_still_placed_and_can_be_evicted() {
    let mut hub = fleet(&THREE);
    // Bound but never reported available: scaling in leaves one Unscheduled binding the
    // rollout may not remove yet.
    place(
        &mut hub,
        &json!({"placementType": "PickN", "numberOfClusters": 2}),
        &Value::Null,
    );
    for cluster in ["member-2", "member-3"] {
        report(&mut hub, cluster, true, false);
    }
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": PLACEMENT},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
            "policy": {"placementType": "PickN", "numberOfClusters": 1}
        }
    }));
    let unscheduled = clusters_in(&hub, BindingState::Unscheduled);
    assert_eq!(unscheduled.len(), 1, "one binding waits to be removed");
    let decisions = evict(&mut hub, "evict", &unscheduled[0]);
    assert_eq!(
        conditions(&hub, "evict"),
        executed("Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified")
    );
    assert!(removed(&decisions, &unscheduled[0]));
}

#[test]
fn a_failed_placement_is_evicted_without_checking_the_budget() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    report(&mut hub, "member-2", false, false);
    // This budget would block any eviction.
    budget(&mut hub, &json!({"minAvailable": 3}));
    let decisions = evict(&mut hub, "evict", "member-2");
    assert_eq!(
        conditions(&hub, "evict"),
        executed("Eviction is allowed, placement has failed")
    );
    assert!(removed(&decisions, "member-2"));
}

#[test]
fn without_a_budget_the_eviction_is_executed() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    let decisions = evict(&mut hub, "evict", "member-2");
    assert_eq!(
        conditions(&hub, "evict"),
        executed("Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified")
    );
    assert!(removed(&decisions, "member-2"));
}

#[test]
fn a_budget_for_another_placement_does_not_guard_this_one() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementDisruptionBudget",
        "metadata": {"name": "other"},
        "spec": {"minAvailable": 3}
    }));
    evict(&mut hub, "evict", "member-2");
    assert_eq!(
        conditions(&hub, "evict"),
        executed("Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified")
    );
}

#[test]
fn the_budget_allows_or_blocks_with_the_counts_in_the_message() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    budget(&mut hub, &json!({"minAvailable": 2}));
    evict(&mut hub, "first", "member-1");
    assert_eq!(conditions(&hub, "first"), executed(&allowed(3, 3)));
    // member-1 is picked again at once, but its new work is not available yet.
    evict(&mut hub, "second", "member-2");
    assert_eq!(conditions(&hub, "second"), not_executed(&blocked(2, 3)));
}

#[test]
fn involuntary_disruptions_count_against_the_budget() {
    let mut hub = fleet(&THREE);
    pick_n(&mut hub, 3);
    budget(&mut hub, &json!({"maxUnavailable": 1}));
    // member-1's work stops being available: nothing blocks that, but it uses the budget.
    report(&mut hub, "member-1", true, false);
    let decisions = evict(&mut hub, "evict", "member-2");
    assert_eq!(conditions(&hub, "evict"), not_executed(&blocked(2, 3)));
    assert!(!removed(&decisions, "member-2"));
    // Not available is not failed: evicting member-1 itself is subject to the budget too.
    evict(&mut hub, "evict-1", "member-1");
    assert_eq!(conditions(&hub, "evict-1"), not_executed(&blocked(2, 3)));
    // Once it recovers, the budget has room again.
    report(&mut hub, "member-1", true, true);
    evict(&mut hub, "evict-2", "member-2");
    assert_eq!(conditions(&hub, "evict-2"), executed(&allowed(3, 3)));
}

// ---- terminal ----

#[test]
fn a_blocked_eviction_stays_blocked_when_the_budget_changes() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    budget(&mut hub, &json!({"minAvailable": 3}));
    evict(&mut hub, "evict", "member-2");
    let before = conditions(&hub, "evict");
    assert_eq!(before, not_executed(&blocked(3, 3)));
    budget(&mut hub, &json!({"minAvailable": 0}));
    hub.delete("ClusterResourcePlacementDisruptionBudget", PLACEMENT);
    hub.advance(600);
    assert_eq!(conditions(&hub, "evict"), before);
    assert!(hub.placement(PLACEMENT).bindings.contains_key("member-2"));
    // Re-applying it is a no-op, not a second attempt.
    let again = evict(&mut hub, "evict", "member-2");
    assert!(
        matches!(again.as_slice(), [Decision::ObjectUnchanged { .. }]),
        "{again:?}"
    );
    assert_eq!(conditions(&hub, "evict"), before);
    assert!(hub.placement(PLACEMENT).bindings.contains_key("member-2"));
}

#[test]
fn an_invalid_eviction_stays_invalid_when_its_placement_appears() {
    let mut hub = fleet(&THREE);
    evict(&mut hub, "evict", "member-2");
    pick_all(&mut hub);
    assert_eq!(
        conditions(&hub, "evict"),
        invalid("Failed to find ClusterResourcePlacement targeted by eviction")
    );
    assert!(hub.placement(PLACEMENT).bindings.contains_key("member-2"));
}

#[test]
fn a_label_change_is_stored_without_reconciling_again() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    budget(&mut hub, &json!({"minAvailable": 3}));
    evict(&mut hub, "evict", "member-2");
    budget(&mut hub, &json!({"minAvailable": 0}));
    let mut labelled = eviction("evict", PLACEMENT, "member-2");
    labelled["metadata"]["labels"] = json!({"team": "platform"});
    let decisions = hub.apply(&labelled);
    assert!(
        matches!(
            decisions.as_slice(),
            [Decision::ObjectStored {
                generation: 1,
                created: false,
                ..
            }]
        ),
        "{decisions:?}"
    );
    assert_eq!(conditions(&hub, "evict"), not_executed(&blocked(3, 3)));
}

#[test]
fn the_eviction_spec_is_immutable() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    evict(&mut hub, "evict", "member-2");
    let (code, message) = rejection(&hub.apply(&eviction("evict", PLACEMENT, "member-3")));
    assert_eq!(code, RejectCode::ImmutableField);
    assert_eq!(
        message,
        "ClusterResourcePlacementEviction/evict: spec.clusterName: The ClusterName field is \
         immutable (stored \"member-2\", applied \"member-3\"); delete the eviction and create \
         it again to evict anew"
    );
    let (code, message) = rejection(&hub.apply(&eviction("evict", "other", "member-2")));
    assert_eq!(code, RejectCode::ImmutableField);
    assert!(
        message.contains("spec.placementName: The PlacementName field is immutable"),
        "{message}"
    );
}

#[test]
fn deleting_and_creating_an_eviction_again_reconciles_it_anew() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    budget(&mut hub, &json!({"minAvailable": 3}));
    evict(&mut hub, "evict", "member-2");
    assert_eq!(conditions(&hub, "evict"), not_executed(&blocked(3, 3)));
    let deleted = hub.delete("ClusterResourcePlacementEviction", "evict");
    assert!(
        matches!(deleted.as_slice(), [Decision::ObjectDeleted { .. }]),
        "{deleted:?}"
    );
    budget(&mut hub, &json!({"minAvailable": 2}));
    evict(&mut hub, "evict", "member-2");
    assert_eq!(conditions(&hub, "evict"), executed(&allowed(3, 3)));
    let missing = hub.delete("ClusterResourcePlacementDisruptionBudget", "nope");
    assert_eq!(
        rejection(&missing),
        (
            RejectCode::NotFound,
            "ClusterResourcePlacementDisruptionBudget nope not found".to_owned()
        )
    );
}

// ---- what an executed eviction does next ----

#[test]
fn pick_all_picks_the_evicted_cluster_again() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    let decisions = evict(&mut hub, "evict", "member-2");
    assert!(removed(&decisions, "member-2"));
    let removed_at = decisions
        .iter()
        .position(|d| matches!(d, Decision::BindingRemoved { .. }));
    let scheduled_at = decisions.iter().position(
        |d| matches!(d, Decision::ClusterScheduled { cluster, .. } if cluster == "member-2"),
    );
    assert!(
        removed_at < scheduled_at,
        "removed, then picked again: {decisions:?}"
    );
    // The rollout bound the new binding in the same step; its work is not reported yet.
    assert_eq!(clusters_in(&hub, BindingState::Bound), THREE);
    assert!(
        hub.placement(PLACEMENT)
            .bindings
            .get("member-2")
            .expect("a binding")
            .report
            .is_none()
    );
}

#[test]
fn pick_all_leaves_a_tainted_cluster_out_after_the_eviction() {
    let mut hub = fleet(&THREE);
    pick_all(&mut hub);
    // The documented drain flow: taint first (existing bindings stay), then evict.
    hub.apply(&tainted("member-2"));
    assert_eq!(clusters_in(&hub, BindingState::Bound), THREE);
    let decisions = evict(&mut hub, "evict", "member-2");
    assert!(removed(&decisions, "member-2"));
    assert_eq!(
        clusters_in(&hub, BindingState::Bound),
        ["member-1", "member-3"]
    );
    assert!(!hub.placement(PLACEMENT).bindings.contains_key("member-2"));
}

#[test]
fn pick_n_may_pick_the_evicted_cluster_again() {
    let mut hub = fleet(&FOUR);
    pick_n(&mut hub, 3);
    assert_eq!(
        clusters_in(&hub, BindingState::Bound),
        ["member-2", "member-3", "member-4"]
    );
    evict(&mut hub, "evict", "member-4");
    // Equal scores pick the larger name first: member-4 again, not member-1.
    assert_eq!(
        clusters_in(&hub, BindingState::Bound),
        ["member-2", "member-3", "member-4"]
    );
}

#[test]
fn pick_n_picks_another_cluster_when_the_evicted_one_is_tainted() {
    let mut hub = fleet(&FOUR);
    pick_n(&mut hub, 3);
    hub.apply(&tainted("member-4"));
    evict(&mut hub, "evict", "member-4");
    assert_eq!(
        clusters_in(&hub, BindingState::Bound),
        ["member-1", "member-2", "member-3"]
    );
}

#[test]
fn an_eviction_unblocks_a_rollout_held_by_max_unavailable() {
    let mut hub = fleet(&THREE);
    place(
        &mut hub,
        &json!({"placementType": "PickAll"}),
        &json!({"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
    );
    // A resource change reaches member-1 first, which never becomes available: the rollout
    // holds the other two at the old resources.
    hub.apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "test-ns"}, "data": {"v": "2"}
    }));
    report(&mut hub, "member-1", true, false);
    hub.advance(60);
    let index = |hub: &Hub, cluster: &str| {
        hub.placement(PLACEMENT)
            .bindings
            .get(cluster)
            .expect("a binding")
            .resource_index
    };
    assert_eq!(index(&hub, "member-1"), Some(1));
    assert_eq!(
        index(&hub, "member-2"),
        Some(0),
        "blocked by maxUnavailable"
    );
    // Taint member-1 and evict it: the placement shrinks to two and the rollout moves on.
    hub.apply(&tainted("member-1"));
    evict(&mut hub, "evict", "member-1");
    assert_eq!(
        conditions(&hub, "evict"),
        executed("Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified",)
    );
    assert_eq!(
        index(&hub, "member-2"),
        Some(1),
        "unblocked by the eviction"
    );
    assert_eq!(index(&hub, "member-3"), Some(0), "still one at a time");
}

// ---- validation messages ----

fn refused(hub: &mut Hub, manifest: &Value) -> String {
    let (code, message) = rejection(&hub.apply(manifest));
    assert_eq!(code, RejectCode::InvalidObject, "{message}");
    message
}

fn budget_manifest(spec: &Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementDisruptionBudget",
        "metadata": {"name": PLACEMENT},
        "spec": spec
    })
}

#[test]
fn a_budget_with_both_or_neither_bound_is_refused() {
    let mut hub = Hub::new();
    assert_eq!(
        refused(
            &mut hub,
            &budget_manifest(&json!({"maxUnavailable": 1, "minAvailable": 1}))
        ),
        "spec: Both MaxUnavailable and MinAvailable cannot be specified: set exactly one of \
         maxUnavailable and minAvailable"
    );
    assert_eq!(
        refused(&mut hub, &budget_manifest(&json!({}))),
        "spec: exactly one of maxUnavailable and minAvailable must be set, and neither is"
    );
}

#[test]
fn a_budget_bound_must_be_a_count_or_a_percentage() {
    let mut hub = Hub::new();
    let rule = "is invalid: an integer must be greater than or equal to 0, a string must be a \
                percentage matching ^(100|[0-9]{1,2})%$";
    let cases = [
        (
            json!({"maxUnavailable": "101%"}),
            format!("spec.maxUnavailable: \"101%\" {rule}"),
        ),
        (
            json!({"minAvailable": "5.5%"}),
            format!("spec.minAvailable: \"5.5%\" {rule}"),
        ),
        (
            json!({"minAvailable": "2"}),
            format!("spec.minAvailable: \"2\" {rule}"),
        ),
        (
            json!({"maxUnavailable": -1}),
            format!("spec.maxUnavailable: -1 {rule}"),
        ),
        (
            json!({"minAvailable": 1.5}),
            format!("spec.minAvailable: 1.5 {rule}"),
        ),
        (
            json!({"minAvailable": true}),
            format!("spec.minAvailable: true {rule}"),
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(refused(&mut hub, &budget_manifest(&spec)), want, "{spec}");
    }
}

#[test]
fn an_eviction_needs_both_targets() {
    let mut hub = Hub::new();
    let mut missing_cluster = eviction("evict", PLACEMENT, "");
    assert_eq!(
        refused(&mut hub, &missing_cluster),
        "spec.clusterName: is required"
    );
    missing_cluster["spec"] = json!({"clusterName": "member-1"});
    assert_eq!(
        refused(&mut hub, &missing_cluster),
        "spec.placementName: is required"
    );
    let long = "a".repeat(256);
    assert_eq!(
        refused(&mut hub, &eviction("evict", &long, "member-1")),
        "spec.placementName: is 256 characters long, at most 255 are allowed"
    );
    let typed = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementEviction",
        "metadata": {"name": "evict"},
        "spec": {"placementName": 3, "clusterName": "member-1"}
    });
    assert!(refused(&mut hub, &typed).starts_with("spec.placementName: invalid type"));
}

#[test]
fn both_kinds_are_cluster_scoped_and_served_as_v1beta1_and_v1alpha1() {
    let mut hub = Hub::new();
    let mut namespaced = eviction("evict", PLACEMENT, "member-1");
    namespaced["metadata"]["namespace"] = json!("default");
    assert_eq!(
        refused(&mut hub, &namespaced),
        "metadata.namespace: ClusterResourcePlacementEviction is cluster-scoped"
    );
    let mut v1 = budget_manifest(&json!({"minAvailable": 1}));
    v1["apiVersion"] = json!("placement.kubernetes-fleet.io/v1");
    assert_eq!(
        refused(&mut hub, &v1),
        "apiVersion: placement.kubernetes-fleet.io/v1 is not served (versions: v1alpha1, v1beta1)"
    );
    v1["apiVersion"] = json!("placement.kubernetes-fleet.io/v1alpha1");
    assert!(!hub.apply(&v1).iter().any(Decision::is_rejection));
}

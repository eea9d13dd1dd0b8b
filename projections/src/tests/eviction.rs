//! Proves evictions and disruption budgets render as KubeFleet's API server returns them (the
//! eviction's terminal conditions with KubeFleet's reasons and messages), resolve by their short
//! names, list with KubeFleet's printer columns, and read in the timeline.

use flotilla_core::Decision;
use flotilla_core::model::{ObjectKey, PLACEMENT_GROUP};
use serde_json::{Value, json};

use super::{Hub, Report, crp_1, join, uid};
use crate::{decision_line, describe, render_object, resolve_kind, table};

/// member1 holds `crp-1`'s work (available); a budget `crp-1` allows one disruption; eviction
/// `evict-member1` (event 7, t=10) is executed and `evict-missing` (event 8, t=11) is invalid.
fn evicted() -> Hub {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({}));
    hub.apply(
        2,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test"}}),
    );
    hub.apply(
        3,
        &crp_1(json!({
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "test"}]
        })),
    );
    hub.report(4, Report::untrackable("member1", "crp-1"));
    hub.apply(
        5,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementDisruptionBudget",
            "metadata": {"name": "crp-1"},
            "spec": {"minAvailable": 0}
        }),
    );
    for (seconds, name, placement) in [
        (10, "evict-member1", "crp-1"),
        (11, "evict-missing", "nope"),
    ] {
        hub.apply(
            seconds,
            &json!({
                "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
                "kind": "ClusterResourcePlacementEviction",
                "metadata": {"name": name},
                "spec": {"placementName": placement, "clusterName": "member1"}
            }),
        );
    }
    hub
}

fn key(kind: &str, name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(PLACEMENT_GROUP, kind, name)
}

fn condition(kind: &str, status: &str, reason: &str, message: &str, time: &str) -> Value {
    json!({
        "type": kind, "status": status, "reason": reason, "message": message,
        "observedGeneration": 1, "lastTransitionTime": time
    })
}

#[test]
fn an_executed_eviction_shows_valid_and_executed() {
    let hub = evicted();
    let object = render_object(
        &hub.state,
        &key("ClusterResourcePlacementEviction", "evict-member1"),
    );
    assert_eq!(
        object,
        Some(json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementEviction",
            "metadata": {
                "name": "evict-member1", "uid": uid(7), "resourceVersion": "5", "generation": 1,
                "creationTimestamp": "2024-04-29T09:58:30Z"
            },
            "spec": {"placementName": "crp-1", "clusterName": "member1"},
            "status": {"conditions": [
                condition("Valid", "True", "ClusterResourcePlacementEvictionValid",
                    "Eviction is valid", "2024-04-29T09:58:30Z"),
                condition("Executed", "True", "ClusterResourcePlacementEvictionExecuted",
                    "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, \
                     availablePlacements: 1, totalPlacements: 1",
                    "2024-04-29T09:58:30Z"),
            ]}
        }))
    );
}

#[test]
fn an_invalid_eviction_shows_only_valid_false() {
    let hub = evicted();
    let object = render_object(
        &hub.state,
        &key("ClusterResourcePlacementEviction", "evict-missing"),
    )
    .expect("stored");
    assert_eq!(
        object["status"],
        json!({"conditions": [condition("Valid", "False", "ClusterResourcePlacementEvictionInvalid",
            "Failed to find ClusterResourcePlacement targeted by eviction", "2024-04-29T09:58:31Z")]})
    );
}

#[test]
fn a_budget_shows_its_one_bound_and_no_status() {
    let hub = evicted();
    let object = render_object(
        &hub.state,
        &key("ClusterResourcePlacementDisruptionBudget", "crp-1"),
    );
    assert_eq!(
        object,
        Some(json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementDisruptionBudget",
            "metadata": {
                "name": "crp-1", "uid": uid(6), "resourceVersion": "4", "generation": 1,
                "creationTimestamp": "2024-04-29T09:58:25Z"
            },
            "spec": {"minAvailable": 0}
        }))
    );
}

#[test]
fn short_names_resolve_and_evictions_list_valid_and_executed() {
    let hub = evicted();
    for (name, kind) in [
        ("crpe", "ClusterResourcePlacementEviction"),
        (
            "clusterresourceplacementevictions",
            "ClusterResourcePlacementEviction",
        ),
        ("crpdb", "ClusterResourcePlacementDisruptionBudget"),
        (
            "ClusterResourcePlacementDisruptionBudget",
            "ClusterResourcePlacementDisruptionBudget",
        ),
    ] {
        let info = resolve_kind(&hub.state, name).expect("known");
        assert_eq!(info.kind, kind);
        assert!(!info.namespaced);
    }
    let crpe = resolve_kind(&hub.state, "crpe").expect("known");
    assert_eq!(
        table(&hub.state, &crpe, None, false),
        "NAME            VALID   EXECUTED\n\
         evict-member1   True    True\n\
         evict-missing   False\n"
    );
    let crpdb = resolve_kind(&hub.state, "crpdb").expect("known");
    assert_eq!(
        table(&hub.state, &crpdb, None, false),
        "NAME    AGE\ncrp-1   6s\n"
    );
}

#[test]
fn describe_shows_the_conditions() {
    let hub = evicted();
    let text = describe(
        &hub.state,
        &key("ClusterResourcePlacementEviction", "evict-member1"),
    )
    .expect("stored");
    assert!(text.starts_with("Name:         evict-member1\n"), "{text}");
    assert!(
        text.contains("    Reason:                ClusterResourcePlacementEvictionExecuted\n"),
        "{text}"
    );
}

#[test]
fn the_timeline_says_what_the_eviction_came_to() {
    let line = decision_line(
        7,
        &Decision::EvictionReconciled {
            eviction: ObjectKey::cluster_scoped(
                "placement.kubernetes-fleet.io",
                "ClusterResourcePlacementEviction",
                "evict",
            ),
            placement: ObjectKey::cluster_scoped(
                "placement.kubernetes-fleet.io",
                "ClusterResourcePlacement",
                "crp-1",
            ),
            cluster: "member1".into(),
            valid: true,
            executed: false,
            message: "Eviction is blocked, placement has not propagated resources to target \
                      cluster yet"
                .into(),
        },
    );
    assert_eq!(
        line,
        "#7 -> ClusterResourcePlacementEviction/evict: eviction of ClusterResourcePlacement/crp-1 \
         from cluster member1 not executed: Eviction is blocked, placement has not propagated \
         resources to target cluster yet"
    );
}

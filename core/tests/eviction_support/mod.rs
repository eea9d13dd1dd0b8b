//! Shared setup for the eviction tests: a fleet of joined clusters, a placement `crp` of
//! namespace `test-ns` whose clusters reported their work, budgets and evictions.

#![allow(dead_code)]

use flotilla_core::decision::Decision;
use flotilla_core::query::placement::BindingState;
use flotilla_core::{Input, WorkReport};
use serde_json::{Value, json};

use crate::common::{Hub, member, namespace};

/// The placement every test evicts from.
pub const PLACEMENT: &str = "crp";

/// A hub with these clusters joined (no labels, no taints) and namespace `test-ns`.
pub fn fleet(clusters: &[&str]) -> Hub {
    let mut hub = Hub::new();
    for cluster in clusters {
        hub.join(cluster, json!({}), json!([]));
    }
    hub.apply(&namespace("test-ns"));
    hub
}

/// Places `test-ns` with `policy` (and `strategy` when not null); every cluster the rollout
/// bound reports its work applied and available.
pub fn place(hub: &mut Hub, policy: &Value, strategy: &Value) {
    let mut spec = json!({
        "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
        "policy": policy
    });
    if !strategy.is_null() {
        spec["strategy"] = strategy.clone();
    }
    let decisions = hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": PLACEMENT},
        "spec": spec
    }));
    assert!(
        !decisions.iter().any(Decision::is_rejection),
        "{decisions:?}"
    );
    for cluster in clusters_in(hub, BindingState::Bound) {
        report(hub, &cluster, true, true);
    }
}

/// PickAll over the whole fleet, default strategy.
pub fn pick_all(hub: &mut Hub) {
    place(hub, &json!({"placementType": "PickAll"}), &Value::Null);
}

/// PickN with `count` clusters, default strategy.
pub fn pick_n(hub: &mut Hub, count: u32) {
    place(
        hub,
        &json!({"placementType": "PickN", "numberOfClusters": count}),
        &Value::Null,
    );
}

/// The member's report on its current work (the binding's resource index).
pub fn report(hub: &mut Hub, cluster: &str, applied: bool, available: bool) -> Vec<Decision> {
    let resource_index = binding_index(hub, cluster).unwrap_or(0);
    hub.send(Input::WorkReport(WorkReport {
        cluster: cluster.into(),
        placement: PLACEMENT.into(),
        namespace: None,
        resource_index,
        applied: Some(applied),
        available: Some(available),
        trackable: true,
        message: String::new(),
        failed_manifests: Vec::new(),
        differences: Default::default(),
    }))
}

fn binding_index(hub: &Hub, cluster: &str) -> Option<u64> {
    hub.placement(PLACEMENT)
        .bindings
        .get(cluster)
        .and_then(|b| b.resource_index)
}

/// Clusters whose binding is in `state`, by name.
pub fn clusters_in(hub: &Hub, state: BindingState) -> Vec<String> {
    hub.placement(PLACEMENT)
        .bindings
        .values()
        .filter(|b| b.state == state)
        .map(|b| b.cluster.to_string())
        .collect()
}

/// Every cluster with a binding, by name.
pub fn bound_anyhow(hub: &Hub) -> Vec<String> {
    hub.placement(PLACEMENT)
        .bindings
        .keys()
        .map(|cluster| cluster.to_string())
        .collect()
}

/// Applies a budget named like the placement with this spec.
pub fn budget(hub: &mut Hub, spec: &Value) -> Vec<Decision> {
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementDisruptionBudget",
        "metadata": {"name": PLACEMENT},
        "spec": spec
    }))
}

/// An eviction manifest.
pub fn eviction(name: &str, placement: &str, cluster: &str) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementEviction",
        "metadata": {"name": name},
        "spec": {"placementName": placement, "clusterName": cluster}
    })
}

/// Applies an eviction of `crp` from `cluster`.
pub fn evict(hub: &mut Hub, name: &str, cluster: &str) -> Vec<Decision> {
    hub.apply(&eviction(name, PLACEMENT, cluster))
}

/// An eviction's conditions as `(type, status, reason, message)`.
pub fn conditions(hub: &Hub, name: &str) -> Vec<(String, String, String, String)> {
    hub.state
        .disruptions()
        .evictions
        .get(name)
        .expect("eviction exists")
        .conditions
        .iter()
        .map(|c| {
            (
                c.condition_type.to_string(),
                c.status.as_str().to_owned(),
                c.reason.to_string(),
                c.message.clone(),
            )
        })
        .collect()
}

fn four(kind: &str, status: &str, reason: &str, message: &str) -> (String, String, String, String) {
    (kind.into(), status.into(), reason.into(), message.into())
}

fn valid() -> (String, String, String, String) {
    four(
        "Valid",
        "True",
        "ClusterResourcePlacementEvictionValid",
        "Eviction is valid",
    )
}

/// The conditions of an invalid eviction.
pub fn invalid(message: &str) -> Vec<(String, String, String, String)> {
    vec![four(
        "Valid",
        "False",
        "ClusterResourcePlacementEvictionInvalid",
        message,
    )]
}

/// The conditions of a valid eviction that was executed.
pub fn executed(message: &str) -> Vec<(String, String, String, String)> {
    vec![
        valid(),
        four(
            "Executed",
            "True",
            "ClusterResourcePlacementEvictionExecuted",
            message,
        ),
    ]
}

/// The conditions of a valid eviction that was not executed.
pub fn not_executed(message: &str) -> Vec<(String, String, String, String)> {
    vec![
        valid(),
        four(
            "Executed",
            "False",
            "ClusterResourcePlacementEvictionNotExecuted",
            message,
        ),
    ]
}

/// KubeFleet's message when a budget allowed the eviction.
pub fn allowed(available: u64, total: u64) -> String {
    format!(
        "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, \
         availablePlacements: {available}, totalPlacements: {total}"
    )
}

/// KubeFleet's message when a budget blocked the eviction.
pub fn blocked(available: u64, total: u64) -> String {
    format!(
        "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, \
         availablePlacements: {available}, totalPlacements: {total}"
    )
}

/// KubeFleet's message for a PickAll placement with a budget of the wrong kind.
pub const MISCONFIGURED: &str = "Eviction is blocked by misconfigured \
    ClusterResourcePlacementDisruptionBudget, either MaxUnavailable is specified or MinAvailable \
    is specified as a percentage for PickAll ClusterResourcePlacement";
/// KubeFleet's message for an eviction of a PickFixed placement.
pub const PICK_FIXED: &str =
    "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction";

/// Whether the decisions removed `cluster`'s binding.
pub fn removed(decisions: &[Decision], cluster: &str) -> bool {
    decisions
        .iter()
        .any(|d| matches!(d, Decision::BindingRemoved { cluster: c, .. } if c == cluster))
}

/// A member cluster manifest with one NoSchedule taint.
pub fn tainted(name: &str) -> Value {
    member(
        name,
        json!({}),
        json!([{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]),
    )
}

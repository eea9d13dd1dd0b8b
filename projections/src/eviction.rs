//! `ClusterResourcePlacementEviction` and `ClusterResourcePlacementDisruptionBudget` as KubeFleet's
//! API server returns them. An eviction's status is its terminal conditions (`Valid`, then
//! `Executed` when it was valid), with KubeFleet's reasons and messages, set once when it was
//! reconciled; a budget has no status.

use flotilla_core::State;
use flotilla_core::model::{
    CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET, CLUSTER_RESOURCE_PLACEMENT_EVICTION, ObjectKey,
    PLACEMENT_GROUP,
};
use flotilla_core::query::eviction::{DisruptionBudget, Eviction};
use serde_json::Value;

use crate::derived::condition;
use crate::{json, objects};

/// Whether a group and kind name one of the two kinds.
pub(crate) fn is_eviction_kind(group: &str, kind: &str) -> bool {
    group == PLACEMENT_GROUP
        && matches!(
            kind,
            CLUSTER_RESOURCE_PLACEMENT_EVICTION | CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET
        )
}

/// The eviction or budget stored under `key`, rendered; `None` if there is none.
pub(crate) fn render(state: &State, key: &ObjectKey) -> Option<Value> {
    if !key.namespace.is_empty() {
        return None;
    }
    match key.kind.as_str() {
        CLUSTER_RESOURCE_PLACEMENT_EVICTION => state
            .disruptions()
            .evictions
            .get(key.name.as_str())
            .map(|eviction| render_eviction(key, eviction)),
        CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET => state
            .disruptions()
            .budgets
            .get(key.name.as_str())
            .map(|budget| render_budget(key, budget)),
        _ => None,
    }
}

/// The keys of every stored object of the kind `kind`, by name.
pub(crate) fn keys_of(state: &State, kind: &str) -> Vec<ObjectKey> {
    let key = |name: &String| ObjectKey::cluster_scoped(PLACEMENT_GROUP, kind, name);
    match kind {
        CLUSTER_RESOURCE_PLACEMENT_EVICTION => {
            state.disruptions().evictions.keys().map(key).collect()
        }
        CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET => {
            state.disruptions().budgets.keys().map(key).collect()
        }
        _ => Vec::new(),
    }
}

/// Every budget, then every eviction, each by name.
pub(crate) fn all_keys(state: &State) -> Vec<ObjectKey> {
    let mut keys = keys_of(state, CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET);
    keys.extend(keys_of(state, CLUSTER_RESOURCE_PLACEMENT_EVICTION));
    keys
}

fn render_eviction(key: &ObjectKey, eviction: &Eviction) -> Value {
    json::object([
        (
            "apiVersion",
            Value::from(eviction.meta.api_version.as_str()),
        ),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", objects::metadata(key, &eviction.meta)),
        (
            "spec",
            json::object([
                (
                    "placementName",
                    Value::from(eviction.spec.placement_name.as_str()),
                ),
                (
                    "clusterName",
                    Value::from(eviction.spec.cluster_name.as_str()),
                ),
            ]),
        ),
        (
            "status",
            json::object([(
                "conditions",
                Value::Array(eviction.conditions.iter().map(condition).collect()),
            )]),
        ),
    ])
}

fn render_budget(key: &ObjectKey, budget: &DisruptionBudget) -> Value {
    json::object([
        ("apiVersion", Value::from(budget.meta.api_version.as_str())),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", objects::metadata(key, &budget.meta)),
        (
            "spec",
            json::object([(budget.spec.field(), budget.spec.amount().to_json())]),
        ),
    ])
}

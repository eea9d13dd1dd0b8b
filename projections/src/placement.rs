//! `ClusterResourcePlacement` and `ResourcePlacement` as KubeFleet's API server returns them: the
//! spec with the defaults KubeFleet's defaulting webhook fills in
//! (`pkg/utils/defaulter/clusterresourceplacement.go`), int-or-percent fields as the user wrote
//! them.
//!
//! Defaults shown: `policy.placementType: PickAll` when the policy is omitted, `strategy.type:
//! RollingUpdate` with `rollingUpdate` `maxUnavailable: 25%`, `maxSurge: 25%`,
//! `unavailablePeriodSeconds: 60`, `applyStrategy` (`ClientSideApply`, `PartialComparison`,
//! `Always`, `Always`, `serverSideApplyConfig.force: false`), `revisionHistoryLimit: 10`,
//! `maxSkew: 1` / `DoNotSchedule` on spread constraints and `operator: Equal` on tolerations.
//! Defaults that only newer CRD schemas add (`selectionScope`, `statusReportingScope`) are shown
//! only when written, since whether KubeFleet shows them depends on its version.
//!
//! The status is rendered by the `placement_status` module.

use flotilla_core::State;
use flotilla_core::model::placement::{ApplyStrategy, PlacementPolicy, StrategyType};
use flotilla_core::model::{ObjectKey, PlacementSpec};
use flotilla_core::state::Placement;
use serde_json::Value;

use crate::placement_status::PerCluster;
use crate::{json, objects, placement_status};

/// One stored placement as a whole object; its status lists its clusters or not.
pub(crate) fn render(
    state: &State,
    key: &ObjectKey,
    placement: &Placement,
    per_cluster: PerCluster,
) -> Value {
    json::object([
        (
            "apiVersion",
            Value::from(placement.meta.api_version.as_str()),
        ),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", objects::metadata(key, &placement.meta)),
        ("spec", spec(&placement.spec)),
        (
            "status",
            placement_status::status(state, key, placement, per_cluster),
        ),
    ])
}

/// A placement policy as the spec shows it (also a policy snapshot's `spec.policy`).
pub(crate) fn policy(policy: &PlacementPolicy) -> Value {
    let mut value = json::omit_empty(serde_json::to_value(policy).unwrap_or(Value::Null));
    tidy_tolerations(&mut value);
    value
}

/// The spec with KubeFleet's webhook defaults, as `kubectl get -o json` would show it.
pub(crate) fn spec(spec: &PlacementSpec) -> Value {
    let mut value = json::omit_empty(serde_json::to_value(spec).unwrap_or(Value::Null));
    if spec.policy.is_none() {
        json::insert(
            &mut value,
            "policy",
            json::object([("placementType", "PickAll".into())]),
        );
    }
    if let Some(policy) = value.get_mut("policy") {
        tidy_tolerations(policy);
    }
    if let Some(strategy) = value.get_mut("strategy") {
        // The webhook fills `rollingUpdate` only for the RollingUpdate type; core keeps the
        // defaults for every type, so another strategy shows them only if they differ.
        let default_rolling = flotilla_core::model::placement::RollingUpdateConfig::default();
        if spec.strategy.strategy_type != StrategyType::RollingUpdate
            && spec.strategy.rolling_update == default_rolling
        {
            json::remove(strategy, "rollingUpdate");
        }
        if let Some(apply) = strategy.get_mut("applyStrategy") {
            tidy_apply_strategy(apply);
        }
    }
    value
}

/// An apply strategy as KubeFleet shows it (the placement's, and the copies the rollout puts on
/// bindings and the work generator on works).
pub(crate) fn apply_strategy(strategy: &ApplyStrategy) -> Value {
    let mut value = json::omit_empty(serde_json::to_value(strategy).unwrap_or(Value::Null));
    tidy_apply_strategy(&mut value);
    value
}

/// `allowCoOwnership` is `omitempty` in Go, and the webhook always sets `serverSideApplyConfig`.
fn tidy_apply_strategy(apply: &mut Value) {
    if apply.get("allowCoOwnership") == Some(&Value::Bool(false)) {
        json::remove(apply, "allowCoOwnership");
    }
    if apply.get("serverSideApplyConfig").is_none() {
        json::insert(
            apply,
            "serverSideApplyConfig",
            json::object([("force", Value::Bool(false))]),
        );
    }
}

/// A toleration's empty `key` and `value` are `omitempty` in Go.
fn tidy_tolerations(policy: &mut Value) {
    let Some(Value::Array(tolerations)) = policy.get_mut("tolerations") else {
        return;
    };
    for toleration in tolerations {
        json::remove_empty_strings(toleration, &["key", "value"]);
    }
}

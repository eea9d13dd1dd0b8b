//! `ClusterResourceBinding` / `ResourceBinding` in KubeFleet's shape (seed 002 section 5 sample;
//! `docs/reference/kubefleet-scheduling-strings.md` section 4).
//!
//! The scheduler creates bindings with its cleanup finalizer and no owner reference (the seed's
//! sample has none either). `status` stays `{}` until the rollout reports per-binding conditions.

use flotilla_core::placement::{Binding, BindingState};
use serde_json::Value;

use crate::derived::{self, DerivedObject, LABEL_PARENT};
use crate::json;

/// Annotation: the state a binding had before the scheduler unscheduled it.
const ANNOTATION_PREVIOUS_STATE: &str = "kubernetes-fleet.io/previous-binding-state";
/// The finalizer the scheduler puts on every binding it creates.
const FINALIZER_SCHEDULER_CLEANUP: &str = "kubernetes-fleet.io/scheduler-crb-cleanup";

/// One binding.
pub(crate) fn render(object: &DerivedObject<'_>, binding: &Binding) -> Value {
    let owner = &object.owner;
    let mut metadata = derived::metadata(object, binding.generation, binding.created);
    json::insert(
        &mut metadata,
        "labels",
        derived::string_pairs(&[(LABEL_PARENT, owner.key.name.clone())]),
    );
    if binding.state == BindingState::Unscheduled
        && let Some(previous) = binding.previous_state
    {
        let annotations = [(ANNOTATION_PREVIOUS_STATE, previous.as_str().to_owned())];
        json::insert(
            &mut metadata,
            "annotations",
            derived::string_pairs(&annotations),
        );
    }
    json::insert(
        &mut metadata,
        "finalizers",
        Value::Array(vec![Value::from(FINALIZER_SCHEDULER_CLEANUP)]),
    );
    let resource_snapshot = binding
        .resource_index
        .map(|index| derived::resource_snapshot_name(&owner.key.name, index))
        .unwrap_or_default();
    let spec = json::object([
        ("state", Value::from(binding.state.as_str())),
        ("targetCluster", Value::from(binding.cluster.as_str())),
        (
            "schedulingPolicySnapshotName",
            Value::from(derived::policy_snapshot_name(
                &owner.key.name,
                binding.policy_index,
            )),
        ),
        ("resourceSnapshotName", Value::from(resource_snapshot)),
        ("clusterDecision", derived::decision(&binding.decision)),
    ]);
    json::object([
        ("apiVersion", Value::from(derived::api_version(owner))),
        ("kind", Value::from(object.key.kind.as_str())),
        ("metadata", metadata),
        ("spec", spec),
        ("status", json::empty_object()),
    ])
}

//! `ClusterResourceBinding` / `ResourceBinding` in KubeFleet's shape (KubeFleet's sample;
//! `docs/reference/kubefleet-scheduling-strings.md` section 4).
//!
//! The scheduler creates bindings with its cleanup finalizer and no owner reference (the seed's
//! sample has none either); the work generator adds its `work-cleanup` finalizer once the binding
//! carries resources. When the rollout binds it, the spec gains the resource snapshot name, the
//! placement's apply strategy and the override snapshots its work applies.
//!
//! `status.conditions` is the rollout's progress on the binding (`RolloutStarted`, `Overridden`,
//! `WorkSynchronized`, `Applied`, `Available`, or `DiffReported` under `ReportDiff`; see the
//! `progress` module) with the binding's generation, and `failedPlacements`,
//! `driftedPlacements` and `diffedPlacements` what the member's report names.

use flotilla_core::State;
use flotilla_core::query::placement::{Binding, BindingState};
use serde_json::Value;

use crate::derived::{self, DerivedObject, LABEL_PARENT};
use crate::{json, placement, progress, work};

/// Annotation: the state a binding had before the scheduler unscheduled it.
const ANNOTATION_PREVIOUS_STATE: &str = "kubernetes-fleet.io/previous-binding-state";
/// The finalizer the scheduler puts on every binding it creates.
const FINALIZER_SCHEDULER_CLEANUP: &str = "kubernetes-fleet.io/scheduler-crb-cleanup";
/// The finalizer the work generator puts on a binding it makes works for.
const FINALIZER_WORK_CLEANUP: &str = "kubernetes-fleet.io/work-cleanup";

/// One binding.
pub(crate) fn render(state: &State, object: &DerivedObject<'_>, binding: &Binding) -> Value {
    let owner = &object.owner;
    let metadata = metadata(object, binding);
    let resource_snapshot = binding
        .resource_index
        .map(|index| derived::resource_snapshot_name(&owner.key.name, index))
        .unwrap_or_default();
    let mut spec = json::object([
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
        (
            "clusterDecision",
            derived::decision(&binding.cluster_decision()),
        ),
    ]);
    let progress = progress::progress(state, owner, binding);
    if binding.resource_index.is_some() {
        json::insert(
            &mut spec,
            "applyStrategy",
            placement::apply_strategy(&owner.placement.spec.strategy.apply_strategy),
        );
        progress.insert_overrides(
            &mut spec,
            "clusterResourceOverrideSnapshots",
            "resourceOverrideSnapshots",
        );
    }
    let mut status = json::empty_object();
    if !progress.binding.is_empty() {
        let conditions = progress
            .binding
            .iter()
            .map(|step| step.to_json(binding.generation))
            .collect();
        json::insert(&mut status, "conditions", Value::Array(conditions));
    }
    progress.listed.insert_into(&mut status);
    json::object([
        ("apiVersion", Value::from(derived::api_version(owner))),
        ("kind", Value::from(object.key.kind.as_str())),
        ("metadata", metadata),
        ("spec", spec),
        ("status", status),
    ])
}

/// The binding's `metadata`: its placement's label, the state it had before it was
/// unscheduled, and the finalizers of the controllers that act on it.
fn metadata(object: &DerivedObject<'_>, binding: &Binding) -> Value {
    let owner = &object.owner;
    let mut metadata = derived::metadata(object, binding.generation, binding.created);
    json::insert(
        &mut metadata,
        "labels",
        json::string_pairs(&[(LABEL_PARENT, owner.key.name.to_string())]),
    );
    if binding.state == BindingState::Unscheduled
        && let Some(previous) = binding.previous_state
    {
        let annotations = [(ANNOTATION_PREVIOUS_STATE, previous.as_str().to_owned())];
        json::insert(
            &mut metadata,
            "annotations",
            json::string_pairs(&annotations),
        );
    }
    let mut finalizers = vec![Value::from(FINALIZER_SCHEDULER_CLEANUP)];
    if work::carries_resources(binding) {
        finalizers.push(Value::from(FINALIZER_WORK_CLEANUP));
    }
    json::insert(&mut metadata, "finalizers", Value::Array(finalizers));
    metadata
}

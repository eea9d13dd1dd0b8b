//! `ClusterSchedulingPolicySnapshot` / `SchedulingPolicySnapshot` and `ClusterResourceSnapshot` /
//! `ResourceSnapshot` in KubeFleet's shape (KubeFleet's samples;
//! `docs/reference/kubefleet-scheduling-strings.md` sections 1 and 5).
//!
//! A policy snapshot's `status.targetClusters` lists the selected decisions first, then the
//! snapshot's not-selected decisions in stored order. The selected ones are the decisions of the
//! placement's bindings scheduled under this snapshot (any state but `Unscheduled`), **by
//! cluster name**: KubeFleet writes them in the order of its binding sets (to create, patched,
//! scheduled, bound), which depends on the cycle; the name order is a deterministic stand-in.
//!
//! A snapshot's `spec` is immutable in KubeFleet: a PickN scale-out or scale-in updates only the
//! `number-of-clusters` annotation, so `spec.policy.numberOfClusters` keeps the count the
//! snapshot was taken with.

use flotilla_core::model::placement::PlacementType;
use flotilla_core::query::placement::{
    BindingState, PolicySnapshot, ResourceSnapshot, SelectedResource,
};
use serde_json::Value;

use crate::derived::{
    self, DerivedObject, LABEL_IS_LATEST, LABEL_PARENT, LABEL_POLICY_INDEX, LABEL_RESOURCE_INDEX,
};
use crate::{json, placement};

/// Annotation: the placement generation the policy snapshot reflects.
const ANNOTATION_PLACEMENT_GENERATION: &str = "kubernetes-fleet.io/CRP-generation";
/// Annotation: PickN's cluster count.
const ANNOTATION_NUMBER_OF_CLUSTERS: &str = "kubernetes-fleet.io/number-of-clusters";
/// Annotation on a master resource snapshot: the hash of all selected resources.
const ANNOTATION_RESOURCE_HASH: &str = "kubernetes-fleet.io/resource-hash";
/// Annotation on a master resource snapshot: how many snapshot objects the index has.
const ANNOTATION_SNAPSHOT_COUNT: &str = "kubernetes-fleet.io/number-of-resource-snapshots";
/// Annotation on a master resource snapshot: how many envelopes were selected.
const ANNOTATION_ENVELOPED: &str = "kubernetes-fleet.io/number-of-enveloped-object";
/// Annotation on a sub-snapshot: its subindex.
const ANNOTATION_SUBINDEX: &str = "kubernetes-fleet.io/subindex-of-resource-snapshot";

/// A scheduling policy snapshot; `metadata.generation` is always 1, as its spec never changes.
pub(crate) fn policy_snapshot(object: &DerivedObject<'_>, snapshot: &PolicySnapshot) -> Value {
    let owner = &object.owner;
    let placement = owner.placement;
    let latest = placement.latest_policy().map(|p| p.index) == Some(snapshot.index);
    let mut metadata = derived::metadata(object, 1, snapshot.created);
    let labels = [
        (LABEL_PARENT, owner.key.name.to_string()),
        (LABEL_IS_LATEST, latest.to_string()),
        (LABEL_POLICY_INDEX, snapshot.index.to_string()),
    ];
    let mut annotations = vec![(
        ANNOTATION_PLACEMENT_GENERATION,
        snapshot.placement_generation.to_string(),
    )];
    if snapshot.policy.placement_type == PlacementType::PickN
        && let Some(count) = snapshot.number_of_clusters
    {
        annotations.push((ANNOTATION_NUMBER_OF_CLUSTERS, count.to_string()));
    }
    json::insert_labels_and_owners(
        &mut metadata,
        &labels,
        &annotations,
        derived::owner_references(owner),
    );
    let spec = json::object([
        ("policy", placement::policy(&snapshot.policy)),
        ("policyHash", Value::from(snapshot.policy_hash.as_str())),
    ]);
    json::object([
        ("apiVersion", Value::from(derived::api_version(owner))),
        ("kind", Value::from(object.key.kind.as_str())),
        ("metadata", metadata),
        ("spec", spec),
        ("status", policy_status(object, snapshot)),
    ])
}

/// `observedCRPGeneration`, the `Scheduled` condition and `targetClusters` (left out when
/// empty, as Go's `omitempty` does).
fn policy_status(object: &DerivedObject<'_>, snapshot: &PolicySnapshot) -> Value {
    let mut status = json::object([(
        "observedCRPGeneration",
        Value::from(snapshot.observed_placement_generation),
    )]);
    if let Some(condition) = &snapshot.scheduled {
        json::insert(
            &mut status,
            "conditions",
            Value::Array(vec![derived::condition(condition)]),
        );
    }
    let selected: Vec<Value> = match &snapshot.selected_when_superseded {
        Some(frozen) => frozen.iter().map(derived::decision).collect(),
        None => object
            .owner
            .placement
            .bindings
            .values()
            .filter(|b| b.policy_index == snapshot.index && b.state != BindingState::Unscheduled)
            .map(|b| derived::decision(&b.cluster_decision()))
            .collect(),
    };
    let targets: Vec<Value> = selected
        .into_iter()
        .chain(snapshot.not_selected.iter().map(derived::decision))
        .collect();
    if !targets.is_empty() {
        json::insert(&mut status, "targetClusters", Value::Array(targets));
    }
    status
}

/// One part of a resource snapshot: the master (`part` 0) carries the index-wide annotations and
/// the `is-latest-snapshot` label; a sub-snapshot carries its subindex. Resource snapshots have
/// no status (the seed's sample shows none).
pub(crate) fn resource_snapshot(
    object: &DerivedObject<'_>,
    snapshot: &ResourceSnapshot,
    part: usize,
    resources: &[SelectedResource],
    parts: usize,
) -> Value {
    let owner = &object.owner;
    let latest = owner.placement.latest_resources().map(|s| s.index) == Some(snapshot.index);
    let mut metadata = derived::metadata(object, 1, snapshot.created);
    let mut labels = vec![
        (LABEL_PARENT, owner.key.name.to_string()),
        (LABEL_RESOURCE_INDEX, snapshot.index.to_string()),
    ];
    let annotations = match part.checked_sub(1) {
        None => {
            labels.push((LABEL_IS_LATEST, latest.to_string()));
            vec![
                (ANNOTATION_RESOURCE_HASH, snapshot.resource_hash.clone()),
                (ANNOTATION_SNAPSHOT_COUNT, parts.to_string()),
                (ANNOTATION_ENVELOPED, snapshot.enveloped_objects.to_string()),
            ]
        }
        Some(subindex) => vec![(ANNOTATION_SUBINDEX, subindex.to_string())],
    };
    json::insert_labels_and_owners(
        &mut metadata,
        &labels,
        &annotations,
        derived::owner_references(owner),
    );
    let manifests = json::manifest_list(resources.iter().map(|r| r.manifest.as_str()));
    json::object([
        ("apiVersion", Value::from(derived::api_version(owner))),
        ("kind", Value::from(object.key.kind.as_str())),
        ("metadata", metadata),
        ("spec", json::object([("selectedResources", manifests)])),
    ])
}

//! A placement's `status` as KubeFleet's placement controller writes it, and the
//! `ClusterResourcePlacementStatus` mirror of a `NamespaceAccessible` `ClusterResourcePlacement`
//! (`docs/reference/kubefleet-scheduling-strings.md` sections 2, 3 and 9; KubeFleet's `kubectl
//! describe crp` sample).
//!
//! - `conditions`: the placement's `…Scheduled` condition, as stored; then, while scheduling is
//!   not `Unknown` and some cluster is selected, `…RolloutStarted`, `…Overridden`,
//!   `…WorkSynchronized`, `…Applied` and `…Available` (for a `ReportDiff` placement
//!   `…DiffReported` instead of the last two), each only while the ones before it are `True`
//!   (see the `progress` module).
//! - `observedResourceIndex` (a string, as KubeFleet writes it) and `selectedResources`: the
//!   latest resource snapshot's index and resource identifiers, in snapshot order.
//! - `placementStatuses`: one entry per binding selected under the latest policy snapshot (by
//!   cluster name, the order of that snapshot's `targetClusters`), with a `Scheduled` condition
//!   in the seed's words followed by the rollout's conditions for that cluster, the override
//!   snapshots applied there (`applicableClusterResourceOverrides`,
//!   `applicableResourceOverrides`) and what the member's report names (`failedPlacements`,
//!   `driftedPlacements`, `diffedPlacements`; see `progress::listed`); then, for PickN and PickFixed short of clusters, one entry
//!   per unfilled slot (at most one per not-selected decision, in decision order) without a
//!   `clusterName` (KubeFleet leaves it empty and Go's `omitempty` drops it) and a
//!   `ScheduleFailed` condition. While scheduling is `Unknown` the list is empty, as in KubeFleet.
//!
//! Every field is `omitempty` in KubeFleet's API, so an empty one is left out.

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::model::ObjectKey;
use flotilla_core::model::placement::PlacementType;
use flotilla_core::query::placement::{
    Binding, BindingState, ClusterDecision, Placement, SelectedResource,
};
use flotilla_core::query::rollout::readiness::ApplyMode;
use serde_json::Value;

use crate::derived::{self, DerivedObject, Owner};
use crate::json;
use crate::progress::{self, Progress};

/// The per-cluster condition type for scheduling.
const CONDITION_SCHEDULED: &str = "Scheduled";
/// Its reason when the cluster was picked.
const REASON_SCHEDULED: &str = "Scheduled";
/// Its reason for an unfilled slot.
const REASON_SCHEDULE_FAILED: &str = "ScheduleFailed";
/// The scope that asks for a status mirror.
const SCOPE_NAMESPACE_ACCESSIBLE: &str = "NamespaceAccessible";
/// The status mirror only exists in v1beta1.
const MIRROR_API_VERSION: &str = "placement.kubernetes-fleet.io/v1beta1";

/// Whether a placement's status lists its clusters (`placementStatuses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PerCluster {
    /// As the API shows it.
    Listed,
    /// Left out: a table's columns read only the placement's own conditions, and at fleet scale
    /// the list is most of the work and memory of rendering a placement.
    Omitted,
}

/// The placement's `status`.
pub(crate) fn status(
    state: &State,
    key: &ObjectKey,
    placement: &Placement,
    per_cluster: PerCluster,
) -> Value {
    let owner = Owner { key, placement };
    let mut status = json::empty_object();
    let mut conditions = Vec::new();
    if let Some(condition) = &placement.scheduled {
        conditions.push(derived::condition(condition));
    }
    if let Some(latest) = placement.latest_resources() {
        json::insert(
            &mut status,
            "observedResourceIndex",
            Value::from(latest.index.to_string()),
        );
        if !latest.resources.is_empty() {
            let identifiers = latest.resources.iter().map(identifier).collect();
            json::insert(&mut status, "selectedResources", Value::Array(identifiers));
        }
    }
    let (tally, selected) = match per_cluster {
        PerCluster::Listed => {
            let selected = progress::progress_of_all(state, &owner, selected_bindings(&owner));
            let mut tally = progress::Tally::new(ApplyMode::of(placement));
            for (_, progress) in &selected {
                tally.add(&progress.cluster, progress.overrides_applied());
            }
            (tally, selected)
        }
        PerCluster::Omitted => {
            let tally = progress::tally_of_all(state, &owner, selected_bindings(&owner));
            (tally, Vec::new())
        }
    };
    conditions.extend(tally.conditions((placement_prefix(key), placement.meta.generation)));
    if let Some(guard) = &placement.guard {
        let prefix = (placement_prefix(key), placement.meta.generation);
        crate::safety_status::apply(&mut conditions, prefix, guard);
    }
    if !conditions.is_empty() {
        json::insert(&mut status, "conditions", Value::Array(conditions));
    }
    if per_cluster == PerCluster::Listed {
        let entries = placement_statuses(placement, &selected);
        if !entries.is_empty() {
            json::insert(&mut status, "placementStatuses", Value::Array(entries));
        }
    }
    if flotilla_core::query::rollout::partitioned::is_partitioned(placement) {
        crate::partitioned_status::insert(state, key, placement, &mut status);
    }
    status
}

/// `ClusterResourcePlacement` or `ResourcePlacement`, the prefix of the placement's conditions.
fn placement_prefix(key: &ObjectKey) -> &str {
    key.kind.as_str()
}

/// Whether scheduling is `Unknown`, when KubeFleet computes nothing else.
fn scheduling_unknown(placement: &Placement) -> bool {
    placement
        .scheduled
        .as_ref()
        .is_some_and(|c| c.status == ConditionStatus::Unknown)
}

/// The bindings selected under the latest policy snapshot; none while scheduling is
/// `Unknown`.
fn selected_bindings(owner: &Owner<'_>) -> Vec<Binding> {
    let placement = owner.placement;
    let Some(policy) = placement.latest_policy() else {
        return Vec::new();
    };
    if scheduling_unknown(placement) {
        return Vec::new();
    }
    placement
        .bindings
        .values()
        .filter(|b| b.policy_index == policy.index && b.state != BindingState::Unscheduled)
        .collect()
}

/// A `ResourceIdentifier`: group and namespace are `omitempty`.
fn identifier(resource: &SelectedResource) -> Value {
    let key = &resource.key;
    let version = resource.api_version.rsplit('/').next().unwrap_or_default();
    let mut value = json::object([
        ("version", Value::from(version)),
        ("kind", Value::from(key.kind.as_str())),
        ("name", Value::from(key.name.as_str())),
    ]);
    if !key.group.is_empty() {
        json::insert(&mut value, "group", Value::from(key.group.as_str()));
    }
    if !key.namespace.is_empty() {
        json::insert(&mut value, "namespace", Value::from(key.namespace.as_str()));
    }
    value
}

fn placement_statuses(placement: &Placement, selected: &[(Binding, Progress)]) -> Vec<Value> {
    let Some(policy) = placement.latest_policy() else {
        return Vec::new();
    };
    if scheduling_unknown(placement) {
        return Vec::new();
    }
    let generation = placement.meta.generation;
    let mut entries: Vec<Value> = selected
        .iter()
        .map(|(binding, progress)| cluster_entry(binding, progress, generation))
        .collect();
    let wanted = match policy.policy.placement_type {
        PlacementType::PickN => {
            usize::try_from(policy.number_of_clusters.unwrap_or(0)).unwrap_or(0)
        }
        PlacementType::PickFixed => policy.policy.cluster_names.len(),
        PlacementType::PickAll => 0,
    };
    let failed = wanted
        .saturating_sub(selected.len())
        .min(policy.not_selected.len());
    let since = policy
        .scheduled
        .as_ref()
        .map_or(policy.created, |c| c.last_transition_time);
    for decision in policy.not_selected.iter().take(failed) {
        let condition = scheduled_condition(
            "False",
            REASON_SCHEDULE_FAILED,
            &decision.reason,
            generation,
            since,
        );
        entries.push(json::object([(
            "conditions",
            Value::Array(vec![condition]),
        )]));
    }
    entries
}

/// One selected cluster's entry: `Scheduled`, then the rollout's conditions.
fn cluster_entry(binding: &Binding, progress: &Progress, generation: u64) -> Value {
    let mut conditions = vec![scheduled_condition(
        "True",
        REASON_SCHEDULED,
        &scheduled_message(&binding.cluster_decision()),
        generation,
        binding.created,
    )];
    conditions.extend(progress.cluster.iter().map(|step| step.to_json(generation)));
    let mut entry = json::object([
        ("clusterName", Value::from(binding.cluster.as_str())),
        ("conditions", Value::Array(conditions)),
    ]);
    if !progress.up_to_date {
        return entry;
    }
    progress.insert_overrides(
        &mut entry,
        "applicableClusterResourceOverrides",
        "applicableResourceOverrides",
    );
    progress.listed.insert_into(&mut entry);
    entry
}

/// The seed-era text the placement controller composed for a picked cluster: the cluster name
/// unquoted, the scores when the cluster was scored, then the decision's reason.
fn scheduled_message(decision: &ClusterDecision) -> String {
    match decision.score {
        Some(score) => format!(
            "Successfully scheduled resources for placement in {} (affinity score: {}, topology \
             spread score: {}): {}",
            decision.cluster, score.affinity, score.topology_spread, decision.reason
        ),
        None => format!(
            "Successfully scheduled resources for placement in {}: {}",
            decision.cluster, decision.reason
        ),
    }
}

fn scheduled_condition(
    status: &str,
    reason: &str,
    message: &str,
    observed_generation: u64,
    since: DateTime<Utc>,
) -> Value {
    derived::metav1_condition(
        CONDITION_SCHEDULED,
        status,
        reason,
        message,
        since,
        observed_generation,
    )
}

/// The namespace of a `ClusterResourcePlacement`'s status mirror, when it has one: the one
/// namespace its single `Namespace` selector names (by name, else the one namespace it selected).
pub(crate) fn mirror_namespace(owner: &Owner<'_>) -> Option<String> {
    let placement = owner.placement;
    let accessible =
        placement.spec.status_reporting_scope.as_deref() == Some(SCOPE_NAMESPACE_ACCESSIBLE);
    if !owner.is_cluster_placement() || !accessible {
        return None;
    }
    let selector = placement
        .spec
        .resource_selectors
        .iter()
        .find(|s| s.group.is_empty() && s.kind == "Namespace")?;
    if let Some(name) = &selector.name {
        return Some(name.clone());
    }
    let mut namespaces = placement
        .latest_resources()?
        .resources
        .iter()
        .filter(|r| r.key.group.is_empty() && r.key.kind == "Namespace");
    let only = namespaces.next()?;
    namespaces
        .next()
        .is_none()
        .then(|| only.key.name.to_string())
}

/// The `ClusterResourcePlacementStatus` mirror: the CRP's status under `sourceStatus`,
/// `lastUpdatedTime` the state's event time. Created with the CRP, so it carries the CRP's
/// creation time; owned by the CRP as its controller.
pub(crate) fn mirror(state: &State, object: &DerivedObject<'_>) -> Value {
    let owner = &object.owner;
    let created = owner.placement.meta.creation_timestamp;
    let mut metadata = derived::metadata(object, 1, created);
    json::insert(
        &mut metadata,
        "ownerReferences",
        derived::owner_references(owner),
    );
    json::object([
        ("apiVersion", Value::from(MIRROR_API_VERSION)),
        ("kind", Value::from(object.key.kind.as_str())),
        ("metadata", metadata),
        (
            "sourceStatus",
            status(state, owner.key, owner.placement, PerCluster::Listed),
        ),
        (
            "lastUpdatedTime",
            Value::from(json::timestamp(state.now().unwrap_or(created))),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use flotilla_core::query::placement::{ClusterDecision, ClusterScore};

    use super::scheduled_message;

    #[test]
    fn picked_messages_name_the_cluster_unquoted_with_scores_when_scored() {
        let mut decision = ClusterDecision {
            cluster: "member1".into(),
            selected: true,
            score: Some(ClusterScore {
                affinity: 20,
                topology_spread: -1,
            }),
            reason: "picked by scheduling policy".into(),
        };
        assert_eq!(
            scheduled_message(&decision),
            "Successfully scheduled resources for placement in member1 (affinity score: 20, \
             topology spread score: -1): picked by scheduling policy"
        );
        decision.score = None;
        assert_eq!(
            scheduled_message(&decision),
            "Successfully scheduled resources for placement in member1: picked by scheduling policy"
        );
    }
}

//! What happens to placements when something changes: the placement itself, the hub's
//! resources, or a member cluster. This is where the scheduling triggers live:
//! a policy change, a cluster becoming eligible and a cluster leaving trigger scheduling;
//! resource-only changes never do (they only take a new resource snapshot).

use chrono::{DateTime, Utc};

use super::retention;
use crate::change::{Change, Changes};
use crate::condition::{Condition, ConditionStatus};
use crate::decision::Decision;
use crate::model::ObjectKey;
use crate::model::placement::PlacementType;
use crate::placement::policy_snapshot::{PolicySnapshot, policy_hash};
use crate::placement::resource_snapshot::{ResourceSnapshot, resource_hash};
use crate::placement::selection;
use crate::placement::{BindingState, Placement};
use crate::scheduler;
use crate::state::State;

/// Reason on the placement's Scheduled condition when its selectors cannot be honoured.
pub const REASON_INVALID_SELECTORS: &str = "InvalidResourceSelectors";

/// After a placement was created or its spec changed: select, snapshot, and schedule when
/// the policy changed, adding what it decides to `decisions`.
pub(crate) fn placement_applied(
    state: &mut State,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
    decisions: &mut Vec<Decision>,
) {
    let State {
        members,
        placements,
        resources,
        ..
    } = state;
    if let Some(placement) = placements.get_mut(key) {
        refresh(members, resources, key, placement, now, decisions, changes);
    }
    retention::prune(state, [key]);
}

/// Re-selects resources (a new resource snapshot when they changed), refreshes the policy
/// snapshot, and runs the scheduler when the policy changed. With invalid selectors the
/// placement reports it and nothing else is derived, as in KubeFleet.
fn refresh(
    members: &crate::member::Members,
    resources: &std::collections::BTreeMap<ObjectKey, crate::model::Resource>,
    key: &ObjectKey,
    placement: &mut Placement,
    now: DateTime<Utc>,
    decisions: &mut Vec<Decision>,
    changes: &mut Changes,
) {
    let was_valid = placement.selection_error.is_none();
    if !refresh_resource_snapshot(placement, key, resources, now, decisions, changes) {
        return;
    }
    if refresh_policy_snapshot(placement, key, now, decisions, changes) {
        scheduler::schedule(members, (placement, key), now, None, changes, decisions);
        return;
    }
    // The scheduler sees every new generation, as KubeFleet's does: with the policy unchanged
    // such a cycle moves nothing (IgnoredDuringExecution) but records the current picks.
    if placement
        .scheduled
        .as_ref()
        .is_none_or(|c| c.observed_generation != placement.meta.generation)
        && placement.selection_error.is_none()
        && !placement.policy_snapshots.is_empty()
        && was_valid
    {
        scheduler::schedule(members, (placement, key), now, None, changes, decisions);
        return;
    }
    // The verdict of the last scheduling pass stands, for this generation too.
    let generation = placement.meta.generation;
    let kind_condition = placement
        .scheduled
        .as_ref()
        .map(|c| c.condition_type.clone());
    if let Some(snapshot) = placement.policy_snapshots.last_mut() {
        snapshot.observed_placement_generation = generation;
        if let (Some(condition), Some(condition_type)) =
            (snapshot.scheduled.clone(), kind_condition)
        {
            let restored = Condition {
                condition_type,
                observed_generation: generation,
                ..condition
            };
            Condition::set(&mut placement.scheduled, restored);
        }
    }
}

/// Takes a new policy snapshot when the policy (less `numberOfClusters`) changed; updates the
/// latest one's cluster count on a PickN scale-out or scale-in. Returns whether scheduling
/// must run.
fn refresh_policy_snapshot(
    placement: &mut Placement,
    key: &ObjectKey,
    now: DateTime<Utc>,
    decisions: &mut Vec<Decision>,
    changes: &mut Changes,
) -> bool {
    let policy = placement.policy();
    let hash = policy_hash(&policy);
    let generation = placement.meta.generation;
    if let Some(latest) = placement.policy_snapshots.last_mut()
        && latest.policy_hash == hash
    {
        // Every generation is recorded on the latest snapshot, as KubeFleet does.
        latest.placement_generation = generation;
        if latest.number_of_clusters == policy.number_of_clusters {
            return false;
        }
        latest.number_of_clusters = policy.number_of_clusters;
        return true;
    }
    let index = placement.policy_snapshots.last().map_or(0, |p| p.index + 1);
    if let Some(superseded) = placement.policy_snapshots.last_mut() {
        let selected = placement
            .bindings
            .values()
            .filter(|b| b.policy_index == superseded.index && b.state != BindingState::Unscheduled)
            .map(|b| b.cluster_decision())
            .collect();
        superseded.selected_when_superseded = Some(selected);
    }
    placement.policy_snapshots.push(PolicySnapshot {
        index,
        number_of_clusters: policy.number_of_clusters,
        policy,
        policy_hash: hash,
        placement_generation: generation,
        created: now,
        not_selected: Vec::new(),
        scheduled: None,
        observed_placement_generation: generation,
        selected_when_superseded: None,
    });
    changes.record(
        Change::PolicySnapshotTaken {
            placement: key.clone(),
        },
        decisions,
        Decision::PolicySnapshotTaken {
            placement: key.clone(),
            index,
        },
    );
    true
}

/// Re-selects the placement's resources and takes a new snapshot when they changed. Returns
/// `false` when the selectors are invalid (and records why on the placement).
fn refresh_resource_snapshot(
    placement: &mut Placement,
    key: &ObjectKey,
    resources: &std::collections::BTreeMap<ObjectKey, crate::model::Resource>,
    now: DateTime<Utc>,
    decisions: &mut Vec<Decision>,
    changes: &mut Changes,
) -> bool {
    let namespace = (!key.namespace.is_empty()).then_some(key.namespace.as_str());
    let selected = match selection::select(resources, namespace, &placement.spec) {
        Ok(selected) => {
            placement.selection_error = None;
            selected
        }
        Err(error) => {
            let message = format!(
                "The resource selectors are invalid: failed to process the request due to a \
                 client error: invalid clusterRresourcePlacement {}: {error}",
                key.name
            );
            let condition_type = if key.kind == crate::model::RESOURCE_PLACEMENT {
                "ResourcePlacementScheduled"
            } else {
                "ClusterResourcePlacementScheduled"
            };
            let condition = Condition::new(
                condition_type,
                ConditionStatus::False,
                REASON_INVALID_SELECTORS,
                message.clone(),
                placement.meta.generation,
                now,
            );
            if Condition::set(&mut placement.scheduled, condition) {
                changes.record(
                    Change::SchedulingChanged {
                        placement: key.clone(),
                    },
                    decisions,
                    Decision::SchedulingChanged {
                        placement: key.clone(),
                        fulfilled: false,
                        message,
                    },
                );
            }
            placement.selection_error = Some(error);
            return false;
        }
    };
    let hash = resource_hash(&selected);
    if placement
        .latest_resources()
        .is_some_and(|s| s.resource_hash == hash)
    {
        return true;
    }
    let index = placement.latest_resources().map_or(0, |s| s.index + 1);
    let enveloped_objects = selected.iter().filter(|r| r.is_envelope()).count() as u64;
    placement.resource_snapshots.push(ResourceSnapshot {
        index,
        resource_hash: hash.clone(),
        resources: selected,
        enveloped_objects,
        created: now,
    });
    changes.record(
        Change::ResourceSnapshotTaken {
            placement: key.clone(),
        },
        decisions,
        Decision::ResourceSnapshotTaken {
            placement: key.clone(),
            index,
            resource_hash: hash,
        },
    );
    true
}

/// After the hub resource `changed` was stored or deleted: the placements whose selectors can
/// select it re-select (the others would select what they did). This never reschedules a
/// valid placement (resource-only changes do not trigger scheduling); one that was waiting on
/// invalid selectors gets its first policy snapshot once they become valid.
pub(crate) fn resources_changed(
    state: &mut State,
    changed: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let mut decisions = Vec::new();
    let State {
        members,
        placements,
        resources,
        selector_index,
        ..
    } = state;
    selector_index.ensure(placements);
    for key in &selector_index.concerning(changed) {
        let Some(placement) = placements.get_mut(key) else {
            continue;
        };
        let was_invalid = placement.selection_error.is_some();
        if was_invalid {
            refresh(
                members,
                resources,
                key,
                placement,
                now,
                &mut decisions,
                changes,
            );
        } else {
            refresh_resource_snapshot(placement, key, resources, now, &mut decisions, changes);
        }
    }
    retention::prune_all(state);
    decisions
}

/// After a member cluster joined, became healthy again, or changed (labels, taints,
/// properties): PickAll placements consider that cluster; PickN and PickFixed placements
/// schedule again only while they are not fully scheduled.
pub(crate) fn member_changed(
    state: &mut State,
    cluster: &str,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    reschedule(state, now, changes, |placement| {
        member_reschedules(placement, cluster)
    })
}

/// Which pass a member's change asks of a placement: one over that cluster (PickAll), one over
/// the fleet (a placement not fully scheduled), or none.
fn member_reschedules<'c>(placement: &Placement, cluster: &'c str) -> Option<Option<&'c str>> {
    match placement.placement_type() {
        PlacementType::PickAll => Some(Some(cluster)),
        _ if !placement.is_fully_scheduled() => Some(None),
        _ => None,
    }
}

/// After a member cluster's properties changed and nothing else did (no join, no health
/// change, same labels and taints): as [`member_changed`], except that a PickAll placement
/// whose required affinity reads no property is left alone. For it the cluster passes or
/// fails the filters exactly as before, so its one-cluster pass would change nothing. Placements
/// that are not fully scheduled schedule again, as after any change.
pub(crate) fn member_properties_changed(
    state: &mut State,
    cluster: &str,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    reschedule(state, now, changes, |placement| {
        let blind =
            placement.placement_type() == PlacementType::PickAll && !reads_properties(placement);
        if blind {
            None
        } else {
            member_reschedules(placement, cluster)
        }
    })
}

/// Whether the policy the scheduler runs (the latest snapshot's) filters on properties.
fn reads_properties(placement: &Placement) -> bool {
    placement.latest_policy().is_some_and(|snapshot| {
        scheduler::filter::required_terms(&snapshot.policy)
            .iter()
            .any(|term| term.property_selector.is_some())
    })
}

/// After a member cluster left: its bindings are released and placements that lost a cluster
/// schedule again.
pub(crate) fn member_left(
    state: &mut State,
    cluster: &str,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    reschedule(state, now, changes, |placement| {
        let held = placement.bindings.contains_key(cluster);
        match placement.placement_type() {
            PlacementType::PickAll if held => Some(Some(cluster)),
            PlacementType::PickAll => None,
            _ if held || !placement.is_fully_scheduled() => Some(None),
            _ => None,
        }
    })
}

/// Runs the scheduler for every placement `scope` selects: `Some(Some(cluster))` for an
/// incremental pass over one cluster, `Some(None)` for a full pass, `None` to leave it be.
fn reschedule<'a>(
    state: &mut State,
    now: DateTime<Utc>,
    changes: &mut Changes,
    scope: impl Fn(&Placement) -> Option<Option<&'a str>>,
) -> Vec<Decision> {
    let mut decisions = Vec::new();
    let State {
        members,
        placements,
        ..
    } = state;
    for (key, placement) in placements.iter_mut() {
        let Some(only) = scope(placement) else {
            continue;
        };
        scheduler::schedule(
            members,
            (placement, key),
            now,
            only,
            changes,
            &mut decisions,
        );
    }
    decisions
}

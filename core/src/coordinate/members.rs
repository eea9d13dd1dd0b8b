//! Member clusters as placements see them: a member stored, heartbeating, deleted or gone
//! schedules placements again ([`super::lifecycle`]), and the bindings released from a cluster
//! that left are removed at once.

use chrono::{DateTime, Utc};

use crate::change::Changes;
use crate::decision::Decision;
use crate::event::Heartbeat;
use crate::member;
use crate::model::{MemberClusterSpec, ObjectKey};
use crate::placement::{BindingState, Placement};
use crate::revision::Applied;
use crate::state::State;

use super::lifecycle;

/// Stores a `MemberCluster` ([`member::apply`]); a stored one is scheduled again.
pub(crate) fn apply(
    state: &mut State,
    key: &ObjectKey,
    spec: MemberClusterSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let now = applied.origin.now;
    let mut store = state.member_store();
    let decision = match member::apply(&mut store, key, spec, applied, changes) {
        Ok(decision) => decision,
        Err(unchanged) => return vec![*unchanged],
    };
    let mut decisions = vec![decision];
    decisions.extend(lifecycle::member_changed(state, &key.name, now, changes));
    decisions
}

/// Deletes a `MemberCluster`: one whose agent never connected leaves at once; one whose agent
/// did is marked leaving until the agent confirms. Either way its bindings are released at
/// once. Deleting a leaving member again changes nothing. `None` when no such member exists.
pub(crate) fn delete(
    state: &mut State,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Option<Vec<Decision>> {
    let member = state.members.get(key.name.as_str())?;
    if member.is_leaving() {
        return Some(vec![Decision::ObjectUnchanged {
            object: key.clone(),
        }]);
    }
    let connected = member.agent.is_some();
    let mut store = state.member_store();
    let mut decisions = if connected {
        member::start_leaving(&mut store, key, now, changes)
    } else {
        let mut decisions = vec![changes.object_deleted(key)];
        decisions.extend(member::leave(&mut store, &key.name, changes));
        decisions
    };
    decisions.extend(lifecycle::member_left(state, &key.name, now, changes));
    decisions.extend(remove_bindings(state, &key.name, changes));
    Some(decisions)
}

/// Removes the bindings the scheduler released from a cluster that left: KubeFleet deletes a
/// deleted cluster's bindings and Works at once, without waiting for the rollout's budget
/// (there is nothing left to keep available there).
fn remove_bindings(state: &mut State, cluster: &str, changes: &mut Changes) -> Vec<Decision> {
    state
        .placements
        .iter_mut()
        .filter_map(|(key, placement)| {
            released(placement, cluster)
                .then(|| placement.remove_binding(key, cluster, changes))
                .flatten()
        })
        .collect()
}

/// Whether the scheduler released the placement's binding on `cluster`.
fn released(placement: &Placement, cluster: &str) -> bool {
    (placement.bindings.get(cluster))
        .is_some_and(|binding| binding.state == BindingState::Unscheduled)
}

/// Records a heartbeat at `now` ([`member::heartbeat`]). Joining, recovering, or new property
/// values can make the cluster eligible for more: placements schedule again.
pub(crate) fn heartbeat(
    state: &mut State,
    beat: &Heartbeat,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let seen = match member::heartbeat(&mut state.member_store(), beat, now, changes) {
        Ok(seen) => seen,
        Err(refused) => return refused,
    };
    let mut decisions = seen.decisions;
    if !decisions.is_empty() {
        decisions.extend(lifecycle::member_changed(
            state,
            &beat.cluster,
            now,
            changes,
        ));
    } else if seen.properties_changed {
        decisions.extend(lifecycle::member_properties_changed(
            state,
            &beat.cluster,
            now,
            changes,
        ));
    }
    decisions
}

/// A leaving member's agent confirms it left ([`member::confirm_leave`]). Nothing should be
/// left on the cluster since it started leaving; whatever is (a binding a later change made)
/// goes with it.
pub(crate) fn confirm_leave(
    state: &mut State,
    cluster: &str,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let mut decisions = match member::confirm_leave(&mut state.member_store(), cluster, changes) {
        Ok(decisions) => decisions,
        Err(refused) => return refused,
    };
    decisions.extend(lifecycle::member_left(state, cluster, now, changes));
    decisions.extend(remove_bindings(state, cluster, changes));
    decisions
}

//! Storing and deleting placements, with what a stored spec derives: resources selected,
//! snapshots taken and scheduling ([`super::lifecycle`]), and a deleted placement's rollout
//! deadlines dropped.

use crate::change::Changes;
use crate::decision::Decision;
use crate::model::{ObjectKey, PlacementSpec};
use crate::placement::store;
use crate::revision::Applied;
use crate::state::State;

use super::lifecycle;

/// Stores a `ClusterResourcePlacement` or `ResourcePlacement`, then refreshes what derives from
/// it.
pub(crate) fn apply(
    state: &mut State,
    key: &ObjectKey,
    spec: PlacementSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let now = applied.origin.now;
    let mut store = state.placement_store();
    let decision = match store::apply(&mut store, key, spec, applied, changes) {
        Ok(decision) => decision,
        Err(refused) => return vec![*refused],
    };
    let mut decisions = vec![decision];
    lifecycle::placement_applied(state, key, now, changes, &mut decisions);
    decisions
}

/// Deletes a placement, with its snapshots and bindings; `None` when it does not exist.
pub(crate) fn delete(
    state: &mut State,
    key: &ObjectKey,
    changes: &mut Changes,
) -> Option<Vec<Decision>> {
    let deleted = store::delete(&mut state.placement_store(), key, changes)?;
    // Nothing may wake the hub for a placement that is gone.
    state
        .rollout_deadlines
        .retain(|(_, placement)| placement != key);
    Some(vec![deleted])
}

//! Storing and deleting placements: an update may not change an immutable field; a stored
//! spec selects resources, takes snapshots and schedules ([`super::lifecycle`]).

use crate::change::Changes;
use crate::decision::{Decision, RejectCode, rejected};
use crate::model::{ObjectKey, PlacementSpec, UserMeta, placement_validation};
use crate::revision::{Origin, Previous, Revision, revise};
use crate::state::State;

use super::{Placement, lifecycle};

/// Stores a `ClusterResourcePlacement` or `ResourcePlacement`, then refreshes what derives from
/// it.
pub(crate) fn apply(
    state: &mut State,
    key: &ObjectKey,
    api_version: &str,
    user: UserMeta,
    spec: PlacementSpec,
    origin: &Origin,
    changes: &mut Changes,
) -> Vec<Decision> {
    let existing = state.placements.get(key);
    if let Some(old) = existing
        && let Err(error) = placement_validation::validate_update(&old.spec, &spec)
    {
        return vec![rejected(RejectCode::ImmutableField, error.to_string())];
    }
    let previous = existing.map(|p| Previous {
        meta: p.meta.clone(),
        same_spec: p.spec == spec,
    });
    let Revision { meta, decision, .. } = match revise(
        &mut state.resource_version,
        key,
        previous,
        api_version,
        user,
        origin,
        changes,
    ) {
        Ok(revision) => revision,
        Err(unchanged) => return vec![*unchanged],
    };
    match state.placements.get_mut(key) {
        Some(placement) => {
            placement.meta = meta;
            placement.spec = spec;
        }
        None => {
            state
                .placements
                .insert(key.clone(), Placement::new(meta, spec));
        }
    }
    state.selector_index.update(&state.placements, key);
    let mut decisions = vec![decision];
    lifecycle::placement_applied(state, key, origin.now, changes, &mut decisions);
    decisions
}

/// Deletes a placement, with its snapshots and bindings; `None` when it does not exist.
pub(crate) fn delete(
    state: &mut State,
    key: &ObjectKey,
    changes: &mut Changes,
) -> Option<Vec<Decision>> {
    state.placements.remove(key)?;
    state.selector_index.update(&state.placements, key);
    // Nothing may wake the hub for a placement that is gone.
    state
        .rollout_deadlines
        .retain(|(_, placement)| placement != key);
    Some(vec![changes.object_deleted(key)])
}

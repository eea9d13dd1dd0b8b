//! Storing and deleting placements: an update may not change an immutable field. What a stored
//! spec derives (resources selected, snapshots, scheduling) is the coordinating layer's
//! (`crate::coordinate::placements`).

use std::collections::BTreeMap;

use crate::change::Changes;
use crate::decision::{Decision, RejectCode, rejected};
use crate::model::{ObjectKey, PlacementSpec, placement_validation};
use crate::revision::{Applied, Revision, previous_of, revise};

use super::Placement;
use super::selector_index::SelectorIndex;

/// The placement store a verb changes, borrowed from the state: the placements, the index of
/// their selectors, and the hub's resource version counter (a new revision takes the next one).
pub(crate) struct Store<'a> {
    /// ClusterResourcePlacements and ResourcePlacements.
    pub placements: &'a mut BTreeMap<ObjectKey, Placement>,
    /// Placements by their resource selectors.
    pub selector_index: &'a mut SelectorIndex,
    /// The last resource version handed out.
    pub resource_version: &'a mut u64,
}

/// Stores a `ClusterResourcePlacement` or `ResourcePlacement`. Returns its `ObjectStored`, or as
/// the error what refused or left it unchanged.
pub(crate) fn apply(
    store: &mut Store<'_>,
    key: &ObjectKey,
    spec: PlacementSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Result<Decision, Box<Decision>> {
    let existing = store.placements.get(key);
    if let Some(old) = existing
        && let Err(error) = placement_validation::validate_update(&old.spec, &spec)
    {
        return Err(Box::new(rejected(
            RejectCode::ImmutableField,
            error.to_string(),
        )));
    }
    let previous = previous_of(existing, &spec);
    let Revision { meta, decision, .. } =
        revise(store.resource_version, key, previous, applied, changes)?;
    match store.placements.get_mut(key) {
        Some(placement) => {
            placement.meta = meta;
            placement.spec = spec;
        }
        None => {
            store
                .placements
                .insert(key.clone(), Placement::new(meta, spec));
        }
    }
    store.selector_index.update(store.placements, key);
    Ok(decision)
}

/// Deletes a placement, with its snapshots and bindings; `None` when it does not exist.
pub(crate) fn delete(
    store: &mut Store<'_>,
    key: &ObjectKey,
    changes: &mut Changes,
) -> Option<Decision> {
    store.placements.remove(key)?;
    store.selector_index.update(store.placements, key);
    Some(changes.object_deleted(key))
}

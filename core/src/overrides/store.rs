//! Storing and deleting overrides: an override is checked against the stored ones, and every
//! spec change takes a new snapshot (the latest is what applies).

use crate::change::{Change, Changes};
use crate::decision::{Decision, rejected};
use crate::model::ObjectKey;
use crate::revision::{Applied, Revision, previous_of, revise};

use super::{Override, OverrideKind, OverrideSpec, Store};

/// An override as its manifest gives it: a ClusterResourceOverride or a ResourceOverride, and
/// its validated spec.
pub(crate) struct OverrideManifest {
    /// Which kind.
    pub kind: OverrideKind,
    /// The validated spec.
    pub spec: OverrideSpec,
}

impl OverrideKind {
    /// An override of this kind with this spec, as its manifest gives it.
    pub(crate) fn manifest(self, spec: OverrideSpec) -> OverrideManifest {
        OverrideManifest { kind: self, spec }
    }
}

/// Stores an override after checking it against the stored ones, and takes a snapshot when its
/// spec is new or changed.
pub(crate) fn apply(
    store: &mut Store<'_>,
    key: ObjectKey,
    manifest: OverrideManifest,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let OverrideManifest { kind, spec } = manifest;
    let now = applied.origin.now;
    let object = key.clone();
    let previous = previous_of(store.overrides.get(&key), &spec);
    let unchanged = previous
        .as_ref()
        .is_some_and(|p| p.unchanged_by(&applied.user));
    if !unchanged
        && let Err(conflict) = super::validation::against_stored(store.overrides, &key, kind, &spec)
    {
        return vec![rejected(conflict.code, conflict.message)];
    }
    let Revision {
        meta,
        decision,
        spec_changed,
    } = match revise(store.resource_version, &key, previous, applied, changes) {
        Ok(revision) => revision,
        Err(unchanged) => return vec![*unchanged],
    };
    let mut decisions = vec![decision];
    let override_key = key.clone();
    let index = match store.overrides.get_mut(&key) {
        Some(stored) => {
            stored.meta = meta;
            let taken = spec_changed.then(|| {
                stored.spec = spec;
                stored.take_snapshot(now)
            });
            taken.map(|(index, pruned)| {
                super::retired::retire(store.retired, store.placements, &override_key, pruned);
                index
            })
        }
        None => {
            store
                .overrides
                .insert(key, Override::new(kind, meta, spec, now));
            Some(0)
        }
    };
    if let Some(index) = index {
        changes.record(
            Change::OverrideSnapshotTaken { override_key },
            &mut decisions,
            Decision::OverrideSnapshotTaken {
                override_object: object,
                index,
            },
        );
    }
    decisions
}

/// Deletes an override (its snapshots go with it); `None` when it does not exist.
pub(crate) fn delete(
    store: &mut Store<'_>,
    key: &ObjectKey,
    changes: &mut Changes,
) -> Option<Vec<Decision>> {
    let removed = store.overrides.remove(key)?;
    super::retired::retire(store.retired, store.placements, key, removed.snapshots);
    Some(vec![changes.object_deleted(key)])
}

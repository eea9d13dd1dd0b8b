//! Override snapshots gone from their override — deleted with it, or pruned beyond
//! `OVERRIDE_SNAPSHOTS_MAX` — while a binding's work still uses them.
//!
//! KubeFleet's Works keep the content they were rendered with until the rollout updates their
//! bindings, whatever happened to the override meanwhile. flotilla renders a work from its
//! snapshots, so it keeps the snapshots a binding names, retired: rendering finds them (nothing
//! is withdrawn from a member), nothing else does (they never apply to a new work), and the
//! rollout moves those bindings to what applies now within its budget. A retired snapshot is
//! dropped at the next retirement once no binding (nor the work a failed one keeps, nor a
//! guarded rollout's prior work) names it.

use std::collections::{BTreeMap, BTreeSet};

use super::{OverrideKind, OverrideSnapshot, snapshot_name};
use crate::model::ObjectKey;
use crate::placement::{OverrideSnapshots, Placement};

/// `(kind, namespace, snapshot name)` of a snapshot as works name it.
type Named = (&'static str, String, String);

/// Keeps those of `gone` (snapshots of the override `key`) that a binding's work uses, and
/// drops the retired snapshots none uses any more (the `placements`' bindings name those in use).
pub(crate) fn retire(
    retired: &mut BTreeMap<ObjectKey, Vec<OverrideSnapshot>>,
    placements: &BTreeMap<ObjectKey, Placement>,
    key: &ObjectKey,
    gone: Vec<OverrideSnapshot>,
) {
    if gone.is_empty() && retired.is_empty() {
        return;
    }
    let used = in_use(placements);
    let named = |key: &ObjectKey, snapshot: &OverrideSnapshot| -> Named {
        (
            kind_of(key),
            key.namespace.to_string(),
            snapshot_name(&key.name, snapshot.index),
        )
    };
    let kept: Vec<OverrideSnapshot> = gone
        .into_iter()
        .filter(|snapshot| used.contains(&named(key, snapshot)))
        .collect();
    if !kept.is_empty() {
        (retired.entry(key.clone()).or_default()).extend(kept);
    }
    for (key, snapshots) in retired.iter_mut() {
        snapshots.retain(|snapshot| used.contains(&named(key, snapshot)));
    }
    retired.retain(|_, snapshots| !snapshots.is_empty());
}

/// The override kind a key names, as works name it.
fn kind_of(key: &ObjectKey) -> &'static str {
    if key.kind.as_str() == OverrideKind::ResourceOverride.as_str() {
        OverrideKind::ResourceOverride.as_str()
    } else {
        OverrideKind::ClusterResourceOverride.as_str()
    }
}

/// Every override snapshot a binding's work names: what it carries, what a failed one's
/// cluster keeps, and a guarded rollout's prior work.
fn in_use(placements: &BTreeMap<ObjectKey, Placement>) -> BTreeSet<Named> {
    let mut used = BTreeSet::new();
    let mut add = |(cluster_overrides, resource_overrides): &OverrideSnapshots| {
        for name in cluster_overrides {
            used.insert((
                OverrideKind::ClusterResourceOverride.as_str(),
                String::new(),
                name.clone(),
            ));
        }
        for (namespace, name) in resource_overrides {
            used.insert((
                OverrideKind::ResourceOverride.as_str(),
                namespace.clone(),
                name.clone(),
            ));
        }
    };
    for placement in placements.values() {
        placement.bindings.for_each(|_, binding| {
            add(&binding.override_snapshots);
            let kept = binding
                .override_failure
                .as_ref()
                .and_then(|f| f.kept.as_ref());
            if let Some(work) = kept {
                add(&work.override_snapshots);
            }
        });
        if let Some(guard) = &placement.guard {
            guard
                .prior
                .values()
                .for_each(|(_, snapshots)| add(snapshots));
        }
    }
    used
}

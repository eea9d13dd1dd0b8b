//! Placement and binding rules: one binding per placement and cluster, live bindings only to
//! member clusters, every binding's snapshots exist, snapshot indexes increase, PickFixed
//! binds only the clusters it names.

use std::collections::BTreeMap;

use super::Violation;
use crate::model::ClusterName;
use crate::model::ObjectKey;
use crate::model::placement::PlacementType;
use crate::placement::{BindingState, Placement};
use crate::state::State;

pub(super) fn check(state: &State) -> Result<(), Violation> {
    for (key, placement) in &state.placements {
        one_binding_per_cluster(key, placement)?;
        live_bindings_have_members(state, key, placement)?;
        snapshots_increase(key, placement)?;
        snapshots_exist(key, placement)?;
        fixed_clusters_only(key, placement)?;
    }
    Ok(())
}

/// Bindings are keyed by cluster, so each key must be its binding's cluster; names are unique.
fn one_binding_per_cluster(key: &ObjectKey, placement: &Placement) -> Result<(), Violation> {
    let mut names: BTreeMap<String, ClusterName> = BTreeMap::new();
    for (cluster, binding) in &placement.bindings {
        if cluster != binding.cluster {
            return Err(Violation::BindingKeyMismatch {
                placement: key.display(),
                key: cluster.as_str().to_owned(),
                cluster: binding.cluster.to_string(),
            });
        }
        let name = binding.name(&key.name);
        if let Some(first) = names.insert(name.clone(), cluster.clone()) {
            return Err(Violation::DuplicateBindingName {
                placement: key.display(),
                name,
                first: first.to_string(),
                second: cluster.to_string(),
            });
        }
    }
    Ok(())
}

/// A cluster that left has its bindings unscheduled in the same step.
fn live_bindings_have_members(
    state: &State,
    key: &ObjectKey,
    placement: &Placement,
) -> Result<(), Violation> {
    let stray = placement.bindings.values().find(|b| {
        b.state != BindingState::Unscheduled && !state.members.contains_key(b.cluster.as_str())
    });
    match stray {
        Some(binding) => Err(Violation::LiveBindingWithoutMember {
            placement: key.display(),
            cluster: binding.cluster.to_string(),
            state: binding.state.as_str().to_owned(),
        }),
        None => Ok(()),
    }
}

fn snapshots_increase(key: &ObjectKey, placement: &Placement) -> Result<(), Violation> {
    let resource: Vec<u64> = placement
        .resource_snapshots
        .iter()
        .map(|s| s.index)
        .collect();
    let policy: Vec<u64> = placement.policy_snapshots.iter().map(|s| s.index).collect();
    for (kind, indexes) in [("resource", resource), ("policy", policy)] {
        if indexes.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Violation::SnapshotOrder {
                placement: key.display(),
                kind,
                indexes,
            });
        }
    }
    Ok(())
}

/// Every binding's resource snapshot (once it carries one) and policy snapshot exist: a member
/// agent acting on a binding whose snapshot is gone would delete its work.
fn snapshots_exist(key: &ObjectKey, placement: &Placement) -> Result<(), Violation> {
    let has_resources = |index: u64| {
        placement
            .resource_snapshots
            .binary_search_by_key(&index, |s| s.index)
            .is_ok()
    };
    let has_policy = |index: u64| {
        placement
            .policy_snapshots
            .binary_search_by_key(&index, |s| s.index)
            .is_ok()
    };
    for binding in placement.bindings.values() {
        if let Some(index) = binding.resource_index.filter(|i| !has_resources(*i)) {
            return Err(Violation::MissingResourceSnapshot {
                placement: key.display(),
                cluster: binding.cluster.to_string(),
                index,
            });
        }
        if !has_policy(binding.policy_index) {
            return Err(Violation::MissingPolicySnapshot {
                placement: key.display(),
                cluster: binding.cluster.to_string(),
                index: binding.policy_index,
            });
        }
    }
    Ok(())
}

/// PickFixed places exactly on the clusters it names: any other live binding is a leak.
fn fixed_clusters_only(key: &ObjectKey, placement: &Placement) -> Result<(), Violation> {
    if placement.placement_type() != PlacementType::PickFixed || placement.selection_error.is_some()
    {
        return Ok(());
    }
    let Some(latest) = placement.latest_policy() else {
        return Ok(());
    };
    let stray = placement.bindings.values().find(|b| {
        b.state != BindingState::Unscheduled
            && b.policy_index == latest.index
            && !latest
                .policy
                .cluster_names
                .iter()
                .any(|name| *name == b.cluster)
    });
    match stray {
        Some(binding) => Err(Violation::UnnamedFixedCluster {
            placement: key.display(),
            cluster: binding.cluster.to_string(),
        }),
        None => Ok(()),
    }
}

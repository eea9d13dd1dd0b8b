//! Cutting a placement's target clusters into partitions (Rancher Fleet's `autoPartitionSize` and
//! `partitions`).
//!
//! Targets are sorted by cluster name as plain strings (`cluster-10` before `cluster-2`), which
//! is the order of the placement's binding map. Manual partitions keep the order they are
//! written in; a cluster matching several is a member of each, and a cluster matching none is
//! in no partition and never gets work. Automatic partitions: one partition `All` when there are
//! fewer targets than `autoPartitionThreshold` (200), when the threshold is ≤ 0 or when
//! `autoPartitionSize` is an int ≤ 0; otherwise consecutive chunks of `limit(targets,
//! autoPartitionSize)` clusters named `Partition <from> - <to>`, the remainder last.

use serde::{Deserialize, Serialize};

use crate::model::ObjectKey;
use crate::model::cluster_group::{CLUSTER_GROUP_KIND, ClusterGroupSpec, FLEET_GROUP};
use crate::model::partitioned::{
    CLUSTER_GROUP_NAMESPACE_DEFAULT, PartitionSpec, PartitionedRollout, limit,
};
use crate::model::{IntOrPercent, ObjectMeta, StringMap};
use crate::rollout::View;

/// One partition as the rollout walks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// `All`, `Partition <from> - <to>`, or the manual partition's name.
    pub name: String,
    /// Number of member clusters.
    pub count: u64,
    /// Members that may be NotReady before the partition is NotReady.
    pub max_unavailable: u64,
}

/// The partitions, and for each target the indices of the partitions it belongs to.
pub(crate) struct Partitioning {
    pub(crate) partitions: Vec<Partition>,
    pub(crate) membership: Vec<Vec<u32>>,
}

/// A cluster group in the lookup namespace: its name, labels and selector.
struct Group<'a> {
    name: &'a str,
    labels: &'a StringMap,
    spec: ClusterGroupSpec,
}

/// Partitions `targets` (sorted by name) of the placement `key`.
pub(crate) fn partition(
    view: View<'_>,
    key: &ObjectKey,
    rollout: &PartitionedRollout,
    targets: &[&str],
) -> Partitioning {
    if rollout.partitions.is_empty() {
        automatic(rollout, targets.len() as u64)
    } else {
        manual(view, key, rollout, targets)
    }
}

fn automatic(rollout: &PartitionedRollout, targets: u64) -> Partitioning {
    let single = matches!(rollout.auto_partition_size(), IntOrPercent::Int(n) if n <= 0)
        || rollout.auto_partition_threshold() <= 0
        || i64::try_from(targets).unwrap_or(i64::MAX) < rollout.auto_partition_threshold();
    let size = if single {
        targets.max(1)
    } else {
        limit(targets, rollout.auto_partition_size()).max(1)
    };
    let mut partitions = Vec::new();
    let mut membership = Vec::new();
    let mut from = 0_u64;
    while from < targets {
        let count = size.min(targets - from);
        let name = if single {
            "All".to_owned()
        } else {
            format!("Partition {from} - {}", from + count)
        };
        let index = u32::try_from(partitions.len()).unwrap_or(u32::MAX);
        partitions.push(Partition {
            name,
            count,
            max_unavailable: limit(count, rollout.max_unavailable()),
        });
        membership.extend((0..count).map(|_| vec![index]));
        from += count;
    }
    Partitioning {
        partitions,
        membership,
    }
}

fn manual(
    view: View<'_>,
    key: &ObjectKey,
    rollout: &PartitionedRollout,
    targets: &[&str],
) -> Partitioning {
    let namespace = if key.namespace.is_empty() {
        CLUSTER_GROUP_NAMESPACE_DEFAULT
    } else {
        key.namespace.as_str()
    };
    let groups: Vec<Group> = view
        .resources
        .iter()
        .filter(|(k, _)| {
            k.group == FLEET_GROUP && k.kind == CLUSTER_GROUP_KIND && k.namespace == namespace
        })
        .map(|(k, resource)| Group {
            name: &k.name,
            labels: &resource.meta.labels,
            spec: ClusterGroupSpec::from_content(&resource.content),
        })
        .collect();
    let no_labels = StringMap::new();
    let membership: Vec<Vec<u32>> = targets
        .iter()
        .map(|cluster| {
            let labels = view
                .sources
                .members
                .get(*cluster)
                .map_or(&no_labels, |m| labels_of(&m.meta));
            let in_groups: Vec<&Group> = groups.iter().filter(|g| g.spec.selects(labels)).collect();
            rollout
                .partitions
                .iter()
                .enumerate()
                .filter(|(_, spec)| matches(spec, cluster, labels, &in_groups))
                .map(|(index, _)| u32::try_from(index).unwrap_or(u32::MAX))
                .collect()
        })
        .collect();
    let partitions = rollout
        .partitions
        .iter()
        .enumerate()
        .map(|(index, spec)| {
            let wanted = u32::try_from(index).unwrap_or(u32::MAX);
            let count = membership.iter().filter(|m| m.contains(&wanted)).count() as u64;
            let max = spec.max_unavailable.unwrap_or(rollout.max_unavailable());
            Partition {
                name: spec.name.clone(),
                count,
                max_unavailable: limit(count, max),
            }
        })
        .collect();
    Partitioning {
        partitions,
        membership,
    }
}

fn labels_of(meta: &ObjectMeta) -> &StringMap {
    &meta.labels
}

/// Whether a cluster meets every criterion a manual partition gives.
fn matches(spec: &PartitionSpec, cluster: &str, labels: &StringMap, in_groups: &[&Group]) -> bool {
    spec.cluster_name
        .as_deref()
        .is_none_or(|name| name == cluster)
        && spec
            .cluster_selector
            .as_ref()
            .is_none_or(|s| s.matches(labels))
        && spec
            .cluster_group
            .as_deref()
            .is_none_or(|name| in_groups.iter().any(|g| g.name == name))
        && spec
            .cluster_group_selector
            .as_ref()
            .is_none_or(|s| in_groups.iter().any(|g| s.matches(g.labels)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(rollout: &PartitionedRollout, targets: u64) -> Vec<(String, u64, u64)> {
        automatic(rollout, targets)
            .partitions
            .into_iter()
            .map(|p| (p.name, p.count, p.max_unavailable))
            .collect()
    }

    #[test]
    fn fewer_than_200_targets_form_one_partition() {
        let rollout = PartitionedRollout::default();
        assert_eq!(sizes(&rollout, 199), [("All".to_owned(), 199, 199)]);
    }

    #[test]
    fn two_hundred_thirty_at_25_percent_are_four_of_57_and_one_of_2() {
        let rollout = PartitionedRollout::default();
        let names: Vec<(String, u64, u64)> = sizes(&rollout, 230);
        assert_eq!(
            names,
            [
                ("Partition 0 - 57".to_owned(), 57, 57),
                ("Partition 57 - 114".to_owned(), 57, 57),
                ("Partition 114 - 171".to_owned(), 57, 57),
                ("Partition 171 - 228".to_owned(), 57, 57),
                ("Partition 228 - 230".to_owned(), 2, 2),
            ]
        );
    }

    #[test]
    fn ten_percent_of_200_is_ten_partitions_of_20() {
        let rollout = PartitionedRollout {
            auto_partition_size: Some(IntOrPercent::Percent(10)),
            max_unavailable: Some(IntOrPercent::Percent(10)),
            ..PartitionedRollout::default()
        };
        let all = sizes(&rollout, 200);
        assert_eq!(all.len(), 10);
        assert!(all.iter().all(|(_, count, max)| *count == 20 && *max == 2));
    }
}

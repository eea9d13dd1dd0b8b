//! The step's internal bus: what the aggregates changed, as typed values.
//!
//! Decisions are the record users read; the rollout passes (rolling, partitioned, staged) must
//! not re-read them to learn what happened. Instead every aggregate that changes state pushes a
//! [`Change`] here, naming objects by their full [`ObjectKey`] (group, kind, namespace, name), so
//! a custom `example.com/v1` kind named `MemberCluster` is never taken for the real one. The
//! consumers match on [`Change`] exhaustively: adding a variant makes the compiler show every
//! pass that must decide what it means.
//!
//! Changes live for one step only; they are never stored, encoded or hashed.

use crate::model::ClusterName;
use crate::model::ObjectKey;
use crate::model::cluster_group::{CLUSTER_GROUP_KIND, FLEET_GROUP};
use crate::model::{
    CLUSTER_GROUP, CLUSTER_RESOURCE_OVERRIDE, CLUSTER_RESOURCE_PLACEMENT, MEMBER_CLUSTER,
    PLACEMENT_GROUP, RESOURCE_OVERRIDE, RESOURCE_PLACEMENT,
};

/// One change an aggregate made during a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// An object was created or changed (any kind, hub resources included).
    ObjectStored(ObjectKey),
    /// An object was deleted.
    ObjectDeleted(ObjectKey),
    /// A member cluster's agent joined.
    ClusterJoined {
        /// The cluster.
        cluster: ClusterName,
    },
    /// A member cluster turned healthy or unhealthy.
    ClusterHealthChanged {
        /// The cluster.
        cluster: ClusterName,
    },
    /// A member cluster left the fleet.
    ClusterLeft {
        /// The cluster.
        cluster: ClusterName,
    },
    /// A cluster's report on a placement's work was recorded.
    WorkReported {
        /// The placement.
        placement: ObjectKey,
        /// The reporting cluster.
        cluster: ClusterName,
    },
    /// A placement took a new policy snapshot.
    PolicySnapshotTaken {
        /// The placement.
        placement: ObjectKey,
    },
    /// A placement took a new resource snapshot.
    ResourceSnapshotTaken {
        /// The placement.
        placement: ObjectKey,
    },
    /// A placement's Scheduled condition changed.
    SchedulingChanged {
        /// The placement.
        placement: ObjectKey,
    },
    /// The scheduler picked a cluster (new binding, or an unscheduled one restored).
    ClusterScheduled {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: ClusterName,
    },
    /// The scheduler released a cluster (its binding became Unscheduled).
    ClusterUnscheduled {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: ClusterName,
    },
    /// A binding was bound to a resource snapshot (a rollout started on its cluster).
    BindingBound {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: ClusterName,
    },
    /// A binding was removed, and with it the cluster's work.
    BindingRemoved {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: ClusterName,
    },
    /// An override took a new snapshot.
    OverrideSnapshotTaken {
        /// The override.
        override_key: ObjectKey,
    },
    /// An approval request was approved.
    ApprovalGranted {
        /// The request.
        request: ObjectKey,
    },
    /// An approval request was deleted; its run makes it again unless it accepted it already.
    ApprovalDeleted {
        /// The run that created it.
        run: ObjectKey,
    },
    /// An Analysis task of a run took a measurement.
    AnalysisMeasured {
        /// The run.
        run: ObjectKey,
    },
    /// An eviction aimed at a placement was reconciled.
    EvictionReconciled {
        /// The placement it targets.
        placement: ObjectKey,
    },
}

/// Everything one step changed, in the order it changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes(Vec<Change>);

impl Changes {
    /// No changes yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes room for `more` changes at once (a pass about to record one per cluster of a
    /// large fleet would otherwise copy the list each time it grows).
    pub fn reserve(&mut self, more: usize) {
        self.0.reserve(more);
    }

    /// Records one change.
    pub fn push(&mut self, change: Change) {
        self.0.push(change);
    }

    /// Records a transition: the change the passes read and the decision users read, together.
    pub(crate) fn record(
        &mut self,
        change: Change,
        decisions: &mut Vec<crate::decision::Decision>,
        decision: crate::decision::Decision,
    ) {
        self.push(change);
        decisions.push(decision);
    }

    /// Records that an object was deleted, and returns the decision users read for it.
    pub(crate) fn object_deleted(&mut self, key: &ObjectKey) -> crate::decision::Decision {
        self.push(Change::ObjectDeleted(key.clone()));
        crate::decision::Decision::ObjectDeleted {
            object: key.clone(),
        }
    }

    /// The changes in the order they were made.
    pub fn iter(&self) -> std::slice::Iter<'_, Change> {
        self.0.iter()
    }

    /// Whether nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many changes were recorded.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The changes as a slice.
    #[must_use]
    pub fn as_slice(&self) -> &[Change] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Changes {
    type Item = &'a Change;
    type IntoIter = std::slice::Iter<'a, Change>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl ObjectKey {
    /// Whether this is a fleet `MemberCluster` (group `cluster.kubernetes-fleet.io`).
    #[must_use]
    pub fn is_member_cluster(&self) -> bool {
        self.group == CLUSTER_GROUP && self.kind == MEMBER_CLUSTER
    }

    /// Whether this is a `ClusterResourcePlacement` or `ResourcePlacement` of the fleet group.
    #[must_use]
    pub fn is_placement(&self) -> bool {
        self.group == PLACEMENT_GROUP
            && matches!(
                self.kind.as_str(),
                CLUSTER_RESOURCE_PLACEMENT | RESOURCE_PLACEMENT
            )
    }

    /// Whether this is a `ClusterResourceOverride` or `ResourceOverride` of the fleet group.
    #[must_use]
    pub fn is_override(&self) -> bool {
        self.group == PLACEMENT_GROUP
            && matches!(
                self.kind.as_str(),
                CLUSTER_RESOURCE_OVERRIDE | RESOURCE_OVERRIDE
            )
    }

    /// Whether this is a Rancher Fleet `ClusterGroup` (group `fleet.cattle.io`).
    #[must_use]
    pub fn is_cluster_group(&self) -> bool {
        self.group == FLEET_GROUP && self.kind == CLUSTER_GROUP_KIND
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_group_kind_named_like_a_fleet_kind_is_not_one() {
        let custom = ObjectKey::cluster_scoped("example.com", MEMBER_CLUSTER, "member-1");
        assert!(!custom.is_member_cluster());
        assert!(ObjectKey::cluster_scoped(CLUSTER_GROUP, MEMBER_CLUSTER, "m").is_member_cluster());
        let placement = ObjectKey::cluster_scoped("example.com", CLUSTER_RESOURCE_PLACEMENT, "p");
        assert!(!placement.is_placement());
        let real = ObjectKey::cluster_scoped(PLACEMENT_GROUP, CLUSTER_RESOURCE_PLACEMENT, "p");
        assert!(real.is_placement());
    }
}

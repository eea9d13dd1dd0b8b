//! Where a staged update run lives — its namespace, or none for a `ClusterStagedUpdateRun` —
//! and so the keys of the placement, strategy and approval requests it may refer to.

use super::{
    APPROVAL_REQUEST, CLUSTER_APPROVAL_REQUEST, CLUSTER_RESOURCE_PLACEMENT,
    CLUSTER_STAGED_UPDATE_RUN, CLUSTER_STAGED_UPDATE_STRATEGY, KeyPart, ObjectKey, PLACEMENT_GROUP,
    RESOURCE_PLACEMENT, STAGED_UPDATE_RUN, STAGED_UPDATE_STRATEGY,
};

/// Where a run lives, and so which placement, strategy and requests it may refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The run's namespace; empty for a cluster-scoped run.
    pub namespace: KeyPart,
    /// The run's name.
    pub run_name: KeyPart,
}

impl Scope {
    /// The scope of a run's key.
    #[must_use]
    pub fn of(key: &ObjectKey) -> Self {
        Self {
            namespace: key.namespace.clone(),
            run_name: key.name.clone(),
        }
    }

    pub(crate) fn cluster_scoped(&self) -> bool {
        self.namespace.is_empty()
    }

    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }

    fn key(&self, cluster_kind: &str, namespaced_kind: &str, name: &str) -> ObjectKey {
        if self.cluster_scoped() {
            ObjectKey::cluster_scoped(PLACEMENT_GROUP, cluster_kind, name)
        } else {
            ObjectKey {
                group: PLACEMENT_GROUP.into(),
                kind: namespaced_kind.into(),
                namespace: self.namespace.clone(),
                name: name.into(),
            }
        }
    }

    /// The placement a run of this scope names.
    #[must_use]
    pub fn placement_key(&self, name: &str) -> ObjectKey {
        self.key(CLUSTER_RESOURCE_PLACEMENT, RESOURCE_PLACEMENT, name)
    }

    /// The strategy a run of this scope names.
    #[must_use]
    pub fn strategy_key(&self, name: &str) -> ObjectKey {
        self.key(CLUSTER_STAGED_UPDATE_STRATEGY, STAGED_UPDATE_STRATEGY, name)
    }

    /// An approval request of this scope.
    #[must_use]
    pub fn approval_key(&self, name: &str) -> ObjectKey {
        self.key(CLUSTER_APPROVAL_REQUEST, APPROVAL_REQUEST, name)
    }

    /// The run's own key.
    #[must_use]
    pub fn run_key(&self) -> ObjectKey {
        self.key(CLUSTER_STAGED_UPDATE_RUN, STAGED_UPDATE_RUN, &self.run_name)
    }

    pub(crate) fn run_kind(&self) -> &'static str {
        if self.cluster_scoped() {
            CLUSTER_STAGED_UPDATE_RUN
        } else {
            STAGED_UPDATE_RUN
        }
    }

    pub(crate) fn strategy_kind_lower(&self) -> &'static str {
        if self.cluster_scoped() {
            "clusterStagedUpdateStrategy"
        } else {
            "stagedUpdateStrategy"
        }
    }

    pub(crate) fn placement_kind_lower(&self) -> &'static str {
        if self.cluster_scoped() {
            "clusterResourcePlacement"
        } else {
            "resourcePlacement"
        }
    }

    pub(crate) fn resource_snapshot_kinds(&self) -> &'static str {
        if self.cluster_scoped() {
            "clusterResourceSnapshots"
        } else {
            "resourceSnapshots"
        }
    }
}

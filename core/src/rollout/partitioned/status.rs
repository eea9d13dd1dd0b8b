//! Per-cluster states and the Bundle-shaped summaries of a partitioned rollout (Rancher Fleet's
//! `partitions` status).
//!
//! flotilla shows the *deployment view* (Fleet's BundleDeployment, GitRepo and Cluster views,
//! and what the seed's docs say): a cluster the rollout has not reached yet is **Pending** when
//! it has no work at all (initial deployment) and **OutOfSync** when it carries an older work
//! (a rollout of a change). Fleet's Bundle summary at HEAD would count the latter WaitApplied.
//! Members report no drift, so Modified is always 0 for now.

use serde::{Deserialize, Serialize};

use super::plan::{Class, Plan};
use crate::placement::{Binding, Placement};

/// Most clusters listed in `nonReadyResources` (Fleet's cap).
pub const NON_READY_RESOURCES_MAX: usize = 10;

/// A cluster's state in the rollout, first matching rule wins (Rancher Fleet's `partitions`
/// status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ClusterState {
    /// Has no work yet.
    Pending,
    /// Its work failed to apply.
    ErrApplied,
    /// Its work is not applied yet (no report on it, or the apply has not finished).
    WaitApplied,
    /// Its work is applied but not available.
    NotReady,
    /// Its work is ready but older than the latest: the rollout has not reached it.
    OutOfSync,
    /// Its resources drifted (members do not report drift yet).
    Modified,
    /// Its work is the latest, applied and available.
    Ready,
}

impl ClusterState {
    /// The state's name as Fleet spells it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterState::Pending => "Pending",
            ClusterState::ErrApplied => "ErrApplied",
            ClusterState::WaitApplied => "WaitApplied",
            ClusterState::NotReady => "NotReady",
            ClusterState::OutOfSync => "OutOfSync",
            ClusterState::Modified => "Modified",
            ClusterState::Ready => "Ready",
        }
    }

    /// Fleet's rank, worst highest: the display state is the worst present.
    #[must_use]
    pub fn rank(self) -> u8 {
        match self {
            ClusterState::ErrApplied => 7,
            ClusterState::WaitApplied => 6,
            ClusterState::Modified => 5,
            ClusterState::OutOfSync => 4,
            ClusterState::Pending => 3,
            ClusterState::NotReady => 2,
            ClusterState::Ready => 1,
        }
    }
}

/// The state of one target cluster.
#[must_use]
pub fn cluster_state(binding: Option<&Binding>, class: Class) -> ClusterState {
    if !class.bound {
        return ClusterState::Pending;
    }
    let report = binding.and_then(|b| {
        b.report
            .as_ref()
            .filter(|r| Some(r.resource_index) == b.resource_index)
    });
    match report.and_then(|r| r.applied) {
        Some(false) => ClusterState::ErrApplied,
        None => ClusterState::WaitApplied,
        Some(true) if !class.ready => ClusterState::NotReady,
        Some(true) if !class.current => ClusterState::OutOfSync,
        Some(true) => ClusterState::Ready,
    }
}

/// One cluster that is not Ready, as `nonReadyResources` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonReady {
    /// Cluster name.
    pub cluster: String,
    /// Its state.
    pub state: ClusterState,
    /// The member's message about its work, if any.
    pub message: String,
}

/// A count per state, `desiredReady`, and the first non-ready clusters (Fleet's
/// `BundleSummary`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Clusters per state, by state.
    pub counts: std::collections::BTreeMap<ClusterState, u64>,
    /// Number of target clusters.
    pub desired_ready: u64,
    /// The first [`NON_READY_RESOURCES_MAX`] clusters that are not Ready, by name.
    pub non_ready: Vec<NonReady>,
}

impl Summary {
    fn add(&mut self, cluster: &str, state: ClusterState, binding: Option<&Binding>) {
        *self.counts.entry(state).or_default() += 1;
        self.desired_ready += 1;
        if state != ClusterState::Ready && self.non_ready.len() < NON_READY_RESOURCES_MAX {
            self.non_ready.push(NonReady {
                cluster: cluster.to_owned(),
                state,
                message: binding
                    .and_then(|b| b.report.as_ref())
                    .map(|r| r.message().to_owned())
                    .unwrap_or_default(),
            });
        }
    }

    /// How many clusters are in `state`.
    #[must_use]
    pub fn count(&self, state: ClusterState) -> u64 {
        self.counts.get(&state).copied().unwrap_or(0)
    }

    /// The worst state present other than Ready; `None` when all are Ready.
    #[must_use]
    pub fn worst(&self) -> Option<ClusterState> {
        self.counts
            .keys()
            .filter(|s| **s != ClusterState::Ready)
            .max_by_key(|s| s.rank())
            .copied()
    }
}

/// The placement's summary and one per partition (in the plan's order).
#[must_use]
pub fn summarize(placement: &Placement, plan: &Plan) -> (Summary, Vec<Summary>) {
    let mut whole = Summary::default();
    let mut partitions = vec![Summary::default(); plan.partitions.len()];
    for (cluster, target) in &plan.targets {
        let binding = placement.bindings.get(cluster.as_str());
        let binding = binding.as_ref();
        let state = cluster_state(binding, target.class);
        whole.add(cluster, state, binding);
        for index in &target.partitions {
            if let Some(summary) = partitions.get_mut(*index as usize) {
                summary.add(cluster, state, binding);
            }
        }
    }
    (whole, partitions)
}

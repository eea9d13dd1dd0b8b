//! The folded state of the hub: every aggregate, in ordered maps so that iteration order is
//! deterministic, plus a canonical hash.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::codec;
use crate::model::ObjectKey;
use crate::overrides::Override;
pub use crate::placement::Placement;
pub use crate::work_status::{ReportDetails, WorkStatus};

/// The whole hub state. Only [`crate::fold::step`] changes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Event time of the newest event folded (event times never move it backwards).
    pub(crate) now: Option<DateTime<Utc>>,
    /// The last resource version handed out (hub-wide, like Kubernetes').
    pub(crate) resource_version: u64,
    /// Member clusters by name.
    #[serde(deserialize_with = "crate::model::bulk::map")]
    pub(crate) members: Members,
    /// When `members` was last rebuilt with full nodes (derived, never encoded).
    #[serde(skip)]
    pub(crate) members_growth: crate::growth::Growth,
    /// When each joined cluster's heartbeat times out: `(deadline, cluster)`, earliest first.
    #[serde(deserialize_with = "crate::model::bulk::set")]
    pub(crate) heartbeat_deadlines: BTreeSet<(DateTime<Utc>, ClusterName)>,
    /// ClusterResourcePlacements and ResourcePlacements.
    pub(crate) placements: BTreeMap<ObjectKey, Placement>,
    /// Every other hub object (Namespaces, ConfigMaps, Deployments, …).
    pub(crate) resources: BTreeMap<ObjectKey, Resource>,
    /// ClusterResourceOverrides and ResourceOverrides, with their snapshots.
    pub(crate) overrides: BTreeMap<ObjectKey, Override>,
    /// Snapshots gone from their override (deleted with it, or pruned) that a binding's work
    /// still uses, by override ([`crate::overrides::retired`]).
    pub(crate) retired_overrides: BTreeMap<ObjectKey, Vec<crate::overrides::OverrideSnapshot>>,
    /// When a placement's rollout must look again (a not-trackable work becomes ready).
    pub(crate) rollout_deadlines: BTreeSet<(DateTime<Utc>, ObjectKey)>,
    /// Staged update strategies of both scopes.
    pub(crate) strategies: BTreeMap<ObjectKey, crate::staged::Strategy>,
    /// Staged update runs of both scopes, with their status.
    pub(crate) update_runs: BTreeMap<ObjectKey, crate::staged::run::UpdateRun>,
    /// Approval requests the runs created.
    pub(crate) approvals: BTreeMap<ObjectKey, crate::staged::run::ApprovalRequest>,
    /// When a run must look again (a TimedWait elapses, a cluster becomes stuck).
    pub(crate) run_deadlines: BTreeSet<(DateTime<Utc>, ObjectKey)>,
    /// The rollout's binding indexes: a cache derived from the placements, never encoded.
    #[serde(skip)]
    pub(crate) rollout_index: crate::rollout::index::IndexCache,
    /// Placements by their resource selectors: a cache derived from the placements, never
    /// encoded, rebuilt when missing.
    #[serde(skip)]
    pub(crate) selector_index: crate::placement::selector_index::SelectorIndex,
    /// Evictions and placement disruption budgets.
    pub(crate) disruptions: crate::eviction::Disruptions,
    /// Partitioned placements' rollout plans (derived, kept to make a report cheap).
    pub(crate) partitioned_rollouts: BTreeMap<ObjectKey, crate::rollout::partitioned::Plan>,
}

pub use crate::member::Members;

pub use crate::model::ClusterName;

pub use crate::model::Resource;

pub use crate::work_status::{
    DIFFERENCES_MAX, FAILED_MANIFESTS_MAX, ObservedDifference, PATCH_DETAILS_MAX,
};

/// A canonical state hash: SHA-256 over the checkpoint encoding, as lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StateHash(pub String);

impl StateHash {
    /// Characters of every state hash (SHA-256 as hex).
    pub const CHARS: usize = 64;

    /// The hash of a state whose checkpoint encoding is `bytes`.
    #[must_use]
    pub fn of_encoding(bytes: &[u8]) -> Self {
        Self(hex::encode(Sha256::digest(bytes)))
    }
}

impl std::fmt::Display for StateHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'a> From<&'a State> for crate::overrides::Sources<'a> {
    fn from(state: &'a State) -> Self {
        state.override_sources()
    }
}

impl<'a> From<&'a State> for crate::rollout::View<'a> {
    fn from(state: &'a State) -> Self {
        state.rollout_view()
    }
}

impl<'a> From<&'a State> for crate::staged::View<'a> {
    fn from(state: &'a State) -> Self {
        crate::staged::View {
            update_runs: &state.update_runs,
            approvals: &state.approvals,
        }
    }
}

impl<'a> From<&'a mut State> for crate::overrides::Sources<'a> {
    fn from(state: &'a mut State) -> Self {
        let state: &'a State = state;
        state.override_sources()
    }
}

impl State {
    /// A copy to checkpoint from, cheap to take: members and bindings are shared, not copied
    /// (the fold copies one only when it changes it while the copy lives, `Arc::make_mut`),
    /// and the caches, never encoded, are left empty. It encodes, and so hashes, as `self`
    /// does; it is for encoding, not for folding on.
    #[must_use]
    pub fn snapshot(&self) -> State {
        State {
            now: self.now,
            resource_version: self.resource_version,
            members: self.members.clone(),
            members_growth: crate::growth::Growth::default(),
            heartbeat_deadlines: self.heartbeat_deadlines.clone(),
            placements: self.placements.clone(),
            resources: self.resources.clone(),
            overrides: self.overrides.clone(),
            retired_overrides: self.retired_overrides.clone(),
            rollout_deadlines: self.rollout_deadlines.clone(),
            strategies: self.strategies.clone(),
            update_runs: self.update_runs.clone(),
            approvals: self.approvals.clone(),
            run_deadlines: self.run_deadlines.clone(),
            rollout_index: crate::rollout::index::IndexCache::default(),
            selector_index: crate::placement::selector_index::SelectorIndex::default(),
            disruptions: self.disruptions.clone(),
            partitioned_rollouts: self.partitioned_rollouts.clone(),
        }
    }

    /// Hashes the state canonically. Every map is ordered, so equal states hash equally on
    /// any machine.
    ///
    /// # Errors
    /// Only if the state is too large to encode (over the checkpoint limit).
    pub fn hash(&self) -> Result<StateHash, codec::CodecError> {
        Ok(StateHash::of_encoding(&codec::encode_checkpoint(self)?))
    }

    /// Makes the clusters of each update run that hold equal conditions hold one, as the fold
    /// makes them: a state decoded from a checkpoint holds a copy for each.
    pub(crate) fn share_run_conditions(&mut self) {
        for run in self.update_runs.values_mut() {
            crate::staged::shared::share_equal(&mut run.status.stages);
        }
    }

    /// Event time of the newest event folded.
    #[must_use]
    pub fn now(&self) -> Option<DateTime<Utc>> {
        self.now
    }

    /// The last resource version handed out.
    #[must_use]
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// Member clusters by name.
    #[must_use]
    pub fn members(&self) -> &Members {
        &self.members
    }

    /// When each joined cluster's heartbeat times out, earliest first.
    #[must_use]
    pub fn heartbeat_deadlines(&self) -> &BTreeSet<(DateTime<Utc>, ClusterName)> {
        &self.heartbeat_deadlines
    }

    /// ClusterResourcePlacements and ResourcePlacements.
    #[must_use]
    pub fn placements(&self) -> &BTreeMap<ObjectKey, Placement> {
        &self.placements
    }

    /// Every other hub object.
    #[must_use]
    pub fn resources(&self) -> &BTreeMap<ObjectKey, Resource> {
        &self.resources
    }

    /// ClusterResourceOverrides and ResourceOverrides, with their snapshots.
    #[must_use]
    pub fn overrides(&self) -> &BTreeMap<ObjectKey, Override> {
        &self.overrides
    }

    /// When a placement's rollout must look again, earliest first.
    #[must_use]
    pub fn rollout_deadlines(&self) -> &BTreeSet<(DateTime<Utc>, ObjectKey)> {
        &self.rollout_deadlines
    }

    /// Staged update strategies of both scopes.
    #[must_use]
    pub fn strategies(&self) -> &BTreeMap<ObjectKey, crate::staged::Strategy> {
        &self.strategies
    }

    /// Staged update runs of both scopes, with their status.
    #[must_use]
    pub fn update_runs(&self) -> &BTreeMap<ObjectKey, crate::staged::run::UpdateRun> {
        &self.update_runs
    }

    /// Approval requests the runs created.
    #[must_use]
    pub fn approvals(&self) -> &BTreeMap<ObjectKey, crate::staged::run::ApprovalRequest> {
        &self.approvals
    }

    /// When a run must look again, earliest first.
    #[must_use]
    pub fn run_deadlines(&self) -> &BTreeSet<(DateTime<Utc>, ObjectKey)> {
        &self.run_deadlines
    }

    /// The rollout's binding indexes (a derived cache, never encoded).
    #[must_use]
    pub fn rollout_index(&self) -> &crate::rollout::index::IndexCache {
        &self.rollout_index
    }

    /// Evictions and placement disruption budgets.
    #[must_use]
    pub fn disruptions(&self) -> &crate::eviction::Disruptions {
        &self.disruptions
    }

    /// Partitioned placements' rollout plans.
    #[must_use]
    pub fn partitioned_rollouts(&self) -> &BTreeMap<ObjectKey, crate::rollout::partitioned::Plan> {
        &self.partitioned_rollouts
    }

    /// The member store, for a member verb.
    pub(crate) fn member_store(&mut self) -> crate::member::Store<'_> {
        crate::member::Store {
            members: &mut self.members,
            growth: &mut self.members_growth,
            heartbeat_deadlines: &mut self.heartbeat_deadlines,
            resource_version: &mut self.resource_version,
        }
    }

    /// The placement store, for a placement verb.
    pub(crate) fn placement_store(&mut self) -> crate::placement::store::Store<'_> {
        crate::placement::store::Store {
            placements: &mut self.placements,
            selector_index: &mut self.selector_index,
            resource_version: &mut self.resource_version,
        }
    }

    /// The eviction store, for an eviction verb.
    pub(crate) fn eviction_store(&mut self) -> crate::eviction::Store<'_> {
        crate::eviction::Store {
            disruptions: &mut self.disruptions,
            resource_version: &mut self.resource_version,
            placements: &self.placements,
        }
    }

    /// The override store, for an override verb.
    pub(crate) fn override_store(&mut self) -> crate::overrides::Store<'_> {
        crate::overrides::Store {
            overrides: &mut self.overrides,
            retired: &mut self.retired_overrides,
            resource_version: &mut self.resource_version,
            placements: &self.placements,
        }
    }

    /// What rendering and matching overrides read.
    #[must_use]
    pub fn override_sources(&self) -> crate::overrides::Sources<'_> {
        crate::overrides::Sources {
            overrides: &self.overrides,
            retired: &self.retired_overrides,
            members: &self.members,
        }
    }

    /// The rollout's store, for a rollout pass.
    pub(crate) fn rollout_store(&mut self) -> crate::rollout::Store<'_> {
        crate::rollout::Store {
            placements: &mut self.placements,
            rollout_deadlines: &mut self.rollout_deadlines,
            rollout_index: &mut self.rollout_index,
            partitioned_rollouts: &mut self.partitioned_rollouts,
            resources: &self.resources,
            sources: crate::overrides::Sources {
                overrides: &self.overrides,
                retired: &self.retired_overrides,
                members: &self.members,
            },
        }
    }

    /// What the rollout reads.
    #[must_use]
    pub fn rollout_view(&self) -> crate::rollout::View<'_> {
        crate::rollout::View {
            placements: &self.placements,
            resources: &self.resources,
            sources: self.override_sources(),
        }
    }

    /// The staged runs' store, for a staged verb.
    pub(crate) fn staged_store(&mut self) -> crate::staged::Store<'_> {
        crate::staged::Store {
            placements: &mut self.placements,
            strategies: &mut self.strategies,
            update_runs: &mut self.update_runs,
            approvals: &mut self.approvals,
            run_deadlines: &mut self.run_deadlines,
            resource_version: &mut self.resource_version,
            sources: crate::overrides::Sources {
                overrides: &self.overrides,
                retired: &self.retired_overrides,
                members: &self.members,
            },
        }
    }
}

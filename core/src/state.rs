//! The folded state of the hub: every aggregate, in ordered maps so that iteration order is
//! deterministic, plus a canonical hash.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::codec;
use crate::member::Member;
use crate::model::{ObjectKey, ObjectMeta};
use crate::overrides::Override;
pub use crate::placement::Placement;

/// The whole hub state. Only [`crate::fold::step`] changes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Event time of the newest event folded (event times never move it backwards).
    pub now: Option<DateTime<Utc>>,
    /// The last resource version handed out (hub-wide, like Kubernetes').
    pub resource_version: u64,
    /// Member clusters by name.
    pub members: BTreeMap<String, Member>,
    /// When each joined cluster's heartbeat times out: `(deadline, cluster)`, earliest first.
    pub heartbeat_deadlines: BTreeSet<(DateTime<Utc>, String)>,
    /// ClusterResourcePlacements and ResourcePlacements.
    pub placements: BTreeMap<ObjectKey, Placement>,
    /// Every other hub object (Namespaces, ConfigMaps, Deployments, …).
    pub resources: BTreeMap<ObjectKey, Resource>,
    /// ClusterResourceOverrides and ResourceOverrides, with their snapshots.
    pub overrides: BTreeMap<ObjectKey, Override>,
    /// When a placement's rollout must look again (a not-trackable work becomes ready).
    pub rollout_deadlines: BTreeSet<(DateTime<Utc>, ObjectKey)>,
    /// Staged update strategies of both scopes.
    pub strategies: BTreeMap<ObjectKey, crate::staged::Strategy>,
    /// Staged update runs of both scopes, with their status.
    pub update_runs: BTreeMap<ObjectKey, crate::staged::run::UpdateRun>,
    /// Approval requests the runs created.
    pub approvals: BTreeMap<ObjectKey, crate::staged::run::ApprovalRequest>,
    /// When a run must look again (a TimedWait elapses, a cluster becomes stuck).
    pub run_deadlines: BTreeSet<(DateTime<Utc>, ObjectKey)>,
    /// The rollout's binding indexes: a cache derived from the placements, never encoded.
    #[serde(skip)]
    pub rollout_index: crate::rollout::index::IndexCache,
    /// Evictions and placement disruption budgets.
    pub disruptions: crate::eviction::Disruptions,
    /// Partitioned placements' rollout plans (derived, kept to make a report cheap).
    pub partitioned_rollouts: BTreeMap<ObjectKey, crate::rollout::partitioned::Plan>,
}

/// A stored hub resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Canonical JSON of everything but apiVersion/kind/metadata.
    pub content: String,
}

/// What a member cluster last said about one placement's work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkStatus {
    /// Resource index reported on.
    pub resource_index: u64,
    /// Applied (`Some(true)`), failed (`Some(false)`) or not yet (`None`).
    pub applied: Option<bool>,
    /// Available, not available, or unknown.
    pub available: Option<bool>,
    /// Whether availability can be tracked.
    pub trackable: bool,
    /// Member's message.
    pub message: String,
    /// Event time of the report.
    pub reported_at: DateTime<Utc>,
    /// Since when the work has been reported available (at this index, this trackability):
    /// the `lastTransitionTime` of its Available condition.
    pub available_since: DateTime<Utc>,
    /// The manifests the member reported failed, at most [`FAILED_MANIFESTS_MAX`].
    pub failed_manifests: Vec<crate::event::ManifestFailure>,
}

/// At most this many failed manifests are kept per work (KubeFleet's
/// `maxFailedResourcePlacementLimit`, the length of `failedPlacements`).
pub const FAILED_MANIFESTS_MAX: usize = 100;

/// A canonical state hash: SHA-256 over the checkpoint encoding, as lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StateHash(pub String);

impl std::fmt::Display for StateHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl State {
    /// Hashes the state canonically. Every map is ordered, so equal states hash equally on
    /// any machine.
    ///
    /// # Errors
    /// Only if the state is too large to encode (over the checkpoint limit).
    pub fn hash(&self) -> Result<StateHash, codec::CodecError> {
        let bytes = codec::encode_checkpoint(self)?;
        Ok(StateHash(hex::encode(Sha256::digest(&bytes))))
    }

    /// Hands out the next resource version.
    pub(crate) fn next_resource_version(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }
}

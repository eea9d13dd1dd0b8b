//! Bindings: the scheduler's decision that a placement goes to one member cluster
//! (`ClusterResourceBinding` / `ResourceBinding`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The three binding states of seed 002 section 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BindingState {
    /// Picked by the scheduler; waiting for the rollout to bind it.
    Scheduled,
    /// The rollout has started placing resources on the cluster.
    Bound,
    /// No longer picked; its resources are being removed.
    Unscheduled,
}

impl BindingState {
    /// The spelling in `spec.state`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            BindingState::Scheduled => "Scheduled",
            BindingState::Bound => "Bound",
            BindingState::Unscheduled => "Unscheduled",
        }
    }
}

/// A cluster's scores (PickN only; zero otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClusterScore {
    /// From preferred cluster affinity terms.
    pub affinity: i32,
    /// From topology spread constraints.
    pub topology_spread: i32,
}

/// The scheduler's decision about one cluster (`clusterDecision` / `targetClusters[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterDecision {
    /// Cluster name.
    pub cluster: String,
    /// Whether it was picked.
    pub selected: bool,
    /// Its scores, when scored.
    pub score: Option<ClusterScore>,
    /// Why.
    pub reason: String,
}

/// A binding of one placement to one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// Object name: `<placement>-<cluster>-<8 hex>`.
    pub name: String,
    /// Target cluster.
    pub cluster: String,
    /// Current state.
    pub state: BindingState,
    /// The state before it was unscheduled (`kubernetes-fleet.io/previous-binding-state`).
    pub previous_state: Option<BindingState>,
    /// Index of the policy snapshot it was scheduled under.
    pub policy_index: u64,
    /// Index of the resource snapshot it carries, once bound.
    pub resource_index: Option<u64>,
    /// The cluster decision.
    pub decision: ClusterDecision,
    /// Object generation (bumped on every spec change).
    pub generation: u64,
    /// When the rollout last bound it to a resource snapshot (its RolloutStarted time).
    pub rollout_started_at: Option<DateTime<Utc>>,
    /// What the cluster last reported about this work.
    pub report: Option<crate::state::WorkStatus>,
    /// The override snapshots its work was rendered with when last bound: cluster resource
    /// override snapshot names, and `(namespace, name)` of resource override snapshots.
    pub override_snapshots: (Vec<String>, Vec<(String, String)>),
    /// When it was created.
    pub created: DateTime<Utc>,
    /// The staged update run that last bound it, when one did.
    pub update_run: Option<String>,
}

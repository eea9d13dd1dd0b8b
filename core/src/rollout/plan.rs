//! What one rolling pass may do: the budgets `maxUnavailable` and `maxSurge` give for the
//! placement's target number of clusters, and KubeFleet's plan of the bindings to remove, update
//! and bind within them.

use crate::model::ClusterName;
use crate::model::placement::PlacementType;
use crate::placement::{Bindings, Placement};

use super::index::{BindingIndex, Set};
use super::{budgets, rollback, target};

/// `maxUnavailable` and `maxSurge` as counts for a pass's target number of clusters.
pub(super) struct Budgets {
    /// The number of clusters the placement should end up on.
    pub target: i64,
    /// How many of them may be unavailable (at least 1).
    pub max_unavailable: i64,
    /// How many clusters above the target may have work.
    pub max_surge: i64,
}

impl Budgets {
    /// The placement's budgets, its target counted from the index for PickAll.
    pub(super) fn of(placement: &Placement, index: &BindingIndex) -> Self {
        let target = match placement.placement_type() {
            PlacementType::PickAll => index.live,
            _ => target(placement),
        };
        let target = i64::try_from(target).unwrap_or(i64::MAX);
        let (max_unavailable, max_surge) = budgets(placement, u64::try_from(target).unwrap_or(0));
        Self {
            target,
            max_unavailable,
            max_surge,
        }
    }

    /// The number of clusters the rollout's safety fields govern.
    pub(super) fn governed(&self) -> u64 {
        u64::try_from(self.target).unwrap_or(0)
    }

    /// What a rollback may move after a pass that removed `removed` bindings: the ready
    /// clusters above `target - maxUnavailable`, less those removals.
    pub(super) fn for_rollback(&self, ready: i64, removed: usize) -> rollback::Budget {
        let ready_floor = self.target - self.max_unavailable + i64::try_from(removed).unwrap_or(0);
        rollback::Budget {
            ready_to_move: usize::try_from(ready - ready_floor).unwrap_or(0),
        }
    }
}

/// The bindings one pass acts on.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Plan {
    /// Unscheduled bindings to remove.
    pub remove: Vec<ClusterName>,
    /// Bound bindings to update in place to the latest work.
    pub update: Vec<ClusterName>,
    /// Scheduled bindings to bind to the latest work.
    pub bind: Vec<ClusterName>,
}

/// KubeFleet's one-pass algorithm (`determineBindingsToUpdate`), in cluster order: the counts
/// from the index, the candidates from the tags it keeps in the bindings' rows.
pub(super) fn plan(
    index: &BindingIndex,
    bindings: &Bindings,
    budgets: &Budgets,
    progress: bool,
) -> Plan {
    let min_available = budgets.target - budgets.max_unavailable;
    let max_to_remove = usize::try_from(index.ready - min_available).unwrap_or(0);
    let remove: Vec<ClusterName> = (Set::Unscheduled.among(bindings))
        .take(max_to_remove)
        .collect();
    if !progress {
        return Plan {
            remove,
            update: Vec::new(),
            bind: Vec::new(),
        };
    }
    let update = (Set::StaleFailed.among(bindings))
        .chain(
            Set::Stale
                .among(bindings)
                .take(max_to_remove - remove.len()),
        )
        .collect();
    let max_to_add =
        usize::try_from((budgets.target + budgets.max_surge) - index.can_be_ready).unwrap_or(0);
    Plan {
        remove,
        update,
        bind: (Set::Scheduled.among(bindings)).take(max_to_add).collect(),
    }
}

//! Rancher Fleet's partitioned rollout (docs/partitioned-rollout.md), a placement's third
//! rollout strategy (`spec.strategy.type: Partitioned`, configured by
//! `spec.strategy.rolloutStrategy`). The scheduler still chooses the target clusters; this
//! strategy only orders and gates when each gets its work.
//!
//! Terms, in flotilla's words for Fleet's: a *deployment* is a binding's work (Fleet's
//! BundleDeployment); it is *staged* when the rollout gives a cluster the latest work — a
//! Scheduled binding becoming Bound, or a Bound one moved to the latest resource index (Fleet's
//! "switch"); it is *evaluated* once the cluster has reported on that work (any report at the
//! work's resource index: applied or not, available or not). A cluster is *Ready* when it
//! reported its work applied and available ([`crate::rollout::readiness::judge`], with no
//! unavailable period: Fleet adds no artificial delays); any other cluster with work is
//! *NotReady*.
//!
//! Guarantees, after every pass:
//! - The pass staged at most `maxNew` (50) deployments — creations and switches — as Fleet
//!   creates at most `maxNew` BundleDeployments per pass. A pass that stopped at that limit
//!   with work left asks for another pass at the same event time (a rollout deadline at `now`,
//!   which the runtime and the scenario runner deliver at once), so later batches need no
//!   outside event; each batch still goes out only if its partition's gate allows it.
//! - Partitions are walked in order; a partition is NotReady when more of its members than its
//!   `maxUnavailable` are without work, out of date or NotReady (strictly greater, as Fleet);
//!   the walk stops at the partition that makes more partitions NotReady than
//!   `maxUnavailablePartitions`, so no later partition gets work.
//! - Within a partition, new work goes out in batches: a pass stages members without work only
//!   while the partition's members that have work are not more NotReady than `maxUnavailable`
//!   (the rule docs/partitioned-rollout.md states; Fleet's code creates the next 50
//!   regardless).
//! - Out-of-date work is switched as in Fleet: NotReady work always, Ready work only while
//!   fewer than `maxUnavailable` (placement-wide and partition) are NotReady, so
//!   `maxUnavailable: 0` never switches a healthy cluster.
//! - Unscheduled bindings are removed at once (Fleet deletes orphaned deployments right away).
//! - Targets in no manual partition never get work.
//!
//! Cost: the [`Plan`] keeps per-partition tallies, updated one cluster at a time from the work
//! reports of a step ([`observe`]); it is rebuilt (O(targets)) only when its inputs change.

mod partition;
mod plan;
mod safety;
pub mod status;
mod walk;

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

pub use plan::{Outcome, Plan};

use crate::change::{Change, Changes};
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::ObjectKey;
use crate::model::placement::StrategyType;
use crate::placement::{BindingState, Placement, Work};
use crate::rollout::{Store, View};
use plan::Wanted;

/// Whether a placement rolls out by partitions.
#[must_use]
pub fn is_partitioned(placement: &Placement) -> bool {
    placement.spec.strategy.strategy_type == StrategyType::Partitioned
}

/// Builds a placement's plan from scratch, as a pass would after its inputs changed (`None`
/// without a resource snapshot). Tests compare it with the plan kept up to date step by step.
#[must_use]
pub fn fresh_plan<'a>(
    view: impl Into<View<'a>>,
    key: &ObjectKey,
    now: DateTime<Utc>,
) -> Option<Plan> {
    let view = view.into();
    let placement = view.placements.get(key)?;
    let latest = placement.latest_resources()?.index;
    let wanted = Wanted { view, key, latest };
    Some(Plan::build(&wanted, placement, now))
}

/// Reads a step's changes before the rollout runs: work reports mark their cluster for a
/// re-count, anything a plan was built from drops it. Returns the partitioned placements that
/// must be looked at again although no change named them (member labels and cluster groups
/// choose partitions).
pub(crate) fn observe(state: &mut Store<'_>, changes: &[Change]) -> BTreeSet<ObjectKey> {
    let mut regroup = false;
    for change in changes {
        match change {
            Change::WorkReported { placement, cluster } => {
                if let Some(plan) = state.partitioned_rollouts.get_mut(placement) {
                    plan.dirty.insert(cluster.to_string());
                }
            }
            // An executed eviction removes its binding outright, with no scheduling change.
            Change::ClusterScheduled { placement, .. }
            | Change::ClusterUnscheduled { placement, .. }
            | Change::PolicySnapshotTaken { placement }
            | Change::ResourceSnapshotTaken { placement }
            | Change::EvictionReconciled { placement } => {
                state.partitioned_rollouts.remove(placement);
            }
            Change::ObjectStored(key) | Change::ObjectDeleted(key) => {
                if key.is_placement() {
                    state.partitioned_rollouts.remove(key);
                } else {
                    regroup |= regroups(key);
                }
            }
            Change::ClusterLeft { .. } | Change::OverrideSnapshotTaken { .. } => regroup = true,
            // Joining and health reach a plan through scheduling; the pass's own bindings
            // through the scheduling and reports they cause.
            Change::ClusterJoined { .. }
            | Change::ClusterHealthChanged { .. }
            | Change::SchedulingChanged { .. }
            | Change::BindingBound { .. }
            | Change::BindingRemoved { .. }
            | Change::ApprovalGranted { .. }
            | Change::ApprovalDeleted { .. }
            | Change::AnalysisMeasured { .. } => {}
        }
    }
    if !regroup || state.partitioned_rollouts.is_empty() {
        return BTreeSet::new();
    }
    let keys: BTreeSet<ObjectKey> = state.partitioned_rollouts.keys().cloned().collect();
    state.partitioned_rollouts.clear();
    keys
}

/// Whether storing or deleting this object can move clusters between partitions or change
/// their work: member clusters (labels), Fleet cluster groups, overrides.
fn regroups(key: &ObjectKey) -> bool {
    key.is_member_cluster() || key.is_cluster_group() || key.is_override()
}

/// The partitioned pass over one placement.
pub(crate) fn pass(
    state: &mut Store<'_>,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Some(latest) = state
        .placements
        .get(key)
        .and_then(|p| p.latest_resources())
        .map(|s| s.index)
    else {
        state.partitioned_rollouts.remove(key);
        return Vec::new();
    };
    let pass = Pass { key, latest, now };
    let mut decisions = Vec::new();
    let kept = state
        .partitioned_rollouts
        .remove(key)
        .filter(|plan| plan.latest == latest);
    let kept_plan = kept.is_some();
    let mut plan = if let Some(plan) = kept {
        plan
    } else {
        decisions.extend(remove_unscheduled(state, key, changes));
        match fresh_plan(state.view(), key, now) {
            Some(plan) => plan,
            None => return decisions,
        }
    };
    let Some(reported) = pass.reclassify_reported(state, &mut plan) else {
        return decisions;
    };
    #[cfg(debug_assertions)]
    if kept_plan {
        check_kept(state, key, &plan, now);
    }
    // Between a plan's passes only work reports and a rollback's moves (marked as reported)
    // change how the guard judges a binding: what a pass stages carries no report yet, and
    // anything else drops the plan.
    let reclassified = kept_plan.then(|| reported.iter().map(ClusterName::from).collect());
    let (guarded, allowed, moved) = safety::guard(state, &pass, &plan, reclassified, changes);
    decisions.extend(guarded);
    if !allowed {
        // A tripped rollout stages nothing. The clusters a rollback moved are classified again
        // at the next pass, as reported ones are: the plan stays, and a rollback's pass costs
        // what it moved, not a rebuild.
        plan.dirty.extend(moved);
        state.partitioned_rollouts.insert(key.clone(), plan);
        return decisions;
    }
    let Some(staged) = pass.stage(state, &mut plan, changes) else {
        return decisions;
    };
    decisions.extend(staged);
    state.partitioned_rollouts.insert(key.clone(), plan);
    decisions
}

/// One partitioned pass over one placement: which, the resource snapshot it rolls out, and
/// the event time.
pub(super) struct Pass<'a> {
    /// The placement.
    pub key: &'a ObjectKey,
    /// Its latest resource snapshot.
    pub latest: u64,
    /// The event time.
    pub now: DateTime<Utc>,
}

impl Pass<'_> {
    /// Classifies the clusters reported on since the plan's last pass again, and returns them
    /// (`None` when the placement is gone).
    fn reclassify_reported(&self, state: &Store<'_>, plan: &mut Plan) -> Option<BTreeSet<String>> {
        let placement = state.placements.get(self.key)?;
        let wanted = Wanted {
            view: state.view(),
            key: self.key,
            latest: self.latest,
        };
        let reported = std::mem::take(&mut plan.dirty);
        for cluster in &reported {
            if let Some(binding) = placement.bindings.get(cluster.as_str()) {
                let class = wanted.classify(placement, &binding, self.now);
                plan.reclassify(cluster, class);
            }
        }
        Some(reported)
    }

    /// Walks the partitions and gives each cluster whose turn it is the latest work; returns
    /// the decisions (`None` when the placement is gone).
    fn stage(
        &self,
        state: &mut Store<'_>,
        plan: &mut Plan,
        changes: &mut Changes,
    ) -> Option<Vec<Decision>> {
        let placement = state.placements.get(self.key)?;
        let wanted = Wanted {
            view: state.view(),
            key: self.key,
            latest: self.latest,
        };
        let walked = walk::walk(plan);
        let staged: Vec<(String, _)> = walked
            .staged
            .into_iter()
            .map(|cluster| {
                let overrides = wanted.overrides(placement, &cluster);
                (cluster, overrides)
            })
            .collect();
        if walked.at_max_new {
            // maxNew stopped this pass with work left: the next batch needs no outside event,
            // so ask for a pass at this same event time (a tick the runtime delivers at once).
            // A pass that stages nothing never gets here, so this cannot repeat without
            // progress.
            state.rollout_deadlines.insert((self.now, self.key.clone()));
        }
        let mut decisions = Vec::new();
        if let Some(placement) = state.placements.get_mut(self.key) {
            for (cluster, override_snapshots) in staged {
                let work = Work {
                    resource_index: self.latest,
                    override_snapshots,
                };
                decisions.extend(placement.roll_to(self.key, &cluster, work, self.now, changes));
            }
        }
        Some(decisions)
    }
}

/// Debug builds: a plan kept from pass to pass, its reported clusters classified again, equals
/// one built from scratch (but for the last pass's conclusion).
#[cfg(debug_assertions)]
fn check_kept(state: &Store<'_>, key: &ObjectKey, plan: &Plan, now: DateTime<Utc>) {
    let Some(mut fresh) = fresh_plan(state.view(), key, now) else {
        return;
    };
    fresh.outcome = plan.outcome.clone();
    assert_eq!(
        plan,
        &fresh,
        "the partitioned plan of {} drifted from its bindings",
        key.display()
    );
}

/// Removes every Unscheduled binding, and so its work.
fn remove_unscheduled(
    state: &mut Store<'_>,
    key: &ObjectKey,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Some(placement) = state.placements.get_mut(key) else {
        return Vec::new();
    };
    let unscheduled: Vec<String> = placement
        .bindings
        .iter()
        .filter(|(_, b)| b.state == BindingState::Unscheduled)
        .map(|(cluster, _)| cluster.as_str().to_owned())
        .collect();
    unscheduled
        .iter()
        .filter_map(|cluster| placement.remove_binding(key, cluster, changes))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cluster_group::{CLUSTER_GROUP_KIND, FLEET_GROUP};
    use crate::model::{CLUSTER_GROUP, MEMBER_CLUSTER};

    #[test]
    fn only_the_fleet_kinds_regroup_partitions() {
        let member = ObjectKey::cluster_scoped(CLUSTER_GROUP, MEMBER_CLUSTER, "member-1");
        assert!(regroups(&member));
        let group = ObjectKey::cluster_scoped(FLEET_GROUP, CLUSTER_GROUP_KIND, "g");
        assert!(regroups(&group));
        // A custom kind that merely shares the name is a hub resource like any other.
        let custom = ObjectKey::cluster_scoped("example.com", MEMBER_CLUSTER, "member-1");
        assert!(!regroups(&custom));
        let custom_group = ObjectKey::cluster_scoped("example.com", CLUSTER_GROUP_KIND, "g");
        assert!(!regroups(&custom_group));
    }
}

//! Rancher Fleet's partitioned rollout (seed 000), a placement's third rollout strategy
//! (`spec.strategy.type: Partitioned`, configured by `spec.strategy.rolloutStrategy`). The
//! scheduler still chooses the target clusters; this strategy only orders and gates when each
//! gets its work.
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
//! - At most `maxNew` (50) deployments are staged and not yet evaluated.
//! - Partitions are walked in order; a partition is NotReady when more of its members than its
//!   `maxUnavailable` are without work, out of date or NotReady (strictly greater, as Fleet);
//!   the walk stops at the partition that makes more partitions NotReady than
//!   `maxUnavailablePartitions`, so no later partition gets work.
//! - Within a partition, new work goes out in batches: a pass stages members without work only
//!   while the partition's members that have work are not more NotReady than `maxUnavailable`
//!   (the seed's rule; Fleet's code creates the next 50 regardless).
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
pub mod status;
mod walk;

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

pub use partition::Partition;
pub use plan::{Class, Outcome, Plan, Tally, Target};

use crate::decision::Decision;
use crate::model::ObjectKey;
use crate::model::placement::StrategyType;
use crate::placement::{BindingState, Placement};
use crate::state::State;
use plan::Wanted;

/// Whether a placement rolls out by partitions.
#[must_use]
pub fn is_partitioned(placement: &Placement) -> bool {
    placement.spec.strategy.strategy_type == StrategyType::Partitioned
}

/// Builds a placement's plan from scratch, as a pass would after its inputs changed (`None`
/// without a resource snapshot). Tests compare it with the plan kept up to date step by step.
#[must_use]
pub fn fresh_plan(state: &State, key: &ObjectKey, now: DateTime<Utc>) -> Option<Plan> {
    let placement = state.placements.get(key)?;
    let latest = placement.latest_resources()?.index;
    let wanted = Wanted { state, key, latest };
    Some(Plan::build(&wanted, placement, now))
}

/// Reads a step's decisions before the rollout runs: work reports mark their cluster for a
/// re-count, anything a plan was built from drops it. Returns the partitioned placements that
/// must be looked at again although no decision named them (member labels and cluster groups
/// choose partitions).
pub fn observe(state: &mut State, decisions: &[Decision]) -> BTreeSet<ObjectKey> {
    let mut regroup = false;
    for decision in decisions {
        match decision {
            Decision::WorkReported {
                cluster, placement, ..
            } => {
                if let Some(plan) = super::placement_key(placement)
                    .and_then(|key| state.partitioned_rollouts.get_mut(&key))
                {
                    plan.dirty.insert(cluster.clone());
                }
            }
            Decision::ClusterScheduled { placement, .. }
            | Decision::ClusterUnscheduled { placement, .. }
            | Decision::PolicySnapshotTaken { placement, .. }
            | Decision::ResourceSnapshotTaken { placement, .. } => {
                if let Some(key) = super::placement_key(placement) {
                    state.partitioned_rollouts.remove(&key);
                }
            }
            Decision::ObjectStored { object, .. } | Decision::ObjectDeleted { object } => {
                if let Some(key) = super::placement_key(object) {
                    state.partitioned_rollouts.remove(&key);
                } else if object.starts_with("MemberCluster/")
                    || object.starts_with("ClusterGroup/")
                    || object.starts_with("ClusterResourceOverride/")
                    || object.starts_with("ResourceOverride/")
                {
                    regroup = true;
                }
            }
            Decision::ClusterLeft { .. } | Decision::OverrideSnapshotTaken { .. } => regroup = true,
            _ => {}
        }
    }
    if !regroup || state.partitioned_rollouts.is_empty() {
        return BTreeSet::new();
    }
    let keys: BTreeSet<ObjectKey> = state.partitioned_rollouts.keys().cloned().collect();
    state.partitioned_rollouts.clear();
    keys
}

/// The partitioned pass over one placement.
pub(crate) fn pass(state: &mut State, key: &ObjectKey, now: DateTime<Utc>) -> Vec<Decision> {
    let Some(latest) = state
        .placements
        .get(key)
        .and_then(|p| p.latest_resources())
        .map(|s| s.index)
    else {
        state.partitioned_rollouts.remove(key);
        return Vec::new();
    };
    let label = key.display();
    let mut decisions = Vec::new();
    let kept = state
        .partitioned_rollouts
        .remove(key)
        .filter(|plan| plan.latest == latest);
    let mut plan = if let Some(plan) = kept {
        plan
    } else {
        decisions.extend(remove_unscheduled(state, key, &label));
        match fresh_plan(state, key, now) {
            Some(plan) => plan,
            None => return decisions,
        }
    };
    let Some(placement) = state.placements.get(key) else {
        return decisions;
    };
    let wanted = Wanted { state, key, latest };
    for cluster in std::mem::take(&mut plan.dirty) {
        if let Some(binding) = placement.bindings.get(&cluster) {
            let class = wanted.classify(placement, binding, now);
            plan.reclassify(&cluster, class);
        }
    }
    let staged: Vec<(String, _)> = walk::walk(&mut plan)
        .into_iter()
        .map(|cluster| {
            let overrides = wanted.overrides(placement, &cluster);
            (cluster, overrides)
        })
        .collect();
    if let Some(placement) = state.placements.get_mut(key) {
        for (cluster, overrides) in staged {
            let Some(binding) = placement.bindings.get_mut(&cluster) else {
                continue;
            };
            binding.state = BindingState::Bound;
            binding.previous_state = None;
            binding.resource_index = Some(latest);
            binding.override_snapshots = overrides;
            binding.rollout_started_at = Some(now);
            // New work: what the cluster said about the previous one no longer counts.
            binding.report = None;
            binding.generation += 1;
            decisions.push(Decision::RolloutStarted {
                placement: label.clone(),
                cluster,
                resource_index: latest,
            });
        }
    }
    state.partitioned_rollouts.insert(key.clone(), plan);
    decisions
}

/// Removes every Unscheduled binding, and so its work.
fn remove_unscheduled(state: &mut State, key: &ObjectKey, label: &str) -> Vec<Decision> {
    let Some(placement) = state.placements.get_mut(key) else {
        return Vec::new();
    };
    let mut decisions = Vec::new();
    placement.bindings.retain(|cluster, binding| {
        let keep = binding.state != BindingState::Unscheduled;
        if !keep {
            decisions.push(Decision::BindingRemoved {
                placement: label.to_owned(),
                cluster: cluster.clone(),
            });
        }
        keep
    });
    decisions
}

//! One walk over the partitions, in order (Rancher Fleet's rollout, with its documented batch
//! rule): in each partition, give work to members without it, switch out-of-date work, then judge
//! the partition; stop at the partition that makes more partitions NotReady than
//! `maxUnavailablePartitions` allows. A walk stages at most `maxNew` deployments (Fleet's
//! per-pass limit); one that stops at that limit with work left says so, and the caller asks
//! for another pass at the same event time. Works only on the [`Plan`]'s tallies: the cost is
//! the number of partitions plus the clusters acted on, never the number of targets.

use super::partition::Partition;
use super::plan::{Class, Outcome, Plan, Tally};

/// The class a cluster has right after it is given the latest work: nothing reported yet.
const STAGED: Class = Class {
    bound: true,
    current: true,
    reported: false,
    ready: false,
    failed: false,
};

/// What one walk did.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// The clusters to give the latest work, in the order decided.
    pub(crate) staged: Vec<String>,
    /// The walk stopped because it staged `maxNew`, and work is left: another pass may stage
    /// more without any outside event.
    pub(crate) at_max_new: bool,
}

/// One walk's working memory: what it staged, and whether `maxNew` stopped it.
struct Pass {
    staged: Vec<String>,
    max_new: u64,
    at_max_new: bool,
}

impl Pass {
    /// Whether this pass may stage one more deployment; notes when `maxNew` says no.
    fn has_room(&mut self) -> bool {
        let room = (self.staged.len() as u64) < self.max_new;
        self.at_max_new |= !room;
        room
    }

    fn stage(&mut self, plan: &mut Plan, cluster: String) {
        plan.reclassify(&cluster, STAGED);
        self.staged.push(cluster);
    }
}

/// Walks the partitions; returns the clusters to give the latest work, in the order decided,
/// and whether `maxNew` stopped the walk. The plan's tallies already count them as staged, and
/// its outcome says why the rollout waits, if it does.
pub(crate) fn walk(plan: &mut Plan) -> Walked {
    let mut pass = Pass {
        staged: Vec::new(),
        max_new: plan.max_new,
        at_max_new: false,
    };
    let mut not_ready_partitions = 0_u64;
    let mut reason: Option<String> = None;
    for index in 0..plan.partitions.len() {
        let held_new = deploy(plan, index, &mut pass);
        let held_switch = switch(plan, index, &mut pass);
        reason = reason.or(held_new).or(held_switch);
        let (partition, tally) = (&plan.partitions[index], &plan.tallies[index]);
        if tally.unavailable() > partition.max_unavailable {
            not_ready_partitions += 1;
            if not_ready_partitions > plan.max_unavailable_partitions {
                reason = reason.or(Some(stopped_at(plan, index, not_ready_partitions)));
                break;
            }
        }
    }
    let work_left = plan.tallies.iter().any(super::plan::Tally::has_work_left);
    let at_max_new = pass.at_max_new && work_left;
    if at_max_new {
        reason = reason.or(Some(format!(
            "{} deployments staged in one pass, maxNew {}; the next pass follows",
            pass.staged.len(),
            plan.max_new
        )));
    }
    plan.outcome = Outcome {
        unavailable_partitions: not_ready_partitions,
        paused: reason.filter(|_| work_left),
    };
    Walked {
        staged: pass.staged,
        at_max_new,
    }
}

/// Why the walk stopped at partition `index`.
fn stopped_at(plan: &Plan, index: usize, not_ready_partitions: u64) -> String {
    let (partition, tally) = (&plan.partitions[index], &plan.tallies[index]);
    let partitions = if plan.max_unavailable_partitions == 0 {
        String::new()
    } else {
        format!(
            "{not_ready_partitions} partitions NotReady, maxUnavailablePartitions {}; ",
            plan.max_unavailable_partitions
        )
    };
    format!(
        "{partitions}partition {}: {} of {} clusters NotReady, maxUnavailable {}",
        partition.name,
        tally.unavailable(),
        partition.count,
        partition.max_unavailable
    )
}

/// Gives work to the partition's members without it, within the pass's maxNew, and only while
/// the members already deployed are not too many NotReady (the seed: "deploys to the first 50,
/// checks maxUnavailable, and proceeds with the remaining 50 only if the threshold is not
/// exceeded"). Returns why it held back, if the threshold did.
fn deploy(plan: &mut Plan, index: usize, pass: &mut Pass) -> Option<String> {
    let (partition, tally) = (&plan.partitions[index], &plan.tallies[index]);
    if tally.unbound.is_empty() {
        return None;
    }
    if tally.deployed_not_ready() > partition.max_unavailable {
        return Some(held_back(partition, tally));
    }
    while let Some(cluster) = plan.tallies[index].unbound.first().cloned() {
        if !pass.has_room() {
            break;
        }
        pass.stage(plan, cluster);
    }
    None
}

/// Switches out-of-date work to the latest (Fleet's "switch"), within the pass's maxNew: work
/// that is not ready anyway always, ready work only while both the placement-wide and the
/// partition's count of NotReady work stay under their maxUnavailable. Returns why it held
/// back, if a maxUnavailable did.
fn switch(plan: &mut Plan, index: usize, pass: &mut Pass) -> Option<String> {
    while let Some(cluster) = plan.tallies[index].outdated_not_ready.first().cloned() {
        if !pass.has_room() {
            return None;
        }
        pass.stage(plan, cluster);
    }
    loop {
        let (partition, tally) = (&plan.partitions[index], &plan.tallies[index]);
        let cluster = tally.outdated_ready.first().cloned()?;
        if tally.deployed_not_ready() >= partition.max_unavailable {
            return Some(held_back(partition, tally));
        }
        if plan.not_ready >= plan.max_unavailable {
            return Some(format!(
                "{} of {} clusters NotReady, maxUnavailable {}",
                plan.not_ready,
                plan.targets.len(),
                plan.max_unavailable
            ));
        }
        if !pass.has_room() {
            return None;
        }
        pass.stage(plan, cluster);
    }
}

/// Why a partition holds back: too many of its deployed members are NotReady.
fn held_back(partition: &Partition, tally: &Tally) -> String {
    format!(
        "partition {}: {} of {} clusters NotReady, maxUnavailable {}",
        partition.name,
        tally.deployed_not_ready(),
        partition.count,
        partition.max_unavailable
    )
}

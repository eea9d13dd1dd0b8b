//! One walk over the partitions, in order (reference §1.2, with the seed's batch rule): in each
//! partition, give work to members without it, switch out-of-date work, then judge the
//! partition; stop at the partition that makes more partitions NotReady than
//! `maxUnavailablePartitions` allows. Works only on the [`Plan`]'s tallies: the cost is the
//! number of partitions plus the clusters acted on, never the number of targets.

use super::plan::{Class, Outcome, Plan};

/// The class a cluster has right after it is given the latest work: nothing reported yet.
const STAGED: Class = Class {
    bound: true,
    current: true,
    reported: false,
    ready: false,
    failed: false,
};

/// Walks the partitions; returns the clusters to give the latest work, in the order decided.
/// The plan's tallies already count them as staged, and its outcome says why the rollout
/// waits, if it does.
pub(crate) fn walk(plan: &mut Plan) -> Vec<String> {
    let mut staged = Vec::new();
    let mut not_ready_partitions = 0_u64;
    let mut reason: Option<String> = None;
    for index in 0..plan.partitions.len() {
        let held_new = deploy(plan, index, &mut staged);
        let held_switch = switch(plan, index, &mut staged);
        reason = reason.or(held_new).or(held_switch);
        let (partition, tally) = (&plan.partitions[index], &plan.tallies[index]);
        if tally.unavailable() > partition.max_unavailable {
            not_ready_partitions += 1;
            if not_ready_partitions > plan.max_unavailable_partitions {
                let partitions = if plan.max_unavailable_partitions == 0 {
                    String::new()
                } else {
                    format!(
                        "{not_ready_partitions} partitions NotReady, maxUnavailablePartitions {}; ",
                        plan.max_unavailable_partitions
                    )
                };
                reason = reason.or(Some(format!(
                    "{partitions}partition {}: {} of {} clusters NotReady, maxUnavailable {}",
                    partition.name,
                    tally.unavailable(),
                    partition.count,
                    partition.max_unavailable
                )));
                break;
            }
        }
    }
    let work_left = plan.tallies.iter().any(super::plan::Tally::has_work_left);
    if plan.unevaluated >= plan.max_new {
        reason = reason.or(Some(format!(
            "{} deployments staged and not yet reported, maxNew {}",
            plan.unevaluated, plan.max_new
        )));
    }
    plan.outcome = Outcome {
        unavailable_partitions: not_ready_partitions,
        paused: reason.filter(|_| work_left),
    };
    staged
}

/// Gives work to the partition's members without it, at most maxNew staged and unevaluated at
/// a time, and only while the members already deployed are not too many NotReady (the seed:
/// "deploys to the first 50, checks maxUnavailable, and proceeds with the remaining 50 only if
/// the threshold is not exceeded"). Returns why it held back, if the threshold did.
fn deploy(plan: &mut Plan, index: usize, staged: &mut Vec<String>) -> Option<String> {
    let (partition, tally) = (&plan.partitions[index], &plan.tallies[index]);
    if tally.unbound.is_empty() {
        return None;
    }
    if tally.deployed_not_ready() > partition.max_unavailable {
        return Some(format!(
            "partition {}: {} of {} clusters NotReady, maxUnavailable {}",
            partition.name,
            tally.deployed_not_ready(),
            partition.count,
            partition.max_unavailable
        ));
    }
    while plan.unevaluated < plan.max_new {
        let Some(cluster) = plan.tallies[index].unbound.first().cloned() else {
            break;
        };
        plan.reclassify(&cluster, STAGED);
        staged.push(cluster);
    }
    None
}

/// Switches out-of-date work to the latest (Fleet's "switch"): work that is not ready anyway
/// always (within maxNew), ready work only while both the placement-wide and the partition's
/// count of NotReady work stay under their maxUnavailable. Returns why it held back, if a
/// maxUnavailable did.
fn switch(plan: &mut Plan, index: usize, staged: &mut Vec<String>) -> Option<String> {
    while let Some(cluster) = plan.tallies[index].outdated_not_ready.first().cloned() {
        let reported = plan.targets.get(&cluster).is_some_and(|t| t.class.reported);
        if reported && plan.unevaluated >= plan.max_new {
            return None;
        }
        plan.reclassify(&cluster, STAGED);
        staged.push(cluster);
    }
    loop {
        let (partition, tally) = (&plan.partitions[index], &plan.tallies[index]);
        let cluster = tally.outdated_ready.first().cloned()?;
        if plan.unevaluated >= plan.max_new {
            return None;
        }
        if tally.deployed_not_ready() >= partition.max_unavailable {
            return Some(format!(
                "partition {}: {} of {} clusters NotReady, maxUnavailable {}",
                partition.name,
                tally.deployed_not_ready(),
                partition.count,
                partition.max_unavailable
            ));
        }
        if plan.not_ready >= plan.max_unavailable {
            return Some(format!(
                "{} of {} clusters NotReady, maxUnavailable {}",
                plan.not_ready,
                plan.targets.len(),
                plan.max_unavailable
            ));
        }
        plan.reclassify(&cluster, STAGED);
        staged.push(cluster);
    }
}

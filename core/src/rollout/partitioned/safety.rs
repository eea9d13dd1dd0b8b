//! Rollout safety (issue 17) for a partitioned rollout: the fields of
//! `spec.strategy.rolloutStrategy` guard the whole rollout with the placement's guard
//! ([`crate::rollout::safety`]), and a manual partition's own `maxFailures` (percent of its
//! members, rounded down) judges the failures among its members instead of the block's. A
//! tripped rollout stages nothing more; a rollback moves clusters back while no more than the
//! placement-wide `maxUnavailable` window is NotReady.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use super::Plan;
use crate::change::Changes;
use crate::decision::Decision;
use crate::model::ObjectKey;
use crate::model::Rounding;
use crate::model::partitioned::PartitionedRollout;
use crate::rollout::readiness::ApplyMode;
use crate::rollout::rollback;
use crate::rollout::safety::{self, Judging};
use crate::state::State;

/// Where the fields live, for messages.
const PATH: &str = "spec.strategy.rolloutStrategy";

/// The failure threshold of a partitioned rollout: each manual partition with its own
/// `maxFailures` over its failed members, then the block's over the other failed clusters.
fn threshold<'a>(
    rollout: &'a PartitionedRollout,
    plan: &'a Plan,
) -> impl Fn(&BTreeSet<String>) -> Option<String> + 'a {
    move |failed: &BTreeSet<String>| {
        let member_of = |cluster: &String, index: usize| {
            plan.targets
                .get(cluster)
                .is_some_and(|t| t.partitions.iter().any(|p| *p as usize == index))
        };
        for (index, spec) in rollout.partitions.iter().enumerate() {
            let Some(max) = spec.max_failures else {
                continue;
            };
            let count = plan.partitions.get(index).map_or(0, |p| p.count);
            let tolerated = max.resolve(count, Rounding::Down);
            let members: Vec<&str> = failed
                .iter()
                .filter(|c| member_of(c, index))
                .map(String::as_str)
                .collect();
            if i64::try_from(members.len()).unwrap_or(i64::MAX) > tolerated {
                return Some(format!(
                    "{} cluster(s) of partition {:?} failed, more than \
                     {PATH}.partitions[{index}].maxFailures tolerates ({tolerated}): {}",
                    members.len(),
                    spec.name,
                    members.join(", ")
                ));
            }
        }
        let fields = rollout.safety();
        if !fields.counts_failures() {
            return None;
        }
        let own = |cluster: &String| {
            rollout
                .partitions
                .iter()
                .enumerate()
                .any(|(index, spec)| spec.max_failures.is_some() && member_of(cluster, index))
        };
        let rest: BTreeSet<String> = failed.iter().filter(|c| !own(c)).cloned().collect();
        safety::block_threshold(fields, plan.targets.len() as u64, PATH)(&rest)
    }
}

/// Runs the guard, and a rollback's step, for one partitioned pass. Returns the decisions,
/// whether the rollout may stage clusters, and whether the pass moved bindings itself (then
/// the plan must be rebuilt).
pub(super) fn guard(
    state: &mut State,
    key: &ObjectKey,
    plan: &Plan,
    latest: u64,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> (Vec<Decision>, bool, bool) {
    let Some(placement) = state.placements.get_mut(key) else {
        return (Vec::new(), true, false);
    };
    let rollout = placement
        .spec
        .strategy
        .rollout_strategy
        .clone()
        .unwrap_or_default();
    let fields = rollout.safety();
    let mut counted = fields;
    if rollout.counts_failures() && !fields.counts_failures() {
        // A partition's own maxFailures counts failures; the block tolerates any elsewhere.
        counted.max_failures = Some(crate::model::IntOrPercent::Percent(100));
    }
    let check = threshold(&rollout, plan);
    let judging = Judging {
        mode: ApplyMode::of(placement),
        period: Duration::zero(),
        path: PATH,
        counts_failures: rollout.counts_failures(),
        tolerated: fields.failures_tolerated(plan.targets.len() as u64),
        threshold: &check,
    };
    // A partitioned rollout keeps no binding index: its guard judges every binding.
    let seen = safety::Seen {
        reclassified: None,
        complete: None,
    };
    let (mut decisions, next) =
        safety::observe(placement, key, (latest, counted), judging, seen, now);
    let allowed = placement
        .guard
        .as_ref()
        .is_none_or(safety::Guard::allows_progress);
    let budget = rollback::Budget {
        ready_to_move: usize::try_from(plan.max_unavailable.saturating_sub(plan.not_ready))
            .unwrap_or(usize::MAX),
    };
    let (rolled, moved, later) = rollback::step(placement, key, budget, judging, now, changes);
    decisions.extend(rolled);
    for at in next.into_iter().chain(later) {
        state.rollout_deadlines.insert((at, key.clone()));
    }
    (decisions, allowed, !moved.is_empty())
}

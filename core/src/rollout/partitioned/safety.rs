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
use crate::placement::{BindingState, Bindings};
use crate::rollout::readiness::ApplyMode;
use crate::rollout::rollback;
use crate::rollout::safety::{self, Judging};
use crate::state::{ClusterName, State};

/// Where the fields live, for messages.
const PATH: &str = "spec.strategy.rolloutStrategy";

/// The failure threshold of a partitioned rollout: each manual partition with its own
/// `maxFailures` over its failed members, then the block's over the other failed clusters.
fn threshold<'a>(
    rollout: &'a PartitionedRollout,
    plan: &'a Plan,
) -> impl Fn(&BTreeSet<String>) -> Option<String> + 'a {
    move |failed: &BTreeSet<String>| {
        let fields = rollout.safety();
        let block = safety::block_threshold(fields, plan.targets.len() as u64, PATH);
        let own: Vec<usize> = (rollout.partitions.iter().enumerate())
            .filter(|(_, spec)| spec.max_failures.is_some())
            .map(|(index, _)| index)
            .collect();
        if own.is_empty() {
            // Every failure is the block's: no copy of the failed set per pass.
            return fields.counts_failures().then(|| block(failed)).flatten();
        }
        // One look at each failed cluster's partitions, not one per partition.
        let mut members: Vec<Vec<&str>> = vec![Vec::new(); rollout.partitions.len()];
        let mut rest = BTreeSet::new();
        for cluster in failed {
            let partitions = plan.targets.get(cluster).map_or(&[][..], |t| &t.partitions);
            let mut owned = false;
            for index in partitions.iter().map(|p| *p as usize) {
                if own.contains(&index) {
                    members[index].push(cluster);
                    owned = true;
                }
            }
            if !owned {
                rest.insert(cluster.clone());
            }
        }
        for (index, spec) in rollout.partitions.iter().enumerate() {
            let Some(max) = spec.max_failures else {
                continue;
            };
            let count = plan.partitions.get(index).map_or(0, |p| p.count);
            let tolerated = max.resolve(count, Rounding::Down);
            let members = &members[index];
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
        fields.counts_failures().then(|| block(&rest)).flatten()
    }
}

/// Whether every target is bound and ready on `latest`, the guard's completeness. The plan's
/// counts decide it while a target is unbound in a partition or not ready; only then are the
/// targets the counts cannot place looked at, stopping at the first that holds it up: ready
/// ones out of date (on older work, or on the latest with other overrides) and, with manual
/// partitions, targets in none.
fn complete(plan: &Plan, bindings: &Bindings, latest: u64, manual: bool) -> bool {
    if plan.not_ready > 0 || plan.tallies.iter().any(|t| !t.unbound.is_empty()) {
        return false;
    }
    let on_latest = |cluster: &str| {
        bindings
            .get(cluster)
            .is_some_and(|b| b.state == BindingState::Bound && b.resource_index == Some(latest))
    };
    // No bound target is not ready, so every one left holding it up is ready on older work.
    let outdated_on_latest = plan
        .tallies
        .iter()
        .flat_map(|t| &t.outdated_ready)
        .all(|cluster| on_latest(cluster));
    outdated_on_latest
        && (!manual
            || plan
                .targets
                .iter()
                .filter(|(_, target)| target.partitions.is_empty())
                .all(|(cluster, target)| {
                    target.class.bound && (target.class.current || on_latest(cluster))
                }))
}

/// Runs the guard, and a rollback's step, for one partitioned pass; `reclassified` names the
/// clusters reported on since the plan's last pass (`None`: a new plan, judge every binding).
/// Returns the decisions, whether the rollout may stage clusters, and the clusters whose
/// bindings the rollback moved (the plan must classify them again).
pub(super) fn guard(
    state: &mut State,
    key: &ObjectKey,
    (plan, reclassified): (&Plan, Option<BTreeSet<ClusterName>>),
    latest: u64,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> (Vec<Decision>, bool, Vec<String>) {
    let Some(placement) = state.placements.get_mut(key) else {
        return (Vec::new(), true, Vec::new());
    };
    let rollout = placement
        .spec
        .strategy
        .rollout_strategy
        .clone()
        .unwrap_or_default();
    let fields = rollout.safety();
    let manual = !rollout.partitions.is_empty();
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
        // Partitions and targets change only with a new plan, whose first pass judges all.
        threshold_follows_failures: true,
    };
    // A rollback looks again only at the clusters reported on since the plan's last pass.
    let rolling_back = placement
        .guard
        .as_ref()
        .is_some_and(safety::Guard::is_rolling_back);
    let touched = rolling_back.then(|| reclassified.clone()).flatten();
    let seen = safety::Seen {
        reclassified,
        complete: Some(complete(plan, &placement.bindings, latest, manual)),
    };
    let (mut decisions, next) =
        safety::observe_checked(placement, key, (latest, counted), judging, seen, now);
    let allowed = placement
        .guard
        .as_ref()
        .is_none_or(safety::Guard::allows_progress);
    let budget = rollback::Budget {
        ready_to_move: usize::try_from(plan.max_unavailable.saturating_sub(plan.not_ready))
            .unwrap_or(usize::MAX),
    };
    let (rolled, moved, later) = rollback::step(
        placement,
        key,
        budget,
        judging,
        now,
        changes,
        touched.as_ref(),
    );
    decisions.extend(rolled);
    for at in next.into_iter().chain(later) {
        state.rollout_deadlines.insert((at, key.clone()));
    }
    (decisions, allowed, moved)
}

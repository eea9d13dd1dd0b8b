//! Rollout safety (docs/rollout-safety.md) for a partitioned rollout: the fields of
//! `spec.strategy.rolloutStrategy` guard the whole rollout with the placement's guard
//! ([`crate::rollout::safety`]), and a manual partition's own `maxFailures` (percent of its
//! members, rounded down) judges the failures among its members instead of the block's. A
//! tripped rollout stages nothing more; a rollback moves clusters back while no more than the
//! placement-wide `maxUnavailable` window is NotReady.

use std::collections::BTreeSet;

use chrono::Duration;

use super::{Pass, Plan};
use crate::change::Changes;
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::Rounding;
use crate::model::partitioned::PartitionedRollout;
use crate::placement::{BindingState, Bindings};
use crate::rollout::Store;
use crate::rollout::readiness::ApplyMode;
use crate::rollout::rollback;
use crate::rollout::safety::{self, Failures, Judging};

/// Where the fields live, for messages.
const PATH: &str = "spec.strategy.rolloutStrategy";

/// The failure threshold of a partitioned rollout: each manual partition with its own
/// `maxFailures` over its failed members, then the block's over the other failed clusters. The
/// counts by partition are kept in the guard's tally, so a pass counts only its own failures.
fn threshold<'a>(
    rollout: &'a PartitionedRollout,
    plan: &'a Plan,
) -> impl Fn(Failures<'_>) -> Option<String> + 'a {
    move |failures: Failures<'_>| {
        let fields = rollout.safety();
        let target = plan.targets.len() as u64;
        let own: Vec<usize> = (rollout.partitions.iter().enumerate())
            .filter(|(_, spec)| spec.max_failures.is_some())
            .map(|(index, _)| index)
            .collect();
        let all = failures.all.iter().map(String::as_str);
        if own.is_empty() {
            // Every failure is the block's: no count by partition.
            let count = failures.all.len();
            return (fields.counts_failures())
                .then(|| safety::over_block(fields, target, PATH, count, all))
                .flatten();
        }
        // Bucket `rest` holds the failed clusters in no partition with its own maxFailures.
        let rest = rollout.partitions.len();
        let buckets = |cluster: &str| {
            let partitions = plan.targets.get(cluster).map_or(&[][..], |t| &t.partitions);
            let mut owned: Vec<usize> = (partitions.iter().map(|p| *p as usize))
                .filter(|index| own.contains(index))
                .collect();
            if owned.is_empty() {
                owned.push(rest);
            }
            owned
        };
        let buckets = &buckets;
        let counts = (failures.tally).counts(failures.all, failures.added, rest + 1, buckets);
        let in_bucket = |index: usize| all.clone().filter(move |c| buckets(c).contains(&index));
        for (index, spec) in rollout.partitions.iter().enumerate() {
            let Some(max) = spec.max_failures else {
                continue;
            };
            let count = plan.partitions.get(index).map_or(0, |p| p.count);
            let tolerated = max.resolve(count, Rounding::Down);
            let failed = counts.get(index).copied().unwrap_or(0);
            if i64::try_from(failed).unwrap_or(i64::MAX) > tolerated {
                return Some(format!(
                    "{failed} cluster(s) of partition {:?} failed, more than \
                     {PATH}.partitions[{index}].maxFailures tolerates ({tolerated}): {}",
                    spec.name,
                    safety::names(in_bucket(index)),
                ));
            }
        }
        let others = usize::try_from(counts.get(rest).copied().unwrap_or(0)).unwrap_or(usize::MAX);
        (fields.counts_failures())
            .then(|| safety::over_block(fields, target, PATH, others, in_bucket(rest)))
            .flatten()
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
    state: &mut Store<'_>,
    pass: &Pass<'_>,
    plan: &Plan,
    reclassified: Option<BTreeSet<ClusterName>>,
    changes: &mut Changes,
) -> (Vec<Decision>, bool, Vec<String>) {
    let Pass { key, latest, now } = *pass;
    let Some(placement) = state.placements.get_mut(key) else {
        return (Vec::new(), true, Vec::new());
    };
    let rollout = placement.spec.strategy.partitioned();
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
    let done = complete(plan, &placement.bindings, latest, manual);
    let (seen, touched) = safety::Seen::for_pass(placement.guard.as_ref(), reclassified, done);
    let look = safety::Look {
        key,
        watched: safety::Watched {
            latest,
            safety: counted,
        },
        judging,
        now,
    };
    let (mut decisions, next) = safety::observe_checked(placement, look, seen);
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

//! The RollingUpdate budget rule: the rollout never starts updating a binding while the
//! unavailability it caused itself already fills its `maxUnavailable` budget.
//!
//! Why it needs the state before the step: after a step, an in-place update and a first bind
//! look the same (both Bound at the latest index with no report yet), and a binding updated
//! because it had failed (always allowed, as KubeFleet's rolling update does) looks like one
//! updated while available — the update clears the report that told them apart. So the exact rule,
//! checked by [`check_step`], is:
//!
//! > For every placement rolled out by RollingUpdate before and after the step: if the step
//! > *updated in place* a binding that was not failed before the step — the same binding object
//! > (name and creation time), it carried work and was Bound (or Unscheduled from Bound) before
//! > and is Bound after, with a new resource index or new override
//! > snapshots, no report, no update run, and `rolloutStarted` at the step's time — and the
//! > step was neither a work report from that binding's cluster (which may have just failed it)
//! > nor an eviction of it (which removes the binding; the one bound after it is new),
//! > nor a rollback's move of a binding that was not ready (it goes back at once),
//! > then after the step at least `target − maxUnavailable` of the Bound and Unscheduled
//! > bindings are ready.
//!
//! This is exact for KubeFleet's one-pass algorithm: updates and removals of bindings that
//! have not failed take at most `ready − (target − maxUnavailable)` of them, so what stays
//! ready is never below `target − maxUnavailable` when any was taken. Bindings that failed or
//! became unavailable on their own may leave fewer ready — the rule only constrains steps
//! where the rollout itself chose to take a binding down.

use chrono::Duration;

use super::Violation;
use crate::event::{Envelope, Input};
use crate::model::ObjectKey;
use crate::model::placement::StrategyType;
use crate::placement::{Binding, BindingState, Placement};
use crate::rollout::readiness::{ApplyMode, Readiness, judge};
use crate::rollout::{budgets, target};
use crate::state::State;

/// Checks the budget rule for every RollingUpdate placement the step kept.
///
/// # Errors
/// [`Violation::RolloutOverBudget`] naming the placement and the updated clusters.
pub fn check_step(before: &State, event: &Envelope, after: &State) -> Result<(), Violation> {
    let Some(now) = after.now else { return Ok(()) };
    for (key, placement) in &after.placements {
        let Some(old) = before.placements.get(key) else {
            continue;
        };
        if !is_rolling(old) || !is_rolling(placement) {
            continue;
        }
        let reported = reported_cluster(event, key);
        let old_period = period(old);
        // Failure is judged as the step's rollout judged it: under the apply strategy it found
        // (a switch to or from ReportDiff changes what a report means).
        let mode = ApplyMode::of(placement);
        let updated: Vec<String> = placement
            .bindings
            .values()
            .filter(|b| {
                Some(b.cluster.as_str()) != reported && !evicted(before, after, key, &b.cluster)
            })
            .filter(|b| {
                old.bindings.get(b.cluster.as_str()).is_some_and(|was| {
                    let readiness = judge(&was, was.report.as_ref(), mode, old_period, now);
                    updated_in_place(&was, b, now)
                        && readiness != Readiness::Failed
                        && !(rolled_back(placement, b) && readiness != Readiness::Ready)
                })
            })
            .map(|b| b.cluster.to_string())
            .collect();
        if updated.is_empty() {
            continue;
        }
        let ready = ready_count(placement, now);
        let target_count = target(placement);
        let (max_unavailable, _) = budgets(placement, target_count);
        let target_count = i64::try_from(target_count).unwrap_or(i64::MAX);
        if ready < target_count - max_unavailable {
            return Err(Violation::RolloutOverBudget {
                placement: key.display(),
                updated,
                ready,
                target: target_count,
                max_unavailable,
            });
        }
    }
    Ok(())
}

fn is_rolling(placement: &Placement) -> bool {
    placement.spec.strategy.strategy_type == StrategyType::RollingUpdate
}

fn period(placement: &Placement) -> Duration {
    Duration::seconds(
        placement
            .spec
            .strategy
            .rolling_update
            .unavailable_period_seconds,
    )
}

/// The cluster a work-report step spoke for, when it reported on this placement.
fn reported_cluster<'a>(event: &'a Envelope, key: &ObjectKey) -> Option<&'a str> {
    match &event.payload {
        Input::WorkReport(report)
            if report.placement == key.name
                && report.namespace.as_deref().unwrap_or_default() == key.namespace =>
        {
            Some(report.cluster.as_str())
        }
        _ => None,
    }
}

/// Whether an eviction of this placement's binding on `cluster` changed in the step: it may
/// have removed the binding, and the rollout then bound a new one in its place.
fn evicted(before: &State, after: &State, key: &ObjectKey, cluster: &str) -> bool {
    if !key.namespace.is_empty() {
        return false;
    }
    after.disruptions.evictions.iter().any(|(name, eviction)| {
        eviction.spec.placement_name == key.name
            && eviction.spec.cluster_name == cluster
            && before.disruptions.evictions.get(name) != Some(eviction)
    })
}

/// Whether a rollback (`onFailure: Rollback`) gave the binding back the work it
/// carried before the tripped rollout. Such a move takes down only a cluster that was ready:
/// one not ready on the new work goes back at once, as it is unavailable already
/// (`rollout::rollback`).
fn rolled_back(placement: &Placement, binding: &Binding) -> bool {
    placement.guard.as_ref().is_some_and(|guard| {
        guard.tripped.is_some()
            && guard
                .prior
                .get(binding.cluster.as_str())
                .is_some_and(|(index, _)| binding.resource_index == Some(*index))
    })
}

/// Whether the rollout rebound `was` to new work in this step, giving `now`.
fn updated_in_place(
    was: &Binding,
    now_binding: &Binding,
    now: chrono::DateTime<chrono::Utc>,
) -> bool {
    let was_bound = was.state == BindingState::Bound
        || (was.state == BindingState::Unscheduled
            && was.previous_state == Some(BindingState::Bound));
    was_bound
        && (was.cluster == now_binding.cluster && was.name_suffix == now_binding.name_suffix)
        && was.created == now_binding.created
        && was.resource_index.is_some()
        && now_binding.state == BindingState::Bound
        && now_binding.update_run.is_none()
        && now_binding.report.is_none()
        && now_binding.rollout_started_at == Some(now)
        && (was.resource_index != now_binding.resource_index
            || was.override_snapshots != now_binding.override_snapshots)
}

/// Bound and Unscheduled bindings whose cluster is ready at `now` (KubeFleet's `ready`).
#[must_use]
pub fn ready_count(placement: &Placement, now: chrono::DateTime<chrono::Utc>) -> i64 {
    let period = period(placement);
    let mode = ApplyMode::of(placement);
    let count = placement
        .bindings
        .values()
        .filter(|b| b.state != BindingState::Scheduled)
        .filter(|b| judge(b, b.report.as_ref(), mode, period, now) == Readiness::Ready)
        .count();
    i64::try_from(count).unwrap_or(i64::MAX)
}

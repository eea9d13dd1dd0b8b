//! A stage's clusters: started in order while fewer than `maxConcurrency` are updating, each
//! bound to the run's resource snapshot, and settled when its work reports applied and
//! available (or failed, or preempted by another rollout).

use chrono::Duration;

use super::{Outcome, Pass, STUCK_AFTER_SECS};
use crate::condition::ConditionStatus;
use crate::decision::Decision;
use crate::model::Rounding;
use crate::model::safety::Safety;
use crate::placement::Work;
use crate::rollout::safety::{
    REASON_FAILURE_THRESHOLD_EXCEEDED, REASON_PROGRESS_DEADLINE_EXCEEDED,
};
use crate::staged::model::StageConfig;
use crate::staged::run::failed_clusters;
use crate::work_status::WorkStatus;

/// Checks the updating clusters that can have changed, then starts clusters in order while
/// fewer than `maxConcurrency` are updating; `Done` once every cluster of the stage succeeded.
/// Clusters start in order, so a stage is a succeeded prefix, the updating set, and the
/// clusters not started yet: a pass costs O(log n) per cluster it checks or starts.
pub(super) fn walk_clusters(pass: &mut Pass<'_>, index: usize, stopping: bool) -> Outcome {
    let limit = concurrency(pass, index);
    let stage = &pass.run.status.stages[index];
    let to_check: Vec<usize> = match &pass.focus {
        None => stage.updating.iter().copied().collect(),
        Some(focus) => focus
            .iter()
            .filter_map(|cluster| pass.run.status.positions.get(cluster.as_str()))
            .filter(|(at_stage, position)| *at_stage == index && stage.updating.contains(position))
            .map(|(_, position)| *position)
            .collect(),
    };
    for position in to_check {
        if let Some(failed) = settle_cluster(pass, index, position) {
            return failed;
        }
    }
    let count = pass.run.status.stages[index].clusters.len();
    while !stopping
        && pass.run.status.stages[index].updating.len() < limit
        && pass.run.status.stages[index].next_unstarted < count
    {
        let stage = &mut pass.run.status.stages[index];
        let position = stage.next_unstarted;
        stage.next_unstarted += 1;
        if stage.clusters[position].dropped {
            // Left the placement during an Adapt run: never started.
            continue;
        }
        stage.updating.insert(position);
        start_cluster(pass, index, position);
        if let Some(failed) = settle_cluster(pass, index, position) {
            return failed;
        }
    }
    // Clusters start in order, so the first updating one has been updating the longest.
    let earliest = pass.run.status.stages[index].updating.first().copied();
    let stuck = earliest.is_some_and(|position| is_stuck(pass, index, position));
    if !stopping {
        if stuck {
            pass.progressing(
                ConditionStatus::False,
                "UpdateRunStuck",
                &format!(
                    "a cluster in stage `{}` has been updating for more than {} minutes",
                    pass.run.status.stages[index].name,
                    STUCK_AFTER_SECS / 60
                ),
            );
        } else {
            pass.progressing(ConditionStatus::True, "UpdateRunStarted", "");
        }
    }
    if !stopping && let Some(tripped) = deadline(pass, index) {
        return tripped;
    }
    let stage = &mut pass.run.status.stages[index];
    // A finished cluster is one that succeeded, or failed within the stage's maxFailures (a
    // failure beyond it has failed the run already).
    while stage
        .clusters
        .get(stage.first_unfinished)
        .is_some_and(|c| c.succeeded.is_some())
    {
        stage.first_unfinished += 1;
    }
    if stage.first_unfinished == stage.clusters.len() {
        Outcome::Done
    } else {
        Outcome::Waiting
    }
}

/// Checks one updating cluster: records its success, or fails the stage (returned) when its
/// update failed.
fn settle_cluster(pass: &mut Pass<'_>, index: usize, position: usize) -> Option<Outcome> {
    // Inline: a still-updating cluster, the common case, costs no allocation.
    let cluster = pass.run.status.stages[index].clusters[position]
        .cluster
        .clone();
    match check_cluster(pass, &cluster) {
        ClusterState::Updating => None,
        ClusterState::Succeeded => {
            let next = pass.shared_condition(
                "Succeeded",
                ConditionStatus::True,
                "ClusterUpdatingSucceeded",
            );
            let stage = &mut pass.run.status.stages[index];
            stage.latest_success.record(next.last_transition_time);
            std::sync::Arc::make_mut(&mut stage.clusters[position]).succeeded = Some(next);
            stage.updating.remove(&position);
            pass.decisions.push(Decision::UpdateRunClusterUpdated {
                run: pass.scope.run_key(),
                cluster: cluster.to_string(),
                succeeded: true,
            });
            None
        }
        ClusterState::Failed(why) => {
            let stage_name = pass.run.status.stages[index].name.clone();
            let message =
                format!("cluster `{cluster}` in stage `{stage_name}` failed to update: {why}");
            if let Some(outcome) = count_failure(pass, index, position, &message) {
                return outcome;
            }
            let next = pass.condition(
                "Succeeded",
                ConditionStatus::False,
                "ClusterUpdatingFailed",
                &message,
            );
            let failed = pass.condition(
                "Succeeded",
                ConditionStatus::False,
                "StageUpdatingFailed",
                &message,
            );
            let stage = &mut pass.run.status.stages[index];
            std::sync::Arc::make_mut(&mut stage.clusters[position]).succeeded =
                Some(std::sync::Arc::new(next));
            stage.failures.record();
            stage.updating.remove(&position);
            stage.succeeded = Some(failed);
            pass.decisions.push(Decision::UpdateRunClusterUpdated {
                run: pass.scope.run_key(),
                cluster: cluster.to_string(),
                succeeded: false,
            });
            Some(Outcome::Failed(message))
        }
    }
}

/// The stage's safety fields (docs/rollout-safety.md), from the run's strategy snapshot.
pub(super) fn safety(pass: &Pass<'_>, index: usize) -> Safety {
    pass.run
        .status
        .strategy_snapshot
        .as_ref()
        .and_then(|s| s.stages.get(index))
        .map(StageConfig::safety)
        .unwrap_or_default()
}

/// Under a stage's `maxFailures` / `onFailure`: a failed cluster within the tolerance is
/// recorded as failed and the stage goes on (`Some(None)` means handled); one more fails the
/// run with `FailureThresholdExceeded`. `None` without the fields: the failure is not counted,
/// and fails the stage.
fn count_failure(
    pass: &mut Pass<'_>,
    index: usize,
    position: usize,
    message: &str,
) -> Option<Option<Outcome>> {
    let safety = safety(pass, index);
    if !safety.counts_failures() {
        return None;
    }
    let stage = &mut pass.run.status.stages[index];
    let governed = stage.clusters.len() as u64;
    let tolerated = safety.failures_tolerated(governed);
    // This cluster is still updating, so the count does not include it yet.
    let failures = stage.failures.get(&stage.clusters).saturating_add(1);
    let failures = i64::try_from(failures).unwrap_or(i64::MAX);
    let cluster = stage.clusters[position].cluster.to_string();
    let outcome = (failures > tolerated).then(|| {
        // The names only for the message: a scan, made once, when it trips.
        let mut failed: Vec<&str> = failed_clusters(&stage.clusters)
            .map(|c| c.cluster.as_str())
            .collect();
        failed.push(&cluster);
        Outcome::Tripped(
            REASON_FAILURE_THRESHOLD_EXCEEDED,
            format!(
                "{failures} cluster(s) in stage `{}` failed, more than its maxFailures \
                 tolerates ({tolerated}): {}",
                stage.name,
                failed.join(", ")
            ),
        )
    });
    let next = pass.condition(
        "Succeeded",
        ConditionStatus::False,
        "ClusterUpdatingFailed",
        message,
    );
    let stage = &mut pass.run.status.stages[index];
    std::sync::Arc::make_mut(&mut stage.clusters[position]).succeeded =
        Some(std::sync::Arc::new(next));
    stage.failures.record();
    stage.updating.remove(&position);
    pass.decisions.push(Decision::UpdateRunClusterUpdated {
        run: pass.scope.run_key(),
        cluster,
        succeeded: false,
    });
    Some(outcome)
}

/// A stage's `progressDeadlineSeconds` (docs/rollout-safety.md): while clusters update, no
/// cluster of the stage succeeding for that long — counted from the stage's start or its latest
/// success — fails the run with `ProgressDeadlineExceeded`, naming the updating clusters; until
/// then the run asks to be woken at the deadline.
fn deadline(pass: &mut Pass<'_>, index: usize) -> Option<Outcome> {
    let seconds = safety(pass, index).progress_deadline_seconds?;
    let stage = &mut pass.run.status.stages[index];
    if stage.updating.is_empty() {
        return None;
    }
    let since = stage
        .latest_success
        .get(&stage.clusters)
        .into_iter()
        .chain(stage.start_time)
        .max()?;
    let stage = &pass.run.status.stages[index];
    let at = since + Duration::seconds(seconds);
    if at > pass.now {
        pass.wake(at);
        return None;
    }
    let updating: Vec<&str> = stage
        .updating
        .iter()
        .filter_map(|p| stage.clusters.get(*p))
        .map(|c| c.cluster.as_str())
        .collect();
    let message = format!(
        "no cluster in stage `{}` became ready for {seconds}s (its progressDeadlineSeconds); \
         clusters given the new work but not ready: {}",
        stage.name,
        updating.join(", ")
    );
    Some(Outcome::Tripped(REASON_PROGRESS_DEADLINE_EXCEEDED, message))
}

/// Whether an updating cluster has been updating for [`STUCK_AFTER_SECS`]; if not yet, the
/// run asks to be woken when it would be.
fn is_stuck(pass: &mut Pass<'_>, index: usize, position: usize) -> bool {
    let since = pass.run.status.stages[index].clusters[position]
        .started
        .as_ref()
        .map_or(pass.now, |c| c.last_transition_time);
    let stuck_at = since + Duration::seconds(STUCK_AFTER_SECS);
    if stuck_at <= pass.now {
        true
    } else {
        pass.wake(stuck_at);
        false
    }
}

/// `maxConcurrency` of the stage: percentages of its cluster count round down, at least 1;
/// integers are used as written; 1 by default.
pub(super) fn concurrency(pass: &Pass<'_>, index: usize) -> usize {
    let count = pass.run.status.stages[index].clusters.len() as u64;
    let configured = pass
        .run
        .status
        .strategy_snapshot
        .as_ref()
        .and_then(|s| s.stages.get(index))
        .and_then(|s| s.max_concurrency);
    let resolved = configured.map_or(1, |value| value.resolve(count, Rounding::Down).max(1));
    usize::try_from(resolved).unwrap_or(usize::MAX)
}

/// Binds the cluster to the run's resource snapshot with the overrides recorded for it.
fn start_cluster(pass: &mut Pass<'_>, index: usize, position: usize) {
    let now = pass.now;
    let resource_index = pass.run.status.resource_snapshot_index_used.unwrap_or(0);
    let started = pass.shared_condition("Started", ConditionStatus::True, "ClusterUpdatingStarted");
    let status = std::sync::Arc::make_mut(&mut pass.run.status.stages[index].clusters[position]);
    status.started = Some(started);
    let overrides = (
        status.cluster_resource_overrides.clone(),
        status.resource_overrides.clone(),
    );
    let cluster = status.cluster.clone();
    let run_name = pass.run.binding_name.get(&pass.scope.run_name);
    let Some(placement) = pass.state.placements.get_mut(&pass.placement) else {
        return;
    };
    let work = Work {
        resource_index,
        override_snapshots: overrides,
    };
    // What a rollback would give back: only different work is a move.
    let prior = placement.bindings.get(cluster.as_str()).and_then(|b| {
        let index = b.resource_index?;
        let same = index == work.resource_index && b.override_snapshots == work.override_snapshots;
        (!same).then(|| Box::new((index, b.override_snapshots.clone())))
    });
    std::sync::Arc::make_mut(&mut pass.run.status.stages[index].clusters[position]).prior = prior;
    let bound = placement.bind(
        &pass.placement,
        &cluster,
        work,
        Some(run_name),
        now,
        pass.changes,
    );
    pass.decisions.extend(bound);
}

/// How a cluster's work stands.
pub(super) enum ClusterState {
    /// Applied and available (or its diff reported).
    Succeeded,
    /// Failed, and why.
    Failed(String),
    /// Neither yet.
    Updating,
}

/// A started cluster succeeds when its work at the run's resource index is applied and
/// available (under `ReportDiff`: when its diff was reported); it fails when the apply failed,
/// or when something else re-bound it (preempted).
fn check_cluster(pass: &Pass<'_>, cluster: &str) -> ClusterState {
    let resource_index = pass.run.status.resource_snapshot_index_used;
    let placement = pass.state.placements.get(&pass.placement);
    let Some(binding) = placement.and_then(|p| p.bindings.get(cluster)) else {
        return ClusterState::Failed("its binding no longer exists".to_owned());
    };
    let reports_diff = placement.is_some_and(|p| p.spec.strategy.apply_strategy.reports_diff());
    if binding.resource_index != resource_index
        || binding.update_run.as_deref() != Some(pass.scope.run_name.as_str())
    {
        return ClusterState::Failed(
            "the cluster was updated by another rollout (preempted)".to_owned(),
        );
    }
    match resource_index {
        Some(index) => judge_work(binding.report.as_ref(), index, reports_diff),
        None => ClusterState::Updating,
    }
}

/// Judges a cluster's latest report on work at `resource_index`: the staged runs' readiness,
/// shared by the update and its rollback.
pub(super) fn judge_work(
    report: Option<&WorkStatus>,
    resource_index: u64,
    reports_diff: bool,
) -> ClusterState {
    match report.filter(|r| r.resource_index == resource_index) {
        Some(report) if reports_diff => {
            if report.diff_reported == Some(true) {
                ClusterState::Succeeded
            } else {
                ClusterState::Updating
            }
        }
        Some(report) if report.applied == Some(false) => {
            ClusterState::Failed(format!("the work failed to apply: {}", report.message()))
        }
        Some(report) if report.applied == Some(true) && report.available == Some(true) => {
            ClusterState::Succeeded
        }
        _ => ClusterState::Updating,
    }
}

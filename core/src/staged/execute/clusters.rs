//! A stage's clusters: started in order while fewer than `maxConcurrency` are updating, each
//! bound to the run's resource snapshot, and settled when its work reports applied and
//! available (or failed, or preempted by another rollout).

use chrono::Duration;

use super::{Outcome, Pass, STUCK_AFTER_SECS};
use crate::condition::ConditionStatus;
use crate::decision::Decision;
use crate::model::Rounding;
use crate::placement::Work;

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
            .filter_map(|cluster| pass.run.status.positions.get(cluster))
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
    let stage = &mut pass.run.status.stages[index];
    while stage.clusters.get(stage.first_unfinished).is_some_and(|c| {
        c.succeeded
            .as_ref()
            .is_some_and(|s| s.status == ConditionStatus::True)
    }) {
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
    let cluster = pass.run.status.stages[index].clusters[position]
        .cluster
        .clone();
    match check_cluster(pass, &cluster) {
        ClusterState::Updating => None,
        ClusterState::Succeeded => {
            let next = pass.condition(
                "Succeeded",
                ConditionStatus::True,
                "ClusterUpdatingSucceeded",
                "",
            );
            let stage = &mut pass.run.status.stages[index];
            stage.clusters[position].succeeded = Some(next);
            stage.updating.remove(&position);
            pass.decisions.push(Decision::UpdateRunClusterUpdated {
                run: pass.scope.run_key(),
                cluster,
                succeeded: true,
            });
            None
        }
        ClusterState::Failed(why) => {
            let stage_name = pass.run.status.stages[index].name.clone();
            let message =
                format!("cluster `{cluster}` in stage `{stage_name}` failed to update: {why}");
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
            stage.clusters[position].succeeded = Some(next);
            stage.updating.remove(&position);
            stage.succeeded = Some(failed);
            pass.decisions.push(Decision::UpdateRunClusterUpdated {
                run: pass.scope.run_key(),
                cluster,
                succeeded: false,
            });
            Some(Outcome::Failed(message))
        }
    }
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
fn concurrency(pass: &Pass<'_>, index: usize) -> usize {
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
    let started = pass.condition(
        "Started",
        ConditionStatus::True,
        "ClusterUpdatingStarted",
        "",
    );
    let status = &mut pass.run.status.stages[index].clusters[position];
    status.started = Some(started);
    let overrides = (
        status.cluster_resource_overrides.clone(),
        status.resource_overrides.clone(),
    );
    let cluster = status.cluster.clone();
    let key = pass.scope.placement_key(&pass.run.spec.placement_name);
    let run_name = pass.scope.run_name.clone();
    let Some(placement) = pass.state.placements.get_mut(&key) else {
        return;
    };
    let work = Work {
        resource_index,
        override_snapshots: overrides,
    };
    let bound = placement.bind(&key, &cluster, (work, Some(run_name)), now, pass.changes);
    pass.decisions.extend(bound);
}

enum ClusterState {
    Succeeded,
    Failed(String),
    Updating,
}

/// A started cluster succeeds when its work at the run's resource index is applied and
/// available (under `ReportDiff`: when its diff was reported); it fails when the apply failed,
/// or when something else re-bound it (preempted).
fn check_cluster(pass: &Pass<'_>, cluster: &str) -> ClusterState {
    let key = pass.scope.placement_key(&pass.run.spec.placement_name);
    let resource_index = pass.run.status.resource_snapshot_index_used;
    let placement = pass.state.placements.get(&key);
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
    match binding
        .report
        .as_ref()
        .filter(|r| Some(r.resource_index) == resource_index)
    {
        Some(report) if reports_diff => {
            if report.diff_reported == Some(true) {
                ClusterState::Succeeded
            } else {
                ClusterState::Updating
            }
        }
        Some(report) if report.applied == Some(false) => {
            ClusterState::Failed(format!("the work failed to apply: {}", report.message))
        }
        Some(report) if report.applied == Some(true) && report.available == Some(true) => {
            ClusterState::Succeeded
        }
        _ => ClusterState::Updating,
    }
}

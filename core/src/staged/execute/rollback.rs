//! A stage's trip (issue 17) and `onFailure: Rollback` in a staged run. With `Halt` the trip
//! fails the run, as before. With `Rollback` the run turns to moving every cluster it gave
//! different work — in any stage so far — back to the work it carried before (resource
//! snapshot and override snapshots, recorded on the cluster's status when the run bound it),
//! its binding pointing at that snapshot again:
//! - within the tripped stage's `maxConcurrency`: a cluster not ready on the new work goes back
//!   at once (it is unavailable already, as in the rolling rollback); a ready one only while
//!   fewer than `maxConcurrency` moved clusters are not yet ready on their old work;
//! - `RolledBack` once every moved cluster reports its old work ready; `RollbackFailed` when one
//!   fails to apply it, loses availability after having had it, or (with the stage's
//!   `progressDeadlineSeconds`) no moved cluster becomes ready for that long. Either finishes
//!   the run (`Succeeded=False`), so it moves nothing more.
//!
//! Choices where the issue is silent: a cluster whose binding is gone, unscheduled, or re-bound
//! by something else than this run is left alone (not ours to move or judge); a cluster that
//! had no work before keeps the new work; the rollback goes on under `state: Stop` (it is the
//! safety action of a run that already tripped) and skips the run's revalidation (a scheduling
//! change must not strand clusters on the failed work).

use chrono::Duration;

use super::clusters::{ClusterState, concurrency, judge_work, safety};
use super::{Pass, fail_with};
use crate::condition::ConditionStatus;
use crate::decision::Decision;
use crate::model::safety::OnFailure;
use crate::placement::{BindingState, OverrideSnapshots, Work};
use crate::rollout::safety::{REASON_ROLLBACK_FAILED, REASON_ROLLED_BACK, names};
use crate::staged::run::RunRollback;

/// Stage `index` tripped with this reason and message (the field that fired and the clusters
/// it names): the stage fails, and its `onFailure` decides whether the run fails or rolls back.
pub(super) fn trip(pass: &mut Pass<'_>, index: usize, reason: &'static str, message: &str) {
    let action = safety(pass, index).action();
    let text = match action {
        OnFailure::Halt => format!("{message} (onFailure: Halt)"),
        OnFailure::Rollback => format!("{message} (onFailure: Rollback; rolling back)"),
    };
    let failed = pass.condition("Succeeded", ConditionStatus::False, reason, &text);
    pass.run.status.stages[index].succeeded = Some(failed);
    if action == OnFailure::Halt {
        fail_with(pass, reason, &text);
        return;
    }
    pass.progressing(ConditionStatus::False, reason, &text);
    pass.run.status.rollback = Some(RunRollback {
        stage: index,
        reason: reason.to_owned(),
        message: message.to_owned(),
        moved: std::collections::BTreeSet::new(),
        ready: std::collections::BTreeSet::new(),
        last_progress: pass.now,
    });
    step(pass);
}

/// What one look at the rollback's clusters found.
#[derive(Default)]
struct Survey {
    /// Why the rollback failed, when it did.
    failure: Option<String>,
    /// Clusters not yet ready on their old work (moved or not).
    pending: Vec<String>,
    /// Moved clusters not yet ready on their old work: they hold the budget.
    in_flight: usize,
    /// Clusters on the new work and not ready on it: they go back at once.
    unready: Vec<(String, Work)>,
    /// Clusters ready on the new work: they go back within the budget.
    ready: Vec<(String, Work)>,
}

/// One rollback pass: judge the moved clusters, move the ones whose turn it is, finish when
/// every moved cluster is ready on its old work or the rollback failed.
pub(super) fn step(pass: &mut Pass<'_>) {
    let Some(mut rollback) = pass.run.status.rollback.take() else {
        return;
    };
    let key = pass.placement.clone();
    if !pass.state.placements.contains_key(&key) {
        finish(
            pass,
            &rollback,
            Err("the placement no longer exists".to_owned()),
        );
        pass.run.status.rollback = Some(rollback);
        return;
    }
    let mut survey = survey(pass, &mut rollback);
    let deadline = safety(pass, rollback.stage)
        .progress_deadline_seconds
        .map(|secs| (secs, rollback.last_progress + Duration::seconds(secs)));
    if survey.failure.is_none()
        && !survey.pending.is_empty()
        && let Some((secs, _)) = deadline.filter(|(_, at)| *at <= pass.now)
    {
        survey.failure = Some(format!(
            "no rolled-back cluster became ready for {secs}s (the progressDeadlineSeconds of \
             stage `{}`): {}",
            stage_name(pass, rollback.stage),
            names(survey.pending.iter().map(String::as_str))
        ));
    }
    if let Some(why) = survey.failure.take() {
        finish(pass, &rollback, Err(why));
    } else if survey.pending.is_empty() {
        finish(pass, &rollback, Ok(()));
    } else {
        move_back(pass, &mut rollback, survey);
        if let Some((_, at)) = deadline {
            pass.wake(at);
        }
    }
    pass.run.status.rollback = Some(rollback);
}

/// The clusters the run moved to different work, in stage order, with what they had before.
fn targets(pass: &Pass<'_>) -> Vec<(String, (u64, OverrideSnapshots))> {
    pass.run
        .status
        .stages
        .iter()
        .flat_map(|stage| &stage.clusters)
        .filter_map(|c| Some((c.cluster.to_string(), *c.prior.clone()?)))
        .collect()
}

/// Judges every target: moved ones on their old work (noting progress and failures), the
/// others on the run's work (which of them may go back now).
fn survey(pass: &Pass<'_>, rollback: &mut RunRollback) -> Survey {
    let key = pass.placement.clone();
    let run_index = pass.run.status.resource_snapshot_index_used;
    let mut survey = Survey::default();
    let Some(placement) = pass.state.placements.get(&key) else {
        return survey;
    };
    let reports_diff = placement.spec.strategy.apply_strategy.reports_diff();
    for (cluster, (index, overrides)) in targets(pass) {
        let Some(binding) = placement.bindings.get(cluster.as_str()) else {
            continue;
        };
        if binding.state == BindingState::Unscheduled {
            continue;
        }
        if rollback.moved.contains(&cluster) {
            if binding.resource_index != Some(index) {
                continue;
            }
            let report = binding.report.as_ref();
            let lost = rollback.ready.contains(&cluster)
                && report.is_some_and(|r| r.resource_index == index && r.available == Some(false));
            match judge_work(report, index, reports_diff) {
                _ if lost => {
                    survey.failure.get_or_insert(format!(
                        "cluster `{cluster}` became unavailable on resource snapshot {index}"
                    ));
                }
                ClusterState::Failed(why) => {
                    survey.failure.get_or_insert(format!(
                        "cluster `{cluster}` failed on resource snapshot {index}: {why}"
                    ));
                }
                ClusterState::Succeeded => {
                    if rollback.ready.insert(cluster.clone()) {
                        rollback.last_progress = pass.now;
                    }
                }
                ClusterState::Updating => {
                    survey.in_flight += 1;
                    survey.pending.push(cluster);
                }
            }
            continue;
        }
        let ours = binding.resource_index == run_index
            && binding.update_run.as_deref() == Some(pass.scope.run_name.as_str());
        let Some(run_index) = run_index.filter(|_| ours) else {
            continue;
        };
        let work = Work {
            resource_index: index,
            override_snapshots: overrides,
        };
        let ready = matches!(
            judge_work(binding.report.as_ref(), run_index, reports_diff),
            ClusterState::Succeeded
        );
        survey.pending.push(cluster.clone());
        if ready {
            survey.ready.push((cluster, work));
        } else {
            survey.unready.push((cluster, work));
        }
    }
    survey
}

/// Gives clusters their old work back: every one not ready on the new work, then ready ones
/// while fewer than the tripped stage's `maxConcurrency` moved clusters are not yet ready.
fn move_back(pass: &mut Pass<'_>, rollback: &mut RunRollback, survey: Survey) {
    let limit = concurrency(pass, rollback.stage);
    let key = pass.placement.clone();
    let from = pass.run.status.resource_snapshot_index_used.unwrap_or(0);
    // The clusters going back at once hold the budget too, until ready on their old work.
    let ready_turns = limit.saturating_sub(survey.in_flight + survey.unready.len());
    let moves = survey
        .unready
        .into_iter()
        .chain(survey.ready.into_iter().take(ready_turns));
    let Some(placement) = pass.state.placements.get_mut(&key) else {
        return;
    };
    for (cluster, work) in moves {
        let to = work.resource_index;
        let run = Some(pass.scope.run_name.to_string());
        pass.decisions
            .extend(placement.bind(&key, &cluster, (work, run), pass.now, pass.changes));
        pass.decisions.push(Decision::ClusterRolledBack {
            placement: key.clone(),
            cluster: cluster.clone(),
            from_index: from,
            to_index: to,
        });
        rollback.moved.insert(cluster);
    }
    debug_assert!(rollback.ready.is_subset(&rollback.moved));
}

/// Ends the rollback, and with it the run: `RolledBack`, or `RollbackFailed` with why.
fn finish(pass: &mut Pass<'_>, rollback: &RunRollback, outcome: Result<(), String>) {
    let index = pass.run.status.resource_snapshot_index_used.unwrap_or(0);
    let (reason, message) = match &outcome {
        Ok(()) if rollback.moved.is_empty() => (
            REASON_ROLLED_BACK,
            format!(
                "Nothing to roll back: no cluster the run gave resource snapshot {index} has \
                 earlier work to go back to; the rollback was started after: {}",
                rollback.message
            ),
        ),
        Ok(()) => (
            REASON_ROLLED_BACK,
            format!(
                "Rolled back every cluster updated to resource snapshot {index} ({}) after: {}",
                names(rollback.moved.iter().map(String::as_str)),
                rollback.message
            ),
        ),
        Err(why) => (
            REASON_ROLLBACK_FAILED,
            format!(
                "The rollback failed: {why}; it was started after: {}",
                rollback.message
            ),
        ),
    };
    pass.progressing(ConditionStatus::False, reason, &message);
    pass.decisions.push(Decision::RollbackFinished {
        placement: pass.placement.clone(),
        resource_index: index,
        succeeded: outcome.is_ok(),
        message: message.clone(),
    });
    fail_with(pass, reason, &message);
}

fn stage_name(pass: &Pass<'_>, index: usize) -> String {
    pass.run
        .status
        .stages
        .get(index)
        .map(|s| s.name.clone())
        .unwrap_or_default()
}

//! A stage's trip (docs/rollout-safety.md) and `onFailure: Rollback` in a staged run. With
//! `Halt` the trip fails the run, as before. With `Rollback` the run turns to moving every cluster it gave
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
use crate::placement::{BindingState, Work};
use crate::rollout::safety::{REASON_ROLLBACK_FAILED, REASON_ROLLED_BACK, names};
use crate::staged::rollback_watch::{Position, Sets};
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
        watch: Default::default(),
    });
    step(pass);
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
    let mut failure = survey(pass, &mut rollback);
    let done = rollback.watch.known().is_none_or(Sets::is_done);
    let deadline = safety(pass, rollback.stage)
        .progress_deadline_seconds
        .map(|secs| (secs, rollback.last_progress + Duration::seconds(secs)));
    if failure.is_none()
        && !done
        && let Some((secs, _)) = deadline.filter(|(_, at)| *at <= pass.now)
    {
        let pending = rollback
            .watch
            .known()
            .map(Sets::pending)
            .unwrap_or_default();
        let stages = &pass.run.status.stages;
        let pending = pending
            .into_iter()
            .filter_map(|(s, p)| Some(stages.get(s)?.clusters.get(p)?.cluster.as_str()));
        failure = Some(format!(
            "no rolled-back cluster became ready for {secs}s (the progressDeadlineSeconds of \
             stage `{}`): {}",
            stage_name(pass, rollback.stage),
            names(pending)
        ));
    }
    if let Some(why) = failure {
        finish(pass, &rollback, Err(why));
    } else if done {
        finish(pass, &rollback, Ok(()));
    } else {
        move_back(pass, &mut rollback);
        if let Some((_, at)) = deadline {
            pass.wake(at);
        }
    }
    pass.run.status.rollback = Some(rollback);
}

/// One rolled-back cluster as a rollback pass sees it.
enum Seen {
    /// Not the rollback's (no live binding, or bound by something else).
    Skip,
    /// Moved, and it failed on its old work or lost it: why.
    Failed(String),
    /// Moved, and ready on its old work.
    MovedReady,
    /// Moved, and not ready on its old work yet.
    MovedUpdating,
    /// Still on the run's work, ready on it or not.
    Unmoved { ready: bool },
}

/// How a pass sees cluster `cluster`, whose prior work is at resource snapshot `index`.
fn see(pass: &Pass<'_>, rollback: &RunRollback, cluster: &str, index: u64) -> Seen {
    let Some(placement) = pass.state.placements.get(&pass.placement) else {
        return Seen::Skip;
    };
    let Some(binding) = placement.bindings.get(cluster) else {
        return Seen::Skip;
    };
    if binding.state == BindingState::Unscheduled {
        return Seen::Skip;
    }
    let reports_diff = placement.spec.strategy.apply_strategy.reports_diff();
    if rollback.moved.contains(cluster) {
        if binding.resource_index != Some(index) {
            return Seen::Skip;
        }
        let report = binding.report.as_ref();
        let lost = rollback.ready.contains(cluster)
            && report.is_some_and(|r| r.resource_index == index && r.available == Some(false));
        if lost {
            return Seen::Failed(format!(
                "cluster `{cluster}` became unavailable on resource snapshot {index}"
            ));
        }
        return match judge_work(report, index, reports_diff) {
            ClusterState::Failed(why) => Seen::Failed(format!(
                "cluster `{cluster}` failed on resource snapshot {index}: {why}"
            )),
            ClusterState::Succeeded => Seen::MovedReady,
            ClusterState::Updating => Seen::MovedUpdating,
        };
    }
    let run_index = pass.run.status.resource_snapshot_index_used;
    let ours = binding.resource_index == run_index
        && binding.update_run.as_deref() == Some(pass.scope.run_name.as_str());
    let Some(run_index) = run_index.filter(|_| ours) else {
        return Seen::Skip;
    };
    let ready = matches!(
        judge_work(binding.report.as_ref(), run_index, reports_diff),
        ClusterState::Succeeded
    );
    Seen::Unmoved { ready }
}

/// Judges the rollback's clusters, keeping its watch: only the clusters that reported since
/// the last pass when the watch is known and nothing else can have moved a binding (the pass
/// is driven by work reports alone, and no other unfinished run names the placement), else
/// every cluster the run moved to different work. Returns why the rollback failed, if it did.
/// Debug builds check a pass that looked at the reporting clusters only against one that
/// looked at all.
fn survey(pass: &Pass<'_>, rollback: &mut RunRollback) -> Option<String> {
    let looked = reporting(pass, rollback);
    #[cfg(debug_assertions)]
    let whole = looked.is_some().then(|| {
        let mut all = rollback.clone();
        let failure = refresh(pass, &mut all, None);
        (failure, all)
    });
    let failure = refresh(pass, rollback, looked);
    #[cfg(debug_assertions)]
    if let Some((whole_failure, all)) = whole {
        let sets = |r: &RunRollback| {
            r.watch
                .known()
                .map(|s| (s.in_flight.clone(), s.unready.clone(), s.ready.clone()))
        };
        assert_eq!(
            (
                &failure,
                &rollback.ready,
                rollback.last_progress,
                sets(rollback)
            ),
            (&whole_failure, &all.ready, all.last_progress, sets(&all)),
            "the rollback of run {} looked only at the reporting clusters, and differs",
            pass.scope.run_name
        );
    }
    failure
}

/// The positions of the clusters to look at, in stage order, when the watch can stand for
/// the rest (`None`: look at every cluster).
fn reporting(pass: &Pass<'_>, rollback: &mut RunRollback) -> Option<Vec<Position>> {
    let focus = pass.focus.as_ref()?;
    rollback.watch.known()?;
    let run_key = pass.scope.run_key();
    let shared = pass.state.update_runs.iter().any(|(key, run)| {
        *key != run_key
            && !run.is_finished()
            && crate::staged::runs_placement(key, run, &pass.placement)
    });
    if shared {
        return None;
    }
    let positions = &pass.run.status.positions;
    let mut looked: Vec<Position> = focus
        .iter()
        .filter_map(|cluster| positions.get(cluster.as_str()).copied())
        .collect();
    looked.sort_unstable();
    Some(looked)
}

/// Sees the clusters at `looked` (`None`: every one the run moved to different work) and
/// records them in the watch (built afresh for `None`). Returns the first failure, in stage
/// order.
fn refresh(
    pass: &Pass<'_>,
    rollback: &mut RunRollback,
    looked: Option<Vec<Position>>,
) -> Option<String> {
    let stages = &pass.run.status.stages;
    let (mut sets, looked) = match looked {
        Some(looked) => (rollback.watch.take().unwrap_or_default(), looked),
        None => (
            Sets::default(),
            stages
                .iter()
                .enumerate()
                .flat_map(|(s, stage)| (0..stage.clusters.len()).map(move |p| (s, p)))
                .collect(),
        ),
    };
    let mut failure = None;
    for (s, p) in looked {
        sets.remove((s, p));
        let Some(status) = stages.get(s).and_then(|stage| stage.clusters.get(p)) else {
            continue;
        };
        let Some(prior) = status.prior.as_ref() else {
            continue;
        };
        match see(pass, rollback, &status.cluster, prior.0) {
            Seen::Skip => {}
            Seen::Failed(why) => {
                failure.get_or_insert(why);
            }
            Seen::MovedReady => {
                if rollback.ready.insert(status.cluster.to_string()) {
                    rollback.last_progress = pass.now;
                }
            }
            Seen::MovedUpdating => {
                sets.in_flight.insert((s, p));
            }
            Seen::Unmoved { ready: true } => {
                sets.ready.insert((s, p));
            }
            Seen::Unmoved { ready: false } => {
                sets.unready.insert((s, p));
            }
        }
    }
    rollback.watch.set(sets);
    failure
}

/// Gives clusters their old work back: every one not ready on the new work, then ready ones
/// while fewer than the tripped stage's `maxConcurrency` moved clusters are not yet ready.
fn move_back(pass: &mut Pass<'_>, rollback: &mut RunRollback) {
    let limit = concurrency(pass, rollback.stage);
    let key = pass.placement.clone();
    let from = pass.run.status.resource_snapshot_index_used.unwrap_or(0);
    let Some(sets) = rollback.watch.known_mut() else {
        return;
    };
    // The clusters going back at once hold the budget too, until ready on their old work.
    let ready_turns = limit.saturating_sub(sets.in_flight.len() + sets.unready.len());
    let moves: Vec<Position> = sets
        .unready
        .iter()
        .chain(sets.ready.iter().take(ready_turns))
        .copied()
        .collect();
    let Some(placement) = pass.state.placements.get_mut(&key) else {
        return;
    };
    for (s, p) in moves {
        let Some(status) = pass
            .run
            .status
            .stages
            .get(s)
            .and_then(|st| st.clusters.get(p))
        else {
            continue;
        };
        let Some(prior) = status.prior.as_deref() else {
            continue;
        };
        let cluster = status.cluster.to_string();
        let work = Work {
            resource_index: prior.0,
            override_snapshots: prior.1.clone(),
        };
        let to = work.resource_index;
        let run = Some(pass.run.binding_name.get(&pass.scope.run_name));
        pass.decisions
            .extend(placement.bind(&key, &cluster, work, run, pass.now, pass.changes));
        pass.decisions.push(Decision::ClusterRolledBack {
            placement: key.clone(),
            cluster: cluster.clone(),
            from_index: from,
            to_index: to,
        });
        // Given new work, it has not reported on it: it holds the budget until ready.
        sets.remove((s, p));
        sets.in_flight.insert((s, p));
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

//! Staged update run rules: no stage starts before the previous one succeeded (its clusters
//! and its after-stage tasks, approvals accepted) and its own before-stage tasks passed; a
//! stage never updates more clusters at once than its `maxConcurrency`; a stage's cursors
//! (`first_unfinished`, `next_unstarted`, `updating`, the run's `positions`) agree with its
//! clusters; a rolling-back run (`docs/rollout-safety.md`) tripped in a failed stage, started no
//! stage after it, and moved back only clusters it had given different work.

use std::collections::BTreeSet;

use super::Violation;
use crate::condition::ConditionStatus;
use crate::model::{ObjectKey, Rounding};
use crate::staged::Scope;
use crate::staged::model::TaskType;
use crate::staged::run::{StageStatus, TaskStatus, UpdateRun};
use crate::state::State;

pub(super) fn check(state: &State) -> Result<(), Violation> {
    for (key, run) in &state.update_runs {
        let scope = Scope::of(key);
        for (index, stage) in run.status.stages.iter().enumerate() {
            bookkeeping(key, run, index, stage)?;
            concurrency(key, run, index, stage)?;
            order(state, &scope, key, run, index, stage)?;
        }
        rollback(key, run)?;
        if let Some(deletion) = &run.status.deletion
            && started(deletion)
            && let Some(open) = run.status.stages.iter().find(|s| !succeeded(s))
        {
            return Err(early(
                key,
                deletion,
                format!("stage {} has not succeeded", open.name),
            ));
        }
    }
    Ok(())
}

fn early(key: &ObjectKey, stage: &StageStatus, reason: String) -> Violation {
    Violation::StageStartedEarly {
        run: key.display(),
        stage: stage.name.clone(),
        reason,
    }
}

fn started(stage: &StageStatus) -> bool {
    stage.start_time.is_some() || stage.clusters.iter().any(|c| c.started.is_some())
}

fn succeeded(stage: &StageStatus) -> bool {
    stage
        .succeeded
        .as_ref()
        .is_some_and(|c| c.status == ConditionStatus::True)
}

/// Whether a task has passed; for an approval, also that its request, while it exists, was
/// approved and the run accepted it.
fn task_passed(state: &State, scope: &Scope, task: &TaskStatus) -> Result<(), String> {
    match task.task_type {
        TaskType::TimedWait if task.has("WaitTimeElapsed") => Ok(()),
        TaskType::TimedWait => Err("its wait has not elapsed".into()),
        TaskType::Analysis => {
            let passed = task.conditions.iter().any(|c| {
                c.condition_type == crate::staged::analysis::measure::SUCCEEDED
                    && c.status == ConditionStatus::True
            });
            if passed {
                Ok(())
            } else {
                Err("its analysis has not passed".into())
            }
        }
        TaskType::Approval => {
            let name = task.approval_request_name.clone().unwrap_or_default();
            if !task.has("ApprovalRequestApproved") {
                return Err(format!("approval {name} is not approved"));
            }
            // A request deleted after the run accepted it is never made again (KubeFleet's
            // `handleStageApprovalTask`); the task's own condition above records the approval.
            let request = state.approvals.get(&scope.approval_key(&name));
            if request.is_some_and(|r| r.approved.is_none() || r.accepted.is_none()) {
                return Err(format!(
                    "approval request {name} was not approved and accepted"
                ));
            }
            Ok(())
        }
    }
}

/// A started stage needs every earlier stage succeeded with its after-stage tasks passed, and
/// its own before-stage tasks passed; a succeeded stage needs its clusters and after-stage
/// tasks done.
fn order(
    state: &State,
    scope: &Scope,
    key: &ObjectKey,
    run: &UpdateRun,
    index: usize,
    stage: &StageStatus,
) -> Result<(), Violation> {
    if succeeded(stage) {
        // A succeeded stage's clusters all finished: succeeded, or (with rollout safety) failed
        // within its maxFailures or dropped by an Adapt run — the run would have failed otherwise.
        if let Some(open) = stage.clusters.iter().find(|c| c.succeeded.is_none()) {
            return Err(bookkeeping_error(
                key,
                stage,
                format!("succeeded with cluster {} not succeeded", open.cluster),
            ));
        }
        for task in &stage.after_tasks {
            task_passed(state, scope, task).map_err(|why| {
                bookkeeping_error(key, stage, format!("succeeded although {why}"))
            })?;
        }
    }
    if !started(stage) {
        return Ok(());
    }
    if let Some(previous) = index.checked_sub(1).map(|i| &run.status.stages[i])
        && !succeeded(previous)
    {
        return Err(early(
            key,
            stage,
            format!("the previous stage {} has not succeeded", previous.name),
        ));
    }
    for task in &stage.before_tasks {
        task_passed(state, scope, task).map_err(|why| early(key, stage, why))?;
    }
    Ok(())
}

/// A rollback started in the stage that tripped (failed, the last one started) and moves only
/// clusters whose prior work the run recorded; those reported ready were moved.
fn rollback(key: &ObjectKey, run: &UpdateRun) -> Result<(), Violation> {
    let Some(rollback) = &run.status.rollback else {
        return Ok(());
    };
    let Some(tripped) = run.status.stages.get(rollback.stage) else {
        return Err(Violation::StageBookkeeping {
            run: key.display(),
            stage: format!("#{}", rollback.stage),
            detail: "a rollback names a stage the run does not have".into(),
        });
    };
    let fail = |detail: String| Err(bookkeeping_error(key, tripped, detail));
    if tripped
        .succeeded
        .as_ref()
        .is_none_or(|c| c.status != ConditionStatus::False)
    {
        return fail("rolling back after a stage that did not fail".into());
    }
    if let Some(later) = run.status.stages[rollback.stage + 1..]
        .iter()
        .find(|s| started(s))
    {
        return fail(format!("stage {} started after the trip", later.name));
    }
    let with_prior: BTreeSet<&str> = run
        .status
        .stages
        .iter()
        .flat_map(|s| &s.clusters)
        .filter(|c| c.prior.is_some())
        .map(|c| c.cluster.as_str())
        .collect();
    if let Some(cluster) = rollback
        .moved
        .iter()
        .find(|c| !with_prior.contains(c.as_str()))
    {
        return fail(format!(
            "{cluster} was rolled back without recorded prior work"
        ));
    }
    if let Some(cluster) = rollback.ready.difference(&rollback.moved).next() {
        return fail(format!(
            "{cluster} is ready on its old work but was never moved"
        ));
    }
    Ok(())
}

fn bookkeeping_error(key: &ObjectKey, stage: &StageStatus, detail: String) -> Violation {
    Violation::StageBookkeeping {
        run: key.display(),
        stage: stage.name.clone(),
        detail,
    }
}

/// The cursors: a succeeded prefix, then the updating set, then clusters not started.
fn bookkeeping(
    key: &ObjectKey,
    run: &UpdateRun,
    index: usize,
    stage: &StageStatus,
) -> Result<(), Violation> {
    let fail = |detail: String| Err(bookkeeping_error(key, stage, detail));
    let len = stage.clusters.len();
    if stage.first_unfinished > stage.next_unstarted || stage.next_unstarted > len {
        return fail(format!(
            "cursors out of order: first unfinished {}, next unstarted {}, {len} clusters",
            stage.first_unfinished, stage.next_unstarted
        ));
    }
    // Finished: succeeded — or, with rollout safety, failed within the stage's
    // maxFailures or dropped by an `onClusterChange: Adapt` run; without those fields a failed
    // cluster fails the run before the cursor moves past it.
    let done = |c: &crate::staged::run::ClusterStatus| c.succeeded.is_some();
    if let Some(c) = stage.clusters[..stage.first_unfinished]
        .iter()
        .find(|c| !done(c))
    {
        return fail(format!(
            "{} is before the first unfinished but not done",
            c.cluster
        ));
    }
    if let Some(c) = stage.clusters[stage.next_unstarted..]
        .iter()
        .find(|c| c.started.is_some())
    {
        return fail(format!(
            "{} is after the next unstarted but started",
            c.cluster
        ));
    }
    let updating: BTreeSet<usize> = (0..len)
        .filter(|p| stage.clusters[*p].is_updating())
        .collect();
    if updating != stage.updating {
        return fail(format!(
            "updating set {:?}, clusters say {updating:?}",
            stage.updating
        ));
    }
    if let Some(known) = stage.latest_success.known()
        && known != crate::staged::run::latest_success(&stage.clusters)
    {
        return fail(format!(
            "latest success kept as {known:?}, clusters say {:?}",
            crate::staged::run::latest_success(&stage.clusters)
        ));
    }
    let failed = crate::staged::run::failed_clusters(&stage.clusters).count() as u64;
    if let Some(known) = stage.failures.known()
        && known != failed
    {
        return fail(format!("failures kept as {known}, clusters say {failed}"));
    }
    if stage.start_time.is_none() && stage.clusters.iter().any(|c| c.started.is_some()) {
        return fail("a cluster started before the stage did".into());
    }
    for (position, cluster) in stage.clusters.iter().enumerate() {
        if run.status.positions.get(cluster.cluster.as_str()) != Some(&(index, position)) {
            return fail(format!(
                "{} is not at ({index}, {position}) in positions",
                cluster.cluster
            ));
        }
    }
    Ok(())
}

/// At most `maxConcurrency` clusters of a stage update at once (percentages of the stage's
/// clusters round down, at least 1; 1 when unset).
fn concurrency(
    key: &ObjectKey,
    run: &UpdateRun,
    index: usize,
    stage: &StageStatus,
) -> Result<(), Violation> {
    let configured = run
        .status
        .strategy_snapshot
        .as_ref()
        .and_then(|s| s.stages.get(index))
        .and_then(|s| s.max_concurrency);
    let count = stage.clusters.len() as u64;
    let limit = configured.map_or(1, |value| value.resolve(count, Rounding::Down).max(1));
    let updating = i64::try_from(stage.updating.len()).unwrap_or(i64::MAX);
    if updating > limit {
        return Err(bookkeeping_error(
            key,
            stage,
            format!("{updating} clusters updating, maxConcurrency {limit}"),
        ));
    }
    Ok(())
}

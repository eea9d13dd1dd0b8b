//! Execution of an initialized update run while `state: Run` (KubeFleet's
//! `execute`): the stages in order; within a stage at most `maxConcurrency` clusters updating;
//! before-stage tasks (Approval, Analysis) gate a stage's start, after-stage tasks (Approval,
//! TimedWait, Analysis) gate the next stage; then the delete stage. `Stop` lets in-flight
//! clusters finish and starts no new ones. Every step is taken at the event time of the input that made it possible.

mod adapt;
mod clusters;
mod rollback;
mod tasks;

use chrono::{DateTime, Utc};

use super::Scope;
use super::analysis::REASON_ANALYSIS_FAILED;
use super::model::RunState;
use super::run::{TaskPosition, UpdateRun};
use crate::change::Changes;
use crate::condition::{Condition, ConditionStatus};
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::ObjectKey;
use crate::staged::Store;
use clusters::walk_clusters;
use tasks::tasks_pass;

/// A cluster updating for longer than this makes the run `UpdateRunStuck` (not a failure).
pub const STUCK_AFTER_SECS: i64 = 5 * 60;
/// KubeFleet's prefix for a run that stops being valid while it executes.
const VALIDATE_FAILED: &str = "cannot continue the updateRun: failed to validate the updateRun";

/// What one pass over a stage concluded.
enum Outcome {
    /// The stage succeeded; go on.
    Done,
    /// Waiting for clusters, an approval or time.
    Waiting,
    /// The run must fail with this message.
    Failed(String),
    /// A stage's safety rule (`docs/rollout-safety.md`) tripped: its reason and message (the field
    /// and the clusters, not the action: `rollback::trip` adds the stage's `onFailure`).
    Tripped(&'static str, String),
}

/// Everything a pass works with.
pub(crate) struct Pass<'a> {
    pub state: Store<'a>,
    pub scope: &'a Scope,
    /// The key of the placement the run names, made once per pass (a pass checks and starts
    /// clusters by the thousand).
    pub placement: ObjectKey,
    pub run: &'a mut UpdateRun,
    pub now: DateTime<Utc>,
    pub decisions: Vec<Decision>,
    /// When the run wants to be looked at again.
    pub wake_at: Option<DateTime<Utc>>,
    /// Only these updating clusters can have changed (`None`: check all).
    pub focus: Option<std::collections::BTreeSet<crate::model::ClusterName>>,
    /// What the pass changes (bindings bound and removed).
    pub changes: &'a mut Changes,
}

impl Pass<'_> {
    /// A message-less cluster condition as of this pass, shared with the other clusters that
    /// got an equal one.
    fn shared_condition(
        &mut self,
        kind: &str,
        status: ConditionStatus,
        reason: &str,
    ) -> std::sync::Arc<Condition> {
        self.run.shared.get(&super::shared::Wanted {
            kind,
            status,
            reason,
            generation: self.run.meta.generation,
            now: self.now,
        })
    }

    fn condition(
        &self,
        kind: &str,
        status: ConditionStatus,
        reason: &str,
        message: &str,
    ) -> Condition {
        Condition::new(
            kind,
            status,
            reason,
            message.to_owned(),
            self.run.meta.generation,
            self.now,
        )
    }

    fn wake(&mut self, at: DateTime<Utc>) {
        self.wake_at = Some(self.wake_at.map_or(at, |w| w.min(at)));
    }

    /// Sets the run's `Progressing` condition, recording a decision when its reason changes.
    fn progressing(&mut self, status: ConditionStatus, reason: &str, message: &str) {
        let generation = self.run.meta.generation;
        let unchanged = self.run.status.progressing.as_ref().is_some_and(|c| {
            c.condition_type == "Progressing"
                && c.status == status
                && c.reason == reason
                && c.message == message
                && c.observed_generation == generation
        });
        // The steady case, on every work report: nothing to build or compare.
        if unchanged {
            return;
        }
        let next = self.condition("Progressing", status, reason, message);
        let changed_reason = self
            .run
            .status
            .progressing
            .as_ref()
            .is_none_or(|c| c.reason != reason);
        if Condition::set(&mut self.run.status.progressing, next) && changed_reason {
            self.decisions.push(Decision::UpdateRunStateChanged {
                run: self.scope.run_key(),
                reason: reason.to_owned(),
            });
        }
    }

    /// Sets stage `index`'s `Progressing` condition, recording a decision when it changed;
    /// `fresh` starts a new transition even when the status stays (waiting starts now).
    fn stage_progressing(
        &mut self,
        index: usize,
        status: ConditionStatus,
        reason: &str,
        fresh: bool,
    ) {
        let next = self.condition("Progressing", status, reason, "");
        let slot = &mut self.run.status.stages[index].progressing;
        let changed = if fresh {
            *slot = Some(next);
            true
        } else {
            Condition::set(slot, next)
        };
        if changed {
            let name = self.run.status.stages[index].name.clone();
            self.stage_changed(&name, reason);
        }
    }

    fn stage_changed(&mut self, stage: &str, reason: &str) {
        self.decisions.push(Decision::UpdateRunStageChanged {
            run: self.scope.run_key(),
            stage: stage.to_owned(),
            reason: reason.to_owned(),
        });
    }
}

/// Executes the run as far as the hub's state allows now.
pub(crate) fn execute(pass: &mut Pass<'_>) {
    // A tripped stage with `onFailure: Rollback`: only the rollback goes on.
    if pass.run.status.rollback.is_some() {
        rollback::step(pass);
        return;
    }
    if let Err(message) = revalidate(pass) {
        fail(pass, &message);
        return;
    }
    let stopping = pass.run.spec.state == RunState::Stop;
    if !stopping {
        let stuck = pass
            .run
            .status
            .progressing
            .as_ref()
            .is_some_and(|c| c.reason == "UpdateRunStuck");
        if !stuck {
            pass.progressing(ConditionStatus::True, "UpdateRunStarted", "");
        }
    }
    for index in 0..pass.run.status.stages.len() {
        if pass.run.status.stages[index].succeeded.is_some() {
            continue;
        }
        match stage(pass, index, stopping) {
            Outcome::Done => {}
            Outcome::Waiting => {
                settle_stop(pass, Some(index), stopping);
                return;
            }
            Outcome::Failed(message) => {
                fail(pass, &message);
                return;
            }
            Outcome::Tripped(reason, message) => {
                rollback::trip(pass, index, reason, &message);
                return;
            }
        }
    }
    if stopping {
        settle_stop(pass, None, stopping);
        return;
    }
    delete_stage(pass);
}

/// The run's clusters still match the placement's scheduling (KubeFleet: the run fails when
/// "new scheduling changes its clusters" or the placement is deleted).
fn revalidate(pass: &mut Pass<'_>) -> Result<(), String> {
    let key = pass.placement.clone();
    let Some(placement) = pass.state.placements.get(&key) else {
        return Err(format!(
            "{VALIDATE_FAILED}: failed to process the request due to a client error: parent placement not found"
        ));
    };
    let latest = placement.latest_policy().map(|p| p.index);
    let used = pass.run.status.policy_snapshot_index_used;
    if latest != used {
        return Err(format!(
            "{VALIDATE_FAILED}: the policy snapshot index used in the updateRun is outdated, latest: {}, recorded: {}",
            latest.map_or_else(String::new, |i| i.to_string()),
            used.map_or_else(String::new, |i| i.to_string())
        ));
    }
    // Retention keeps the snapshot an unfinished run rolls out, so it is gone only when the
    // placement was deleted and made again since the run was initialized: binding a cluster to
    // it would give the cluster work that does not exist.
    if let Some(index) = pass.run.status.resource_snapshot_index_used
        && placement.resource_snapshot(index).is_none()
    {
        return Err(format!(
            "{VALIDATE_FAILED}: the resource snapshot index used in the updateRun no longer exists, recorded: {index}"
        ));
    }
    if !pass.run.status.needs_validation {
        return Ok(());
    }
    let (selected, _) = super::initialize::collect_clusters(placement);
    let planned: std::collections::BTreeSet<ClusterName> = pass
        .run
        .status
        .stages
        .iter()
        .flat_map(|s| s.clusters.iter().map(|c| c.cluster.clone()))
        .chain(pass.run.status.deferred.iter().cloned())
        .collect();
    let adapts = pass
        .run
        .status
        .strategy_snapshot
        .as_ref()
        .and_then(|s| s.on_cluster_change)
        == Some(super::model::OnClusterChange::Adapt);
    if selected != planned && adapts {
        adapt::adapt(pass, &selected, &planned);
    } else if selected != planned {
        return Err(format!(
            "{VALIDATE_FAILED}: the clusters scheduled for the placement changed since the updateRun was initialized: initialized with {} cluster(s), now {}",
            planned.len(),
            selected.len()
        ));
    }
    pass.run.status.needs_validation = false;
    Ok(())
}

fn fail(pass: &mut Pass<'_>, message: &str) {
    fail_with(pass, "UpdateRunFailed", message);
}

/// Fails the run with this reason on its `Succeeded` condition.
fn fail_with(pass: &mut Pass<'_>, reason: &str, message: &str) {
    let condition = pass.condition("Succeeded", ConditionStatus::False, reason, message);
    pass.run.status.succeeded = Some(condition);
    pass.decisions.push(Decision::UpdateRunFinished {
        run: pass.scope.run_key(),
        succeeded: false,
        message: message.to_owned(),
    });
}

/// Under `Stop`: once no cluster is updating, the current stage and the run are Stopped;
/// until then they are Stopping.
fn settle_stop(pass: &mut Pass<'_>, index: Option<usize>, stopping: bool) {
    if !stopping {
        return;
    }
    let updating = index.is_some_and(|i| {
        pass.run.status.stages[i]
            .clusters
            .iter()
            .any(|cluster| cluster.is_updating())
    });
    let (stage_status, stage_reason, run_status, run_reason) = if updating {
        (
            ConditionStatus::Unknown,
            "StageUpdatingStopping",
            ConditionStatus::Unknown,
            "UpdateRunStopping",
        )
    } else {
        (
            ConditionStatus::False,
            "StageUpdatingStopped",
            ConditionStatus::False,
            "UpdateRunStopped",
        )
    };
    if let Some(i) = index {
        let started = pass.run.status.stages[i].start_time.is_some();
        let waiting = pass.run.status.stages[i]
            .progressing
            .as_ref()
            .is_some_and(|c| c.reason == "StageUpdatingWaiting");
        // A stage waiting on its tasks keeps its Progressing time: TimedWait counts from it.
        if started && !waiting {
            pass.stage_progressing(i, stage_status, stage_reason, false);
        }
    }
    pass.progressing(run_status, run_reason, "");
}

fn stage(pass: &mut Pass<'_>, index: usize, stopping: bool) -> Outcome {
    if pass.run.status.stages[index].waiting_at() == Some(TaskPosition::Before) {
        match tasks_pass(pass, index, TaskPosition::Before) {
            Ok(true) => {}
            Ok(false) => {
                pass.stage_progressing(
                    index,
                    ConditionStatus::False,
                    "StageUpdatingWaiting",
                    false,
                );
                return Outcome::Waiting;
            }
            Err(message) => return Outcome::Tripped(REASON_ANALYSIS_FAILED, message),
        }
    }
    let has_clusters = !pass.run.status.stages[index].clusters.is_empty();
    let stage = &pass.run.status.stages[index];
    let all_done = stage.first_unfinished >= stage.clusters.len();
    if has_clusters && !all_done {
        if pass.run.status.stages[index].start_time.is_none() {
            if stopping {
                return Outcome::Waiting;
            }
            start_stage(pass, index);
        } else if !stopping {
            resume_stage(pass, index);
        }
        match walk_clusters(pass, index, stopping) {
            Outcome::Done => {}
            other => return other,
        }
    }
    after_tasks(pass, index)
}

fn start_stage(pass: &mut Pass<'_>, index: usize) {
    pass.run.status.stages[index].start_time = Some(pass.now);
    pass.stage_progressing(index, ConditionStatus::True, "StageUpdatingStarted", true);
}

fn resume_stage(pass: &mut Pass<'_>, index: usize) {
    let stopped = pass.run.status.stages[index]
        .progressing
        .as_ref()
        .is_some_and(|c| c.status != ConditionStatus::True && c.reason != "StageUpdatingWaiting");
    if stopped {
        pass.stage_progressing(index, ConditionStatus::True, "StageUpdatingStarted", false);
    }
}

/// Once a stage's clusters all succeeded: `Progressing=False/StageUpdatingWaiting` (its time
/// is when a TimedWait starts counting), then the after-stage tasks, then `Succeeded`.
fn after_tasks(pass: &mut Pass<'_>, index: usize) -> Outcome {
    if !pass.run.status.stages[index].after_waiting {
        // A fresh transition: waiting for the after-stage tasks starts now.
        pass.stage_progressing(index, ConditionStatus::False, "StageUpdatingWaiting", true);
        pass.run.status.stages[index].after_waiting = true;
    }
    match tasks_pass(pass, index, TaskPosition::After) {
        Ok(true) => {}
        Ok(false) => return Outcome::Waiting,
        Err(message) => return Outcome::Tripped(REASON_ANALYSIS_FAILED, message),
    }
    let now = pass.now;
    let next = pass.condition(
        "Succeeded",
        ConditionStatus::True,
        "StageUpdatingSucceeded",
        "",
    );
    let stage = &mut pass.run.status.stages[index];
    stage.succeeded = Some(next);
    stage.end_time = Some(now);
    let name = stage.name.clone();
    pass.stage_changed(&name, "StageUpdatingSucceeded");
    Outcome::Done
}

/// The delete stage removes the work of the clusters no longer scheduled, then the run
/// succeeds.
fn delete_stage(pass: &mut Pass<'_>) {
    let Some(mut stage) = pass.run.status.deletion.take() else {
        return;
    };
    let now = pass.now;
    if stage.start_time.is_none() {
        stage.start_time = Some(now);
        stage.progressing = Some(pass.condition(
            "Progressing",
            ConditionStatus::True,
            "StageUpdatingStarted",
            "",
        ));
        pass.stage_changed(&stage.name, "StageUpdatingStarted");
    }
    let key = pass.placement.clone();
    for cluster in &mut stage.clusters {
        if cluster.succeeded.is_some() {
            continue;
        }
        let cluster = std::sync::Arc::make_mut(cluster);
        cluster.started =
            Some(pass.shared_condition("Started", ConditionStatus::True, "ClusterUpdatingStarted"));
        let removed = pass
            .state
            .placements
            .get_mut(&key)
            .and_then(|p| p.remove_binding(&key, &cluster.cluster, pass.changes));
        pass.decisions.extend(removed);
        let succeeded = pass.shared_condition(
            "Succeeded",
            ConditionStatus::True,
            "ClusterUpdatingSucceeded",
        );
        stage.latest_success.record(succeeded.last_transition_time);
        cluster.succeeded = Some(succeeded);
    }
    stage.succeeded = Some(pass.condition(
        "Succeeded",
        ConditionStatus::True,
        "StageUpdatingSucceeded",
        "",
    ));
    stage.end_time = Some(now);
    pass.stage_changed(&stage.name, "StageUpdatingSucceeded");
    pass.run.status.deletion = Some(stage);
    let done = pass.condition("Succeeded", ConditionStatus::True, "UpdateRunSucceeded", "");
    pass.run.status.succeeded = Some(done);
    pass.decisions.push(Decision::UpdateRunFinished {
        run: pass.scope.run_key(),
        succeeded: true,
        message: String::new(),
    });
}

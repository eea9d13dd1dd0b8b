//! A staged update run's gates as the fold sees them: for each before- or after-stage task,
//! its request, wait, measurements and when it passed, all read through the rules the fold
//! applies ([`crate::staged::gates`]).

use chrono::{DateTime, Utc};

use crate::model::ObjectKey;
use crate::staged::analysis::AnalysisStatus;
use crate::staged::analysis::measure::{self, TaskAt};
use crate::staged::gates::APPROVAL_REQUEST_CREATED;
use crate::staged::model::{StageTask, TaskType};
use crate::staged::run::{TaskPosition, UpdateRun, failed_clusters};
use crate::state::State;

/// One before- or after-stage task of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskGate<'a> {
    /// Where the task is in the run's strategy.
    pub at: TaskAt,
    /// Its stage's name.
    pub stage: &'a str,
    /// Approval, TimedWait or Analysis.
    pub task_type: TaskType,
    /// An Approval task's request name.
    pub request: Option<&'a str>,
    /// When the run created the request.
    pub requested_at: Option<DateTime<Utc>>,
    /// When the request was approved.
    pub approved_at: Option<DateTime<Utc>>,
    /// What the approver wrote in the `Approved` condition's message.
    pub approval_message: Option<String>,
    /// A TimedWait's `waitTime`, in seconds.
    pub wait_seconds: u64,
    /// When a TimedWait elapses, while its stage waits on it.
    pub wait_until: Option<DateTime<Utc>>,
    /// When the run saw the task pass; `None`: not yet.
    pub passed_at: Option<DateTime<Utc>>,
    /// An Analysis task's spec, as the run's strategy snapshot holds it.
    pub spec: Option<&'a StageTask>,
    /// An Analysis task's measurements so far.
    pub measurements: Option<&'a AnalysisStatus>,
    /// Why an Analysis task failed its gate.
    pub failed: Option<&'a str>,
}

/// The task at `at` of the run `key`, or `None` when the run has no such task.
#[must_use]
pub fn task_gate<'a>(
    state: &State,
    key: &ObjectKey,
    run: &'a UpdateRun,
    at: TaskAt,
) -> Option<TaskGate<'a>> {
    let stage = run.status.stages.get(at.stage)?;
    let status = stage.tasks(at.position).get(at.task)?;
    let request = status
        .approval_request_name
        .as_deref()
        .filter(|_| status.task_type == TaskType::Approval);
    let waiting = stage.waiting_at() == Some(at.position);
    let approval =
        request.and_then(|name| crate::staged::gates::approval(state, &Scope::of(key), name));
    let is = |task_type: TaskType| status.task_type == task_type;
    Some(TaskGate {
        at,
        stage: &stage.name,
        task_type: status.task_type,
        request: is(TaskType::Approval).then_some(request.unwrap_or_default()),
        requested_at: status
            .conditions
            .iter()
            .find(|c| c.condition_type == APPROVAL_REQUEST_CREATED)
            .map(|c| c.last_transition_time),
        approved_at: approval.map(|c| c.last_transition_time),
        approval_message: approval.map(|c| c.message.clone()),
        wait_seconds: crate::staged::gates::wait_seconds(run, at),
        wait_until: crate::staged::gates::wait_until(run, at)
            .filter(|_| waiting && is(TaskType::TimedWait)),
        passed_at: crate::staged::gates::passed_at(status),
        spec: measure::task_spec(run, at).filter(|_| is(TaskType::Analysis)),
        measurements: status.analysis.as_ref(),
        failed: crate::staged::gates::analysis_failure(status),
    })
}

/// The tasks of stage `index` at `position`, in order.
#[must_use]
pub fn stage_gates<'a>(
    state: &State,
    key: &ObjectKey,
    run: &'a UpdateRun,
    index: usize,
    position: TaskPosition,
) -> Vec<TaskGate<'a>> {
    let count = run
        .status
        .stages
        .get(index)
        .map_or(0, |stage| stage.tasks(position).len());
    (0..count)
        .filter_map(|task| {
            let at = TaskAt {
                stage: index,
                position,
                task,
            };
            task_gate(state, key, run, at)
        })
        .collect()
}

/// The gates between the start of the run and the start of stage `index`: the after-stage
/// tasks of the stages before it, then its own before-stage tasks.
#[must_use]
pub fn gates_before_stage<'a>(
    state: &State,
    key: &ObjectKey,
    run: &'a UpdateRun,
    index: usize,
) -> Vec<TaskGate<'a>> {
    let mut gates: Vec<TaskGate<'a>> = (0..index)
        .flat_map(|earlier| stage_gates(state, key, run, earlier, TaskPosition::After))
        .collect();
    gates.extend(stage_gates(state, key, run, index, TaskPosition::Before));
    gates
}

/// The gates stage `index` waits on now (none while it updates clusters), not yet passed.
#[must_use]
pub fn open_gates<'a>(
    state: &State,
    key: &ObjectKey,
    run: &'a UpdateRun,
    index: usize,
) -> Vec<TaskGate<'a>> {
    let Some(position) = run.status.stages.get(index).and_then(|s| s.waiting_at()) else {
        return Vec::new();
    };
    stage_gates(state, key, run, index, position)
        .into_iter()
        .filter(|gate| gate.passed_at.is_none())
        .collect()
}

/// A staged update run that failed: where, why, and the clusters whose failure failed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure<'a> {
    /// The stage whose clusters failed (`None`: the run failed before or between stages).
    pub stage: Option<&'a str>,
    /// The run's `Succeeded: False` message.
    pub message: &'a str,
    /// When it failed.
    pub at: DateTime<Utc>,
    /// The failed clusters, in stage order, each with its `Succeeded: False` message.
    pub clusters: Vec<(&'a str, &'a str)>,
}

/// Why `run` failed, once it has (`Succeeded: False`).
#[must_use]
pub fn run_failure(run: &UpdateRun) -> Option<RunFailure<'_>> {
    let failed = run
        .status
        .succeeded
        .as_ref()
        .filter(|c| c.status == crate::condition::ConditionStatus::False)?;
    let stage = run
        .status
        .stages
        .iter()
        .find(|stage| failed_clusters(&stage.clusters).next().is_some());
    let clusters = stage.map_or_else(Vec::new, |stage| {
        failed_clusters(&stage.clusters)
            .map(|c| {
                let message = c.succeeded.as_ref().map_or("", |s| s.message.as_str());
                (c.cluster.as_str(), message)
            })
            .collect()
    });
    Some(RunFailure {
        stage: stage.map(|s| s.name.as_str()),
        message: &failed.message,
        at: failed.last_transition_time,
        clusters,
    })
}

// What other crates read of the aggregate, beside the questions above.
pub use crate::staged::{
    APPROVAL_REQUEST, CLUSTER_APPROVAL_REQUEST, CLUSTER_STAGED_UPDATE_RUN,
    CLUSTER_STAGED_UPDATE_STRATEGY, STAGED_UPDATE_RUN, STAGED_UPDATE_STRATEGY, Scope, Strategy,
    is_run,
};

/// `staged::approval`: the default words of an approval and the limits on an approver's.
pub mod approval {
    pub use crate::staged::approval::{APPROVED, MESSAGE_MAX, REASON_MAX, condition_text_error};
}

/// `staged::analysis`: what other crates read of it.
pub mod analysis {
    pub use crate::staged::analysis::AnalysisStatus;

    /// `staged::analysis::measure`: what other crates read of it.
    pub mod measure {
        pub use crate::staged::analysis::measure::{Measuring, measuring};
    }
}

/// `staged::gates`: what other crates read of it.
pub mod gates {
    pub use crate::staged::gates::{approved_at, seconds};
}

/// `staged::model`: what other crates read of it.
pub mod model {
    pub use crate::staged::model::{
        RunSpec, RunState, StageTask, StrategySpec, TaskType, WaitTime,
    };
}

/// `staged::run`: what other crates read of it.
pub mod run {
    pub use crate::staged::run::{
        ApprovalRequest, ClusterStatus, StageStatus, TaskStatus, UpdateRun,
    };
}

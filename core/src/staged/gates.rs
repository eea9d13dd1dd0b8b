//! The rules of a stage's task gates, shared by the fold that applies them
//! ([`super::execute`]) and by every explanation of them ([`crate::query::staged`]): which
//! tasks a stage waits on, how long a TimedWait waits and from when, when an approval was
//! given, and which condition marks a task passed.

use chrono::{DateTime, Duration, Utc};

use super::Scope;
use super::analysis::measure::{self, TaskAt};
use super::model::TaskType;
use super::run::{StageStatus, TaskPosition, TaskStatus, UpdateRun};
use crate::condition::{Condition, ConditionStatus};
use crate::staged::View;

/// A TimedWait's condition once its wait has elapsed.
pub const WAIT_TIME_ELAPSED: &str = "WaitTimeElapsed";
/// An Approval task's condition once the run created its request.
pub const APPROVAL_REQUEST_CREATED: &str = "ApprovalRequestCreated";
/// An Approval task's condition once the run saw its request approved.
pub const APPROVAL_REQUEST_APPROVED: &str = "ApprovalRequestApproved";

impl StageStatus {
    /// The stage's task statuses at `position` (`beforeStageTaskStatus` /
    /// `afterStageTaskStatus`).
    #[must_use]
    pub fn tasks(&self, position: TaskPosition) -> &[TaskStatus] {
        match position {
            TaskPosition::Before => &self.before_tasks,
            TaskPosition::After => &self.after_tasks,
        }
    }

    /// The stage's task statuses at `position`, to change.
    pub(crate) fn tasks_mut(&mut self, position: TaskPosition) -> &mut [TaskStatus] {
        match position {
            TaskPosition::Before => &mut self.before_tasks,
            TaskPosition::After => &mut self.after_tasks,
        }
    }

    /// Which of its tasks the stage waits on now: the after-stage tasks once its clusters all
    /// finished, the before-stage tasks until it starts, none while it updates clusters.
    #[must_use]
    pub fn waiting_at(&self) -> Option<TaskPosition> {
        if self.after_waiting {
            Some(TaskPosition::After)
        } else if self.start_time.is_none() {
            Some(TaskPosition::Before)
        } else {
            None
        }
    }

    /// When a TimedWait of the stage starts counting: the stage's `Progressing` transition to
    /// waiting (the fold keeps that time while the stage waits on its tasks).
    #[must_use]
    pub fn wait_counts_from(&self) -> Option<DateTime<Utc>> {
        self.progressing.as_ref().map(|c| c.last_transition_time)
    }
}

/// How long the TimedWait at `at` waits, in seconds, as the run's strategy snapshot says
/// (`waitTime`; none: 0).
#[must_use]
pub fn wait_seconds(run: &UpdateRun, at: TaskAt) -> u64 {
    measure::task_spec(run, at)
        .and_then(|task| task.wait_time)
        .map_or(0, |wait| wait.0)
}

/// `seconds` as a duration (saturating).
#[must_use]
pub fn seconds(seconds: u64) -> Duration {
    Duration::seconds(i64::try_from(seconds).unwrap_or(i64::MAX))
}

/// When the TimedWait at `at` elapses, once its stage has started waiting.
#[must_use]
pub fn wait_until(run: &UpdateRun, at: TaskAt) -> Option<DateTime<Utc>> {
    let stage = run.status.stages.get(at.stage)?;
    Some(stage.wait_counts_from()? + seconds(wait_seconds(run, at)))
}

/// When the approval request `name` of the run was approved (`Approved=True`), if it was.
#[must_use]
pub fn approved_at<'a>(
    view: impl Into<View<'a>>,
    scope: &Scope,
    name: &str,
) -> Option<DateTime<Utc>> {
    approval(view, scope, name).map(|c| c.last_transition_time)
}

/// The `Approved=True` condition of the run's approval request `name`: its time, and the
/// approver's reason and message.
#[must_use]
pub fn approval<'a>(view: impl Into<View<'a>>, scope: &Scope, name: &str) -> Option<&'a Condition> {
    view.into()
        .approvals
        .get(&scope.approval_key(name))
        .and_then(|request| request.approved.as_ref())
        .filter(|c| c.status == ConditionStatus::True)
}

/// When the run saw the task pass (a wait elapsed, an approval accepted, an analysis
/// succeeded); `None`: not yet, or an analysis failed.
#[must_use]
pub fn passed_at(status: &TaskStatus) -> Option<DateTime<Utc>> {
    let passed = match status.task_type {
        TaskType::TimedWait => WAIT_TIME_ELAPSED,
        TaskType::Approval => APPROVAL_REQUEST_APPROVED,
        TaskType::Analysis => measure::SUCCEEDED,
    };
    status
        .conditions
        .iter()
        .find(|c| c.condition_type == passed && c.status == ConditionStatus::True)
        .map(|c| c.last_transition_time)
}

/// Why an Analysis task failed its gate, once it has.
#[must_use]
pub fn analysis_failure(status: &TaskStatus) -> Option<&str> {
    status
        .conditions
        .iter()
        .find(|c| c.condition_type == measure::SUCCEEDED && c.status != ConditionStatus::True)
        .map(|c| c.message.as_str())
}

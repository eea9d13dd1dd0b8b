//! A stage's before- and after-stage tasks: approval requests (created once, passed once
//! approved) and timed waits (counted from the stage's waiting transition).

use chrono::Duration;

use super::Pass;
use crate::condition::{Condition, ConditionStatus};
use crate::decision::Decision;
use crate::staged::approval;
use crate::staged::model::TaskType;
use crate::staged::run::{TaskPosition, TaskStatus};

/// Whether every task at `position` of the stage has passed (creating approval requests and
/// recording approvals and elapsed waits on the way).
pub(super) fn tasks_pass(pass: &mut Pass<'_>, index: usize, position: TaskPosition) -> bool {
    let count = match position {
        TaskPosition::Before => pass.run.status.stages[index].before_tasks.len(),
        TaskPosition::After => pass.run.status.stages[index].after_tasks.len(),
    };
    let mut all = true;
    for task in 0..count {
        all &= task_passes(pass, index, position, task);
    }
    all
}

fn task_passes(pass: &mut Pass<'_>, index: usize, position: TaskPosition, task: usize) -> bool {
    let status = match position {
        TaskPosition::Before => pass.run.status.stages[index].before_tasks[task].clone(),
        TaskPosition::After => pass.run.status.stages[index].after_tasks[task].clone(),
    };
    let mut conditions = status.conditions.clone();
    let at = Task {
        index,
        position,
        task,
    };
    let passed = match status.task_type {
        TaskType::TimedWait => {
            status.has("WaitTimeElapsed") || wait_elapsed(pass, &at, &mut conditions)
        }
        TaskType::Approval => approval_passes(pass, &at, &status, &mut conditions),
    };
    let slot = match position {
        TaskPosition::Before => &mut pass.run.status.stages[index].before_tasks[task],
        TaskPosition::After => &mut pass.run.status.stages[index].after_tasks[task],
    };
    slot.conditions = conditions;
    passed
}

/// Which task of which stage.
struct Task {
    index: usize,
    position: TaskPosition,
    task: usize,
}

impl Task {
    /// The prefix of the task's condition reasons.
    fn prefix(&self) -> &'static str {
        match self.position {
            TaskPosition::Before => "BeforeStageTask",
            TaskPosition::After => "AfterStageTask",
        }
    }
}

/// A TimedWait passes once its wait has elapsed since the stage's Progressing transition;
/// until then the run asks to be woken when it will have.
fn wait_elapsed(pass: &mut Pass<'_>, at: &Task, conditions: &mut Vec<Condition>) -> bool {
    let wait = wait_secs(pass, at.index, at.position, at.task);
    let since = pass.run.status.stages[at.index]
        .progressing
        .as_ref()
        .map_or(pass.now, |c| c.last_transition_time);
    let until = since + Duration::seconds(wait);
    if until > pass.now {
        pass.wake(until);
        return false;
    }
    conditions.push(pass.condition(
        "WaitTimeElapsed",
        ConditionStatus::True,
        &format!("{}WaitTimeElapsed", at.prefix()),
        "",
    ));
    true
}

/// An Approval task creates its request once, and passes once the request is approved (the
/// approval is then accepted for this run generation).
fn approval_passes(
    pass: &mut Pass<'_>,
    at: &Task,
    status: &TaskStatus,
    conditions: &mut Vec<Condition>,
) -> bool {
    let name = status.approval_request_name.clone().unwrap_or_default();
    if !status.has("ApprovalRequestCreated") {
        let stage_name = pass.run.status.stages[at.index].name.clone();
        approval::create(
            pass.state,
            pass.scope,
            &name,
            &stage_name,
            at.position,
            pass.now,
        );
        pass.decisions.push(Decision::ApprovalRequested {
            run: pass.scope.run_key(),
            request: pass.scope.approval_key(&name),
        });
        conditions.push(pass.condition(
            "ApprovalRequestCreated",
            ConditionStatus::True,
            &format!("{}ApprovalRequestCreated", at.prefix()),
            "",
        ));
    }
    if status.has("ApprovalRequestApproved") {
        return true;
    }
    let generation = pass.run.meta.generation;
    if !approval::accept(pass.state, pass.scope, &name, generation, pass.now) {
        return false;
    }
    conditions.push(pass.condition(
        "ApprovalRequestApproved",
        ConditionStatus::True,
        &format!("{}ApprovalRequestApproved", at.prefix()),
        "",
    ));
    true
}

fn wait_secs(pass: &Pass<'_>, index: usize, position: TaskPosition, task: usize) -> i64 {
    let stage = pass
        .run
        .status
        .strategy_snapshot
        .as_ref()
        .and_then(|s| s.stages.get(index));
    let tasks = match position {
        TaskPosition::Before => stage.map(|s| &s.before_stage_tasks),
        TaskPosition::After => stage.map(|s| &s.after_stage_tasks),
    };
    tasks
        .and_then(|t| t.get(task))
        .and_then(|t| t.wait_time)
        .map_or(0, |w| i64::try_from(w.0).unwrap_or(i64::MAX))
}

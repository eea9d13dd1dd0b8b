//! A stage's before- and after-stage tasks: approval requests (created once, passed once
//! approved) and timed waits (counted from the stage's waiting transition).

use super::Pass;
use crate::condition::{Condition, ConditionStatus};
use crate::decision::Decision;
use crate::staged::analysis::measure::{self, STARTED, SUCCEEDED, TaskAt};
use crate::staged::analysis::{self, Verdict};
use crate::staged::approval;
use crate::staged::gates::{
    self, APPROVAL_REQUEST_APPROVED, APPROVAL_REQUEST_CREATED, WAIT_TIME_ELAPSED,
};
use crate::staged::model::TaskType;
use crate::staged::run::{TaskPosition, TaskStatus};

/// Whether every task at `position` of the stage has passed (creating approval requests and
/// recording approvals, elapsed waits and analysis verdicts on the way); `Err` with the
/// message when an Analysis task failed the gate.
pub(super) fn tasks_pass(
    pass: &mut Pass<'_>,
    index: usize,
    position: TaskPosition,
) -> Result<bool, String> {
    let count = pass.run.status.stages[index].tasks(position).len();
    let mut all = true;
    for task in 0..count {
        all &= task_passes(pass, index, position, task)?;
    }
    Ok(all)
}

fn task_passes(
    pass: &mut Pass<'_>,
    index: usize,
    position: TaskPosition,
    task: usize,
) -> Result<bool, String> {
    let status = pass.run.status.stages[index].tasks(position)[task].clone();
    let mut conditions = status.conditions.clone();
    let at = Task {
        index,
        position,
        task,
    };
    let passed = match status.task_type {
        TaskType::TimedWait => {
            Gate::from(status.has(WAIT_TIME_ELAPSED) || wait_elapsed(pass, &at, &mut conditions))
        }
        TaskType::Approval => Gate::from(approval_passes(pass, &at, &status, &mut conditions)),
        TaskType::Analysis => analysis_passes(pass, &at, &status, &mut conditions),
    };
    pass.run.status.stages[index].tasks_mut(position)[task].conditions = conditions;
    match passed {
        Gate::Failed(message) => Err(message),
        Gate::Passed => Ok(true),
        Gate::Waiting => Ok(false),
    }
}

/// What one task says of its gate.
enum Gate {
    Passed,
    Waiting,
    Failed(String),
}

impl From<bool> for Gate {
    fn from(passed: bool) -> Self {
        if passed { Gate::Passed } else { Gate::Waiting }
    }
}

/// Which task of which stage.
struct Task {
    index: usize,
    position: TaskPosition,
    task: usize,
}

impl Task {
    fn at(&self) -> TaskAt {
        TaskAt {
            stage: self.index,
            position: self.position,
            task: self.task,
        }
    }

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
    let until = gates::wait_until(pass.run, at.at())
        .unwrap_or_else(|| pass.now + gates::seconds(gates::wait_seconds(pass.run, at.at())));
    if until > pass.now {
        pass.wake(until);
        return false;
    }
    conditions.push(pass.condition(
        WAIT_TIME_ELAPSED,
        ConditionStatus::True,
        &format!("{}WaitTimeElapsed", at.prefix()),
        "",
    ));
    true
}

/// An Approval task creates its request, and passes once the request is approved (the
/// approval is then accepted for this run generation). A request deleted before that is made
/// again; one deleted after it stays gone, as KubeFleet's `handleStageApprovalTask` does.
fn approval_passes(
    pass: &mut Pass<'_>,
    at: &Task,
    status: &TaskStatus,
    conditions: &mut Vec<Condition>,
) -> bool {
    if status.has(APPROVAL_REQUEST_APPROVED) {
        return true;
    }
    let name = status.approval_request_name.clone().unwrap_or_default();
    let request = pass.scope.approval_key(&name);
    if !pass.state.approvals.contains_key(&request) {
        let stage_name = pass.run.status.stages[at.index].name.clone();
        approval::create(
            &mut pass.state,
            pass.scope,
            &name,
            &stage_name,
            at.position,
            pass.now,
        );
        pass.decisions.push(Decision::ApprovalRequested {
            run: pass.scope.run_key(),
            request,
        });
    }
    if !status.has(APPROVAL_REQUEST_CREATED) {
        conditions.push(pass.condition(
            APPROVAL_REQUEST_CREATED,
            ConditionStatus::True,
            &format!("{}ApprovalRequestCreated", at.prefix()),
            "",
        ));
    }
    let generation = pass.run.meta.generation;
    if !approval::accept(&mut pass.state, pass.scope, &name, generation, pass.now) {
        return false;
    }
    conditions.push(pass.condition(
        APPROVAL_REQUEST_APPROVED,
        ConditionStatus::True,
        &format!("{}ApprovalRequestApproved", at.prefix()),
        "",
    ));
    true
}

/// An Analysis task starts measuring once its gate is reached (the adapter measures from the
/// `AnalysisStarted` time, then every `interval`), and passes or fails on the verdict of the
/// measurements folded so far. A failed gate trips the stage.
fn analysis_passes(
    pass: &mut Pass<'_>,
    at: &Task,
    status: &TaskStatus,
    conditions: &mut Vec<Condition>,
) -> Gate {
    let task_at = at.at();
    let stage_name = pass.run.status.stages[at.index].name.clone();
    let gate = |pass: &Pass<'_>, phase: &str, message: &str| Decision::AnalysisGate {
        run: pass.scope.run_key(),
        stage: stage_name.clone(),
        task: task_at.path(),
        phase: phase.to_owned(),
        message: message.to_owned(),
    };
    if let Some(done) = status
        .conditions
        .iter()
        .find(|c| c.condition_type == SUCCEEDED)
    {
        return if done.status == ConditionStatus::True {
            Gate::Passed
        } else {
            Gate::Failed(done.message.clone())
        };
    }
    if !status.has(STARTED) {
        conditions.push(pass.condition(
            STARTED,
            ConditionStatus::True,
            &format!("{}AnalysisStarted", at.prefix()),
            "",
        ));
        let started = gate(pass, "Started", "");
        pass.decisions.push(started);
    }
    let Some(spec) = measure::task_spec(pass.run, task_at).cloned() else {
        return Gate::Waiting;
    };
    let analysis = status.analysis.clone().unwrap_or_default();
    let (verdict, condition_status, suffix, phase) = match analysis::verdict(&spec, &analysis) {
        Verdict::Waiting => return Gate::Waiting,
        Verdict::Passed(message) => (Gate::Passed, ConditionStatus::True, "Succeeded", message),
        Verdict::Failed(message) => {
            let message = format!(
                "stage {stage_name:?}: Analysis {} failed: {message}",
                task_at.path()
            );
            (
                Gate::Failed(message.clone()),
                ConditionStatus::False,
                "Failed",
                message,
            )
        }
    };
    conditions.push(pass.condition(
        SUCCEEDED,
        condition_status,
        &format!("{}Analysis{suffix}", at.prefix()),
        &phase,
    ));
    let decided = gate(
        pass,
        if suffix == "Succeeded" {
            "Successful"
        } else {
            "Failed"
        },
        &phase,
    );
    pass.decisions.push(decided);
    verdict
}

//! Folding an `analysisResult` input into its task's status, and the list of tasks measuring
//! now that the analysis adapter reads to know what to query.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::{AnalysisStatus, SuccessCondition};
use crate::change::{Change, Changes};
use crate::decision::{Decision, RejectCode, rejected};
use crate::event::AnalysisResult;
use crate::model::ObjectKey;
use crate::staged::Scope;
use crate::staged::model::{RunState, StageTask, TaskType};
use crate::staged::run::{TaskPosition, TaskStatus, UpdateRun};
use crate::staged::{Store, View};

/// The condition an Analysis task sets when it starts measuring.
pub const STARTED: &str = "AnalysisStarted";
/// The condition an Analysis task sets once decided (True: passed, False: failed).
pub const SUCCEEDED: &str = "AnalysisSucceeded";

/// One task's place in a run: the stage's index, before or after it, the task's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskAt {
    /// The stage's index in the run.
    pub stage: usize,
    /// Before or after the stage.
    pub position: TaskPosition,
    /// The task's index in its list.
    pub task: usize,
}

impl TaskAt {
    /// The task's path in the strategy: `beforeStageTasks[0]`, `afterStageTasks[1]`.
    #[must_use]
    pub fn path(&self) -> String {
        let list = match self.position {
            TaskPosition::Before => "beforeStageTasks",
            TaskPosition::After => "afterStageTasks",
        };
        format!("{list}[{}]", self.task)
    }
}

/// Folds one measurement into the task it names, which must be measuring now.
pub(crate) fn record(
    state: &mut Store<'_>,
    result: &AnalysisResult,
    event_id: Uuid,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let scope = Scope {
        namespace: result.namespace.as_deref().unwrap_or_default().into(),
        run_name: result.run.as_str().into(),
    };
    let key = scope.run_key();
    let Some(run) = state.update_runs.get_mut(&key) else {
        return vec![rejected(
            RejectCode::NotFound,
            format!("{} {} not found", key.kind, display_name(&key)),
        )];
    };
    let at = match resolve(run, &result.stage, &result.task) {
        Ok(at) => at,
        Err(why) => return vec![rejected(RejectCode::NotFound, why)],
    };
    let outcome = match measure(run, at, result) {
        Ok(outcome) => outcome,
        Err((code, why)) => return vec![rejected(code, why)],
    };
    let status = task_status_mut(run, at);
    let analysis = status.analysis.get_or_insert_with(AnalysisStatus::default);
    if analysis.last_event == Some(event_id) {
        return vec![Decision::ObjectUnchanged { object: key }];
    }
    analysis.last_event = Some(event_id);
    match outcome {
        Outcome::Successful | Outcome::Failed => {
            if outcome == Outcome::Successful {
                analysis.successful += 1;
            } else {
                analysis.failed += 1;
            }
            analysis.consecutive_errors = 0;
            analysis.last_value.clone_from(&result.value);
            analysis.last_error = None;
        }
        Outcome::Error => {
            analysis.errors += 1;
            analysis.consecutive_errors += 1;
            analysis.last_error.clone_from(&result.error);
        }
    }
    analysis.last_measured = Some(now);
    changes.push(Change::AnalysisMeasured { run: key.clone() });
    vec![Decision::AnalysisMeasured {
        run: key,
        stage: result.stage.clone(),
        task: at.path(),
        value: result.value.clone(),
        outcome: outcome.as_str().to_owned(),
        message: result.error.clone().unwrap_or_default(),
    }]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Successful,
    Failed,
    Error,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Successful => "Successful",
            Outcome::Failed => "Failed",
            Outcome::Error => "Error",
        }
    }
}

/// What the result says, once the task is known to be measuring.
fn measure(
    run: &UpdateRun,
    at: TaskAt,
    result: &AnalysisResult,
) -> Result<Outcome, (RejectCode, String)> {
    let status = task_status(run, at);
    let measuring = !run.is_finished() && status.has(STARTED) && !status.has(SUCCEEDED);
    if !measuring {
        return Err((
            RejectCode::AnalysisNotRunning,
            format!(
                "{} of stage {:?} is not measuring now",
                at.path(),
                result.stage
            ),
        ));
    }
    let (Some(text), None) = (&result.value, &result.error) else {
        return match (&result.value, &result.error) {
            (None, Some(_)) => Ok(Outcome::Error),
            _ => Err((
                RejectCode::Undecodable,
                "an analysis result carries either a value or an error".to_owned(),
            )),
        };
    };
    let value: f64 = text.trim().parse().map_err(|_| {
        (
            RejectCode::Undecodable,
            format!("analysis value {text:?} is not a number"),
        )
    })?;
    let condition = task_spec(run, at)
        .and_then(|t| t.prometheus.as_ref())
        .map(|p| SuccessCondition::parse(&p.success_condition));
    match condition {
        Some(Ok(condition)) if condition.holds(value) => Ok(Outcome::Successful),
        Some(Ok(_)) => Ok(Outcome::Failed),
        _ => Err((
            RejectCode::NotFound,
            format!("{} has no valid successCondition", at.path()),
        )),
    }
}

/// Finds the task a result names (see [`AnalysisResult::task`]).
fn resolve(run: &UpdateRun, stage: &str, task: &str) -> Result<TaskAt, String> {
    let Some(index) = run.status.stages.iter().position(|s| s.name == stage) else {
        return Err(format!("stage {stage:?} is not in the update run"));
    };
    let (list, number) = parse_task_name(task)?;
    let stage_status = &run.status.stages[index];
    let lists = [
        (TaskPosition::Before, &stage_status.before_tasks),
        (TaskPosition::After, &stage_status.after_tasks),
    ];
    let mut found: Vec<(TaskPosition, usize, &TaskStatus)> = lists
        .into_iter()
        .filter(|(p, _)| list.is_none_or(|l| l == *p))
        .flat_map(|(p, tasks)| tasks.iter().enumerate().map(move |(i, t)| (p, i, t)))
        .filter(|(_, i, t)| t.task_type == TaskType::Analysis && number.is_none_or(|n| n == *i))
        .collect();
    if list.is_none() && found.len() > 1 {
        // Unnamed: the one measuring now.
        found.retain(|(_, _, t)| t.has(STARTED) && !t.has(SUCCEEDED));
    }
    match found.as_slice() {
        [(position, task, _)] => Ok(TaskAt {
            stage: index,
            position: *position,
            task: *task,
        }),
        [] => Err(format!("stage {stage:?} has no Analysis task {task:?}")),
        _ => Err(format!(
            "stage {stage:?} has more than one Analysis task: name one"
        )),
    }
}

/// Reads `before`, `after`, `beforeStageTasks[i]`, `afterStageTasks[i]` or nothing.
fn parse_task_name(task: &str) -> Result<(Option<TaskPosition>, Option<usize>), String> {
    let bad = || format!("{task:?} is not a task like afterStageTasks[1], before or after");
    let (name, number) = match task.trim().split_once('[') {
        Some((name, rest)) => {
            let number = rest.strip_suffix(']').and_then(|n| n.parse().ok());
            (name, Some(number.ok_or_else(bad)?))
        }
        None => (task.trim(), None),
    };
    let list = match name {
        "before" | "beforeStageTasks" => Some(TaskPosition::Before),
        "after" | "afterStageTasks" => Some(TaskPosition::After),
        "" if number.is_none() => None,
        _ => return Err(bad()),
    };
    Ok((list, number))
}

fn display_name(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        key.name.to_string()
    } else {
        format!("{}/{}", key.namespace, key.name)
    }
}

fn task_status(run: &UpdateRun, at: TaskAt) -> &TaskStatus {
    let stage = &run.status.stages[at.stage];
    match at.position {
        TaskPosition::Before => &stage.before_tasks[at.task],
        TaskPosition::After => &stage.after_tasks[at.task],
    }
}

fn task_status_mut(run: &mut UpdateRun, at: TaskAt) -> &mut TaskStatus {
    let stage = &mut run.status.stages[at.stage];
    match at.position {
        TaskPosition::Before => &mut stage.before_tasks[at.task],
        TaskPosition::After => &mut stage.after_tasks[at.task],
    }
}

/// The task's spec, from the strategy snapshot the run took.
#[must_use]
pub fn task_spec(run: &UpdateRun, at: TaskAt) -> Option<&StageTask> {
    let stage = run
        .status
        .strategy_snapshot
        .as_ref()?
        .stages
        .get(at.stage)?;
    match at.position {
        TaskPosition::Before => stage.before_stage_tasks.get(at.task),
        TaskPosition::After => stage.after_stage_tasks.get(at.task),
    }
}

/// An Analysis task measuring now, for the adapter that queries Prometheus.
#[derive(Debug, Clone, PartialEq)]
pub struct Measuring {
    /// The run.
    pub run: ObjectKey,
    /// The run's uid: with the stage, task and measurement number, it names a measurement
    /// uniquely, so a retried or doubled measurement is deduplicated by the log.
    pub run_uid: String,
    /// The stage's name.
    pub stage: String,
    /// Where the task is.
    pub at: TaskAt,
    /// The task's spec.
    pub task: StageTask,
    /// Results folded so far (the next measurement's number).
    pub taken: u32,
    /// When the next measurement is due: at once when the task started, then `interval`
    /// after the last one.
    pub due: DateTime<Utc>,
}

/// Every Analysis task measuring now, in key order.
#[must_use]
pub fn measuring<'a>(view: impl Into<View<'a>>) -> Vec<Measuring> {
    let view = view.into();
    let mut out = Vec::new();
    for (key, run) in view.update_runs {
        if run.is_finished() || run.spec.state != RunState::Run {
            continue;
        }
        for (index, stage) in run.status.stages.iter().enumerate() {
            let lists = [
                (TaskPosition::Before, &stage.before_tasks),
                (TaskPosition::After, &stage.after_tasks),
            ];
            for (position, tasks) in lists {
                for (task, status) in tasks.iter().enumerate() {
                    let at = TaskAt {
                        stage: index,
                        position,
                        task,
                    };
                    if let Some(m) = measuring_task(key, run, &stage.name, at, status) {
                        out.push(m);
                    }
                }
            }
        }
    }
    out
}

fn measuring_task(
    key: &ObjectKey,
    run: &UpdateRun,
    stage: &str,
    at: TaskAt,
    status: &TaskStatus,
) -> Option<Measuring> {
    if status.task_type != TaskType::Analysis || status.has(SUCCEEDED) {
        return None;
    }
    let started = status
        .conditions
        .iter()
        .find(|c| c.condition_type == STARTED)?
        .last_transition_time;
    let spec = task_spec(run, at)?.clone();
    let analysis = status.analysis.clone().unwrap_or_default();
    let interval = Duration::seconds(
        spec.interval
            .map_or(0, |w| i64::try_from(w.0).unwrap_or(i64::MAX)),
    );
    let due = analysis
        .last_measured
        .map_or(started, |last| last + interval);
    Some(Measuring {
        run: key.clone(),
        run_uid: run.meta.uid.to_string(),
        stage: stage.to_owned(),
        at,
        task: spec,
        taken: analysis.taken(),
        due,
    })
}

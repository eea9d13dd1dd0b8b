//! The staged-update kinds as users write them: `ClusterStagedUpdateStrategy` /
//! `StagedUpdateStrategy` (`spec.stages`) and `ClusterStagedUpdateRun` / `StagedUpdateRun`
//! (`spec.placementName`, `resourceSnapshotIndex`, `stagedRolloutStrategyName`, `state`), with
//! the validation KubeFleet's CRDs and webhooks apply (KubeFleet's staged-update docs, "Important
//! Constraints").

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::model::safety::{OnFailure, Safety};
use crate::model::selector::LabelSelector;
use crate::model::{FieldError, IntOrPercent, typed};
use crate::staged::analysis::{self, PrometheusSpec};

/// At most this many stages in a strategy (KubeFleet's `spec.stages`: "a maximum of 31 stages").
pub const STAGES_MAX: usize = 31;
/// At most this many before-stage tasks (Approval only).
pub const BEFORE_STAGE_TASKS_MAX: usize = 1;
/// At most this many after-stage tasks (one of each type).
pub const AFTER_STAGE_TASKS_MAX: usize = 2;
/// With an Analysis task among them (`docs/rollout-safety.md`): before a stage, Approval and/or
/// Analysis.
pub const ANALYSIS_BEFORE_STAGE_TASKS_MAX: usize = 2;
/// With an Analysis task among them: after a stage, at most one each of Approval, TimedWait
/// and Analysis.
pub const ANALYSIS_AFTER_STAGE_TASKS_MAX: usize = 3;
/// Update run names stay under 64 characters (the CRD's limit), so the approval request names
/// derived from them stay valid.
pub const RUN_NAME_CHARS_MAX: usize = 63;

/// A staged update strategy's spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategySpec {
    /// The stages, run in order.
    #[serde(default)]
    pub stages: Vec<StageConfig>,
    /// What a run does when its placement's clusters change (`docs/rollout-safety.md`): `Fail`
    /// (default, KubeFleet's behaviour) or `Adapt`.
    #[serde(default)]
    pub on_cluster_change: Option<OnClusterChange>,
}

/// `spec.onClusterChange` of a staged strategy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OnClusterChange {
    /// The run fails (KubeFleet's staged-update docs).
    #[default]
    Fail,
    /// A joining cluster is added to a stage not yet finished (or left for the next run), a
    /// leaving one dropped, each recorded.
    Adapt,
}

impl OnClusterChange {
    /// The spelling in the spec.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            OnClusterChange::Fail => "Fail",
            OnClusterChange::Adapt => "Adapt",
        }
    }
}

/// One stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageConfig {
    /// Unique within the strategy.
    pub name: String,
    /// Which clusters: an empty selector selects all, an absent one selects none.
    #[serde(default)]
    pub label_selector: Option<LabelSelector>,
    /// A label whose integer value orders the clusters within the stage.
    #[serde(default)]
    pub sorting_label_key: Option<String>,
    /// How many clusters update at once (default 1).
    #[serde(default)]
    pub max_concurrency: Option<IntOrPercent>,
    /// Gates before the stage starts (at most one, Approval).
    #[serde(default)]
    pub before_stage_tasks: Vec<StageTask>,
    /// Gates before the next stage starts (at most two, one of each type).
    #[serde(default)]
    pub after_stage_tasks: Vec<StageTask>,
    /// Rollout safety (`docs/rollout-safety.md`): no cluster of the stage succeeding for this long
    /// fails the run with `ProgressDeadlineExceeded`.
    #[serde(default)]
    pub progress_deadline_seconds: Option<i64>,
    /// Rollout safety: failed clusters of the stage tolerated (int, or percent of the stage's
    /// clusters rounded down).
    #[serde(default)]
    pub max_failures: Option<IntOrPercent>,
    /// Rollout safety: `Halt` (the run fails) or `Rollback` (the run moves the clusters it
    /// updated back to their prior work, then fails with `RolledBack` or `RollbackFailed`).
    #[serde(default)]
    pub on_failure: Option<OnFailure>,
}

impl StageConfig {
    /// The stage's safety fields.
    #[must_use]
    pub fn safety(&self) -> Safety {
        Safety {
            progress_deadline_seconds: self.progress_deadline_seconds,
            max_failures: self.max_failures,
            on_failure: self.on_failure,
        }
    }
}

/// A before- or after-stage task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageTask {
    /// Approval, TimedWait or Analysis.
    #[serde(rename = "type")]
    pub task_type: TaskType,
    /// How long a TimedWait waits.
    #[serde(default)]
    pub wait_time: Option<WaitTime>,
    /// An Analysis task's query (`docs/rollout-safety.md`).
    #[serde(default)]
    pub prometheus: Option<PrometheusSpec>,
    /// Time between an Analysis task's measurements.
    #[serde(default)]
    pub interval: Option<WaitTime>,
    /// Measurements an Analysis task takes (default 1).
    #[serde(default)]
    pub count: Option<u32>,
    /// Failed measurements an Analysis task tolerates (default 0).
    #[serde(default)]
    pub failure_limit: Option<u32>,
}

impl StageTask {
    /// A task of this type with no fields set.
    #[must_use]
    pub fn of(task_type: TaskType) -> Self {
        Self {
            task_type,
            wait_time: None,
            prometheus: None,
            interval: None,
            count: None,
            failure_limit: None,
        }
    }
}

/// The task types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaskType {
    /// Someone approves the request named after the run and stage.
    Approval,
    /// Event time passes.
    TimedWait,
    /// Prometheus measurements satisfy a condition (`docs/rollout-safety.md`).
    Analysis,
}

impl TaskType {
    /// The spelling in manifests and status.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TaskType::Approval => "Approval",
            TaskType::TimedWait => "TimedWait",
            TaskType::Analysis => "Analysis",
        }
    }
}

/// A Kubernetes duration (`1h`, `30m`, `1m0s`, `90s`), kept in whole seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct WaitTime(pub u64);

impl WaitTime {
    /// Parses Go's duration syntax for the units a wait uses (`h`, `m`, `s`).
    ///
    /// # Errors
    /// Any other text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let invalid = || format!("{text:?} is not a duration like \"1h\", \"30m\" or \"1m30s\"");
        let mut seconds: u64 = 0;
        let mut number = String::new();
        for ch in text.chars() {
            if ch.is_ascii_digit() {
                number.push(ch);
                continue;
            }
            let unit = match ch {
                'h' => 3600,
                'm' => 60,
                's' => 1,
                _ => return Err(invalid()),
            };
            let value: u64 = number.parse().map_err(|_| invalid())?;
            seconds = value
                .checked_mul(unit)
                .and_then(|v| seconds.checked_add(v))
                .ok_or_else(invalid)?;
            number.clear();
        }
        // A bare number is only allowed for zero ("0"), as in Go.
        let trailing_number = !number.is_empty() && text != "0";
        if text.is_empty() || trailing_number {
            return Err(invalid());
        }
        Ok(Self(seconds))
    }
}

impl fmt::Display for WaitTime {
    /// Go's `Duration.String()`: `0s`, `45s`, `1m0s`, `1h0m0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (hours, minutes, seconds) = (self.0 / 3600, self.0 / 60 % 60, self.0 % 60);
        if hours > 0 {
            write!(f, "{hours}h{minutes}m{seconds}s")
        } else if minutes > 0 {
            write!(f, "{minutes}m{seconds}s")
        } else {
            write!(f, "{seconds}s")
        }
    }
}

impl Serialize for WaitTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            serializer.serialize_u64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for WaitTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            WaitTime::parse(&text).map_err(serde::de::Error::custom)
        } else {
            u64::deserialize(deserializer).map(WaitTime)
        }
    }
}

/// The run states of KubeFleet's `ClusterStagedUpdateRun`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunState {
    /// Initialize only (the default).
    #[default]
    Initialize,
    /// Execute, or resume.
    Run,
    /// Pause at the current cluster/stage.
    Stop,
}

impl RunState {
    /// The spelling in `spec.state`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Initialize => "Initialize",
            RunState::Run => "Run",
            RunState::Stop => "Stop",
        }
    }
}

/// An update run's spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSpec {
    /// The placement to roll out (in the run's namespace for a `StagedUpdateRun`).
    #[serde(default)]
    pub placement_name: String,
    /// The resource snapshot index to roll out; the latest when absent.
    #[serde(default)]
    pub resource_snapshot_index: Option<String>,
    /// The strategy to follow (in the run's namespace for a `StagedUpdateRun`).
    #[serde(default)]
    pub staged_rollout_strategy_name: String,
    /// Initialize, Run or Stop.
    #[serde(default)]
    pub state: RunState,
}

/// Parses and validates a strategy spec.
///
/// # Errors
/// The first field that is wrong, with its path.
pub fn parse_strategy(spec: &Value) -> Result<StrategySpec, FieldError> {
    let mut strategy: StrategySpec = typed(spec, "spec")?;
    zero_waits_as_absent(&mut strategy);
    validate_strategy(&strategy)?;
    Ok(strategy)
}

/// Reads `waitTime: 0s` on an Approval task as absent: KubeFleet serializes every task's
/// `waitTime` (an Approval's as `0s`, as `get` shows it), so the object `get` shows must
/// re-apply unchanged.
fn zero_waits_as_absent(strategy: &mut StrategySpec) {
    let tasks = strategy.stages.iter_mut().flat_map(|stage| {
        stage
            .before_stage_tasks
            .iter_mut()
            .chain(&mut stage.after_stage_tasks)
    });
    for task in tasks {
        if task.task_type == TaskType::Approval && task.wait_time == Some(WaitTime(0)) {
            task.wait_time = None;
        }
    }
}

/// The strategy rules of KubeFleet's staged-update docs and CRD.
///
/// # Errors
/// The first rule broken, naming the field.
pub fn validate_strategy(strategy: &StrategySpec) -> Result<(), FieldError> {
    if strategy.stages.len() > STAGES_MAX {
        return Err(FieldError::new(
            "spec.stages",
            format!(
                "has {} stages, at most {STAGES_MAX} are allowed",
                strategy.stages.len()
            ),
        ));
    }
    for (i, stage) in strategy.stages.iter().enumerate() {
        let at = format!("spec.stages[{i}]");
        if stage.name.is_empty() {
            return Err(FieldError::new(format!("{at}.name"), "is required"));
        }
        if strategy.stages[..i].iter().any(|s| s.name == stage.name) {
            return Err(FieldError::new(
                format!("{at}.name"),
                format!("stage name {:?} is used by more than one stage", stage.name),
            ));
        }
        if let Some(selector) = &stage.label_selector {
            selector
                .validate()
                .map_err(|message| FieldError::new(format!("{at}.labelSelector"), message))?;
        }
        validate_concurrency(stage.max_concurrency, &at)?;
        validate_before_tasks(&stage.before_stage_tasks, &at)?;
        validate_after_tasks(&stage.after_stage_tasks, &at)?;
        stage.safety().validate(&at)?;
    }
    Ok(())
}

fn validate_concurrency(value: Option<IntOrPercent>, at: &str) -> Result<(), FieldError> {
    let field = format!("{at}.maxConcurrency");
    match value {
        Some(IntOrPercent::Int(n)) if n < 1 => Err(FieldError::new(
            field,
            format!("{n} is invalid: an integer maxConcurrency must be at least 1"),
        )),
        Some(IntOrPercent::Percent(p)) if !(1..=100).contains(&p) => Err(FieldError::new(
            field,
            format!("\"{p}%\" is invalid: a percentage maxConcurrency must be between 1% and 100%"),
        )),
        _ => Ok(()),
    }
}

/// KubeFleet's limits — one Approval before a stage; after it at most two tasks, one of each
/// type — or, with an Analysis task among them, `docs/rollout-safety.md`'s: Approval and/or
/// Analysis before, at most one each of Approval, TimedWait and Analysis after.
fn validate_before_tasks(tasks: &[StageTask], at: &str) -> Result<(), FieldError> {
    let field = format!("{at}.beforeStageTasks");
    let analysis = has_analysis(tasks);
    let max = if analysis {
        ANALYSIS_BEFORE_STAGE_TASKS_MAX
    } else {
        BEFORE_STAGE_TASKS_MAX
    };
    if tasks.len() > max {
        return Err(FieldError::new(
            field,
            format!("has {} tasks, at most {max} is allowed", tasks.len()),
        ));
    }
    no_two_of_a_type(tasks, &field, "beforeStageTasks")?;
    for (i, task) in tasks.iter().enumerate() {
        if task.task_type == TaskType::TimedWait {
            let allowed = if analysis {
                "only Approval and Analysis"
            } else {
                "only Approval"
            };
            return Err(FieldError::new(
                format!("{field}[{i}].type"),
                format!(
                    "{} is not allowed before a stage: {allowed}",
                    task.task_type.as_str()
                ),
            ));
        }
        if task.task_type == TaskType::Approval && task.wait_time.is_some() {
            return Err(FieldError::new(
                format!("{field}[{i}].waitTime"),
                "must not be set for an Approval task",
            ));
        }
        analysis::validate_task(task, &format!("{field}[{i}]"))?;
    }
    Ok(())
}

fn has_analysis(tasks: &[StageTask]) -> bool {
    tasks.iter().any(|t| t.task_type == TaskType::Analysis)
}

fn no_two_of_a_type(tasks: &[StageTask], field: &str, name: &str) -> Result<(), FieldError> {
    for (i, task) in tasks.iter().enumerate() {
        if tasks[..i].iter().any(|t| t.task_type == task.task_type) {
            return Err(FieldError::new(
                field,
                format!(
                    "{name} cannot have two tasks of the same type: {}",
                    task.task_type.as_str()
                ),
            ));
        }
    }
    Ok(())
}

fn validate_after_tasks(tasks: &[StageTask], at: &str) -> Result<(), FieldError> {
    let field = format!("{at}.afterStageTasks");
    let max = if has_analysis(tasks) {
        ANALYSIS_AFTER_STAGE_TASKS_MAX
    } else {
        AFTER_STAGE_TASKS_MAX
    };
    if tasks.len() > max {
        return Err(FieldError::new(
            field,
            format!("has {} tasks, at most {max} are allowed", tasks.len()),
        ));
    }
    no_two_of_a_type(tasks, &field, "afterStageTasks")?;
    for (i, task) in tasks.iter().enumerate() {
        let wait = format!("{field}[{i}].waitTime");
        match (task.task_type, task.wait_time) {
            (TaskType::TimedWait, None) => {
                return Err(FieldError::new(wait, "is required for a TimedWait task"));
            }
            (TaskType::TimedWait, Some(WaitTime(0))) => {
                return Err(FieldError::new(
                    wait,
                    "must be greater than 0 for a TimedWait task",
                ));
            }
            (TaskType::Approval, Some(_)) => {
                return Err(FieldError::new(
                    wait,
                    "must not be set for an Approval task",
                ));
            }
            _ => {}
        }
        analysis::validate_task(task, &format!("{field}[{i}]"))?;
    }
    Ok(())
}

/// Parses and validates an update run spec.
///
/// # Errors
/// A missing required field, a bad resource snapshot index or an over-long name.
pub fn parse_run(spec: &Value, name: &str) -> Result<RunSpec, FieldError> {
    let run: RunSpec = typed(spec, "spec")?;
    if name.chars().count() > RUN_NAME_CHARS_MAX {
        return Err(FieldError::new(
            "metadata.name",
            format!("must be at most {RUN_NAME_CHARS_MAX} characters"),
        ));
    }
    if run.placement_name.is_empty() {
        return Err(FieldError::new("spec.placementName", "is required"));
    }
    if run.staged_rollout_strategy_name.is_empty() {
        return Err(FieldError::new(
            "spec.stagedRolloutStrategyName",
            "is required",
        ));
    }
    Ok(run)
}

/// The update rules: `placementName`, `resourceSnapshotIndex` and `stagedRolloutStrategyName`
/// never change; `state` moves only Initialize→Run, Run→Stop and Stop→Run.
///
/// # Errors
/// The field that changed, or the transition refused.
pub fn validate_run_update(old: &RunSpec, new: &RunSpec) -> Result<(), FieldError> {
    if old.placement_name != new.placement_name {
        return Err(FieldError::new("spec.placementName", "is immutable"));
    }
    if old.resource_snapshot_index != new.resource_snapshot_index {
        return Err(FieldError::new(
            "spec.resourceSnapshotIndex",
            "is immutable",
        ));
    }
    if old.staged_rollout_strategy_name != new.staged_rollout_strategy_name {
        return Err(FieldError::new(
            "spec.stagedRolloutStrategyName",
            "is immutable",
        ));
    }
    let allowed = old.state == new.state
        || matches!(
            (old.state, new.state),
            (RunState::Initialize, RunState::Run)
                | (RunState::Run, RunState::Stop)
                | (RunState::Stop, RunState::Run)
        );
    if !allowed {
        // KubeFleet's CEL messages for the refused transitions (ClusterStagedUpdateRun
        // spec.state).
        let why = match (old.state, new.state) {
            (RunState::Stop, RunState::Initialize) => "cannot reinitialize after stopping",
            (_, RunState::Initialize) => "cannot reinitialize after starting",
            _ => "cannot stop before starting",
        };
        return Err(FieldError::new(
            "spec.state",
            format!(
                "invalid state transition from {} to {}: {why} (allowed: Initialize→Run, Run→Stop, Stop→Run)",
                old.state.as_str(),
                new.state.as_str()
            ),
        ));
    }
    Ok(())
}

//! The Analysis stage task (`docs/rollout-safety.md`): a gate on a Prometheus query, with Argo
//! Rollouts' meanings — `count` measurements `interval` apart, each successful when
//! `successCondition` holds for the query's value; more than `failureLimit` failed measurements
//! fail the gate (and trip the stage), more than [`CONSECUTIVE_ERROR_LIMIT`] measurements in a row
//! that could not be taken fail it too, and `count` measurements taken within the limit pass it.
//!
//! The query runs outside the core: an adapter appends each result as an `analysisResult`
//! input, which [`measure::record`] folds into the task's status. So the gate is decided in the
//! fold from facts in the log and replays exactly.

pub mod condition;
pub mod measure;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::model::FieldError;
use crate::staged::model::{StageTask, TaskType, WaitTime};
pub use condition::SuccessCondition;

/// Measurements taken when `count` is not set: a one-shot check.
pub const DEFAULT_COUNT: u32 = 1;
/// Measurements in a row that could not be taken before the gate fails (Argo Rollouts'
/// `consecutiveErrorLimit` default).
pub const CONSECUTIVE_ERROR_LIMIT: u32 = 4;
/// The reason a failed gate trips its stage with.
pub const REASON_ANALYSIS_FAILED: &str = "AnalysisFailed";

/// `prometheus` of an Analysis task: where to ask, what, and what a good answer is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrometheusSpec {
    /// The Prometheus server's base URL (`http://prometheus.monitoring:9090`).
    pub address: String,
    /// The PromQL query; its first sample is the measured value.
    pub query: String,
    /// When a measurement is successful, e.g. `result < 0.01`.
    pub success_condition: String,
}

/// An Analysis task's measurements so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalysisStatus {
    /// Measurements whose value satisfied the condition.
    pub successful: u32,
    /// Measurements whose value did not.
    pub failed: u32,
    /// Measurements that could not be taken (the query failed or returned no sample).
    pub errors: u32,
    /// Errors since the last measurement with a value.
    pub consecutive_errors: u32,
    /// The last value measured, as Prometheus wrote it.
    pub last_value: Option<String>,
    /// Why the last measurement could not be taken, if it could not.
    pub last_error: Option<String>,
    /// When the last result was folded (the log's time).
    pub last_measured: Option<DateTime<Utc>>,
    /// The id of the last result counted: the same result folded again straight after itself
    /// (a retry the log did not catch) is not counted twice.
    pub last_event: Option<Uuid>,
}

impl AnalysisStatus {
    /// Results folded so far, of every kind: the next result's number.
    #[must_use]
    pub fn taken(&self) -> u32 {
        self.successful
            .saturating_add(self.failed)
            .saturating_add(self.errors)
    }
}

/// What the measurements so far decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// `count` measurements were taken, at most `failureLimit` of them failed.
    Passed(String),
    /// More measurements are needed.
    Waiting,
    /// Too many failed, or too many in a row could not be taken.
    Failed(String),
}

/// Judges an Analysis task's measurements.
#[must_use]
pub fn verdict(task: &StageTask, status: &AnalysisStatus) -> Verdict {
    let count = task.count.unwrap_or(DEFAULT_COUNT);
    let limit = task.failure_limit.unwrap_or(0);
    let condition = task
        .prometheus
        .as_ref()
        .map_or("", |p| p.success_condition.as_str());
    let last = status
        .last_value
        .as_deref()
        .map_or_else(String::new, |v| format!("; last value {v}"));
    if status.failed > limit {
        return Verdict::Failed(format!(
            "{} of {} measurements failed `{condition}` (failureLimit {limit}){last}",
            status.failed,
            status.successful + status.failed
        ));
    }
    if status.consecutive_errors > CONSECUTIVE_ERROR_LIMIT {
        let why = status.last_error.as_deref().unwrap_or("unknown error");
        return Verdict::Failed(format!(
            "{} measurements in a row could not be taken (limit {CONSECUTIVE_ERROR_LIMIT}): {why}",
            status.consecutive_errors
        ));
    }
    if status.successful + status.failed >= count {
        return Verdict::Passed(format!(
            "{} of {count} measurements successful (`{condition}`){last}",
            status.successful
        ));
    }
    Verdict::Waiting
}

/// Checks the fields of one task: an Analysis task's query and counts, and that no other task
/// type carries them.
///
/// # Errors
/// The first field that is wrong, with its path (`field` is the task's own path).
pub fn validate_task(task: &StageTask, field: &str) -> Result<(), FieldError> {
    if task.task_type != TaskType::Analysis {
        let analysis_only = [
            ("prometheus", task.prometheus.is_some()),
            ("interval", task.interval.is_some()),
            ("count", task.count.is_some()),
            ("failureLimit", task.failure_limit.is_some()),
        ];
        if let Some((name, _)) = analysis_only.iter().find(|(_, set)| *set) {
            return Err(FieldError::new(
                format!("{field}.{name}"),
                format!("must not be set for a {} task", task.task_type.as_str()),
            ));
        }
        return Ok(());
    }
    if task.wait_time.is_some() {
        return Err(FieldError::new(
            format!("{field}.waitTime"),
            "must not be set for an Analysis task",
        ));
    }
    let Some(prometheus) = &task.prometheus else {
        return Err(FieldError::new(
            format!("{field}.prometheus"),
            "is required for an Analysis task",
        ));
    };
    validate_prometheus(prometheus, &format!("{field}.prometheus"))?;
    validate_counts(task, field)
}

fn validate_prometheus(prometheus: &PrometheusSpec, field: &str) -> Result<(), FieldError> {
    let address = prometheus.address.trim();
    if !(address.starts_with("http://") || address.starts_with("https://")) {
        return Err(FieldError::new(
            format!("{field}.address"),
            format!("{address:?} is not an http:// or https:// URL"),
        ));
    }
    if prometheus.query.trim().is_empty() {
        return Err(FieldError::new(format!("{field}.query"), "is required"));
    }
    SuccessCondition::parse(&prometheus.success_condition).map_err(|why| {
        FieldError::new(
            format!("{field}.successCondition"),
            format!("{:?} is invalid: {why}", prometheus.success_condition),
        )
    })?;
    Ok(())
}

fn validate_counts(task: &StageTask, field: &str) -> Result<(), FieldError> {
    if task.count == Some(0) {
        return Err(FieldError::new(
            format!("{field}.count"),
            "must be at least 1",
        ));
    }
    if task.interval == Some(WaitTime(0)) {
        return Err(FieldError::new(
            format!("{field}.interval"),
            "must be greater than 0",
        ));
    }
    if task.count.unwrap_or(DEFAULT_COUNT) > 1 && task.interval.is_none() {
        return Err(FieldError::new(
            format!("{field}.interval"),
            "is required when count is greater than 1",
        ));
    }
    Ok(())
}

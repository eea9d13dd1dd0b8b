//! Rollout safety fields (`docs/rollout-safety.md`), flotilla's addition to every rollout block: a
//! progress deadline, a failure threshold and what to do when either trips. Every field is opt-in;
//! with none set a rollout behaves exactly as KubeFleet and Rancher Fleet describe it.
//!
//! - `progressDeadlineSeconds`: a rollout in which no cluster becomes ready on its new work for
//!   this long trips with reason `ProgressDeadlineExceeded`.
//! - `maxFailures`: an int, or a percent of the clusters the block governs rounded **down**.
//!   Failures are only counted when `maxFailures` or `onFailure` is set (then `maxFailures`
//!   defaults to 0); one failure more than it allows trips with `FailureThresholdExceeded`.
//! - `onFailure`: `Halt` (default) or `Rollback`.

use serde::{Deserialize, Serialize};

use super::FieldError;
use super::int_or_percent::{IntOrPercent, Rounding};

/// The largest `progressDeadlineSeconds` accepted (one year): keeps deadline arithmetic far
/// from chrono's limits.
pub const PROGRESS_DEADLINE_SECS_MAX: i64 = 365 * 24 * 3600;

/// What a rollout does when its deadline or failure threshold trips.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OnFailure {
    /// Stop moving clusters to the new snapshot; leave every cluster as it is.
    #[default]
    Halt,
    /// Move every cluster the rollout updated back to the snapshot it had before.
    Rollback,
}

impl OnFailure {
    /// The spelling in the spec.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Halt => "Halt",
            OnFailure::Rollback => "Rollback",
        }
    }
}

/// The three safety fields of one rollout block, as written (all optional).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Safety {
    /// `progressDeadlineSeconds`.
    pub progress_deadline_seconds: Option<i64>,
    /// `maxFailures`.
    pub max_failures: Option<IntOrPercent>,
    /// `onFailure`.
    pub on_failure: Option<OnFailure>,
}

impl Safety {
    /// Whether any field is set: only then is the rollout guarded at all.
    #[must_use]
    pub fn is_set(&self) -> bool {
        self.progress_deadline_seconds.is_some() || self.counts_failures()
    }

    /// Whether cluster failures are counted (`maxFailures` or `onFailure` set).
    #[must_use]
    pub fn counts_failures(&self) -> bool {
        self.max_failures.is_some() || self.on_failure.is_some()
    }

    /// What to do when the rollout trips (`Halt` unless written).
    #[must_use]
    pub fn action(&self) -> OnFailure {
        self.on_failure.unwrap_or_default()
    }

    /// How many failed clusters are tolerated out of `governed` (percent rounds down; 0 when
    /// unset).
    #[must_use]
    pub fn failures_tolerated(&self, governed: u64) -> i64 {
        self.max_failures
            .map_or(0, |max| max.resolve(governed, Rounding::Down))
    }

    /// Validates the fields of the block at `path` (e.g. `spec.strategy.rollingUpdate`).
    ///
    /// # Errors
    /// The first field out of range, with its path.
    pub fn validate(&self, path: &str) -> Result<(), FieldError> {
        if let Some(seconds) = self.progress_deadline_seconds
            && !(1..=PROGRESS_DEADLINE_SECS_MAX).contains(&seconds)
        {
            return Err(FieldError::new(
                format!("{path}.progressDeadlineSeconds"),
                format!(
                    "must be between 1 and {PROGRESS_DEADLINE_SECS_MAX} seconds, not {seconds}"
                ),
            ));
        }
        if let Some(IntOrPercent::Int(n)) = self.max_failures
            && n < 0
        {
            return Err(FieldError::new(
                format!("{path}.maxFailures"),
                format!("must not be negative, not {n}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percent_rounds_down_and_nothing_set_tolerates_nothing() {
        let safety = Safety {
            max_failures: Some(IntOrPercent::Percent(30)),
            ..Safety::default()
        };
        assert_eq!(safety.failures_tolerated(10), 3);
        assert_eq!(safety.failures_tolerated(3), 0);
        assert_eq!(Safety::default().failures_tolerated(10), 0);
        assert!(!Safety::default().is_set());
        assert_eq!(Safety::default().action(), OnFailure::Halt);
    }

    #[test]
    fn out_of_range_fields_name_their_path() {
        let bad = Safety {
            progress_deadline_seconds: Some(0),
            ..Safety::default()
        };
        let error = bad.validate("spec.strategy.rollingUpdate").err();
        assert_eq!(
            error.map(|e| e.field),
            Some("spec.strategy.rollingUpdate.progressDeadlineSeconds".to_owned())
        );
        let bad = Safety {
            max_failures: Some(IntOrPercent::Int(-1)),
            ..Safety::default()
        };
        assert!(bad.validate("x").is_err());
    }
}

//! Kubernetes-style status conditions, as KubeFleet's objects carry them.

use chrono::{DateTime, Utc};
use compact_str::CompactString;
use serde::{Deserialize, Serialize};

/// `True`, `False` or `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// It does not.
    False,
    /// Not known yet.
    Unknown,
}

impl ConditionStatus {
    /// The text Kubernetes writes.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

/// One condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    /// Condition type, e.g. `ClusterResourcePlacementScheduled` (inline up to 24 bytes: a
    /// staged run holds two conditions for each of a million clusters).
    pub condition_type: CompactString,
    /// Status.
    pub status: ConditionStatus,
    /// Machine-readable reason (inline up to 24 bytes).
    pub reason: CompactString,
    /// Human-readable message.
    pub message: String,
    /// The generation of the object it was computed for.
    pub observed_generation: u64,
    /// When `status` last changed.
    #[serde(with = "crate::time_text")]
    pub last_transition_time: DateTime<Utc>,
}

impl Condition {
    /// A new condition as of `now`.
    #[must_use]
    pub fn new(
        condition_type: &str,
        status: ConditionStatus,
        reason: &str,
        message: String,
        observed_generation: u64,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            condition_type: condition_type.into(),
            status,
            reason: reason.into(),
            message,
            observed_generation,
            last_transition_time: now,
        }
    }

    /// Replaces `slot` with `next`, keeping the old transition time when the status did not
    /// change (Kubernetes' `meta.SetStatusCondition`). Returns whether anything changed.
    pub fn set(slot: &mut Option<Condition>, mut next: Condition) -> bool {
        if let Some(old) = slot.as_ref() {
            if old.status == next.status {
                next.last_transition_time = old.last_transition_time;
            }
            if *old == next {
                return false;
            }
        }
        *slot = Some(next);
        true
    }
}

//! The words of an eviction's status: KubeFleet's condition types, reasons and messages
//! (`pkg/utils/condition`), verbatim, so that tooling written for KubeFleet reads flotilla's.

use chrono::{DateTime, Utc};

use super::budget::BudgetCount;
use crate::condition::{Condition, ConditionStatus};

/// Condition type: whether the eviction targets a placement it can act on.
pub const CONDITION_VALID: &str = "Valid";
/// Condition type: whether the eviction removed the placement from the cluster.
pub const CONDITION_EXECUTED: &str = "Executed";

/// Reason of `Valid=True`.
pub const REASON_VALID: &str = "ClusterResourcePlacementEvictionValid";
/// Reason of `Valid=False`.
pub const REASON_INVALID: &str = "ClusterResourcePlacementEvictionInvalid";
/// Reason of `Executed=True`.
pub const REASON_EXECUTED: &str = "ClusterResourcePlacementEvictionExecuted";
/// Reason of `Executed=False`.
pub const REASON_NOT_EXECUTED: &str = "ClusterResourcePlacementEvictionNotExecuted";

/// Invalid: the placement does not exist.
pub const MESSAGE_MISSING_PLACEMENT: &str =
    "Failed to find ClusterResourcePlacement targeted by eviction";
/// Invalid: the placement is PickFixed.
pub const MESSAGE_PICK_FIXED: &str =
    "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction";
/// Invalid: the placement has no binding for the cluster.
pub const MESSAGE_MISSING_BINDING: &str =
    "Failed to find scheduler decision for placement in cluster targeted by eviction";
/// Valid.
pub const MESSAGE_VALID: &str = "Eviction is valid";
/// Executed without a budget check: there is no budget.
pub const MESSAGE_NO_BUDGET: &str =
    "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified";
/// Executed without a budget check: the placement failed on the cluster.
pub const MESSAGE_PLACEMENT_FAILED: &str = "Eviction is allowed, placement has failed";
/// Not executed: the budget's kind does not fit a PickAll placement.
pub const MESSAGE_MISCONFIGURED_BUDGET: &str = "Eviction is blocked by misconfigured \
    ClusterResourcePlacementDisruptionBudget, either MaxUnavailable is specified or MinAvailable \
    is specified as a percentage for PickAll ClusterResourcePlacement";
/// Not executed: nothing has been placed on the cluster yet.
pub const MESSAGE_NOT_PROPAGATED: &str =
    "Eviction is blocked, placement has not propagated resources to target cluster yet";

/// Executed: the budget allowed it.
#[must_use]
pub fn message_allowed(count: BudgetCount) -> String {
    budget_message("allowed", count)
}

/// Not executed: the budget blocked it.
#[must_use]
pub fn message_blocked(count: BudgetCount) -> String {
    budget_message("blocked", count)
}

/// KubeFleet's message for what a `ClusterResourcePlacementDisruptionBudget` decided.
fn budget_message(verdict: &str, count: BudgetCount) -> String {
    format!(
        "Eviction is {verdict} by specified ClusterResourcePlacementDisruptionBudget, \
         availablePlacements: {}, totalPlacements: {}",
        count.available, count.total
    )
}

/// The terminal verdict of one reconciliation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The eviction targets nothing it can act on.
    Invalid(&'static str),
    /// Valid, but the binding stays.
    NotExecuted(String),
    /// Valid, and the binding is removed.
    Executed(String),
}

impl Verdict {
    /// The conditions KubeFleet sets for this verdict, in the order it sets them.
    #[must_use]
    pub fn conditions(&self, generation: u64, now: DateTime<Utc>) -> Vec<Condition> {
        let condition = |kind, status, reason, message: &str| {
            Condition::new(kind, status, reason, message.to_owned(), generation, now)
        };
        let valid = condition(
            CONDITION_VALID,
            ConditionStatus::True,
            REASON_VALID,
            MESSAGE_VALID,
        );
        match self {
            Verdict::Invalid(message) => vec![condition(
                CONDITION_VALID,
                ConditionStatus::False,
                REASON_INVALID,
                message,
            )],
            Verdict::NotExecuted(message) => vec![
                valid,
                condition(
                    CONDITION_EXECUTED,
                    ConditionStatus::False,
                    REASON_NOT_EXECUTED,
                    message,
                ),
            ],
            Verdict::Executed(message) => vec![
                valid,
                condition(
                    CONDITION_EXECUTED,
                    ConditionStatus::True,
                    REASON_EXECUTED,
                    message,
                ),
            ],
        }
    }

    /// The message of the deciding condition.
    #[must_use]
    pub fn message(&self) -> &str {
        match self {
            Verdict::Invalid(message) => message,
            Verdict::NotExecuted(message) | Verdict::Executed(message) => message,
        }
    }
}

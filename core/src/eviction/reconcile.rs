//! The one reconciliation of an eviction (KubeFleet's eviction controller): validity checks in
//! order, then the execution rules, first match wins.
//!
//! Validity: the placement exists; it is not PickFixed; it has a binding for the cluster.
//! KubeFleet's other two checks cannot fail here: flotilla deletes a placement at once (no
//! "being deleted" phase), and a placement holds at most one binding per cluster.
//!
//! Execution:
//! 1. nothing was placed yet — the binding is not Bound, nor Unscheduled after being Bound:
//!    not executed;
//! 2. the work failed to apply at the binding's current work: executed, budget not checked;
//! 3. no budget named like the placement: executed;
//! 4. a PickAll placement with `maxUnavailable`, or with `minAvailable` as a percentage: not
//!    executed (misconfigured);
//! 5. otherwise the budget arithmetic decides (see [`super::budget`]).
//!
//! KubeFleet's first execution rule (the binding is already being deleted) cannot match either:
//! flotilla removes a binding in the step that decides to.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::DisruptionBudget;
use super::budget::{self, BudgetCount};
use super::model::{DisruptionBudgetSpec, EvictionSpec};
use super::status::{self, Verdict};
use crate::model::placement::PlacementType;
use crate::model::{CLUSTER_RESOURCE_PLACEMENT, IntOrPercent, ObjectKey, PLACEMENT_GROUP};
use crate::placement::{Binding, Placement};
use crate::rollout::readiness::{self, ApplyMode, Readiness};

/// Decides an eviction's verdict from the placements and budgets as they are now.
#[must_use]
pub fn judge(
    placements: &BTreeMap<ObjectKey, Placement>,
    budgets: &BTreeMap<String, DisruptionBudget>,
    spec: &EvictionSpec,
    now: DateTime<Utc>,
) -> Verdict {
    let key = placement_key(spec);
    let Some(placement) = placements.get(&key) else {
        return Verdict::Invalid(status::MESSAGE_MISSING_PLACEMENT);
    };
    if placement.placement_type() == PlacementType::PickFixed {
        return Verdict::Invalid(status::MESSAGE_PICK_FIXED);
    }
    let Some(binding) = placement.bindings.get(spec.cluster_name.as_str()) else {
        return Verdict::Invalid(status::MESSAGE_MISSING_BINDING);
    };
    if !binding.is_placed() {
        return Verdict::NotExecuted(status::MESSAGE_NOT_PROPAGATED.to_owned());
    }
    if has_failed(placement, &binding, now) {
        return Verdict::Executed(status::MESSAGE_PLACEMENT_FAILED.to_owned());
    }
    let Some(budget) = budgets.get(&spec.placement_name) else {
        return Verdict::Executed(status::MESSAGE_NO_BUDGET.to_owned());
    };
    judge_by_budget(placement, budget.spec)
}

/// Rules 4 and 5: the budget decides.
fn judge_by_budget(placement: &Placement, budget: DisruptionBudgetSpec) -> Verdict {
    let misconfigured = match budget {
        DisruptionBudgetSpec::MaxUnavailable(_) => true,
        DisruptionBudgetSpec::MinAvailable(amount) => matches!(amount, IntOrPercent::Percent(_)),
    };
    if placement.placement_type() == PlacementType::PickAll && misconfigured {
        return Verdict::NotExecuted(status::MESSAGE_MISCONFIGURED_BUDGET.to_owned());
    }
    let count = BudgetCount::of(placement);
    if budget::disruptions_allowed(budget, budget::desired(placement), count) > 0 {
        Verdict::Executed(status::message_allowed(count))
    } else {
        Verdict::NotExecuted(status::message_blocked(count))
    }
}

/// KubeFleet's `HasBindingFailed || IsBindingDiffReported`, as the rollout judges them: the
/// member reported the current work failed to apply, or the work is only diff-reported
/// (`ReportDiff`: nothing was placed to keep available). Not-yet-available is progress, not
/// failure.
fn has_failed(placement: &Placement, binding: &Binding, now: DateTime<Utc>) -> bool {
    if ApplyMode::of(placement) == ApplyMode::ReportDiff && binding.resource_index.is_some() {
        return true;
    }
    readiness::of_binding(placement, binding, now) == Readiness::Failed
}

/// The key of the placement an eviction targets (always a `ClusterResourcePlacement`).
#[must_use]
pub fn placement_key(spec: &EvictionSpec) -> ObjectKey {
    ObjectKey::cluster_scoped(
        PLACEMENT_GROUP,
        CLUSTER_RESOURCE_PLACEMENT,
        &spec.placement_name,
    )
}

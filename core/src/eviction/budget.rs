//! The disruption budget arithmetic (KubeFleet's `isEvictionAllowed`), in integers.
//!
//! - available: the placement's bindings, in any state, whose work is applied and available at
//!   the binding's current work (KubeFleet: `Available=True` at the binding's generation);
//! - total: all of the placement's bindings;
//! - desired: `numberOfClusters` for PickN, 0 otherwise (a PickAll placement has no fixed
//!   count, and a PickFixed one is never evicted from);
//! - `maxUnavailable`: allowed = ceil(maxUnavailable of desired) − (total − available);
//! - `minAvailable`: allowed = available − ceil(minAvailable of desired) (an integer as is);
//! - a negative result is 0, and an eviction is allowed only when allowed > 0.
//!
//! So an involuntary disruption — a cluster whose work is not available — is never blocked by a
//! budget, but it counts against it.

use super::model::DisruptionBudgetSpec;
use crate::model::Rounding;
use crate::model::placement::PlacementType;
use crate::placement::{Binding, Placement};

/// What the arithmetic counted, as the eviction's message reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetCount {
    /// Bindings whose work is available at their current work.
    pub available: u64,
    /// All bindings of the placement.
    pub total: u64,
}

impl BudgetCount {
    /// Counts a placement's bindings.
    #[must_use]
    pub fn of(placement: &Placement) -> Self {
        let available = placement.bindings.values().filter(is_available).count();
        Self {
            available: available as u64,
            total: placement.bindings.len() as u64,
        }
    }
}

/// Whether a binding's cluster reported its current work applied and available.
#[must_use]
pub fn is_available(binding: &Binding) -> bool {
    binding.report.as_ref().is_some_and(|report| {
        Some(report.resource_index) == binding.resource_index
            && report.applied == Some(true)
            && report.available == Some(true)
    })
}

/// The placement count a percentage is taken of: `numberOfClusters` for PickN, else 0.
#[must_use]
pub fn desired(placement: &Placement) -> u64 {
    let policy = placement.policy();
    match policy.placement_type {
        PlacementType::PickN => policy
            .number_of_clusters
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0),
        PlacementType::PickAll | PlacementType::PickFixed => 0,
    }
}

/// How many more voluntary disruptions the budget allows (never negative).
#[must_use]
pub fn disruptions_allowed(budget: DisruptionBudgetSpec, desired: u64, count: BudgetCount) -> i64 {
    let available = i64::try_from(count.available).unwrap_or(i64::MAX);
    let total = i64::try_from(count.total).unwrap_or(i64::MAX);
    let allowed = match budget {
        DisruptionBudgetSpec::MaxUnavailable(amount) => {
            let unavailable = total.saturating_sub(available);
            amount
                .resolve(desired, Rounding::Up)
                .saturating_sub(unavailable)
        }
        DisruptionBudgetSpec::MinAvailable(amount) => {
            available.saturating_sub(amount.resolve(desired, Rounding::Up))
        }
    };
    allowed.max(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntOrPercent;

    fn count(available: u64, total: u64) -> BudgetCount {
        BudgetCount { available, total }
    }

    #[test]
    fn max_unavailable_subtracts_what_is_already_unavailable() {
        let budget = DisruptionBudgetSpec::MaxUnavailable(IntOrPercent::Int(1));
        assert_eq!(disruptions_allowed(budget, 3, count(3, 3)), 1);
        assert_eq!(disruptions_allowed(budget, 3, count(2, 3)), 0);
        assert_eq!(
            disruptions_allowed(budget, 3, count(1, 3)),
            0,
            "never negative"
        );
    }

    #[test]
    fn percentages_round_up_against_the_desired_count() {
        // 25% of 3 is 0.75, rounded up to 1.
        let max = DisruptionBudgetSpec::MaxUnavailable(IntOrPercent::Percent(25));
        assert_eq!(disruptions_allowed(max, 3, count(3, 3)), 1);
        // 50% of 3 is 1.5, rounded up to 2: with 3 available one may go.
        let min = DisruptionBudgetSpec::MinAvailable(IntOrPercent::Percent(50));
        assert_eq!(disruptions_allowed(min, 3, count(3, 3)), 1);
        assert_eq!(disruptions_allowed(min, 3, count(2, 3)), 0);
    }

    #[test]
    fn min_available_compares_with_the_available_count() {
        let budget = DisruptionBudgetSpec::MinAvailable(IntOrPercent::Int(2));
        assert_eq!(disruptions_allowed(budget, 0, count(4, 4)), 2);
        assert_eq!(disruptions_allowed(budget, 0, count(2, 4)), 0);
    }
}

//! A `RollingUpdate` placement's budget at a point, computed as the rollout pass computes it
//! (KubeFleet's `determineBindingsToUpdate`): the target, `maxUnavailable` and `maxSurge`
//! resolved against it, and which bindings are ready, out of date, failed or not bound.

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use flotilla_core::model::placement::StrategyType;
use flotilla_core::query::overrides::applicable_overrides;
use flotilla_core::query::placement::{Binding, BindingState, Placement};
use flotilla_core::query::rollout::readiness::{ApplyMode, Readiness, of_binding as readiness};
use flotilla_core::query::rollout::{budgets, target};
use serde::Serialize;

use super::{Wait, WaitReason, clusters};

/// Most cluster names a sentence lists; the JSON lists them all.
pub const NAMES_SHOWN_MAX: usize = 20;

/// The rollout's budget as computed over a placement's bindings at one point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// The resource snapshot index the rollout moves clusters to.
    pub latest_resource_index: u64,
    /// How many clusters the placement should end up on.
    pub target: u64,
    /// `maxUnavailable` resolved against the target (rounded up, at least 1).
    pub max_unavailable: i64,
    /// `maxSurge` resolved against the target (rounded up).
    pub max_surge: i64,
    /// Bound or unscheduled bindings whose cluster is ready (applied and available).
    pub ready: u64,
    /// Bound or unscheduled bindings that have not failed: what can become ready.
    pub can_be_ready: u64,
    /// `target - ready` (at least 0): what counts against `maxUnavailable`.
    pub unavailable: u64,
    /// Bound clusters not ready, sorted.
    pub unavailable_clusters: Vec<String>,
    /// Bound clusters not on the latest resource index (or its overrides), sorted.
    pub out_of_date: Vec<String>,
    /// Scheduled clusters the rollout has not bound yet, sorted.
    pub not_bound: Vec<String>,
    /// Bound clusters whose apply failed, sorted.
    pub failed: Vec<String>,
}

impl Budget {
    /// The budget of a `RollingUpdate` placement with a resource snapshot; `None` otherwise.
    #[must_use]
    pub fn of(state: &State, key: &ObjectKey) -> Option<Budget> {
        let placement = state.placements().get(key)?;
        if placement.spec.strategy.strategy_type != StrategyType::RollingUpdate {
            return None;
        }
        let latest = placement.latest_resources()?.index;
        let now = state.now().unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
        let target = target(placement);
        let (max_unavailable, max_surge) = budgets(placement, target);
        let mut budget = Budget {
            latest_resource_index: latest,
            target,
            max_unavailable,
            max_surge,
            ready: 0,
            can_be_ready: 0,
            unavailable: 0,
            unavailable_clusters: Vec::new(),
            out_of_date: Vec::new(),
            not_bound: Vec::new(),
            failed: Vec::new(),
        };
        for binding in placement.bindings.values() {
            budget.count(state, key, placement, &binding, now);
        }
        budget.unavailable = budget.target.saturating_sub(budget.ready);
        Some(budget)
    }

    fn count(
        &mut self,
        state: &State,
        key: &ObjectKey,
        placement: &Placement,
        binding: &Binding,
        now: DateTime<Utc>,
    ) {
        let readiness = readiness(placement, binding, now);
        let cluster = binding.cluster.to_string();
        if binding.state != BindingState::Scheduled {
            let reports_diff = ApplyMode::of(placement) == ApplyMode::ReportDiff
                && binding.resource_index.is_some();
            self.ready += u64::from(readiness == Readiness::Ready);
            self.can_be_ready += u64::from(readiness != Readiness::Failed && !reports_diff);
        }
        match binding.state {
            BindingState::Scheduled => self.not_bound.push(cluster),
            BindingState::Unscheduled => {}
            BindingState::Bound => {
                if readiness == Readiness::Failed {
                    self.failed.push(cluster.clone());
                }
                if readiness != Readiness::Ready {
                    self.unavailable_clusters.push(cluster.clone());
                }
                if is_out_of_date(state, key, placement, binding, self.latest_resource_index) {
                    self.out_of_date.push(cluster);
                }
            }
        }
    }

    /// Whether out-of-date clusters wait because the unavailable ones use up `maxUnavailable`.
    #[must_use]
    pub fn updates_blocked(&self) -> bool {
        let room = signed(self.ready) - (signed(self.target) - self.max_unavailable);
        room <= 0 && self.out_of_date.iter().any(|c| !self.failed.contains(c))
    }

    /// Whether scheduled clusters wait because `maxSurge` is used up.
    #[must_use]
    pub fn binds_blocked(&self) -> bool {
        signed(self.target) + self.max_surge - signed(self.can_be_ready) <= 0
            && !self.not_bound.is_empty()
    }

    /// `target 3, maxUnavailable 1, maxSurge 1: 1 of 3 unavailable (cluster-2)`.
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = format!(
            "target {}, maxUnavailable {}, maxSurge {}: {} of {} unavailable",
            self.target, self.max_unavailable, self.max_surge, self.unavailable, self.target
        );
        if !self.unavailable_clusters.is_empty() {
            text.push_str(&format!(" ({})", names(&self.unavailable_clusters)));
        }
        text
    }

    /// Why the rollout waits, as far as the budget tells.
    #[must_use]
    pub fn waits(&self) -> Vec<Wait> {
        let mut waits = Vec::new();
        if self.updates_blocked() {
            let waited = if self.unavailable_clusters.is_empty() {
                &self.not_bound
            } else {
                &self.unavailable_clusters
            };
            let text = format!(
                "{} of {} unavailable, maxUnavailable {}: waiting for {}",
                self.unavailable,
                clusters(usize::try_from(self.target).unwrap_or(usize::MAX)),
                self.max_unavailable,
                names(waited)
            );
            waits.push(Wait::new(WaitReason::Unavailable, text).with_clusters(waited.clone()));
        } else if !self.unavailable_clusters.is_empty() {
            let text = format!(
                "{} of {} not available yet: waiting for {}",
                self.unavailable_clusters.len(),
                clusters(usize::try_from(self.target).unwrap_or(usize::MAX)),
                names(&self.unavailable_clusters)
            );
            let wait = Wait::new(WaitReason::NotAvailable, text);
            waits.push(wait.with_clusters(self.unavailable_clusters.clone()));
        }
        if !self.out_of_date.is_empty() {
            let text = format!(
                "{} not yet at resource index {}: {}",
                clusters(self.out_of_date.len()),
                self.latest_resource_index,
                names(&self.out_of_date)
            );
            let wait = Wait::new(WaitReason::OutOfDate, text);
            waits.push(wait.with_clusters(self.out_of_date.clone()));
        }
        if self.binds_blocked() {
            let text = format!(
                "{} scheduled but not bound, maxSurge {}: {}",
                clusters(self.not_bound.len()),
                self.max_surge,
                names(&self.not_bound)
            );
            waits.push(Wait::new(WaitReason::Surge, text).with_clusters(self.not_bound.clone()));
        }
        waits
    }
}

/// Out of date: another resource index, or other overrides than apply to its cluster now.
fn is_out_of_date(
    state: &State,
    key: &ObjectKey,
    placement: &Placement,
    binding: &Binding,
    latest: u64,
) -> bool {
    if binding.resource_index != Some(latest) {
        return true;
    }
    if state.overrides().is_empty() {
        return binding.override_snapshots != Default::default();
    }
    let Some(resources) = placement.latest_resources() else {
        return false;
    };
    binding.override_snapshots
        != applicable_overrides(state, key, &resources.resources, &binding.cluster)
}

/// At most [`NAMES_SHOWN_MAX`] names, then how many more.
pub(crate) fn names(all: &[String]) -> String {
    if all.len() <= NAMES_SHOWN_MAX {
        return all.join(", ");
    }
    format!(
        "{} and {} more",
        all[..NAMES_SHOWN_MAX].join(", "),
        all.len() - NAMES_SHOWN_MAX
    )
}

fn signed(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

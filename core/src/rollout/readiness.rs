//! Whether a binding's cluster has its work applied and available (KubeFleet's
//! `isBindingReady` / `HasBindingFailed`, fed by the members' work reports).
//!
//! Under a `ReportDiff` apply strategy nothing is applied: a cluster is ready once its member
//! reported the diff of every manifest (KubeFleet: `DiffReported` True at the binding's
//! generation makes a binding ready), and never failed.

use chrono::{DateTime, Duration, Utc};

use crate::placement::{Binding, Placement};
use crate::work_status::WorkStatus;

/// How members treat a placement's work (`applyStrategy.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyMode {
    /// `ClientSideApply` or `ServerSideApply`: applied, then judged available.
    Apply,
    /// `ReportDiff`: only compared with the objects on the member, never applied.
    ReportDiff,
}

impl ApplyMode {
    /// The mode of this placement's apply strategy.
    #[must_use]
    pub fn of(placement: &Placement) -> Self {
        if placement.spec.strategy.apply_strategy.reports_diff() {
            ApplyMode::ReportDiff
        } else {
            ApplyMode::Apply
        }
    }
}

/// A binding's readiness for the rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Applied and available at the binding's resource index.
    Ready,
    /// Applied and available but not trackable: ready at this event time.
    ReadyAt(DateTime<Utc>),
    /// The apply failed at the binding's resource index.
    Failed,
    /// Anything else (no report yet, not available, an older index).
    NotReady,
}

/// Judges one binding from its cluster's latest report on the placement.
#[must_use]
pub fn judge(
    binding: &Binding,
    report: Option<&WorkStatus>,
    mode: ApplyMode,
    unavailable_period: Duration,
    now: DateTime<Utc>,
) -> Readiness {
    // KubeFleet's `HasBindingFailed`: `Overridden` False fails the binding whatever its
    // member reported about the work it keeps.
    if binding
        .override_failure
        .as_ref()
        .is_some_and(|f| f.failed())
    {
        return Readiness::Failed;
    }
    let Some(report) = report else {
        return Readiness::NotReady;
    };
    if Some(report.resource_index) != binding.resource_index {
        return Readiness::NotReady;
    }
    if mode == ApplyMode::ReportDiff {
        return if report.diff_reported == Some(true) {
            Readiness::Ready
        } else {
            Readiness::NotReady
        };
    }
    match (report.applied, report.available) {
        (Some(false), _) => Readiness::Failed,
        (Some(true), Some(true)) if report.trackable => Readiness::Ready,
        (Some(true), Some(true)) => {
            let at = report.available_since + unavailable_period;
            if at <= now {
                Readiness::Ready
            } else {
                Readiness::ReadyAt(at)
            }
        }
        _ => Readiness::NotReady,
    }
}

/// Judges one binding of `placement` from its latest report, with the placement's apply mode
/// and `rollingUpdate.unavailablePeriodSeconds`.
#[must_use]
pub fn of_binding(placement: &Placement, binding: &Binding, now: DateTime<Utc>) -> Readiness {
    let period = Duration::seconds(
        placement
            .spec
            .strategy
            .rolling_update
            .unavailable_period_seconds,
    );
    judge(
        binding,
        binding.report.as_ref(),
        ApplyMode::of(placement),
        period,
        now,
    )
}

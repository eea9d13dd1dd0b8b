//! Whether a binding's cluster has its work applied and available (KubeFleet's
//! `isBindingReady` / `HasBindingFailed`, fed by the members' work reports).

use chrono::{DateTime, Duration, Utc};

use crate::placement::Binding;
use crate::state::WorkStatus;

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
    unavailable_period: Duration,
    now: DateTime<Utc>,
) -> Readiness {
    let Some(report) = report else {
        return Readiness::NotReady;
    };
    if Some(report.resource_index) != binding.resource_index {
        return Readiness::NotReady;
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

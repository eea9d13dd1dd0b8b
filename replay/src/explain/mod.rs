//! Why a rollout is where it is: [`explain_cluster`] tells why one cluster carries the resource
//! index it carries (or none) — the scheduling decision and its scores, the rollout steps that
//! moved its binding with the budget after each, the staged run gates that held it, what it
//! reported — and [`explain_placement`] why a placement's rollout waits at a point.
//!
//! Contract:
//! - Everything is read at a point of the log ([`crate::seek`]): the state folded there, and the
//!   recorded decisions up to it. Nothing reads a clock: "now" is the state's event time.
//! - The decisions do not record budgets or scores; they are recomputed from the state folded
//!   just after the input that made the step, with the core's own functions
//!   ([`flotilla_core::query::rollout::budgets`], [`flotilla_core::query::rollout::readiness::judge`]), and
//!   scores are read from the bindings' and policy snapshots' cluster decisions. A budget is
//!   therefore the one in force *after* the step: what the step left for the next one.
//! - Budgets apply to `RollingUpdate` placements only; staged (`External`) placements are
//!   explained by their runs' stages and gates, `Partitioned` ones by their plan's message.
//! - Results serialize to JSON (camelCase, times in RFC 3339) and render as text; both are
//!   deterministic (log order, cluster names sorted).

mod budget;
mod cluster;
mod facts;
mod gates;
mod placement;

pub use budget::{Budget, NAMES_SHOWN_MAX};
pub use cluster::{
    ClusterExplanation, HISTORY_STEPS_MAX, HistoryStep, Scheduling, ScoredCluster, explain_cluster,
};
pub use facts::{BindingNow, MemberNow, ReportNow};
pub use gates::{DEFAULT_MIN_SOAK_SECONDS, Gate, RunCluster};
pub use placement::{
    ClusterLine, ConditionLine, PlacementExplanation, explain_placement, explain_state,
    waits_in_state,
};

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Why a rollout waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum WaitReason {
    /// The placement does not exist at the point.
    NoPlacement,
    /// No resource snapshot yet: nothing to roll out.
    NoResources,
    /// The scheduling policy is not fulfilled.
    Unscheduled,
    /// Out-of-date clusters wait: as many clusters are unavailable as `maxUnavailable` allows.
    Unavailable,
    /// Nothing is held back, but clusters have not become available yet.
    NotAvailable,
    /// Clusters not updated to the latest resource index yet.
    OutOfDate,
    /// Scheduled clusters are not bound: `maxSurge` is used up.
    Surge,
    /// The member failed to apply the work.
    ApplyFailed,
    /// A waited-for cluster's agent stopped heartbeating.
    Unhealthy,
    /// A staged run waits for an approval.
    Approval,
    /// A staged run waits for a `TimedWait` to elapse.
    TimedWait,
    /// A staged run waits for an Analysis task's measurements (`docs/rollout-safety.md`).
    Analysis,
    /// A staged run waits for clusters of a stage to finish updating.
    RunClusters,
    /// A staged run is initialized but not started, or stopped.
    RunNotRunning,
    /// A staged run is stuck (a cluster updating for too long).
    RunStuck,
    /// An `External` placement has no unfinished run.
    NoRun,
    /// A staged run failed: the clusters whose failure failed it, and why.
    RunFailed,
    /// A `Partitioned` placement's rollout is paused.
    Partitioned,
    /// A safety rule (`progressDeadlineSeconds`, `maxFailures`) halted the rollout,
    /// or rolled it back.
    Halted,
}

/// One reason a rollout waits, in words and in fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Wait {
    /// What kind of wait.
    pub reason: WaitReason,
    /// The sentence.
    pub text: String,
    /// The clusters it waits for, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<String>,
    /// Since when, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<DateTime<Utc>>,
}

impl Wait {
    fn new(reason: WaitReason, text: String) -> Self {
        Self {
            reason,
            text,
            clusters: Vec::new(),
            since: None,
        }
    }

    fn with_clusters(mut self, clusters: Vec<String>) -> Self {
        self.clusters = clusters;
        self
    }

    fn since(mut self, since: Option<DateTime<Utc>>) -> Self {
        self.since = since;
        self
    }
}

/// A time as the texts show it: the time of day (`23:21:39`) when it falls on the point's day
/// (UTC), else the whole RFC 3339 time.
pub(crate) fn clock(time: DateTime<Utc>, now: Option<DateTime<Utc>>) -> String {
    if now.is_some_and(|now| now.date_naive() == time.date_naive()) {
        time.format("%H:%M:%S").to_string()
    } else {
        time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
    }
}

/// `1 cluster` / `3 clusters`.
pub(crate) fn clusters(count: usize) -> String {
    if count == 1 {
        "1 cluster".to_owned()
    } else {
        format!("{count} clusters")
    }
}

/// The header of an explanation: `#seq (time)`.
pub(crate) fn point_text(seq: u64, time: Option<DateTime<Utc>>) -> String {
    match time {
        Some(time) => format!(
            "#{seq} ({})",
            time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
        ),
        None => format!("#{seq}"),
    }
}

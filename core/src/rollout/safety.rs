//! The guard of a rolling update with safety fields (docs/rollout-safety.md): it watches one
//! rollout — the move of a placement's clusters to its latest resource snapshot — and trips it
//! when no cluster becomes ready on the new work for `progressDeadlineSeconds`, or when more
//! clusters fail than `maxFailures` tolerates. A tripped rollout never moves another cluster to
//! that snapshot: it halts, or rolls back (see [`super::rollback`]).
//!
//! Choices the fields leave open, kept here so a reader finds them with the code:
//! - The rollout starts at the first pass that sees the snapshot (or the changed safety
//!   fields); the deadline counts from then, and again from each cluster becoming ready.
//! - It is *complete* once every scheduled or bound cluster is ready on the new work; from then
//!   on nothing is judged (a cluster failing a week later is an incident, not a rollout
//!   failure), until a newer snapshot or changed fields start another rollout.
//! - `maxFailures` as a percent counts the placement's target (the rollout's target number of
//!   clusters), rounded down.
//! - The message of a deadline names the clusters given the new work that are not ready on it;
//!   when none was given it yet, the clusters still waiting for it.
//! - A halted rollout still removes unscheduled bindings (within `maxUnavailable`): that moves
//!   no cluster to the failed snapshot. Newly scheduled clusters wait for the next rollout.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::ObjectKey;
use crate::model::safety::Safety;
pub use crate::placement::guard::{
    FailureTally, Guard, Phase, REASON_FAILURE_THRESHOLD_EXCEEDED,
    REASON_PROGRESS_DEADLINE_EXCEEDED, REASON_ROLLBACK_FAILED, REASON_ROLLED_BACK, Trip, Tripped,
};
use crate::placement::{Binding, Placement};

use super::readiness::{self, ApplyMode, Readiness};

/// How one pass judges bindings.
#[derive(Clone, Copy)]
pub(crate) struct Judging<'a> {
    /// The placement's apply mode.
    pub mode: ApplyMode,
    /// `unavailablePeriodSeconds` (zero for a partitioned rollout).
    pub period: Duration,
    /// The field path of the block, for messages.
    pub path: &'static str,
    /// Whether failures are counted (some `maxFailures` or `onFailure` is set).
    pub counts_failures: bool,
    /// How many failures the block tolerates (shown in decisions).
    pub tolerated: i64,
    /// The failure threshold: the trip message when these failed clusters are too many.
    pub threshold: &'a dyn Fn(Failures<'_>) -> Option<String>,
    /// Whether the threshold changes only with the failed set while every binding is not
    /// judged again (a partitioned plan's partitions): then a pass that added no failure does
    /// not ask it again.
    pub threshold_follows_failures: bool,
}

impl Judging<'_> {
    /// How a binding's work stands at `now`, judged as this pass judges.
    pub(crate) fn readiness(&self, binding: &Binding, now: DateTime<Utc>) -> Readiness {
        readiness::judge(
            binding,
            binding.report.as_ref(),
            self.mode,
            self.period,
            now,
        )
    }
}

/// What a failure threshold is asked about.
pub(crate) struct Failures<'a> {
    /// Every cluster counted as failed, in cluster order.
    pub all: &'a BTreeSet<String>,
    /// The clusters this pass counted as failed.
    pub added: &'a [&'a str],
    /// Counts the threshold keeps between passes (forgotten when a pass judges every binding).
    pub tally: &'a mut FailureTally,
}

/// The threshold of a block that governs `target` clusters: more failures than its
/// `maxFailures` allows trips it.
pub(crate) fn block_threshold(
    safety: Safety,
    target: u64,
    path: &'static str,
) -> impl Fn(Failures<'_>) -> Option<String> {
    move |failures: Failures<'_>| {
        let failed = failures.all.iter().map(String::as_str);
        over_block(safety, target, path, failures.all.len(), failed)
    }
}

/// The trip message of a block that governs `target` clusters when `count` failed clusters
/// (`failed`, named only when it trips) are more than its `maxFailures` tolerates.
pub(crate) fn over_block<'a>(
    safety: Safety,
    target: u64,
    path: &'static str,
    count: usize,
    failed: impl Iterator<Item = &'a str>,
) -> Option<String> {
    let tolerated = safety.failures_tolerated(target);
    let failures = i64::try_from(count).unwrap_or(i64::MAX);
    (failures > tolerated).then(|| {
        format!(
            "{failures} cluster(s) failed, more than {path}.maxFailures tolerates \
             ({tolerated}): {}",
            names(failed),
        )
    })
}

/// What the rollout's binding index tells the guard for one pass.
pub(crate) struct Seen {
    /// The clusters classified since the guard last looked, in cluster order (`None`: every
    /// cluster): only their bindings can have changed how the guard judges them.
    pub reclassified: Option<BTreeSet<ClusterName>>,
    /// Every scheduled or bound cluster is bound and ready on the latest snapshot (`None`:
    /// not known without a scan of the bindings).
    pub complete: Option<bool>,
}

impl Seen {
    /// What the guard is told for a pass that knows whether the rollout is complete, with the
    /// clusters a rollback looks at again: only those classified since its last pass (`None`:
    /// every one, or no rollback).
    pub(crate) fn for_pass(
        guard: Option<&Guard>,
        reclassified: Option<BTreeSet<ClusterName>>,
        complete: bool,
    ) -> (Self, Option<BTreeSet<ClusterName>>) {
        let rolling_back = guard.is_some_and(Guard::is_rolling_back);
        let touched = rolling_back.then(|| reclassified.clone()).flatten();
        let seen = Self {
            reclassified,
            complete: Some(complete),
        };
        (seen, touched)
    }
}

/// One look of the guard at a placement: which rollout, how bindings are judged, and when.
#[derive(Clone, Copy)]
pub(crate) struct Look<'a> {
    /// The placement.
    pub key: &'a ObjectKey,
    /// The rollout the guard watches.
    pub watched: Watched,
    /// How the pass judges bindings.
    pub judging: Judging<'a>,
    /// The step's time.
    pub now: DateTime<Utc>,
}

/// The rollout a guard watches: the resource snapshot it moves clusters to and the safety
/// fields it runs under (other fields start another rollout).
#[derive(Clone, Copy)]
pub(crate) struct Watched {
    /// The placement's latest resource snapshot.
    pub latest: u64,
    /// The safety fields of the block that governs the rollout.
    pub safety: Safety,
}

/// Starts, continues or drops the placement's guard for this pass, judges the bindings that
/// can have changed and trips it when a rule fires. Returns the decisions and when it next
/// needs a pass. Judging a binding again that has not changed records nothing new (the ready
/// and failed sets only grow), so a pass judges only the clusters classified since the last
/// one, and all of them when the guard starts: a pass costs what changed, not the placement's
/// size.
fn observe(
    placement: &mut Placement,
    look: Look<'_>,
    seen: Seen,
) -> (Vec<Decision>, Option<DateTime<Utc>>) {
    let Look {
        key,
        watched,
        judging,
        now,
    } = look;
    let Watched { latest, safety } = watched;
    if !safety.is_set() {
        placement.guard = None;
        return (Vec::new(), None);
    }
    let fresh = placement
        .guard
        .as_ref()
        .is_none_or(|g| g.resource_index != latest || g.safety != safety);
    if fresh {
        placement.guard = Some(Guard::start(latest, safety, now));
    }
    let Placement {
        bindings, guard, ..
    } = placement;
    let Some(guard) = guard.as_mut() else {
        return (Vec::new(), None);
    };
    if guard.phase != Phase::Progressing {
        return (Vec::new(), None);
    }
    let pass = super::guard_pass::GuardPass {
        key,
        latest,
        judging,
        now,
    };
    let failures_before = guard.failed.len();
    let judged_all = fresh || seen.reclassified.is_none();
    let decisions = pass.judge_bindings(guard, bindings, seen.reclassified.filter(|_| !fresh));
    let deadline = safety
        .progress_deadline_seconds
        .map(|secs| guard.last_progress + Duration::seconds(secs));
    let unchanged =
        judging.threshold_follows_failures && !judged_all && guard.failed.len() == failures_before;
    if judged_all {
        guard.tally = FailureTally::default();
    }
    let over = if judging.counts_failures && !unchanged {
        pass.over_threshold(guard, &decisions)
    } else {
        None
    };
    let tripped = if let Some(message) = over {
        Some((Trip::FailureThresholdExceeded, message))
    } else if seen
        .complete
        .unwrap_or_else(|| pass.every_cluster_ready(bindings))
    {
        guard.phase = Phase::Complete;
        None
    } else if let Some(deadline) = deadline.filter(|d| *d <= now) {
        let message = pass.deadline_message(guard, bindings, deadline);
        Some((Trip::ProgressDeadlineExceeded, message))
    } else {
        None
    };
    let Some((trip, message)) = tripped else {
        let next = deadline.filter(|_| guard.phase == Phase::Progressing);
        return (decisions, next);
    };
    let mut decisions = decisions;
    decisions.push(pass.trip(guard, safety.action(), trip, message));
    (decisions, None)
}

/// [`observe`], judging only what `seen` says changed; debug builds check that judging every
/// binding would have given the same decisions, deadline and guard.
pub(crate) fn observe_checked(
    placement: &mut Placement,
    look: Look<'_>,
    seen: Seen,
) -> (Vec<Decision>, Option<DateTime<Utc>>) {
    #[cfg(debug_assertions)]
    let judged_whole = look.watched.safety.is_set().then(|| {
        let mut whole = placement.clone();
        let every = Seen {
            reclassified: None,
            complete: None,
        };
        let answer = observe(&mut whole, look, every);
        (answer, whole.guard)
    });
    let answer = observe(placement, look, seen);
    #[cfg(debug_assertions)]
    if let Some(judged_whole) = judged_whole {
        assert_eq!(
            (answer.clone(), placement.guard.clone()),
            judged_whole,
            "the safety guard of {} judged only what changed, and differs",
            look.key.display()
        );
    }
    answer
}

/// Names as a comma-separated list.
pub(crate) fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

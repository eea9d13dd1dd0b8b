//! A placement's rollout guard, as the placement stores it: the data of one guarded rollout
//! (docs/rollout-safety.md) and the caches derived beside it. The rollout (`crate::rollout`)
//! starts, judges and trips it; the placement keeps it, and tells it what a cluster carried
//! before a pass rebinds it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::safety::{OnFailure, Safety};

use super::OverrideSnapshots;

/// Reason of a rollout stopped by its progress deadline.
pub const REASON_PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// Reason of a rollout stopped by its failure threshold.
pub const REASON_FAILURE_THRESHOLD_EXCEEDED: &str = "FailureThresholdExceeded";
/// Reason once every rolled-back cluster has its old work available.
pub const REASON_ROLLED_BACK: &str = "RolledBack";
/// Reason when the rollback itself failed.
pub const REASON_ROLLBACK_FAILED: &str = "RollbackFailed";

/// Which rule tripped a rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Trip {
    /// `progressDeadlineSeconds` passed without progress.
    ProgressDeadlineExceeded,
    /// More clusters failed than `maxFailures` tolerates.
    FailureThresholdExceeded,
}

impl Trip {
    /// The condition reason.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            Trip::ProgressDeadlineExceeded => REASON_PROGRESS_DEADLINE_EXCEEDED,
            Trip::FailureThresholdExceeded => REASON_FAILURE_THRESHOLD_EXCEEDED,
        }
    }
}

/// Where a guarded rollout stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Moving clusters to the new snapshot.
    Progressing,
    /// Every scheduled or bound cluster is ready on it.
    Complete,
    /// Tripped with `onFailure: Halt`.
    Halted,
    /// Tripped with `onFailure: Rollback`: moving clusters back.
    RollingBack {
        /// Rolled-back clusters reported ready on their old work.
        ready: BTreeSet<String>,
        /// When the rollback last made progress (its own deadline counts from here).
        last_progress: DateTime<Utc>,
    },
    /// Every rolled-back cluster has its old work available.
    RolledBack,
    /// The rollback failed; why.
    RollbackFailed(String),
}

/// The trip: rule, message and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tripped {
    /// The rule.
    pub trip: Trip,
    /// The condition message: the rule's field and the clusters it names.
    pub message: String,
    /// Event time it tripped.
    pub at: DateTime<Utc>,
}

/// One guarded rollout of a placement (stored on the placement).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guard {
    /// The resource snapshot the rollout moves clusters to.
    pub resource_index: u64,
    /// The safety fields it runs under; other fields start another rollout.
    pub safety: Safety,
    /// When it started.
    pub started: DateTime<Utc>,
    /// When a cluster last became ready on the new work (or the start).
    pub last_progress: DateTime<Utc>,
    /// Clusters reported ready on the new work.
    pub ready: BTreeSet<String>,
    /// Clusters counted as failed, in cluster order.
    pub failed: BTreeSet<String>,
    /// What each cluster the rollout updated carried before: the rollback's targets.
    pub prior: BTreeMap<String, (u64, OverrideSnapshots)>,
    /// Where it stands.
    pub phase: Phase,
    /// The trip, once tripped.
    pub tripped: Option<Tripped>,
    /// What a rollback still waits for: derived, never encoded.
    #[serde(skip)]
    pub watch: RollbackWatch,
    /// The failed clusters as the threshold counts them: derived, never encoded.
    #[serde(skip)]
    pub tally: FailureTally,
}

impl Guard {
    /// A rollout to `resource_index` starting now.
    #[must_use]
    pub fn start(resource_index: u64, safety: Safety, now: DateTime<Utc>) -> Self {
        Self {
            resource_index,
            safety,
            started: now,
            last_progress: now,
            ready: BTreeSet::new(),
            failed: BTreeSet::new(),
            prior: BTreeMap::new(),
            phase: Phase::Progressing,
            tripped: None,
            watch: Default::default(),
            tally: FailureTally::default(),
        }
    }

    /// Whether the rollout may move clusters to its snapshot (not tripped).
    #[must_use]
    pub fn allows_progress(&self) -> bool {
        self.tripped.is_none()
    }

    /// The condition reason and message the placement shows, once tripped.
    #[must_use]
    pub fn condition(&self) -> Option<(&'static str, String)> {
        let tripped = self.tripped.as_ref()?;
        Some(match &self.phase {
            Phase::RolledBack => (
                REASON_ROLLED_BACK,
                format!(
                    "Rolled back every cluster updated to resource snapshot {} after: {}",
                    self.resource_index, tripped.message
                ),
            ),
            Phase::RollbackFailed(why) => (
                REASON_ROLLBACK_FAILED,
                format!(
                    "The rollback failed: {why}; it was started after: {}",
                    tripped.message
                ),
            ),
            Phase::RollingBack { .. } => (
                tripped.trip.reason(),
                format!("{} (onFailure: Rollback; rolling back)", tripped.message),
            ),
            _ => (
                tripped.trip.reason(),
                format!("{} (onFailure: Halt)", tripped.message),
            ),
        })
    }

    /// Whether a rollback may still give clusters their prior work: it rolls back on failure,
    /// and has not finished, halted or finished rolling back.
    #[must_use]
    pub fn may_roll_back(&self) -> bool {
        self.safety.action() == OnFailure::Rollback
            && matches!(self.phase, Phase::Progressing | Phase::RollingBack { .. })
    }

    /// Whether it is moving clusters back.
    #[must_use]
    pub fn is_rolling_back(&self) -> bool {
        matches!(self.phase, Phase::RollingBack { .. })
    }

    /// Records what `cluster` carried before the rollout updated it (the first time only).
    pub(crate) fn remember_prior(&mut self, cluster: &str, prior: (u64, OverrideSnapshots)) {
        if prior.0 != self.resource_index && !self.prior.contains_key(cluster) {
            self.prior.insert(cluster.to_owned(), prior);
        }
    }
}

/// The failed clusters counted by bucket (a partitioned rollout's partitions with their own
/// `maxFailures`, then the rest), kept beside the guard so that a pass counts only the failures
/// it added: asking a threshold that scanned every failed cluster at each failure made a mass
/// failure quadratic. Derived, never encoded: unknown after a checkpoint's decoding or a pass
/// that judged every binding, then counted again over every failed cluster.
#[derive(Debug, Clone, Default)]
pub struct FailureTally(Option<(usize, Vec<u64>)>);

crate::derived::derived_cache!(FailureTally);

impl FailureTally {
    /// The counts by bucket (`width` of them): the kept ones with the added failures, while they
    /// cover every failure before these, else a count over all; `buckets` names where a failed
    /// cluster counts. Debug builds check the kept counts against a count over all.
    pub(crate) fn counts(
        &mut self,
        all: &BTreeSet<String>,
        added: &[&str],
        width: usize,
        buckets: impl Fn(&str) -> Vec<usize>,
    ) -> &[u64] {
        let count = |counts: &mut Vec<u64>, cluster: &str| {
            for bucket in buckets(cluster) {
                if let Some(n) = counts.get_mut(bucket) {
                    *n += 1;
                }
            }
        };
        let count_all = || {
            let mut counts = vec![0; width];
            all.iter().for_each(|cluster| count(&mut counts, cluster));
            counts
        };
        let kept = (self.0.take()).filter(|(counted, counts)| {
            counts.len() == width && counted + added.len() == all.len()
        });
        let counts = match kept {
            Some((_, mut counts)) => {
                added.iter().for_each(|cluster| count(&mut counts, cluster));
                debug_assert_eq!(counts, count_all(), "the failure tally drifted");
                counts
            }
            None => count_all(),
        };
        &self.0.insert((all.len(), counts)).1
    }
}

/// The rollback's sets, once known.
#[derive(Debug, Clone, Default)]
pub struct RollbackWatch(pub(crate) Option<Watch>);

crate::derived::derived_cache!(RollbackWatch);

/// The sets, in cluster order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watch {
    /// Rolled-back clusters still bound to the failed snapshot and ready on it: they move
    /// within the budget.
    pub(crate) to_move_ready: BTreeSet<String>,
    /// Rolled-back clusters still bound to the failed snapshot and not ready on it: they move
    /// at once.
    pub(crate) to_move_unready: BTreeSet<String>,
    /// Rolled-back clusters with a live binding that is not ready on their old work yet.
    pub(crate) pending: BTreeSet<String>,
}

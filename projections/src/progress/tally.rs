//! The placement's conditions after `…Scheduled`, summed up over the selected clusters'
//! conditions in the apply mode's order: per condition, the first of Unknown (any cluster
//! Unknown), False (any cluster False) or True (all) decides, counted in clusters; the first
//! that is not True ends the list. The sum is kept as counts and latest times per condition
//! and status, so clusters can be added one at a time (a placement over a fleet need not hold
//! every cluster's conditions at once) and tallies of parts of the fleet merged.

use chrono::{DateTime, Utc};
use flotilla_core::condition::ConditionStatus;
use flotilla_core::query::rollout::readiness::ApplyMode;
use serde_json::Value;

use super::stage_texts;
use super::{Step, condition_json};

/// How many clusters hold a condition in one status, and the latest time among them.
#[derive(Debug, Clone, Copy, Default)]
struct Count {
    clusters: usize,
    since: Option<DateTime<Utc>>,
}

impl Count {
    fn add(&mut self, since: DateTime<Utc>) {
        self.clusters += 1;
        self.since = self.since.max(Some(since));
    }

    fn merge(&mut self, other: Count) {
        self.clusters += other.clusters;
        self.since = self.since.max(other.since);
    }
}

/// The clusters' conditions, summed up per condition: Unknown, False, True.
#[derive(Debug, Clone)]
pub(crate) struct Tally {
    mode: ApplyMode,
    clusters: usize,
    /// Whether any cluster had overrides applied.
    overridden: bool,
    stages: Vec<[Count; 3]>,
}

impl Tally {
    /// No cluster yet.
    pub(crate) fn new(mode: ApplyMode) -> Self {
        Self {
            mode,
            clusters: 0,
            overridden: false,
            stages: vec![[Count::default(); 3]; stage_texts::stages(mode).len()],
        }
    }

    /// Adds one cluster's conditions; `overridden` when it had overrides applied.
    pub(crate) fn add(&mut self, chain: &[Step], overridden: bool) {
        self.clusters += 1;
        self.overridden |= overridden;
        for (&stage, counts) in stage_texts::stages(self.mode).iter().zip(&mut self.stages) {
            if let Some(step) = chain.iter().find(|step| step.stage == stage) {
                counts[slot(step.status)].add(step.since);
            }
        }
    }

    /// Adds another part of the fleet's tally.
    pub(crate) fn merge(&mut self, other: Tally) {
        self.clusters += other.clusters;
        self.overridden |= other.overridden;
        for (mine, theirs) in self.stages.iter_mut().zip(other.stages) {
            for (count, other) in mine.iter_mut().zip(theirs) {
                count.merge(other);
            }
        }
    }

    /// The placement's conditions (`prefix` is `ClusterResourcePlacement` or
    /// `ResourcePlacement`).
    pub(crate) fn conditions(&self, (prefix, generation): (&str, u64)) -> Vec<Value> {
        let mut conditions = Vec::new();
        if self.clusters == 0 {
            return conditions;
        }
        for (&stage, counts) in stage_texts::stages(self.mode).iter().zip(&self.stages) {
            let [unknown, failed, done] = *counts;
            let (status, (reason, message), since) = if let Some(since) = unknown.since {
                let texts = stage.placement_unknown(unknown.clusters);
                (ConditionStatus::Unknown, texts, since)
            } else if let Some(since) = failed.since {
                let texts = stage.placement_false(failed.clusters);
                (ConditionStatus::False, texts, since)
            } else if let Some(since) = done.since.filter(|_| done.clusters == self.clusters) {
                let texts = stage.placement_true(done.clusters, self.overridden);
                (ConditionStatus::True, texts, since)
            } else {
                break;
            };
            conditions.push(condition_json(
                &format!("{prefix}{}", stage.type_name()),
                status,
                reason,
                &message,
                since,
                generation,
            ));
            if status != ConditionStatus::True {
                break;
            }
        }
        conditions
    }
}

/// Where a status is counted.
fn slot(status: ConditionStatus) -> usize {
    match status {
        ConditionStatus::Unknown => 0,
        ConditionStatus::False => 1,
        ConditionStatus::True => 2,
    }
}

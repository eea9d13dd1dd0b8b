//! Cluster conditions shared between the clusters of a run. A wave of a million-cluster run
//! starts hundreds of thousands of clusters in one pass, and a batch of their reports arrives at
//! one log time: their `Started` (and `Succeeded`) conditions are equal, so they hold one.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::condition::{Condition, ConditionStatus};

/// How many recent conditions are kept to share: a pass makes at most a `Started` and a
/// `Succeeded` one.
const KEPT: usize = 2;

/// The conditions recent passes made. Not state: it is never encoded and every two compare
/// equal, so a run restored from a checkpoint (with none) equals the one folded.
#[derive(Debug, Clone, Default)]
pub struct SharedConditions(Vec<Arc<Condition>>);

crate::derived::derived_cache!(SharedConditions);

/// What a shared condition is: a cluster condition with no message.
pub(crate) struct Wanted<'a> {
    pub kind: &'a str,
    pub status: ConditionStatus,
    pub reason: &'a str,
    pub generation: u64,
    pub now: DateTime<Utc>,
}

impl SharedConditions {
    /// The condition `wanted` describes: one made before when there is one, else a new one.
    pub(crate) fn get(&mut self, wanted: &Wanted<'_>) -> Arc<Condition> {
        let fits = |c: &Arc<Condition>| {
            c.condition_type == wanted.kind
                && c.status == wanted.status
                && c.reason == wanted.reason
                && c.message.is_empty()
                && c.observed_generation == wanted.generation
                && c.last_transition_time == wanted.now
        };
        if let Some(made) = self.0.iter().find(|c| fits(c)) {
            return Arc::clone(made);
        }
        let made = Arc::new(Condition::new(
            wanted.kind,
            wanted.status,
            wanted.reason,
            String::new(),
            wanted.generation,
            wanted.now,
        ));
        if self.0.len() == KEPT {
            self.0.remove(0);
        }
        self.0.push(Arc::clone(&made));
        made
    }
}

/// Makes the clusters of these stages that hold equal `Started` or `Succeeded` conditions hold
/// one. A run decoded from a checkpoint holds a copy of each; the fold shared them.
pub(crate) fn share_equal(stages: &mut [super::run::StageStatus]) {
    // Keyed by time and generation: a wave's reports come back in batches of one log time,
    // scattered over the stage's positions.
    let mut seen: BTreeMap<(DateTime<Utc>, u64), Vec<Arc<Condition>>> = BTreeMap::new();
    let mut share = |slot: &mut Option<Arc<Condition>>| {
        let Some(condition) = slot else {
            return;
        };
        let key = (
            condition.last_transition_time,
            condition.observed_generation,
        );
        let equal = seen.entry(key).or_default();
        match equal.iter().find(|other| ***other == **condition) {
            Some(other) => *condition = Arc::clone(other),
            None => equal.push(Arc::clone(condition)),
        }
    };
    for stage in stages {
        for cluster in &mut stage.clusters {
            let cluster = Arc::make_mut(cluster);
            share(&mut cluster.started);
            share(&mut cluster.succeeded);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(kind: &str, now: DateTime<Utc>) -> Wanted<'_> {
        Wanted {
            kind,
            status: ConditionStatus::True,
            reason: "ClusterUpdatingStarted",
            generation: 1,
            now,
        }
    }

    #[test]
    fn equal_conditions_are_one_and_a_different_time_is_another() {
        let mut shared = SharedConditions::default();
        let now = DateTime::UNIX_EPOCH;
        let first = shared.get(&wanted("Started", now));
        assert!(Arc::ptr_eq(&first, &shared.get(&wanted("Started", now))));
        let later = shared.get(&wanted("Started", now + chrono::Duration::seconds(1)));
        assert!(!Arc::ptr_eq(&first, &later));
        assert_eq!(later.reason, "ClusterUpdatingStarted");
        assert!(later.message.is_empty());
        assert_eq!(
            shared,
            SharedConditions::default(),
            "never part of a comparison"
        );
    }

    #[test]
    fn a_decoded_run_shares_equal_conditions_again() {
        use crate::staged::run::{ClusterStatus, StageStatus};
        let now = DateTime::UNIX_EPOCH;
        let later = now + chrono::Duration::seconds(1);
        // Each cluster gets its own copy, as decoding gives them.
        let cluster = |name: &str, at: DateTime<Utc>| {
            let mut status = ClusterStatus::new(name.into());
            status.started = Some(SharedConditions::default().get(&wanted("Started", at)));
            status
        };
        let mut stages = vec![StageStatus::new(
            "all".into(),
            [cluster("a", now), cluster("b", later), cluster("c", now)],
        )];
        let before = stages.clone();
        share_equal(&mut stages);
        assert_eq!(stages, before, "sharing changes no value");
        let started = |i: usize| stages[0].clusters[i].started.clone().expect("started");
        assert!(Arc::ptr_eq(&started(0), &started(2)));
        assert!(!Arc::ptr_eq(&started(0), &started(1)));
    }
}

//! Cluster conditions shared between the clusters of a run. A wave of a million-cluster run
//! starts hundreds of thousands of clusters in one pass, and a batch of their reports arrives at
//! one log time: their `Started` (and `Succeeded`) conditions are equal, so they hold one.

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

impl PartialEq for SharedConditions {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for SharedConditions {}

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
}

//! Override snapshots (`ClusterResourceOverrideSnapshot` / `ResourceOverrideSnapshot`): an
//! immutable, indexed copy of an override's spec, taken on creation and on every spec change.
//! The last one is the latest (KubeFleet's `is-latest-snapshot` label); bindings name the
//! snapshots they were rendered with (`<override>-<index>`), so a change to an override is
//! seen by the rollout as a new snapshot name, like a new resource index.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Override;
use super::model::OverrideSpec;

/// How many snapshots of one override are kept (the latest and up to nine before it). KubeFleet
/// keeps a bounded history too; ten lets a rollout that is several override changes behind
/// still render the snapshot its bindings name.
pub const OVERRIDE_SNAPSHOTS_MAX: usize = 10;

/// One override snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverrideSnapshot {
    /// Index, from 0, one more per spec change.
    pub index: u64,
    /// The spec as it was.
    pub spec: OverrideSpec,
    /// Event time the snapshot was taken.
    pub created: DateTime<Utc>,
}

/// `<override name>-<index>`, KubeFleet's snapshot name.
#[must_use]
pub fn snapshot_name(override_name: &str, index: u64) -> String {
    format!("{override_name}-{index}")
}

/// Splits a snapshot name into the override name and the index.
#[must_use]
pub fn parse_snapshot_name(snapshot: &str) -> Option<(&str, u64)> {
    let (name, index) = snapshot.rsplit_once('-')?;
    Some((name, index.parse().ok()?))
}

impl Override {
    /// The latest snapshot.
    #[must_use]
    pub fn latest(&self) -> Option<&OverrideSnapshot> {
        self.snapshots.last()
    }

    /// The snapshot with `index`, if it is still kept.
    #[must_use]
    pub fn snapshot(&self, index: u64) -> Option<&OverrideSnapshot> {
        self.snapshots.iter().find(|s| s.index == index)
    }

    /// Takes a snapshot of the current spec and prunes the oldest beyond
    /// [`OVERRIDE_SNAPSHOTS_MAX`]. Returns the new index and the pruned snapshots.
    pub(crate) fn take_snapshot(&mut self, now: DateTime<Utc>) -> (u64, Vec<OverrideSnapshot>) {
        let index = self.latest().map_or(0, |s| s.index + 1);
        self.snapshots.push(OverrideSnapshot {
            index,
            spec: self.spec.clone(),
            created: now,
        });
        let mut pruned = Vec::new();
        if self.snapshots.len() > OVERRIDE_SNAPSHOTS_MAX {
            let excess = self.snapshots.len() - OVERRIDE_SNAPSHOTS_MAX;
            pruned.extend(self.snapshots.drain(..excess));
        }
        debug_assert!(self.snapshots.len() <= OVERRIDE_SNAPSHOTS_MAX);
        debug_assert!(self.latest().is_some_and(|s| s.spec == self.spec));
        (index, pruned)
    }
}

//! What a staged run's rollback still waits for, kept beside the rollback so that a pass after
//! one work report looks at that cluster only: the moved clusters not yet ready on their old
//! work (they hold the budget), and the clusters still on the run's work, split by readiness.
//! Before it, each pass surveyed every cluster the run had moved: a rollback of 10,000
//! clusters took 43 s.
//!
//! Derived, never encoded, equal to any other: unknown after a checkpoint's decoding, built by
//! a pass that surveys every cluster, and kept up from the clusters that reported since. Debug
//! builds check every pass that uses it against a survey of every cluster.

use std::collections::BTreeSet;

/// A cluster's place in the run: stage index and position in the stage (stage order).
pub type Position = (usize, usize);

/// The rollback's sets, once known.
#[derive(Debug, Clone, Default)]
pub struct RollbackWatch(Option<Sets>);

crate::derived::derived_cache!(RollbackWatch);

/// The sets, in stage order.
#[derive(Debug, Clone, Default)]
pub struct Sets {
    /// Moved clusters not yet ready on their old work.
    pub in_flight: BTreeSet<Position>,
    /// Clusters on the run's work and not ready on it: they go back at once.
    pub unready: BTreeSet<Position>,
    /// Clusters on the run's work and ready on it: they go back within the budget.
    pub ready: BTreeSet<Position>,
}

impl Sets {
    /// Forgets where a cluster stood.
    pub fn remove(&mut self, position: Position) {
        self.in_flight.remove(&position);
        self.unready.remove(&position);
        self.ready.remove(&position);
    }

    /// The clusters not yet ready on their old work, moved or not, in stage order.
    pub fn pending(&self) -> Vec<Position> {
        let mut pending: Vec<Position> = self
            .in_flight
            .iter()
            .chain(&self.unready)
            .chain(&self.ready)
            .copied()
            .collect();
        pending.sort_unstable();
        pending
    }

    /// Whether no cluster is left pending.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.in_flight.is_empty() && self.unready.is_empty() && self.ready.is_empty()
    }
}

impl RollbackWatch {
    /// The sets, if known, to read.
    #[must_use]
    pub fn known(&self) -> Option<&Sets> {
        self.0.as_ref()
    }

    /// The sets, if known.
    pub fn known_mut(&mut self) -> Option<&mut Sets> {
        self.0.as_mut()
    }

    /// Takes the sets out, leaving them unknown.
    pub fn take(&mut self) -> Option<Sets> {
        self.0.take()
    }

    /// Keeps these sets.
    pub fn set(&mut self, sets: Sets) {
        self.0 = Some(sets);
    }
}

//! What a rollback still waits for, kept beside its guard so that a pass after one work report
//! looks at that cluster only: the rolled-back clusters still on the failed snapshot (split by
//! readiness, for the budget) and those not yet ready on their old work. Before it, each pass
//! of a rollback walked every cluster the rollout had updated, twice: a rollback of 10,000
//! clusters folded at about 240 events/s.
//!
//! Derived, never encoded, equal to any other: unknown after a checkpoint's decoding, built by
//! one walk of the guard's `prior` at the first pass that has to, and kept up from the
//! clusters whose bindings changed since the last pass. Debug builds check every pass that
//! uses it against one that walks everything ([`super::rollback::step`]).

use chrono::{DateTime, Utc};

use super::readiness::Readiness;
use super::safety::{Guard, Judging};
pub use crate::placement::guard::RollbackWatch;
pub(crate) use crate::placement::guard::Watch;
use crate::placement::{Binding, BindingState, Bindings, OverrideSnapshots};

/// The guard's record of what each rolled-back cluster carried before.
pub(crate) type Prior = std::collections::BTreeMap<String, (u64, OverrideSnapshots)>;

/// Where a rollback moves clusters: from the failed snapshot back to each one's prior work.
#[derive(Clone, Copy)]
pub(crate) struct RollbackTargets<'a> {
    /// Each rolled-back cluster's prior work (the guard's `prior`).
    pub prior: &'a Prior,
    /// The failed resource snapshot (the guard's `resource_index`).
    pub from: u64,
}

impl<'a> RollbackTargets<'a> {
    /// The targets of the guard's rollback.
    pub(crate) fn of(guard: &'a Guard) -> Self {
        Self {
            prior: &guard.prior,
            from: guard.resource_index,
        }
    }
}

impl RollbackWatch {
    /// The sets, if known.
    pub(crate) fn known_mut(&mut self) -> Option<&mut Watch> {
        self.0.as_mut()
    }

    /// Builds the sets by one walk of the guard's rolled-back clusters.
    pub(crate) fn build(
        guard: &Guard,
        bindings: &Bindings,
        judging: Judging<'_>,
        now: DateTime<Utc>,
    ) -> Self {
        let mut watch = Watch::default();
        let rollback = RollbackTargets::of(guard);
        for cluster in guard.prior.keys() {
            let binding = bindings.get(cluster.as_str());
            watch.refresh(rollback, cluster, binding.as_ref(), judging, now);
        }
        Self(Some(watch))
    }
}

impl Watch {
    /// Places one cluster again from its binding as it is now.
    pub(crate) fn refresh(
        &mut self,
        rollback: RollbackTargets<'_>,
        cluster: &str,
        binding: Option<&Binding>,
        judging: Judging<'_>,
        now: DateTime<Utc>,
    ) {
        self.to_move_ready.remove(cluster);
        self.to_move_unready.remove(cluster);
        self.pending.remove(cluster);
        let RollbackTargets { prior, from } = rollback;
        let (Some(binding), Some((prior, _))) = (binding, prior.get(cluster)) else {
            return;
        };
        if binding.state == BindingState::Unscheduled {
            return;
        }
        let ready = judging.readiness(binding, now) == Readiness::Ready;
        if binding.state == BindingState::Bound && binding.resource_index == Some(from) {
            let set = if ready {
                &mut self.to_move_ready
            } else {
                &mut self.to_move_unready
            };
            set.insert(cluster.to_owned());
        }
        if binding.resource_index != Some(*prior) || !ready {
            self.pending.insert(cluster.to_owned());
        }
    }

    /// The clusters to move back in this pass, in cluster order: every one not ready on the
    /// failed snapshot, and the first `ready_to_move` ready ones.
    pub(crate) fn moves(&self, ready_to_move: usize) -> Vec<String> {
        let mut moves: Vec<String> = self
            .to_move_unready
            .iter()
            .chain(self.to_move_ready.iter().take(ready_to_move))
            .cloned()
            .collect();
        moves.sort_unstable();
        moves
    }
}

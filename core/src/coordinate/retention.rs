//! How many snapshots a placement keeps: the newest `revisionHistoryLimit` of each kind, plus
//! every older one that something still uses — a binding (its work is rendered from it, or the
//! work its cluster keeps while overrides fail on it), an
//! unfinished staged update run (it rolls that index out, and a stage that rolls back on failure
//! gives its clusters their prior work), or a guarded rollout that may still roll back (its
//! clusters' prior work). Pruning a snapshot in use would
//! leave a binding with no work, and an agent acting on that would delete the workload.
//!
//! KubeFleet deletes the oldest snapshots beyond the limit whether or not a binding still names
//! them; flotilla counts the limit over all snapshots and keeps the ones in use on top of it
//! (`docs/decisions.md`).

use std::collections::{BTreeMap, BTreeSet};

use crate::model::ObjectKey;
use crate::placement::Placement;
use crate::staged::Scope;
use crate::staged::run::UpdateRun;
use crate::state::State;

/// Snapshot indexes that unfinished update runs hold, per placement.
#[derive(Debug, Default)]
struct RunHolds {
    resource: BTreeSet<u64>,
    policy: BTreeSet<u64>,
}

/// Prunes the snapshots of the placements in `keys` beyond their limit, keeping those in use.
/// A placement within its limit loses nothing, so it costs a length check, not a walk over its
/// bindings.
pub(crate) fn prune<'a>(state: &mut State, keys: impl IntoIterator<Item = &'a ObjectKey>) {
    let mut holds = None;
    for key in keys {
        if let Some(placement) = state.placements.get_mut(key).filter(|p| is_over_limit(p)) {
            let holds = holds.get_or_insert_with(|| run_holds(&state.update_runs));
            prune_placement(placement, holds.get(key));
        }
    }
}

/// Prunes every placement's snapshots (after a change that may have snapshotted many). Only
/// a placement holding more snapshots than its limit can lose one, so the others cost a
/// length check, and the runs' holds are worked out only when some placement is over.
pub(crate) fn prune_all(state: &mut State) {
    if !state.placements.values().any(is_over_limit) {
        return;
    }
    let holds = run_holds(&state.update_runs);
    for (key, placement) in &mut state.placements {
        if is_over_limit(placement) {
            prune_placement(placement, holds.get(key));
        }
    }
}

/// The number of snapshots of each kind a placement keeps whether in use or not.
fn limit(placement: &Placement) -> usize {
    usize::try_from(placement.spec.revision_history_limit)
        .unwrap_or(usize::MAX)
        .max(1)
}

fn is_over_limit(placement: &Placement) -> bool {
    let limit = limit(placement);
    placement.resource_snapshots.len() > limit || placement.policy_snapshots.len() > limit
}

fn prune_placement(placement: &mut Placement, runs: Option<&RunHolds>) {
    let limit = limit(placement);
    let mut resource: BTreeSet<u64> = BTreeSet::new();
    let mut policy: BTreeSet<u64> = BTreeSet::new();
    placement.bindings.for_each(|_, binding| {
        resource.extend(binding.resource_index);
        policy.insert(binding.policy_index);
        // A binding whose overrides fail keeps its cluster on an earlier work.
        let kept = binding
            .override_failure
            .as_ref()
            .and_then(|f| f.kept.as_ref());
        resource.extend(kept.map(|work| work.resource_index));
    });
    if let Some(runs) = runs {
        resource.extend(&runs.resource);
        policy.extend(&runs.policy);
    }
    // A guarded rollout that may still roll back (`docs/rollout-safety.md`) gives clusters back
    // their prior work: those snapshots are in use too.
    if let Some(guard) = placement.guard.as_ref().filter(|g| g.may_roll_back()) {
        resource.extend(guard.prior.values().map(|(index, _)| *index));
    }
    retain_newest(&mut placement.resource_snapshots, limit, |s| {
        resource.contains(&s.index)
    });
    retain_newest(&mut placement.policy_snapshots, limit, |s| {
        policy.contains(&s.index)
    });
}

/// Keeps the newest `limit` entries (the vector is oldest first) and any older one in use.
fn retain_newest<T>(snapshots: &mut Vec<T>, limit: usize, in_use: impl Fn(&T) -> bool) {
    let Some(oldest_kept) = snapshots.len().checked_sub(limit) else {
        return;
    };
    let mut position = 0;
    snapshots.retain(|snapshot| {
        let keep = position >= oldest_kept || in_use(snapshot);
        position += 1;
        keep
    });
}

fn run_holds(runs: &BTreeMap<ObjectKey, UpdateRun>) -> BTreeMap<ObjectKey, RunHolds> {
    let mut holds: BTreeMap<ObjectKey, RunHolds> = BTreeMap::new();
    for (key, run) in runs.iter().filter(|(_, run)| !run.is_finished()) {
        let placement = Scope::of(key).placement_key(&run.spec.placement_name);
        let hold = holds.entry(placement).or_default();
        let requested = run
            .spec
            .resource_snapshot_index
            .as_deref()
            .and_then(|index| index.parse::<u64>().ok());
        hold.resource
            .extend(run.status.resource_snapshot_index_used.or(requested));
        hold.policy.extend(run.status.policy_snapshot_index_used);
        if may_roll_back(run) {
            // The work its clusters carried before the run: a rollback gives it back.
            let priors = run.status.stages.iter().flat_map(|s| &s.clusters);
            hold.resource
                .extend(priors.filter_map(|c| c.prior.as_ref().map(|prior| prior.0)));
        }
    }
    holds
}

/// Whether a run is rolling back, or has a stage that rolls back on failure
/// (`docs/rollout-safety.md`).
fn may_roll_back(run: &UpdateRun) -> bool {
    run.status.rollback.is_some()
        || run
            .status
            .strategy_snapshot
            .as_ref()
            .is_some_and(|strategy| {
                strategy.stages.iter().any(|stage| {
                    stage.on_failure == Some(crate::model::safety::OnFailure::Rollback)
                })
            })
}

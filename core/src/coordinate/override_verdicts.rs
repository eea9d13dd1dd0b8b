//! Whether a binding's work renders for its cluster, judged when a rollout binds it to another
//! work (the snapshots a work uses stay while it uses them: `crate::overrides::retired`). A
//! failed binding marks the rollout's index and drives its placement's staged runs again.
//!
//! KubeFleet's work generator applies the overrides before it writes a Work; when they fail it
//! leaves the Work as it was and sets the binding's `Overridden` condition False
//! (`OverriddenFailed`), which makes the binding failed (`HasBindingFailed`) and so always a
//! candidate of the next rollout, whatever its budget. Here a binding keeps the same facts in
//! [`OverrideFailure`]: the message, and the last work that rendered, which its member keeps
//! applying meanwhile. A user's mistake in an override never withdraws what runs.

use crate::change::{Change, Changes};
use crate::model::ObjectKey;
use crate::model::run_scope::Scope;
use crate::overrides::{OverrideError, render_with_snapshots};
use crate::placement::Binding;
use crate::state::State;

/// Judges every binding this step bound to a work that overrides are involved in: a work that
/// renders clears the binding's failure; one that does not keeps it, with its message. A run
/// whose placement got a failed binding is driven again at `now` (it judges its clusters when
/// driven, and nothing else may touch it soon).
pub(crate) fn judge_bound(state: &mut State, changes: &Changes) {
    // Without any override, kept or retired, no binding can be waiting for a verdict: the
    // common fleet pays nothing per bound binding.
    if state.overrides.is_empty() && state.retired_overrides.is_empty() {
        return;
    }
    let mut failed_placements = Vec::new();
    for change in changes.iter() {
        let Change::BindingBound { placement, cluster } = change else {
            continue;
        };
        let Some(binding) = state
            .placements
            .get(placement)
            .and_then(|p| p.bindings.get(cluster))
        else {
            continue;
        };
        if binding.override_failure.as_ref().is_none_or(|f| f.failed()) {
            continue;
        }
        let verdict = render_verdict(state, placement, &binding);
        let failed = verdict.is_some();
        if let Some(stored) = state.placements.get_mut(placement) {
            stored.bindings.update(cluster, |binding| match verdict {
                None => binding.override_failure = None,
                Some(message) => {
                    if let Some(failure) = binding.override_failure.as_mut() {
                        failure.message = Some(message);
                    }
                }
            });
        }
        if failed {
            if let Some(index) = state.rollout_index.0.get_mut(placement) {
                index.mark(cluster);
            }
            failed_placements.push(placement.clone());
        }
    }
    drive_runs_of(state, &failed_placements);
}

/// Why the binding's work does not render for its cluster; `None` when it does, or fails for
/// a reason that is not the overrides' (an envelope that cannot be unwrapped is reported as
/// a work that cannot be synchronized; a cluster that left has no work to keep).
fn render_verdict(state: &State, placement: &ObjectKey, binding: &Binding) -> Option<String> {
    let index = binding.resource_index?;
    let snapshot = state.placements.get(placement)?.resource_snapshot(index)?;
    let (cluster_overrides, resource_overrides) = &binding.override_snapshots;
    match render_with_snapshots(
        state,
        &snapshot.resources,
        &binding.cluster,
        cluster_overrides,
        resource_overrides,
    ) {
        Ok(_) | Err(OverrideError::Envelope(_) | OverrideError::UnknownCluster { .. }) => None,
        Err(error) => Some(error.to_string()),
    }
}

/// Asks for a drive at the step's time of every update run of these placements.
fn drive_runs_of(state: &mut State, placements: &[ObjectKey]) {
    if placements.is_empty() || state.update_runs.is_empty() {
        return;
    }
    let Some(now) = state.now else {
        return;
    };
    let runs: Vec<ObjectKey> = (state.update_runs.iter())
        .filter(|(key, run)| {
            placements.contains(&Scope::of(key).placement_key(&run.spec.placement_name))
        })
        .map(|(key, _)| key.clone())
        .collect();
    for key in runs {
        state.run_deadlines.insert((now, key));
    }
}

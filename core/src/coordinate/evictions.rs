//! An eviction carried out: a new eviction is judged against its placement and budget
//! ([`crate::eviction`]); an executed one removes the placement's binding on the cluster, and the
//! scheduler runs again for the placement, in the step that creates the eviction.

use chrono::{DateTime, Utc};

use crate::change::Changes;
use crate::decision::Decision;
use crate::eviction::{self, EvictionSpec, New, Verdict, reconcile};
use crate::model::ObjectKey;
use crate::revision::Applied;
use crate::scheduler;
use crate::state::State;

/// Stores an eviction; a new one is reconciled at once, an existing one only takes new labels
/// and annotations.
pub(crate) fn apply(
    state: &mut State,
    key: &ObjectKey,
    spec: EvictionSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let now = applied.origin.now;
    let mut store = state.eviction_store();
    let new = match eviction::apply_eviction(&mut store, key, spec, applied, changes) {
        Ok(new) => new,
        Err(decisions) => return decisions,
    };
    let New { stored, judged } = new;
    let executed = matches!(judged.verdict, Verdict::Executed(_));
    let placement = reconcile::placement_key(&judged.spec);
    let cluster = judged.spec.cluster_name.clone();
    let mut decisions = vec![stored];
    if executed {
        decisions.extend(remove_binding(state, &placement, &cluster, changes));
    }
    let reconciled = eviction::reconciled(&mut state.disruptions, judged, now, changes);
    decisions.push(reconciled);
    if executed {
        decisions.extend(reschedule(state, &placement, now, changes));
    }
    decisions
}

/// Carries out an executed eviction: removes the binding, and so the cluster's work.
fn remove_binding(
    state: &mut State,
    placement: &ObjectKey,
    cluster: &str,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Some(stored) = state.placements.get_mut(placement) else {
        return Vec::new();
    };
    stored
        .remove_binding(placement, cluster, changes)
        .into_iter()
        .collect()
}

/// After an executed eviction the scheduler runs again for the placement: it may pick the
/// cluster again unless a taint it does not tolerate keeps the cluster out.
fn reschedule(
    state: &mut State,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let State {
        members,
        placements,
        ..
    } = state;
    let Some(placement) = placements.get_mut(key) else {
        return Vec::new();
    };
    let mut decisions = Vec::new();
    scheduler::schedule(
        members,
        (placement, key),
        now,
        None,
        changes,
        &mut decisions,
    );
    decisions
}

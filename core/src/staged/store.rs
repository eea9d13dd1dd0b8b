//! Storing and deleting strategies and runs. A strategy is stored as written (runs snapshot it
//! when they initialize); a run refuses changes to its immutable fields and is then driven by
//! the fold; deleting a run deletes the approval requests it created, and deleting an approval
//! request tells its run (which makes it again while it still waits for the approval).

use crate::change::{Change, Changes};
use crate::decision::{Decision, RejectCode, rejected};
use crate::model::ObjectKey;
use crate::revision::{Applied, Revision, previous_of, revise};
use crate::staged::Store;

use super::Strategy;
use super::model::{RunSpec, StrategySpec};
use super::run::UpdateRun;

/// Stores a strategy. Runs snapshot it when they initialize, so an edit never reaches a run
/// that has started.
pub(crate) fn apply_strategy(
    state: &mut Store<'_>,
    key: ObjectKey,
    spec: StrategySpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let previous = previous_of(state.strategies.get(&key), &spec);
    match revise(state.resource_version, &key, previous, applied, changes) {
        Err(unchanged) => vec![*unchanged],
        Ok(Revision { meta, decision, .. }) => {
            state.strategies.insert(key, Strategy { meta, spec });
            vec![decision]
        }
    }
}

/// Stores a run, refusing changes to its immutable fields and invalid state transitions; the
/// run is then driven (initialized on creation) by the fold.
pub(crate) fn apply_run(
    state: &mut Store<'_>,
    key: ObjectKey,
    spec: RunSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let existing = state.update_runs.get(&key);
    if let Some(old) = existing
        && let Err(error) = super::model::validate_run_update(&old.spec, &spec)
    {
        return vec![rejected(RejectCode::ImmutableField, error.to_string())];
    }
    let status = existing.map(|r| r.status.clone()).unwrap_or_default();
    let previous = previous_of(existing, &spec);
    match revise(state.resource_version, &key, previous, applied, changes) {
        Err(unchanged) => vec![*unchanged],
        Ok(Revision { meta, decision, .. }) => {
            state.update_runs.insert(
                key,
                UpdateRun {
                    meta,
                    spec,
                    status,
                    shared: Default::default(),
                    binding_name: Default::default(),
                },
            );
            vec![decision]
        }
    }
}

/// Deletes a run (and its approval requests), an approval request or a strategy; `None` when
/// `key` is none of these stored.
pub(crate) fn delete(
    state: &mut Store<'_>,
    key: &ObjectKey,
    changes: &mut Changes,
) -> Option<Vec<Decision>> {
    let deleted = if super::is_run(key) {
        delete_run(state, key)
    } else if super::is_approval_request(key) {
        delete_approval(state, key, changes)
    } else {
        state.strategies.remove(key).is_some()
    };
    if !deleted {
        return None;
    }
    Some(vec![changes.object_deleted(key)])
}

/// Deletes an approval request and tells its run, which makes it again at once unless it has
/// already accepted the approval: KubeFleet's updaterun controller watches approval request
/// deletions and re-creates the request while the stage task is not `ApprovalRequestApproved`.
fn delete_approval(state: &mut Store<'_>, key: &ObjectKey, changes: &mut Changes) -> bool {
    let Some(request) = state.approvals.remove(key) else {
        return false;
    };
    let scope = super::Scope {
        namespace: key.namespace.clone(),
        run_name: request.run.as_str().into(),
    };
    changes.push(Change::ApprovalDeleted {
        run: scope.run_key(),
    });
    true
}

/// Deletes a run and the approval requests it created.
fn delete_run(state: &mut Store<'_>, key: &ObjectKey) -> bool {
    if state.update_runs.remove(key).is_none() {
        return false;
    }
    let run_name = key.name.clone();
    state
        .approvals
        .retain(|k, a| !(k.namespace == key.namespace && a.run == run_name));
    state.run_deadlines.retain(|(_, k)| k != key);
    true
}

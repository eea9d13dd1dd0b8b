//! What the simulator proves at the end of a run: no acknowledged input is missing from the
//! log; every event id took effect at most once (a repeat is folded as a `DuplicateEvent`
//! rejection, whichever way it arrived); the recorded decisions verify against a fold of the
//! whole log from zero; that fold's state hash equals the live writer's; and every rollout
//! completed, or its explanation says why it waits (then the run fails, showing it: in a fleet
//! whose faults have stopped, nothing should keep a rollout from finishing).

use std::collections::{BTreeMap, BTreeSet};

use flotilla_core::decision::Decision;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::placement::BindingState;
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_core::{RejectCode, State};
use flotilla_eventstore::LogReader;
use flotilla_replay::{PlacementRef, explain_placement, fold_from_zero, verify};
use uuid::Uuid;

use super::SimError;
use super::faulty_log::FaultyLog;

/// Inputs read per call when scanning the log.
const SCAN_PAGE: usize = 1_000;

/// Every acknowledged `(id, seq)` is in the log at that sequence with that id.
///
/// # Errors
/// The first one missing.
pub async fn acknowledged_kept(
    log: &FaultyLog,
    acknowledged: &BTreeMap<Uuid, BTreeSet<u64>>,
) -> Result<(), SimError> {
    let ids = ids_by_seq(log).await?;
    for (id, seqs) in acknowledged {
        for seq in seqs {
            if ids.get(seq) != Some(id) {
                return Err(SimError::Broken(format!(
                    "event {id} was acknowledged at sequence {seq}, but the log holds {:?} there",
                    ids.get(seq)
                )));
            }
        }
    }
    Ok(())
}

/// Every id stored more than once took effect once: each later copy was decided as exactly a
/// `DuplicateEvent` rejection, and the first copy was not. Returns how many copies there were.
///
/// # Errors
/// The first copy decided otherwise.
pub async fn exactly_once(log: &FaultyLog) -> Result<u64, SimError> {
    let ids = ids_by_seq(log).await?;
    let mut decided = BTreeMap::new();
    let mut from = 1;
    loop {
        let batches = log.read_decisions(from, SCAN_PAGE).await?;
        let Some(last) = batches.last().map(|b| b.last_input_seq) else {
            break;
        };
        for batch in batches {
            decided.extend(batch.decisions);
        }
        from = last + 1;
    }
    let mut first: BTreeMap<Uuid, u64> = BTreeMap::new();
    let mut copies = 0;
    for (seq, id) in &ids {
        let duplicate = matches!(
            decided.get(seq).map(Vec::as_slice),
            Some([Decision::Rejected {
                code: RejectCode::DuplicateEvent,
                ..
            }])
        );
        let is_copy = first.contains_key(id);
        first.entry(*id).or_insert(*seq);
        if is_copy != duplicate {
            return Err(SimError::Broken(format!(
                "input {seq} (event {id}, first stored at {}) was decided {:?}",
                first[id],
                decided.get(seq)
            )));
        }
        copies += u64::from(is_copy);
    }
    Ok(copies)
}

async fn ids_by_seq(log: &FaultyLog) -> Result<BTreeMap<u64, Uuid>, SimError> {
    let mut ids = BTreeMap::new();
    let mut from = 1;
    loop {
        let page = log.read(from, SCAN_PAGE).await?;
        let Some(last) = page.last().map(|e| e.seq) else {
            break;
        };
        for stored in page {
            if let Some(event) = stored.event() {
                ids.insert(stored.seq, event.id);
            }
        }
        from = last + 1;
    }
    Ok(ids)
}

/// The recorded decisions verify, and a fold from zero reaches `live`'s hash.
///
/// # Errors
/// A determinism failure.
pub async fn clean_fold_matches(log: &FaultyLog, live: &State, seq: u64) -> Result<(), SimError> {
    let verification = verify(log).await?;
    if verification.checked != seq {
        return Err(SimError::Broken(format!(
            "verify checked up to input {}, the writer folded {seq}",
            verification.checked
        )));
    }
    let clean = fold_from_zero(log, seq).await?;
    let (clean_hash, live_hash) = (clean.state.hash()?, live.hash()?);
    if clean_hash != live_hash {
        return Err(SimError::Broken(format!(
            "a clean fold to input {seq} gives state {clean_hash}, the live writer has {live_hash}"
        )));
    }
    Ok(())
}

/// Whether every placement's rollout is done.
#[must_use]
pub fn settled(state: &State) -> bool {
    state
        .placements()
        .keys()
        .all(|key| placement_settled(state, key))
}

/// Whether one placement's rollout is done: every member bound to the latest resources and
/// reported available there, and no staged run of it unfinished.
#[must_use]
pub fn placement_settled(state: &State, key: &ObjectKey) -> bool {
    let Some(placement) = state.placements().get(key) else {
        return false;
    };
    let Some(latest) = placement.latest_resources().map(|r| r.index) else {
        return false;
    };
    let live: Vec<_> = placement
        .bindings
        .values()
        .filter(|b| b.state != BindingState::Unscheduled)
        .collect();
    let bound = live.len() == state.members().len()
        && live.iter().all(|b| {
            b.state == BindingState::Bound
                && b.resource_index == Some(latest)
                && b.report.as_ref().is_some_and(|r| {
                    r.resource_index == latest
                        && r.applied == Some(true)
                        && r.available == Some(true)
                })
        });
    let runs_done = state
        .update_runs()
        .values()
        .filter(|run| run.spec.placement_name == key.name)
        .all(UpdateRun::is_finished);
    bound && runs_done
}

/// Each placement's explanation from the log: a settled one must not wait; an unsettled one
/// fails the run, showing its explanation (which must name a reason).
///
/// # Errors
/// An unsettled rollout, or an explanation that contradicts the state.
pub async fn explained(log: &FaultyLog, state: &State) -> Result<(), SimError> {
    for key in state.placements().keys() {
        let placement = PlacementRef {
            namespace: (!key.namespace.is_empty()).then(|| key.namespace.to_string()),
            name: key.name.to_string(),
        };
        let explanation = explain_placement(log, &placement, None).await?;
        let text = explanation.text();
        let named =
            !explanation.waits.is_empty() && explanation.waits.iter().all(|w| !w.text.is_empty());
        match (placement_settled(state, key), named) {
            (true, false) => {}
            (true, true) => {
                return Err(SimError::Broken(format!(
                    "{key} is rolled out, yet its explanation waits:\n{text}"
                )));
            }
            (false, true) => {
                return Err(SimError::Liveness(format!(
                    "{key} did not finish after the faults stopped; it waits:\n{text}"
                )));
            }
            (false, false) => {
                return Err(SimError::Liveness(format!(
                    "{key} did not finish after the faults stopped, and its explanation names \
                     no reason:\n{text}"
                )));
            }
        }
    }
    Ok(())
}

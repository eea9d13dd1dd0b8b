//! Proves, over random sequences of every kind of input (see `inputs/`), that the fold is
//! deterministic and checkpoints are transparent: folding a sequence twice gives identical
//! decisions and state hash; checkpointing (encode, decode) after any prefix and folding the
//! rest gives the same decisions and hash as folding straight through, and so does folding on
//! after taking a checkpoint's snapshot, which keeps the hash it had; a duplicate of any
//! event changes nothing; and every invariant (`flotilla_core::invariants`) holds after every
//! step. A second test keeps the generator honest: it must reach every aggregate.

mod common;
mod inputs;

use chrono::Duration;
use common::{start, step_checked};
use flotilla_core::codec::{decode_checkpoint, encode_checkpoint};
use flotilla_core::{Decision, Decisions, Envelope, Input, State, step};
use inputs::{Op, op};
use proptest::prelude::*;
use uuid::Uuid;

/// Folds the ops once, checking every step, resolving each against the state it meets:
/// returns the log that was folded, the decisions per event and the final state.
fn record(ops: &[Op]) -> (Vec<Envelope>, Vec<Decisions>, State) {
    let mut state = State::default();
    let mut now = start();
    let mut log = Vec::new();
    let mut decisions = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        let (payload, secs) = inputs::input(&state, op);
        now += Duration::seconds(secs);
        let id = Uuid::from_u128(u128::try_from(index).unwrap_or_default() + 1);
        let event = Envelope::new(id, now, "proptest", payload);
        decisions.push(step_checked(&mut state, &event));
        log.push(event);
    }
    (log, decisions, state)
}

fn fold(state: &mut State, log: &[Envelope]) -> Vec<Decisions> {
    log.iter().map(|event| step(state, event)).collect()
}

fn restore(state: &State) -> State {
    let bytes = encode_checkpoint(state).expect("encodes");
    decode_checkpoint(&bytes).expect("decodes")
}

/// Whether the event is a work report whose work the same step replaced at the same resource
/// index (new overrides, a failed work re-sent) before anything reported on it: a report names
/// only the index, so it cannot tell those two works apart and rightly counts for the new one.
/// (A report about an index the binding has left is refused: `StaleReport`.)
fn is_replaced_work(state: &State, event: &Envelope) -> bool {
    let Input::WorkReport(report) = &event.payload else {
        return false;
    };
    let namespace = report.namespace.clone().unwrap_or_default();
    let binding = state
        .placements()
        .iter()
        .find(|(k, _)| k.name == report.placement && k.namespace == namespace)
        .and_then(|(_, p)| p.bindings.get(report.cluster.as_str()));
    binding.is_some_and(|b| b.resource_index == Some(report.resource_index) && b.report.is_none())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn every_input_folds_deterministically_through_checkpoints(
        ops in prop::collection::vec(op(), 20..60),
        cut in any::<prop::sample::Index>(),
        duplicate in any::<prop::sample::Index>(),
    ) {
        let ops = [inputs::prelude(), ops].concat();
        let (log, recorded, first) = record(&ops);
        let hash = first.hash().expect("hash");

        let mut again = State::default();
        prop_assert_eq!(&fold(&mut again, &log), &recorded);
        prop_assert_eq!(&again.hash().expect("hash"), &hash);

        let cut = cut.index(log.len() + 1);
        let mut prefix = State::default();
        let mut decisions = fold(&mut prefix, &log[..cut]);
        let mut restored = restore(&prefix);
        prop_assert_eq!(&restored, &prefix);
        decisions.extend(fold(&mut restored, &log[cut..]));
        prop_assert_eq!(&decisions, &recorded);
        prop_assert_eq!(&restored.hash().expect("hash"), &hash);

        // A checkpoint's snapshot shares members and bindings with the state it was taken
        // from: it encodes as that state did, folding on changes nothing in it, and the fold
        // goes on as if no snapshot had been taken.
        let at_cut = prefix.hash().expect("hash");
        let snapshot = prefix.snapshot();
        prop_assert_eq!(&snapshot.hash().expect("hash"), &at_cut);
        let mut rest = fold(&mut prefix, &log[cut..]);
        rest.splice(0..0, recorded[..cut].iter().cloned());
        prop_assert_eq!(&rest, &recorded);
        prop_assert_eq!(&prefix.hash().expect("hash"), &hash);
        prop_assert_eq!(&snapshot.hash().expect("hash"), &at_cut);

        // Folding an event a second time, straight after itself, changes nothing — except a
        // report once its work was replaced (see `is_replaced_work`).
        let pick = duplicate.index(log.len());
        let mut state = State::default();
        fold(&mut state, &log[..=pick]);
        if !is_replaced_work(&state, &log[pick]) {
            let before = state.hash().expect("hash");
            step_checked(&mut state, &log[pick]);
            prop_assert_eq!(before, state.hash().expect("hash"));
        }
    }
}

/// The decisions the generated sequences must reach, so that no aggregate silently drops out of
/// the property above.
const REACHED: [&str; 18] = [
    "ClusterJoined",
    "ClusterHealthChanged",
    "ClusterLeft",
    "ResourceSnapshotTaken",
    "PolicySnapshotTaken",
    "OverrideSnapshotTaken",
    "RolloutStarted",
    "BindingRemoved",
    "WorkReported",
    "EvictionReconciled",
    "UpdateRunClusterUpdated",
    "ApprovalGranted",
    "ObjectDeleted",
    "Rejected",
    "NotLeaving",
    "Left",
    "AnalysisMeasured",
    "AnalysisGate",
];

#[test]
fn the_generated_sequences_reach_every_aggregate() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let mut reached = std::collections::BTreeSet::new();
    for _ in 0..100 {
        let ops = prop::collection::vec(op(), 20..60)
            .new_tree(&mut runner)
            .expect("generates")
            .current();
        let (log, decisions, _) = record(&[inputs::prelude(), ops].concat());
        for decision in decisions.iter().flatten() {
            let text = format!("{decision:?}");
            let name = text.split([' ', '{', '(']).next().unwrap_or_default();
            reached.insert(name.to_owned());
            if let Decision::Rejected { code, .. } = decision {
                reached.insert(code.as_str().to_owned());
            }
        }
        // A leave that removed its member is worth its own name.
        for (event, decided) in log.iter().zip(&decisions) {
            if matches!(event.payload, Input::Leave { .. }) && !decided.is_empty() {
                let accepted = decided.iter().all(|d| !d.is_rejection());
                if accepted {
                    reached.insert("Left".to_owned());
                }
            }
        }
    }
    let missing: Vec<&str> = REACHED
        .into_iter()
        .filter(|d| !reached.contains(*d))
        .collect();
    assert!(
        missing.is_empty(),
        "never reached: {missing:?}; reached {reached:?}"
    );
}

//! Fuzzes the fold over arbitrary event sequences. The fuzz bytes are decoded into the same
//! inputs the property tests generate (`core/tests/inputs`, included below: member applies,
//! heartbeats, leaves, placements of every policy and strategy, resources, overrides, staged
//! strategies, runs and approvals, evictions and budgets, work reports with diffs and drifts,
//! ticks, deletes, invalid inputs), each resolved against the state it meets, plus duplicates of
//! earlier events slipping through later. Each is folded with `flotilla_core::step`.
//!
//! Properties: no panic; `invariants::check_step` (which runs `invariants::check`) after every
//! step; folding the same log again gives the same decisions and state hash; and restoring a
//! checkpoint (its stored form) after any prefix and folding the rest gives them too.

#![no_main]

#[allow(dead_code, unreachable_pub, missing_docs, clippy::all)]
#[path = "../../core/tests/inputs/mod.rs"]
mod inputs;

use arbitrary::{Result, Unstructured};
use chrono::{DateTime, Duration, TimeZone, Utc};
use flotilla_core::wire::checkpoint;
use flotilla_core::{Decisions, Envelope, State, invariants, step};
use inputs::{Op, Policy, Rollout};
use libfuzzer_sys::fuzz_target;
use uuid::Uuid;

/// Most steps one input folds, so that one run stays fast.
const STEPS_MAX: usize = 200;

/// One folded step: an input resolved against the state, or a duplicate of an earlier event
/// (same id and payload, at the current time) that got past the log's deduplication.
#[derive(Debug)]
enum Step {
    Op(Op),
    Duplicate(usize),
}

fuzz_target!(|bytes: &[u8]| {
    let mut input = Unstructured::new(bytes);
    let Ok((cut, steps)) = decode(&mut input) else {
        return;
    };
    let (log, recorded, state) = record(&steps);
    let hash = state.hash().expect("a folded state hashes");

    let mut again = State::default();
    assert_eq!(
        fold(&mut again, &log),
        recorded,
        "decisions differ on a second fold"
    );
    assert_eq!(
        again.hash().expect("hashes"),
        hash,
        "state differs on a second fold"
    );

    let cut = cut % (log.len() + 1);
    let mut prefix = State::default();
    let mut decisions = fold(&mut prefix, &log[..cut]);
    let hash_at_cut = prefix.hash().expect("hashes");
    let stored = checkpoint::encode(cut as u64, &hash_at_cut, &prefix).expect("checkpoints");
    let mut restored = checkpoint::decode(&stored)
        .expect("a checkpoint reads back")
        .state;
    assert_eq!(restored, prefix, "checkpoint round trip");
    decisions.extend(fold(&mut restored, &log[cut..]));
    assert_eq!(decisions, recorded, "decisions differ after a checkpoint");
    assert_eq!(
        restored.hash().expect("hashes"),
        hash,
        "state differs after a checkpoint"
    );
});

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default()
}

/// Folds the steps once, checking the invariants of every step; returns the log folded, the
/// decisions of each event and the final state.
fn record(steps: &[Step]) -> (Vec<Envelope>, Vec<Decisions>, State) {
    let mut state = State::default();
    let mut now = start();
    let mut log: Vec<Envelope> = Vec::with_capacity(steps.len());
    let mut recorded = Vec::with_capacity(steps.len());
    for (index, planned) in steps.iter().enumerate() {
        let event = match planned {
            Step::Op(op) => {
                let (payload, secs) = inputs::input(&state, op);
                now += Duration::seconds(secs);
                let id = Uuid::from_u128(index as u128 + 1);
                Envelope::new(id, now, "fuzz", payload)
            }
            Step::Duplicate(_) if log.is_empty() => continue,
            Step::Duplicate(which) => {
                let mut event = log[which % log.len()].clone();
                event.time = now;
                event
            }
        };
        let before = state.clone();
        recorded.push(step(&mut state, &event));
        if let Err(violation) = invariants::check_step(&before, &event, &state) {
            panic!("invariant broken by {event:?}: {violation}");
        }
        log.push(event);
    }
    (log, recorded, state)
}

fn fold(state: &mut State, log: &[Envelope]) -> Vec<Decisions> {
    log.iter().map(|event| step(state, event)).collect()
}

/// The checkpoint cut and the steps: optionally the property tests' prelude (a joined fleet
/// with placements and runs), then steps until the bytes run out.
fn decode(input: &mut Unstructured<'_>) -> Result<(usize, Vec<Step>)> {
    let cut = usize::from(input.arbitrary::<u16>()?);
    let mut steps: Vec<Step> = if input.arbitrary()? {
        inputs::prelude().into_iter().map(Step::Op).collect()
    } else {
        Vec::new()
    };
    while !input.is_empty() && steps.len() < STEPS_MAX {
        steps.push(if input.ratio(1, 32)? {
            Step::Duplicate(input.arbitrary::<u8>()?.into())
        } else {
            Step::Op(op(input)?)
        });
    }
    Ok((cut, steps))
}

fn op(input: &mut Unstructured<'_>) -> Result<Op> {
    let cluster = |input: &mut Unstructured<'_>| input.choose_index(inputs::CLUSTERS.len());
    Ok(match input.int_in_range(0..=18_u8)? {
        0 => Op::Member {
            cluster: cluster(input)?,
            period: *input.choose(&[60, 1, 5, 30, 119])?,
            prod: input.arbitrary()?,
            tainted: input.ratio(1, 5)?,
        },
        1 => Op::Beat {
            cluster: cluster(input)?,
            properties: input
                .arbitrary::<bool>()?
                .then(|| input.int_in_range(0..=3))
                .transpose()?,
        },
        2 => Op::Advance(*input.choose(&[0, 1, 15, 30, 61, 299, 900, 3_600, 86_400, 31_622_400])?),
        3 => Op::Namespace(input.choose_index(inputs::NAMESPACES.len())?),
        4 => Op::ConfigMap {
            namespace: input.choose_index(2)?,
            name: input.choose_index(2)?,
            value: input.int_in_range(0..=2)?,
        },
        5 => Op::Crp {
            name: input.choose_index(inputs::CRPS.len())?,
            namespace: input.choose_index(2)?,
            policy: policy(input)?,
            rollout: rollout(input)?,
        },
        6 => Op::Rp {
            staged: input.arbitrary()?,
            policy: policy(input)?,
            rollout: rollout(input)?,
        },
        7 => Op::Cro {
            prod: input.arbitrary()?,
        },
        8 => Op::Ro {
            value: input.int_in_range(0..=2)?,
        },
        9 => Op::Strategy {
            namespaced: input.arbitrary()?,
            gate_before: input.arbitrary()?,
            gate_after: input.int_in_range(0..=3)?,
            concurrency: input.int_in_range(0..=2)?,
        },
        10 => Op::Run {
            namespaced: input.arbitrary()?,
            n: input.int_in_range(0..=3)?,
            state: input.int_in_range(0..=2)?,
        },
        11 => Op::Approve {
            pick: input.arbitrary()?,
            namespaced: input.arbitrary()?,
            after: input.arbitrary()?,
        },
        12 => Op::Evict {
            n: input.int_in_range(0..=2)?,
            cluster: cluster(input)?,
            placement: input.choose_index(3)?,
        },
        13 => Op::Budget {
            placement: input.choose_index(3)?,
            min: input.arbitrary()?,
            value: input.int_in_range(0..=3)?,
        },
        14 => report(input)?,
        15 => Op::Delete {
            kind: input.choose_index(inputs::manifests::DELETABLE.len())?,
            n: input.choose_index(4)?,
        },
        16 => Op::Leave(cluster(input)?),
        17 => Op::Analysis {
            pick: input.arbitrary()?,
            value: input.int_in_range(0..=3)?,
        },
        _ => Op::Invalid(input.int_in_range(0..=6)?),
    })
}

fn report(input: &mut Unstructured<'_>) -> Result<Op> {
    Ok(Op::Report {
        pick: input.arbitrary()?,
        shift: input.int_in_range(-1..=1)?,
        applied: input.arbitrary()?,
        available: input.arbitrary()?,
        trackable: !input.ratio(1, 5)?,
        differences: input.int_in_range(0..=5)?,
    })
}

fn policy(input: &mut Unstructured<'_>) -> Result<Policy> {
    Ok(match input.int_in_range(0..=2_u8)? {
        0 => Policy::PickAll,
        1 => Policy::PickN(input.int_in_range(0..=4)?, input.arbitrary()?),
        _ => Policy::PickFixed(input.int_in_range(0..=15)?),
    })
}

fn rollout(input: &mut Unstructured<'_>) -> Result<Rollout> {
    Ok(match input.int_in_range(0..=2_u8)? {
        0 => Rollout::Rolling(
            input.int_in_range(0..=2)?,
            input.int_in_range(0..=2)?,
            *input.choose(&[0, 1, 30])?,
        ),
        1 => Rollout::Partitioned(input.int_in_range(0..=2)?, input.arbitrary()?),
        _ => Rollout::ReportDiff(input.int_in_range(0..=2)?),
    })
}

//! `verify` catches a fold that is not a pure function of the log, at its exact sequence. The
//! fault is the classic one: a step that reads the wall clock instead of the event's time.
//! Such a hub records decisions (and checkpoints) that folding the log again does not give: the
//! test records the same inputs as a hub with that fault would, so the state diverges at once
//! (heartbeat times), and the decisions diverge at the first input whose outcome depends on
//! time: the one at which an honest hub records a silent cluster timing out.

use chrono::{DateTime, TimeZone, Utc};
use flotilla_core::{Decision, Decisions, Envelope, State};
use flotilla_eventstore::memory_log::MemoryLog;
use flotilla_eventstore::{AppendTime, Checkpoint, DecisionBatch, EventLog, LogReader};
use flotilla_replay::{ReplayError, verify};

use crate::recorder::{Recorder, member};

/// What the faulty step takes for "now": a moment after everything the test records.
fn wall_clock() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2031, 1, 1, 0, 0, 0)
        .single()
        .expect("a valid time")
}

/// The injected non-determinism: the event's time replaced by the wall clock.
fn step_reading_the_wall_clock(state: &mut State, event: &Envelope) -> Decisions {
    let mut event = event.clone();
    event.time = wall_clock();
    flotilla_core::step(state, &event)
}

/// The inputs of `honest`, with the decision batches (same ranges) and checkpoints (same
/// sequences) a hub folding with [`step_reading_the_wall_clock`] would have recorded.
async fn recorded_reading_the_wall_clock(honest: &MemoryLog) -> MemoryLog {
    let faulty = MemoryLog::new();
    let events: Vec<Envelope> = honest
        .read(1, 10_000)
        .await
        .expect("readable")
        .iter()
        .map(|stored| stored.event().expect("only events").clone())
        .collect();
    let checkpoint = honest
        .load_checkpoint()
        .await
        .expect("readable")
        .map(|c| c.seq);
    let batches = honest.read_decisions(1, 10_000).await.expect("readable");
    let mut state = State::default();
    for batch in &batches {
        let mut decisions = Vec::new();
        for seq in batch.first_input_seq..=batch.last_input_seq {
            let decided = step_reading_the_wall_clock(&mut state, &events[seq as usize - 1]);
            if !decided.is_empty() {
                decisions.push((seq, decided));
            }
            if checkpoint == Some(seq) {
                let hash = state.hash().expect("the state encodes");
                let state = state.clone();
                faulty
                    .save_checkpoint(&Checkpoint { seq, hash, state })
                    .await
                    .expect("saved");
            }
        }
        let range = &events[batch.first_input_seq as usize - 1..batch.last_input_seq as usize];
        faulty
            .append(range.to_vec(), AppendTime::AsGiven)
            .await
            .expect("appended");
        let faulty_batch = DecisionBatch {
            decisions,
            ..batch.clone()
        };
        faulty
            .append_decisions(&faulty_batch)
            .await
            .expect("decided");
    }
    faulty
}

/// Three members beat, then member-3 goes silent for ten minutes while the others beat, and a
/// tick ends it. With a checkpoint after the first heartbeats when `checkpoint` is set.
/// Returns (the first heartbeats' last seq, the last seq).
async fn silent_member(recorder: &mut Recorder, checkpoint: bool) -> (u64, u64) {
    let clusters = ["member-1", "member-2", "member-3"];
    let labels = serde_json::json!({});
    let members: Vec<_> = clusters.iter().map(|c| member(c, &labels)).collect();
    recorder.apply(&members).await;
    let beaten = recorder.heartbeats(&clusters).await;
    if checkpoint {
        recorder.checkpoint().await;
    }
    for _ in 0..10 {
        recorder.advance(60);
        recorder.heartbeats(&["member-1", "member-2"]).await;
    }
    (beaten, recorder.tick().await)
}

#[tokio::test]
async fn a_fold_reading_the_wall_clock_is_caught_at_the_input_it_decides_otherwise() {
    let mut recorder = Recorder::new("2026-03-12T23:00:00Z");
    let (_, last) = silent_member(&mut recorder, false).await;
    let honest = verify(&recorder.log).await.expect("this build verifies");
    assert_eq!(honest.checked, last);
    let timed_out = |decisions: &Decisions| {
        decisions.iter().any(|d| {
            matches!(d, Decision::ClusterHealthChanged { cluster, .. } if cluster.as_str() == "member-3")
        })
    };
    // Where an honest hub recorded member-3's timeout: a heartbeat of another member, 5 periods
    // on.
    let batches = recorder.log.read_decisions(1, 100).await.expect("readable");
    let recorded_timeout = batches
        .iter()
        .flat_map(|batch| &batch.decisions)
        .find(|(_, decisions)| timed_out(decisions))
        .map(|(seq, _)| *seq)
        .expect("member-3 timed out in the recorded log");
    assert!(recorded_timeout < last);

    let faulty = recorded_reading_the_wall_clock(&recorder.log).await;
    let error = verify(&faulty)
        .await
        .expect_err("the faulty fold is caught");
    let ReplayError::Diverged(divergence) = &error else {
        panic!("expected a decision divergence, got {error}");
    };
    assert_eq!(divergence.seq, recorded_timeout, "{error}");
    assert!(!timed_out(&divergence.recorded), "{error}");
    assert!(timed_out(&divergence.recomputed), "{error}");
    assert!(divergence.is_strict());
    let named = format!("input {recorded_timeout}:");
    assert!(error.to_string().contains(&named), "{error}");
}

#[tokio::test]
async fn a_checkpoint_before_it_catches_the_state_diverging_first() {
    let mut recorder = Recorder::new("2026-03-12T23:00:00Z");
    let (checkpoint, _) = silent_member(&mut recorder, true).await;
    let honest = verify(&recorder.log).await.expect("this build verifies");
    assert_eq!(honest.checkpoints, (1, Some(checkpoint)));

    let faulty = recorded_reading_the_wall_clock(&recorder.log).await;
    let error = verify(&faulty)
        .await
        .expect_err("the faulty fold is caught");
    let ReplayError::HashDiverged(divergence) = &error else {
        panic!("expected a state hash divergence, got {error}");
    };
    assert_eq!(divergence.seq, checkpoint, "{error}");
    assert_ne!(divergence.recorded, divergence.recomputed);
}

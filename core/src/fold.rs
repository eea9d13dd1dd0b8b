//! The fold: `step(state, event) -> decisions`, pure and deterministic.
//!
//! `step` never fails: a bad input is answered with a [`Decision::Rejected`] and leaves the
//! state untouched — its time included, so a refused input cannot move the fold's clock. Time
//! only moves with the times the log assigned to accepted events, and never backwards.

use chrono::{DateTime, Utc};

use crate::change::Changes;
use crate::coordinate;
use crate::decision::{Decision, Decisions, RejectCode, rejected};
use crate::event::{Envelope, Input, SCHEMA_VERSION};
use crate::member;
use crate::objects;
use crate::report;
use crate::revision::Origin;
use crate::rollout;
use crate::staged;
use crate::state::State;

/// Folds one event into the state and returns what was decided.
pub fn step(state: &mut State, event: &Envelope) -> Decisions {
    if event.schema_version > SCHEMA_VERSION {
        return vec![rejected(
            RejectCode::UnsupportedSchemaVersion,
            format!(
                "event {} has schema version {}, this hub understands up to {SCHEMA_VERSION}",
                event.id, event.schema_version
            ),
        )];
    }
    let before = state.now;
    let now = advance_time(state, event.time);
    // What the aggregates change, for the rollout passes below: decisions are the users'
    // record, never re-read.
    let mut changes = Changes::new();
    let expiry = member::expire_heartbeats_reversibly(&mut state.member_store(), now, &mut changes);
    let origin = Origin {
        event_id: event.id,
        now,
    };
    let answer = answer(state, &event.payload, &origin, &mut changes);
    if is_refusal(&answer) {
        // A refused input changes nothing: not the clock, not the heartbeats it would have
        // expired (a forged far-future time must not time the fleet out).
        expiry.revert(&mut state.member_store());
        state.now = before;
        return answer;
    }
    // The answer is moved, not copied, when no heartbeat expired: a placement's first pass
    // answers for every cluster.
    let mut decisions = expiry.decisions;
    match decisions.is_empty() {
        true => decisions = answer,
        false => decisions.extend(answer),
    }
    // A spec change (a shorter heartbeat period) can move a deadline into the past.
    decisions.extend(member::expire_heartbeats(
        &mut state.member_store(),
        now,
        &mut changes,
    ));
    rollout::roll_out(
        &mut state.rollout_store(),
        &mut changes,
        now,
        &mut decisions,
    );
    let staged = staged::drive_touched(&mut state.staged_store(), &mut changes, now);
    decisions.extend(staged);
    coordinate::override_verdicts::judge_bound(state, &changes);
    decisions
}

/// What the input itself decides, before heartbeats expire and rollouts move.
fn answer(state: &mut State, input: &Input, origin: &Origin, changes: &mut Changes) -> Decisions {
    let now = origin.now;
    match input {
        Input::Apply { manifest } => objects::apply(state, manifest, origin, changes),
        Input::Delete { target } => objects::delete(state, target, now, changes),
        Input::Heartbeat(beat) => coordinate::members::heartbeat(state, beat, now, changes),
        Input::WorkReport(work) => report::record_report(state, work, now, changes),
        Input::Approve {
            name,
            namespace,
            reason,
            message,
        } => staged::approval::approve(
            &mut state.staged_store(),
            staged::approval::Approval {
                name,
                namespace: namespace.as_deref(),
                reason: reason.as_deref(),
                message: message.as_deref(),
            },
            now,
            changes,
        ),
        Input::Tick => Vec::new(),
        Input::Leave { cluster } => {
            coordinate::members::confirm_leave(state, cluster, now, changes)
        }
        Input::AnalysisResult(result) => staged::analysis::measure::record(
            &mut state.staged_store(),
            result,
            origin.event_id,
            now,
            changes,
        ),
    }
}

/// When the core next needs a tick: the earliest heartbeat or rollout deadline.
#[must_use]
pub fn next_deadline(state: &State) -> Option<DateTime<Utc>> {
    let heartbeat = state
        .heartbeat_deadlines
        .first()
        .map(|(deadline, _)| *deadline);
    let rollout = state
        .rollout_deadlines
        .first()
        .map(|(deadline, _)| *deadline);
    let run = state.run_deadlines.first().map(|(deadline, _)| *deadline);
    [heartbeat, rollout, run].into_iter().flatten().min()
}

/// The input was refused as a whole: its handler answered with rejections only.
fn is_refusal(answer: &[Decision]) -> bool {
    !answer.is_empty()
        && answer
            .iter()
            .all(|decision| matches!(decision, Decision::Rejected { .. }))
}

fn advance_time(state: &mut State, time: DateTime<Utc>) -> DateTime<Utc> {
    let now = state.now.map_or(time, |now| now.max(time));
    state.now = Some(now);
    now
}

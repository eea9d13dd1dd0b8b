//! The fold: `step(state, event) -> decisions`, pure and deterministic.
//!
//! `step` never fails: a bad input is answered with a [`Decision::Rejected`] and leaves the
//! state untouched — its time included, so a refused input cannot move the fold's clock. Time
//! only moves with the times the log assigned to accepted events, and never backwards.

use chrono::{DateTime, Utc};

use crate::change::{Change, Changes};
use crate::decision::{Decision, Decisions, RejectCode, rejected};
use crate::event::{Envelope, Input, RESOURCE_INDEX_CURRENT, SCHEMA_VERSION, WorkReport};
use crate::member;
use crate::model::{CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP, RESOURCE_PLACEMENT};
use crate::objects::{self, Origin};
use crate::placement::binding::Binding;
use crate::placement::namespaces;
use crate::rollout;
use crate::staged;
use crate::state::{State, WorkStatus};

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
    let expiry = member::expire_heartbeats_reversibly(state, now, &mut changes);
    let origin = Origin {
        event_id: event.id,
        now,
    };
    let answer = match &event.payload {
        Input::Apply { manifest } => objects::apply(state, manifest, &origin, &mut changes),
        Input::Delete { target } => objects::delete(state, target, now, &mut changes),
        Input::Heartbeat(beat) => member::heartbeat(state, beat, now, &mut changes),
        Input::WorkReport(report) => record_report(state, report, now, &mut changes),
        Input::Approve { name, namespace } => {
            staged::approval::approve(state, name, namespace.as_deref(), now, &mut changes)
        }
        Input::Tick => Vec::new(),
    };
    if is_refusal(&answer) {
        // A refused input changes nothing: not the clock, not the heartbeats it would have
        // expired (a forged far-future time must not time the fleet out).
        expiry.revert(state);
        state.now = before;
        return answer;
    }
    let mut decisions = expiry.decisions;
    decisions.extend(answer);
    // A spec change (a shorter heartbeat period) can move a deadline into the past.
    decisions.extend(member::expire_heartbeats(state, now, &mut changes));
    let rolled = rollout::roll_out(state, &mut changes, now);
    decisions.extend(rolled);
    let staged = staged::drive_touched(state, &mut changes, now);
    decisions.extend(staged);
    decisions
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

fn placement_key(report: &WorkReport) -> ObjectKey {
    let kind = if report.namespace.is_some() {
        RESOURCE_PLACEMENT
    } else {
        CLUSTER_RESOURCE_PLACEMENT
    };
    ObjectKey {
        group: PLACEMENT_GROUP.into(),
        kind: kind.into(),
        namespace: report.namespace.clone().unwrap_or_default(),
        name: report.placement.clone(),
    }
}

fn record_report(
    state: &mut State,
    report: &WorkReport,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    if !state.members.contains_key(&report.cluster) {
        return vec![rejected(
            RejectCode::UnknownCluster,
            format!(
                "work report from {:?}, which is not a member cluster",
                report.cluster
            ),
        )];
    }
    let key = placement_key(report);
    // A ResourcePlacement's work cannot apply where its namespace does not exist, whatever the
    // member says: it is recorded as the member's applier would have failed it.
    let missing = namespaces::missing_namespace(state, &key, &report.cluster)
        .map(|namespace| without_namespace(state, &key, report, namespace));
    let report = missing.as_ref().unwrap_or(report);
    let Some(placement) = state.placements.get_mut(&key) else {
        return vec![rejected(
            RejectCode::UnknownPlacement,
            format!("work report for {}, which does not exist", key.display()),
        )];
    };
    // The report is about the cluster's work, which exists only while its binding does.
    let Some(binding) = placement.bindings.get_mut(&report.cluster) else {
        return vec![rejected(
            RejectCode::NotFound,
            format!(
                "cluster {} has no work from {}",
                report.cluster,
                key.display()
            ),
        )];
    };
    let current;
    let report = if report.resource_index == RESOURCE_INDEX_CURRENT {
        let Some(resource_index) = binding.resource_index else {
            return vec![rejected(
                RejectCode::StaleReport,
                format!(
                    "work report from cluster {} for {} names no resource index, and its work \
                     carries no resource snapshot yet",
                    report.cluster,
                    key.display()
                ),
            )];
        };
        current = WorkReport {
            resource_index,
            ..report.clone()
        };
        &current
    } else {
        report
    };
    if let Some(stale) = stale_report(binding, report, &key) {
        return vec![stale];
    }
    let status = work_status(binding.report.as_ref(), report, now);
    if binding
        .report
        .as_ref()
        .is_some_and(|old| old.says_the_same(&status))
    {
        return Vec::new();
    }
    binding.report = Some(status);
    changes.push(Change::WorkReported {
        placement: key.clone(),
        cluster: report.cluster.clone(),
    });
    vec![Decision::WorkReported {
        cluster: report.cluster.clone(),
        placement: key,
        resource_index: report.resource_index,
    }]
}

/// The report a member's applier gives when the namespace is missing: every manifest failed to
/// apply, with KubeFleet's reason and the API server's message.
fn without_namespace(
    state: &State,
    key: &ObjectKey,
    report: &WorkReport,
    namespace: &str,
) -> WorkReport {
    WorkReport {
        applied: Some(false),
        available: None,
        message: namespaces::missing_namespace_message(namespace),
        failed_manifests: namespaces::failed_for_missing_namespace(
            state,
            key,
            report.resource_index,
            namespace,
        ),
        ..report.clone()
    }
}

/// Only a report on the work the binding carries now counts: an older one (a retry, a slow
/// agent) must not overwrite what the cluster said about its current work. The current target
/// always counts, even when it is lower than an earlier one (after a rollback).
fn stale_report(binding: &Binding, report: &WorkReport, key: &ObjectKey) -> Option<Decision> {
    if binding.resource_index == Some(report.resource_index) {
        return None;
    }
    let carries = binding.resource_index.map_or_else(
        || "no resource snapshot yet".to_owned(),
        |i| format!("resource index {i}"),
    );
    Some(rejected(
        RejectCode::StaleReport,
        format!(
            "work report from cluster {} for {} is about resource index {}, but its work \
             carries {carries}",
            report.cluster,
            key.display(),
            report.resource_index
        ),
    ))
}

/// What the binding records of a report; `available_since` carries over while availability
/// (at this index, this trackability) stays the same.
fn work_status(
    previous: Option<&WorkStatus>,
    report: &WorkReport,
    now: DateTime<Utc>,
) -> WorkStatus {
    let same_availability = previous.is_some_and(|old| {
        old.resource_index == report.resource_index
            && old.available == report.available
            && old.trackable == report.trackable
    });
    WorkStatus {
        resource_index: report.resource_index,
        applied: report.applied,
        available: report.available,
        trackable: report.trackable,
        message: report.message.clone(),
        reported_at: now,
        available_since: previous
            .filter(|_| same_availability)
            .map_or(now, |old| old.available_since),
        failed_manifests: report
            .failed_manifests
            .iter()
            .take(crate::state::FAILED_MANIFESTS_MAX)
            .cloned()
            .collect(),
    }
}

//! A bound cluster's work chain: RolloutStarted, Overridden, WorkSynchronized, then Applied and
//! Available as its member reported them — or, under `ReportDiff`, DiffReported — with the
//! resources the report names (see [`super::listed`]).

use chrono::{DateTime, Utc};
use flotilla_core::ManifestCondition;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::query::overrides::{
    REASON_NO_OVERRIDE_SPECIFIED, REASON_OVERRIDDEN_FAILED, REASON_OVERRIDDEN_SUCCEEDED,
};
use flotilla_core::query::rollout::readiness::ApplyMode;
use flotilla_core::state::{FAILED_MANIFESTS_MAX, WorkStatus};
use serde_json::Value;

use super::listed::{self, Found, Listed};
use super::{Stage, Step};
use crate::json;
use crate::work::{RenderError, WorkFacts};

/// The conditions of a binding that carries resources, from the rollout's bind (when, and the
/// `RolloutStarted` message) to the member's latest report; `listed` gets what the report names.
pub(super) fn work_chain(
    facts: &WorkFacts<'_>,
    (bound_at, started): (DateTime<Utc>, String),
    mode: ApplyMode,
    listed: &mut Listed,
) -> Vec<Step> {
    let mut chain = vec![Step::new(
        Stage::RolloutStarted,
        ConditionStatus::True,
        "RolloutStarted",
        started,
        bound_at,
    )];
    let rendered = match &*facts.rendered {
        Ok(rendered) => rendered,
        Err(RenderError::Envelope {
            message,
            overridden,
        }) => {
            chain.push(overridden_step(*overridden, bound_at));
            chain.push(Step::new(
                Stage::WorkSynchronized,
                ConditionStatus::False,
                "SyncWorkFailed",
                format!("Failed to synchronize the work to the latest: {message}"),
                bound_at,
            ));
            return chain;
        }
        Err(error) => {
            chain.push(Step::new(
                Stage::Overridden,
                ConditionStatus::False,
                REASON_OVERRIDDEN_FAILED,
                format!(
                    "Failed to apply the override rules on the resources: {}",
                    error.message()
                ),
                bound_at,
            ));
            return chain;
        }
    };
    let overridden =
        !rendered.cluster_resource_overrides.is_empty() || !rendered.resource_overrides.is_empty();
    chain.push(overridden_step(overridden, bound_at));
    chain.push(Step::new(
        Stage::WorkSynchronized,
        ConditionStatus::True,
        "AllWorkSynced",
        "All of the works are synchronized to the latest",
        bound_at,
    ));
    let Some(report) = facts.report else {
        return chain;
    };
    match mode {
        ApplyMode::ReportDiff => diff_reported_step(&facts.name, report, &mut chain, listed),
        ApplyMode::Apply => {
            if applied_step(&facts.name, report, &mut chain, listed) {
                available_step(&facts.name, report, &mut chain, &mut listed.failed);
            }
            if report.applied.is_some() {
                // Drifts are found whether the apply succeeded or not.
                let drifted =
                    listed::placements(report.drifted(), Found::Drift, report.reported_at);
                listed.drifted = drifted;
            }
        }
    }
    chain
}

/// The `DiffReported` step of a `ReportDiff` work, with the diffed placements once every diff
/// was reported (before that they may be incomplete).
fn diff_reported_step(work: &str, report: &WorkStatus, chain: &mut Vec<Step>, listed: &mut Listed) {
    match report.diff_reported {
        None => {}
        Some(false) => chain.push(Step::new(
            Stage::DiffReported,
            ConditionStatus::False,
            "NotAllWorkHaveDiffReported",
            format!("Work object {work} has failed to report diff"),
            report.reported_at,
        )),
        Some(true) => {
            chain.push(Step::new(
                Stage::DiffReported,
                ConditionStatus::True,
                "AllWorkHaveDiffReported",
                "All corresponding work objects have reported diff",
                report.reported_at,
            ));
            listed.diffed = listed::placements(report.diffed(), Found::Diff, report.reported_at);
        }
    }
}

/// A successful `Overridden` step: with overrides or without any.
fn overridden_step(overridden: bool, bound_at: DateTime<Utc>) -> Step {
    if overridden {
        Step::new(
            Stage::Overridden,
            ConditionStatus::True,
            REASON_OVERRIDDEN_SUCCEEDED,
            "Successfully applied the override rules on the resources",
            bound_at,
        )
    } else {
        Step::new(
            Stage::Overridden,
            ConditionStatus::True,
            REASON_NO_OVERRIDE_SPECIFIED,
            "No override rules are configured for the selected resources",
            bound_at,
        )
    }
}

/// The `Applied` step of a reported work; whether the chain goes on (the work applied). A
/// failed apply lists the failed manifests and what a takeover found different.
fn applied_step(
    work: &str,
    report: &WorkStatus,
    chain: &mut Vec<Step>,
    listed: &mut Listed,
) -> bool {
    match report.applied {
        None => false,
        Some(false) => {
            chain.push(Step::new(
                Stage::Applied,
                ConditionStatus::False,
                "NotAllWorkHaveBeenApplied",
                format!("Work object {work} is not applied"),
                report.reported_at,
            ));
            listed.failed.extend(failed_placements(
                report,
                ManifestCondition::Applied,
                "ManifestApplyFailed",
                report.reported_at,
            ));
            listed.diffed = listed::placements(report.diffed(), Found::Diff, report.reported_at);
            false
        }
        Some(true) => {
            chain.push(Step::new(
                Stage::Applied,
                ConditionStatus::True,
                "AllWorkHaveBeenApplied",
                "All corresponding work objects are applied",
                report.reported_at,
            ));
            true
        }
    }
}

/// The `Available` step of an applied work, dated when its availability last changed.
fn available_step(work: &str, report: &WorkStatus, chain: &mut Vec<Step>, failed: &mut Vec<Value>) {
    let since = report.available_since;
    match report.available {
        None => {}
        Some(false) => {
            chain.push(Step::new(
                Stage::Available,
                ConditionStatus::False,
                "NotAllWorkAreAvailable",
                format!("Work object {work} is not available"),
                since,
            ));
            failed.extend(failed_placements(
                report,
                ManifestCondition::Available,
                "ManifestNotAvailableYet",
                since,
            ));
        }
        Some(true) if report.trackable => chain.push(Step::new(
            Stage::Available,
            ConditionStatus::True,
            "AllWorkAreAvailable",
            "All corresponding work objects are available",
            since,
        )),
        Some(true) => chain.push(Step::new(
            Stage::Available,
            ConditionStatus::True,
            "WorkNotTrackable",
            format!("The availability of work object {work} is not trackable"),
            since,
        )),
    }
}

/// The `FailedResourcePlacement`s of a work whose `condition` failed: one per manifest the
/// member named (with the resource's identity, as KubeFleet lists them, at most 100, with the
/// member's reason when it gave one), or — when the member reported only the work's outcome —
/// one entry with the member's message.
fn failed_placements(
    report: &WorkStatus,
    condition: ManifestCondition,
    reason: &str,
    since: DateTime<Utc>,
) -> Vec<Value> {
    let entry = |identity: Vec<(&str, &str)>, reason: &str, message: &str| {
        let mut fields: serde_json::Map<String, Value> = identity
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(field, value)| (field.to_owned(), Value::from(value)))
            .collect();
        fields.insert(
            "condition".to_owned(),
            json::object([
                ("type", Value::from(condition.as_str())),
                ("status", Value::from("False")),
                ("reason", Value::from(reason)),
                ("message", Value::from(message)),
                ("lastTransitionTime", Value::from(json::timestamp(since))),
            ]),
        );
        Value::Object(fields)
    };
    let named: Vec<Value> = report
        .failed_manifests()
        .iter()
        .filter(|m| m.condition == condition)
        .take(FAILED_MANIFESTS_MAX)
        .map(|m| {
            let identity = vec![
                ("group", m.group.as_str()),
                ("version", m.version.as_str()),
                ("kind", m.kind.as_str()),
                ("name", m.name.as_str()),
                ("namespace", m.namespace.as_str()),
            ];
            let message = if m.message.is_empty() {
                report.message()
            } else {
                m.message.as_str()
            };
            let reason = m
                .reason
                .as_deref()
                .filter(|r| !r.is_empty())
                .unwrap_or(reason);
            entry(identity, reason, message)
        })
        .collect();
    if named.is_empty() {
        vec![entry(Vec::new(), reason, report.message())]
    } else {
        named
    }
}

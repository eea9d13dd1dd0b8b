//! Work reports: what the hub records of a member's report on one placement's work.
//!
//! A report counts only for the work its cluster's binding carries now (a report on another
//! resource index is refused `StaleReport`); one that says nothing new changes nothing. Times are
//! the log's: the report's event time is when the work was observed so (`observationTime`), and a
//! manifest reported diffed or drifted keeps the time of the first report of an unbroken run of
//! reports on this work that listed it (`firstDiffedObservedTime` / `firstDriftedObservedTime`);
//! a report that no longer lists it ends the run, and so does a new work (the rollout binding
//! the cluster to other resources drops the report on the old one).
//!
//! Sizes are bounded as KubeFleet bounds them: at most [`FAILED_MANIFESTS_MAX`] failed and
//! [`DIFFERENCES_MAX`] diffed and drifted manifests each, in the order the member listed them,
//! and at most [`PATCH_DETAILS_MAX`] differing fields per manifest.

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use crate::change::{Change, Changes};
use crate::coordinate::namespaces;
use crate::decision::{Decision, RejectCode, rejected};
use crate::event::{Differences, ManifestDifference, RESOURCE_INDEX_CURRENT, WorkReport};
use crate::model::{CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP, RESOURCE_PLACEMENT};
use crate::placement::BindingState;
use crate::placement::binding::Binding;
use crate::state::State;
use crate::work_status::{
    DIFFERENCES_MAX, FAILED_MANIFESTS_MAX, ObservedDifference, PATCH_DETAILS_MAX, ReportDetails,
    WorkStatus,
};

fn placement_key(report: &WorkReport) -> ObjectKey {
    let kind = if report.namespace.is_some() {
        RESOURCE_PLACEMENT
    } else {
        CLUSTER_RESOURCE_PLACEMENT
    };
    ObjectKey {
        group: PLACEMENT_GROUP.into(),
        kind: kind.into(),
        namespace: report.namespace.as_deref().unwrap_or_default().into(),
        name: report.placement.as_str().into(),
    }
}

/// Records a member's report on its work for one placement at `now`.
pub(crate) fn record_report(
    state: &mut State,
    report: &WorkReport,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let key = placement_key(report);
    if !has_live_binding(state, &key, report)
        && !state.members.contains_key(report.cluster.as_str())
    {
        return vec![rejected(
            RejectCode::UnknownCluster,
            format!(
                "work report from {:?}, which is not a member cluster",
                report.cluster
            ),
        )];
    }
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
    let Some(mut slot) = placement.bindings.slot(report.cluster.as_str()) else {
        return vec![rejected(
            RejectCode::NotFound,
            format!(
                "cluster {} has no work from {}",
                report.cluster,
                key.display()
            ),
        )];
    };
    let binding = &mut slot.binding;
    let Some(report) = on_current_work(binding, report) else {
        return vec![no_resource_snapshot(report, &key)];
    };
    let report = &*report;
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
    slot.store();
    changes.push(Change::WorkReported {
        placement: key.clone(),
        cluster: report.cluster.as_str().into(),
    });
    vec![Decision::WorkReported {
        cluster: report.cluster.clone(),
        placement: key,
        resource_index: report.resource_index,
    }]
}

/// The report with a resource index of [`RESOURCE_INDEX_CURRENT`] read as the one the
/// binding's work carries now; `None` when its work carries no resource snapshot yet.
fn on_current_work<'r>(binding: &Binding, report: &'r WorkReport) -> Option<Cow<'r, WorkReport>> {
    if report.resource_index != RESOURCE_INDEX_CURRENT {
        return Some(Cow::Borrowed(report));
    }
    let resource_index = binding.resource_index?;
    Some(Cow::Owned(WorkReport {
        resource_index,
        ..report.clone()
    }))
}

/// The refusal of a report on the current work when the work carries no resource snapshot yet.
fn no_resource_snapshot(report: &WorkReport, key: &ObjectKey) -> Decision {
    rejected(
        RejectCode::StaleReport,
        format!(
            "work report from cluster {} for {} names no resource index, and its work \
             carries no resource snapshot yet",
            report.cluster,
            key.display()
        ),
    )
}

/// Whether the reporting cluster has a live binding of the placement, so is a member (every
/// live binding's cluster is one: `invariants::bindings`). The search is the one the report
/// makes next, so it costs the report one million-entry search instead of two: a wave's reports
/// arrive in no order, and each search of the members went to memory.
fn has_live_binding(state: &State, key: &ObjectKey, report: &WorkReport) -> bool {
    state
        .placements
        .get(key)
        .and_then(|placement| placement.bindings.state(report.cluster.as_str()))
        .is_some_and(|state| state != BindingState::Unscheduled)
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
        // A diff cannot be complete where the objects' namespace is missing.
        differences: Differences {
            diff_reported: report.differences.diff_reported.map(|_| false),
            ..report.differences.clone()
        },
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
/// (at this index, this trackability) stays the same, and first-seen times while a manifest
/// stays listed (at this index).
fn work_status(
    previous: Option<&WorkStatus>,
    report: &WorkReport,
    now: DateTime<Utc>,
) -> WorkStatus {
    let previous = previous.filter(|old| old.resource_index == report.resource_index);
    let same_availability = previous
        .is_some_and(|old| old.available == report.available && old.trackable == report.trackable);
    let mut status = WorkStatus::new(report.resource_index, now);
    status.applied = report.applied;
    status.available = report.available;
    status.trackable = report.trackable;
    status.diff_reported = report.differences.diff_reported;
    status.available_since = previous
        .filter(|_| same_availability)
        .map_or(now, |old| old.available_since);
    status.set_details(ReportDetails {
        message: report.message.clone(),
        failed_manifests: report
            .failed_manifests
            .iter()
            .take(FAILED_MANIFESTS_MAX)
            .cloned()
            .collect(),
        diffed: observed(
            previous.map(WorkStatus::diffed),
            &report.differences.diffed_manifests,
            now,
        ),
        drifted: observed(
            previous.map(WorkStatus::drifted),
            &report.differences.drifted_manifests,
            now,
        ),
    });
    status
}

/// The reported manifests as the hub keeps them: bounded, each with the time it was first seen
/// so in the run of reports that `previous` (the report before, on this work) continues.
fn observed(
    previous: Option<&[ObservedDifference]>,
    reported: &[ManifestDifference],
    now: DateTime<Utc>,
) -> thin_vec::ThinVec<ObservedDifference> {
    let first_seen = |manifest: &ManifestDifference| {
        previous
            .unwrap_or_default()
            .iter()
            .find(|old| old.manifest.identity() == manifest.identity())
            .map_or(now, |old| old.first_observed)
    };
    reported
        .iter()
        .take(DIFFERENCES_MAX)
        .map(|manifest| ObservedDifference {
            manifest: ManifestDifference {
                details: manifest
                    .details
                    .iter()
                    .take(PATCH_DETAILS_MAX)
                    .cloned()
                    .collect(),
                ..manifest.clone()
            },
            first_observed: first_seen(manifest),
        })
        .collect()
}

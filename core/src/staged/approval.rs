//! Approval requests: created by a run when it reaches an Approval task, approved by an
//! `approve` input (what `kubectl patch … Approved=True` does in KubeFleet), and marked
//! `ApprovalAccepted` by the run once it has seen the approval.

use chrono::{DateTime, Utc};

use super::Scope;
use super::run::{ApprovalRequest, TaskPosition};
use crate::change::{Change, Changes};
use crate::condition::{Condition, ConditionStatus};
use crate::decision::{Decision, RejectCode, rejected};
use crate::model::{ObjectKey, ObjectMeta, PLACEMENT_GROUP};
use crate::staged::Store;

/// Creates the request unless it exists.
pub(crate) fn create(
    state: &mut Store<'_>,
    scope: &Scope,
    name: &str,
    stage: &str,
    position: TaskPosition,
    now: DateTime<Utc>,
) {
    let key = scope.approval_key(name);
    if state.approvals.contains_key(&key) {
        return;
    }
    let resource_version = state.next_resource_version();
    let labels = [
        ("kubernetes-fleet.io/isLatestUpdateRunApproval", "true"),
        (
            "kubernetes-fleet.io/targetupdaterun",
            scope.run_name.as_str(),
        ),
        ("kubernetes-fleet.io/targetUpdatingStage", stage),
        ("kubernetes-fleet.io/taskType", position.as_str()),
    ]
    .into_iter()
    .map(|(k, v)| (k, compact_str::CompactString::from(v)))
    .collect();
    let meta = ObjectMeta {
        api_version: crate::model::uid::api_version(&format!("{PLACEMENT_GROUP}/v1beta1")),
        labels,
        annotations: crate::model::StringMap::new(),
        uid: crate::model::Uid::Text(format!("{}-{}", scope.run_name, name).into()),
        resource_version,
        generation: 1,
        creation_timestamp: now,
    };
    state.approvals.insert(
        key,
        ApprovalRequest {
            meta,
            run: scope.run_name.to_string(),
            stage: stage.to_owned(),
            position,
            approved: None,
            accepted: None,
        },
    );
}

/// Whether the request is approved; if so, marks it `ApprovalAccepted` (once).
pub(crate) fn accept(
    state: &mut Store<'_>,
    scope: &Scope,
    name: &str,
    generation: u64,
    now: DateTime<Utc>,
) -> bool {
    let Some(request) = state.approvals.get_mut(&scope.approval_key(name)) else {
        return false;
    };
    if request.approved.is_none() {
        return false;
    }
    if request.accepted.is_none() {
        request.accepted = Some(Condition::new(
            "ApprovalAccepted",
            ConditionStatus::True,
            "ApprovalAccepted",
            "The approval request has been approved and cannot be reverted".to_owned(),
            generation.max(1),
            now,
        ));
    }
    true
}

/// The `approve` input: sets `Approved=True` on an existing request.
pub(crate) fn approve(
    state: &mut Store<'_>,
    name: &str,
    namespace: Option<&str>,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let key = match namespace {
        Some(ns) => ObjectKey {
            group: PLACEMENT_GROUP.into(),
            kind: super::APPROVAL_REQUEST.into(),
            namespace: ns.into(),
            name: name.into(),
        },
        None => ObjectKey::cluster_scoped(PLACEMENT_GROUP, super::CLUSTER_APPROVAL_REQUEST, name),
    };
    let Some(request) = state.approvals.get_mut(&key) else {
        let at = namespace.map(|ns| format!("{ns}/")).unwrap_or_default();
        return vec![rejected(
            RejectCode::ApprovalRequestNotFound,
            format!("{} {at}{name} not found", key.kind),
        )];
    };
    if request.approved.is_some() {
        return vec![Decision::ObjectUnchanged {
            object: key.clone(),
        }];
    }
    request.approved = Some(Condition::new(
        "Approved",
        ConditionStatus::True,
        "approved",
        "approved".to_owned(),
        request.meta.generation,
        now,
    ));
    changes.push(Change::ApprovalGranted {
        request: key.clone(),
    });
    vec![Decision::ApprovalGranted { request: key }]
}

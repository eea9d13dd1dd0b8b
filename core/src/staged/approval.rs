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

/// An approval as its input gives it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Approval<'a> {
    /// The request's name.
    pub name: &'a str,
    /// Its namespace (`None`: a `ClusterApprovalRequest`).
    pub namespace: Option<&'a str>,
    /// The `Approved` condition's reason (`None`: [`APPROVED`]).
    pub reason: Option<&'a str>,
    /// The condition's message (`None`: [`APPROVED`]).
    pub message: Option<&'a str>,
}

/// The reason and message of an approval that gave none: what KubeFleet's documented
/// `kubectl patch` writes.
pub const APPROVED: &str = "approved";

/// The longest `reason` a Kubernetes condition takes (`metav1.Condition`).
pub const REASON_MAX: usize = 1024;
/// The longest `message` a Kubernetes condition takes (`metav1.Condition`).
pub const MESSAGE_MAX: usize = 32_768;

/// Why an approval's reason or message is not one a Kubernetes condition takes: the reason is
/// CamelCase-ish, `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$` and at most [`REASON_MAX`]
/// bytes, the message at most [`MESSAGE_MAX`] (`metav1.Condition`'s validation).
#[must_use]
pub fn condition_text_error(reason: Option<&str>, message: Option<&str>) -> Option<String> {
    if let Some(reason) = reason {
        let bytes = reason.as_bytes();
        let inner_ok = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':');
        let well_formed = bytes.first().is_some_and(u8::is_ascii_alphabetic)
            && bytes.iter().all(inner_ok)
            && bytes
                .last()
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if !well_formed || bytes.len() > REASON_MAX {
            return Some(format!(
                "status.conditions[type=Approved].reason {reason:?} must start with a letter, \
                 hold only letters, digits, '_', ',' and ':', end with a letter, digit or '_', \
                 and be at most {REASON_MAX} bytes"
            ));
        }
    }
    match message {
        Some(message) if message.len() > MESSAGE_MAX => Some(format!(
            "status.conditions[type=Approved].message is {} bytes, more than {MESSAGE_MAX}",
            message.len()
        )),
        _ => None,
    }
}

/// The `approve` input: sets `Approved=True` on an existing request, with the approver's
/// reason and message.
pub(crate) fn approve(
    state: &mut Store<'_>,
    approval: Approval<'_>,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Approval {
        name, namespace, ..
    } = approval;
    if let Some(error) = condition_text_error(approval.reason, approval.message) {
        return vec![rejected(RejectCode::InvalidObject, error)];
    }
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
        approval.reason.unwrap_or(APPROVED),
        approval.message.unwrap_or(APPROVED).to_owned(),
        request.meta.generation,
        now,
    ));
    changes.push(Change::ApprovalGranted {
        request: key.clone(),
    });
    vec![Decision::ApprovalGranted { request: key }]
}

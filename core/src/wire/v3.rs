//! Schema version 3 of input events, exactly as it was written: frozen. Bodies framed with
//! version 3 decode into these types and upcast with `From` into the current ones. Version 4
//! added the agent's leave confirmation, a reason on failed manifests and the differences a
//! member found (diffs, drifts, whether ReportDiff completed): a version 3 report found none, a
//! version 3 failure names no reason, and version 3 had no leave.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::event;

/// Version 3 envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Id.
    pub id: Uuid,
    /// The log's time.
    pub time: DateTime<Utc>,
    /// What the publisher claimed about time.
    pub claimed_time: Option<DateTime<Utc>>,
    /// Publisher.
    pub source: String,
    /// Schema version (3).
    pub schema_version: u16,
    /// Payload.
    pub payload: Input,
}

/// Version 3 inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Input {
    /// Apply.
    Apply {
        /// Manifest JSON text.
        manifest: String,
    },
    /// Delete.
    Delete {
        /// Target.
        target: ObjectRef,
    },
    /// Heartbeat.
    Heartbeat(Heartbeat),
    /// Work report.
    WorkReport(WorkReport),
    /// Approval.
    Approve {
        /// Request name.
        name: String,
        /// Namespace.
        namespace: Option<String>,
    },
    /// Tick.
    Tick,
}

/// Version 3 object reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// Kind.
    pub kind: String,
    /// Group.
    pub group: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

/// Version 3 heartbeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// Cluster.
    pub cluster: String,
    /// Properties.
    pub properties: BTreeMap<String, String>,
    /// Resource usage.
    pub resource_usage: Option<ResourceUsage>,
}

/// Version 3 resource usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Capacity.
    pub capacity: BTreeMap<String, String>,
    /// Allocatable.
    pub allocatable: BTreeMap<String, String>,
    /// Available.
    pub available: BTreeMap<String, String>,
}

/// Version 3 work report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkReport {
    /// Cluster.
    pub cluster: String,
    /// Placement.
    pub placement: String,
    /// Namespace.
    pub namespace: Option<String>,
    /// Resource index.
    pub resource_index: u64,
    /// Applied.
    pub applied: Option<bool>,
    /// Available.
    pub available: Option<bool>,
    /// Trackable.
    pub trackable: bool,
    /// Message.
    pub message: String,
    /// Failed manifests.
    pub failed_manifests: Vec<ManifestFailure>,
}

/// Version 3 manifest condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ManifestCondition {
    /// Applied.
    Applied,
    /// Available.
    Available,
}

/// Version 3 manifest failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFailure {
    /// Group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Condition.
    pub condition: ManifestCondition,
    /// Message.
    pub message: String,
}

impl From<Envelope> for event::Envelope {
    fn from(v3: Envelope) -> Self {
        Self {
            id: v3.id,
            time: v3.time,
            claimed_time: v3.claimed_time,
            source: v3.source,
            schema_version: v3.schema_version,
            payload: v3.payload.into(),
            principal: crate::principal::Principal::Unrecorded,
        }
    }
}

impl From<Input> for event::Input {
    fn from(v3: Input) -> Self {
        match v3 {
            Input::Apply { manifest } => event::Input::Apply { manifest },
            Input::Delete { target } => event::Input::Delete {
                target: event::ObjectRef {
                    kind: target.kind,
                    group: target.group,
                    namespace: target.namespace,
                    name: target.name,
                },
            },
            Input::Heartbeat(beat) => event::Input::Heartbeat(event::Heartbeat {
                cluster: beat.cluster,
                properties: beat.properties.into(),
                resource_usage: beat.resource_usage.map(|usage| event::ResourceUsage {
                    capacity: usage.capacity.into(),
                    allocatable: usage.allocatable.into(),
                    available: usage.available.into(),
                }),
            }),
            Input::WorkReport(report) => event::Input::WorkReport(report.into()),
            Input::Approve { name, namespace } => event::Input::Approve {
                name,
                namespace,
                reason: None,
                message: None,
            },
            Input::Tick => event::Input::Tick,
        }
    }
}

impl From<WorkReport> for event::WorkReport {
    fn from(report: WorkReport) -> Self {
        Self {
            cluster: report.cluster,
            placement: report.placement,
            namespace: report.namespace,
            resource_index: report.resource_index,
            applied: report.applied,
            available: report.available,
            trackable: report.trackable,
            message: report.message,
            failed_manifests: report
                .failed_manifests
                .into_iter()
                .map(|failure| event::ManifestFailure {
                    group: failure.group,
                    version: failure.version,
                    kind: failure.kind,
                    namespace: failure.namespace,
                    name: failure.name,
                    condition: match failure.condition {
                        ManifestCondition::Applied => event::ManifestCondition::Applied,
                        ManifestCondition::Available => event::ManifestCondition::Available,
                    },
                    message: failure.message,
                    reason: None,
                })
                .collect(),
            differences: event::Differences::default(),
        }
    }
}

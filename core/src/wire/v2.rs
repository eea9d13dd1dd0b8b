//! Schema version 2 of input events, exactly as it was written: frozen. Bodies framed with
//! version 2 decode into these types and upcast with `From` into the current ones. Version 3
//! only added `claimed_time` to the envelope: a version 2 event claimed nothing, and keeps the
//! time stored with it as the log's time (records written before the log assigned time).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::event;

/// Version 2 envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Id.
    pub id: Uuid,
    /// Event time (the publisher's, as stored).
    pub time: DateTime<Utc>,
    /// Publisher.
    pub source: String,
    /// Schema version (2).
    pub schema_version: u16,
    /// Payload.
    pub payload: Input,
}

/// Version 2 inputs.
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

/// Version 2 object reference.
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

/// Version 2 heartbeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// Cluster.
    pub cluster: String,
    /// Properties.
    pub properties: BTreeMap<String, String>,
    /// Resource usage.
    pub resource_usage: Option<ResourceUsage>,
}

/// Version 2 resource usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Capacity.
    pub capacity: BTreeMap<String, String>,
    /// Allocatable.
    pub allocatable: BTreeMap<String, String>,
    /// Available.
    pub available: BTreeMap<String, String>,
}

/// Version 2 work report.
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

/// Version 2 manifest condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ManifestCondition {
    /// Applied.
    Applied,
    /// Available.
    Available,
}

/// Version 2 manifest failure.
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
    fn from(v2: Envelope) -> Self {
        Self {
            id: v2.id,
            time: v2.time,
            claimed_time: None,
            source: v2.source,
            schema_version: v2.schema_version,
            payload: v2.payload.into(),
            principal: crate::principal::Principal::Unrecorded,
        }
    }
}

impl From<Input> for event::Input {
    fn from(v2: Input) -> Self {
        match v2 {
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
            Input::WorkReport(report) => event::Input::WorkReport(event::WorkReport {
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
            }),
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

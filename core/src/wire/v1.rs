//! Schema version 1 of input events, exactly as it was written: frozen. Bodies framed with
//! version 1 decode into these types and upcast with `From` into the current ones, filling
//! what version 1 did not have with the value that keeps its meaning (a report without
//! per-manifest failures).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::event;

/// Version 1 envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Id.
    pub id: Uuid,
    /// Event time.
    pub time: DateTime<Utc>,
    /// Publisher.
    pub source: String,
    /// Schema version (1).
    pub schema_version: u16,
    /// Payload.
    pub payload: Input,
}

/// Version 1 inputs.
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

/// Version 1 object reference.
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

/// Version 1 heartbeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// Cluster.
    pub cluster: String,
    /// Properties.
    pub properties: BTreeMap<String, String>,
    /// Resource usage.
    pub resource_usage: Option<ResourceUsage>,
}

/// Version 1 resource usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Capacity.
    pub capacity: BTreeMap<String, String>,
    /// Allocatable.
    pub allocatable: BTreeMap<String, String>,
    /// Available.
    pub available: BTreeMap<String, String>,
}

/// Version 1 work report: one outcome for the whole work.
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
}

impl From<Envelope> for event::Envelope {
    fn from(v1: Envelope) -> Self {
        Self {
            id: v1.id,
            time: v1.time,
            claimed_time: None,
            source: v1.source,
            schema_version: v1.schema_version,
            payload: v1.payload.into(),
            principal: crate::principal::Principal::Unrecorded,
        }
    }
}

impl From<Input> for event::Input {
    fn from(v1: Input) -> Self {
        match v1 {
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
                failed_manifests: Vec::new(),
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

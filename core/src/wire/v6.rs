//! Schema version 6 of input events (and version 5's payload, unchanged in version 6): frozen.
//! Version 7 added the approver's reason and message to [`Input::Approve`] and changed nothing
//! else, so the other inputs are the current types; a version 6 approval gave neither, and
//! upcasts to one whose condition reads `approved` as it always did.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::event;
use crate::principal::Principal;

/// Version 6 envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Id.
    pub id: Uuid,
    /// The log's time.
    #[serde(with = "crate::wire::time_text")]
    pub time: DateTime<Utc>,
    /// What the publisher claimed about time.
    #[serde(default, with = "crate::wire::time_text::option")]
    pub claimed_time: Option<DateTime<Utc>>,
    /// Publisher.
    pub source: String,
    /// Schema version (6).
    pub schema_version: u16,
    /// Payload.
    pub payload: Input,
    /// Who it came from.
    pub principal: Principal,
}

/// Version 6 inputs (and version 5's).
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
        target: event::ObjectRef,
    },
    /// Heartbeat.
    Heartbeat(event::Heartbeat),
    /// Work report.
    WorkReport(event::WorkReport),
    /// Approval.
    Approve {
        /// Request name.
        name: String,
        /// Namespace.
        namespace: Option<String>,
    },
    /// Tick.
    Tick,
    /// Leave.
    Leave {
        /// Cluster.
        cluster: String,
    },
    /// Analysis result.
    AnalysisResult(event::AnalysisResult),
}

impl From<Envelope> for event::Envelope {
    fn from(v6: Envelope) -> Self {
        Self {
            id: v6.id,
            time: v6.time,
            claimed_time: v6.claimed_time,
            source: v6.source,
            schema_version: v6.schema_version,
            payload: v6.payload.into(),
            principal: v6.principal,
        }
    }
}

impl From<Input> for event::Input {
    fn from(v6: Input) -> Self {
        match v6 {
            Input::Apply { manifest } => event::Input::Apply { manifest },
            Input::Delete { target } => event::Input::Delete { target },
            Input::Heartbeat(beat) => event::Input::Heartbeat(beat),
            Input::WorkReport(report) => event::Input::WorkReport(report),
            Input::Approve { name, namespace } => event::Input::Approve {
                name,
                namespace,
                reason: None,
                message: None,
            },
            Input::Tick => event::Input::Tick,
            Input::Leave { cluster } => event::Input::Leave { cluster },
            Input::AnalysisResult(result) => event::Input::AnalysisResult(result),
        }
    }
}

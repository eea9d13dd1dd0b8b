//! Schema version 5 of input events (and version 4, whose bodies decode with the same types):
//! frozen. Version 6 added the principal after the payload and changed nothing else, so the
//! version 5 envelope is kept here and its payload is version 6's ([`super::v6::Input`]). A
//! version 5 event recorded no principal: [`Principal::Unrecorded`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::event;
use crate::principal::Principal;

/// Version 5 envelope.
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
    /// Schema version (4 or 5).
    pub schema_version: u16,
    /// Payload.
    pub payload: super::v6::Input,
}

impl From<Envelope> for event::Envelope {
    fn from(v5: Envelope) -> Self {
        Self {
            id: v5.id,
            time: v5.time,
            claimed_time: v5.claimed_time,
            source: v5.source,
            schema_version: v5.schema_version,
            payload: v5.payload.into(),
            principal: Principal::Unrecorded,
        }
    }
}

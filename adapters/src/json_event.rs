//! The JSON form of input events, for external publishers. It lives in
//! [`flotilla_core::wire::json`], so that the HTTP and NATS ingestion and the log reader (a JSON
//! record published straight onto `flotilla.in.*`) share one parser; re-exported here.
//!
//! The answer to an append ([`AppendResult`]) is here too: the hub's ingest writes it and the
//! command-line client reads it, and neither side needs the other for it.

pub use flotilla_core::wire::json::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One appended event's outcome.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct AppendResult {
    /// Event id.
    pub id: uuid::Uuid,
    /// Sequence in the log.
    pub seq: u64,
    /// Already in the log.
    pub duplicate: bool,
    /// What the fold decided (only when waiting, and only if folded in time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Value>,
}

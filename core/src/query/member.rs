//! Member clusters. What other crates read of `member`: the fold's own types and rules,
//! so an explanation never re-derives them.

pub use crate::member::{
    AgentStatus, HEARTBEAT_TIMEOUT_PERIODS, Member, REASON_HEARTBEAT_RESUMED,
    REASON_HEARTBEAT_TIMEOUT,
};

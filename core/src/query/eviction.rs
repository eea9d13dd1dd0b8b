//! Evictions and disruption budgets. What other crates read of `eviction`: the fold's own types and rules,
//! so an explanation never re-derives them.

pub use crate::eviction::{DisruptionBudget, Eviction};

/// `eviction::status`: what other crates read of it.
pub mod status {
    pub use crate::eviction::status::{
        CONDITION_EXECUTED, CONDITION_VALID, MESSAGE_MISSING_BINDING, MESSAGE_MISSING_PLACEMENT,
    };
}

//! The scheduler. What other crates read of `scheduler`: the fold's own types and rules,
//! so an explanation never re-derives them.

/// `scheduler::filter`: what other crates read of it.
pub mod filter {
    pub use crate::scheduler::filter::{filter, ineligible};
}

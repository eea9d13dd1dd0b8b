//! The kinds the hub serves. What other crates read of `catalog`: the fold's own types and rules,
//! so an explanation never re-derives them.
pub use crate::catalog::{CRD_GROUP, ENTRIES, Entry};

//! What moves several aggregates at once. What other crates read of `coordinate`: the fold's own types and rules,
//! so an explanation never re-derives them.

/// `coordinate::namespaces`: what other crates read of it.
pub mod namespaces {
    pub use crate::coordinate::namespaces::{NAMESPACE_PROPERTY_PREFIX, namespace_exists};
}

//! Which kinds are namespaced. What other crates read of `kind_scope`: the fold's own types and rules,
//! so an explanation never re-derives them.

pub use crate::kind_scope::{is_cluster_scoped, namespaced};

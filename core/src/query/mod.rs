//! Read-only questions about a folded state, answered by the fold's own rules. `replay`,
//! `projections` and the web page explain through these, so that no rule is written both in
//! the fold and in an explanation of it. The aggregates' own modules are private to the crate:
//! what other crates read of them is re-exported here, under the aggregate's name.

pub mod availability;
pub mod catalog;
pub mod coordinate;
pub mod eviction;
pub mod kind_scope;
pub mod manifest;
pub mod member;
pub mod overrides;
pub mod placement;
pub mod rollout;
pub mod scheduler;
pub mod staged;

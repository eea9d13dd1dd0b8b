//! What one change does to several aggregates. Each aggregate's verbs change its own store;
//! the functions here run where a change to one store moves others: a placement or member
//! cluster stored schedules placements again ([`lifecycle`]), a member leaving releases its
//! bindings ([`members`]), an executed eviction removes a binding and schedules its placement
//! again ([`evictions`]), snapshots are pruned around what staged runs still hold
//! ([`retention`]), and a namespace exists on a cluster by its members' reports or the
//! placements that carry it there ([`namespaces`]).

pub(crate) mod evictions;
pub(crate) mod lifecycle;
pub(crate) mod members;
pub mod namespaces;
pub(crate) mod placements;
mod retention;

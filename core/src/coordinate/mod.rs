//! What one change does to several aggregates. Each aggregate's verbs change its own store;
//! the functions here run where a change to one store moves others: a placement or member
//! cluster stored schedules placements again ([`lifecycle`]), a member leaving releases its
//! bindings ([`members`]), an executed eviction removes a binding and schedules its placement
//! again ([`evictions`]), a binding bound to a work its overrides fail to render keeps its
//! failure, marks the rollout's index and drives its staged runs ([`override_verdicts`]),
//! snapshots are pruned around what staged runs still hold
//! ([`retention`]), and a namespace exists on a cluster by its members' reports or the
//! placements that carry it there ([`namespaces`]).

pub(crate) mod evictions;
pub(crate) mod lifecycle;
pub(crate) mod members;
pub mod namespaces;
pub(crate) mod override_verdicts;
pub(crate) mod placements;
mod retention;

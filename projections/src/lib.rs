//! flotilla-projections: what people read, rendered from the folded [`State`] in KubeFleet's own
//! shapes so that existing tooling and habits carry over.
//!
//! Guarantees:
//! - Every function here is a pure function of its arguments. Times come from the state's event
//!   time (`State::now`), never the wall clock; nothing iterates a hash map. The same state gives
//!   byte-identical output on any machine, so scenario runs can compare it byte for byte.
//! - Objects ([`render_object`], [`render_all`], [`list`]) look like `kubectl get -o json`:
//!   `apiVersion`, `kind`, `metadata` (with `uid`, string `resourceVersion`, `generation`,
//!   `creationTimestamp`), `spec` with KubeFleet's defaults filled in, and a `status` shaped like
//!   KubeFleet's; keys sorted, `null` fields and empty labels/annotations left out. The objects
//!   KubeFleet derives from placements (scheduling policy snapshots, resource snapshots,
//!   bindings, the `Work` each bound cluster applies, `ClusterResourcePlacementStatus`) are
//!   rendered too, with uids derived from their placement's so that replays agree.
//!   [`works_for_cluster`] lists the works one member cluster is asked to apply.
//! - Text views follow kubectl: [`table`] is `kubectl get` (KubeFleet's printer columns),
//!   [`describe`] is `kubectl describe`, and the timeline ([`event_line`], [`decision_line`])
//!   gives one line per event and per decision.
//!
//! [`State`]: flotilla_core::State

mod age;
mod binding;
use flotilla_core::query::catalog;
mod derived;
mod describe;
mod event_columns;
mod events;
mod eviction;
mod json;
mod kinds;
mod marks;
mod member_cluster;
mod objects;
mod overrides;
mod partitioned_status;
mod placement;
mod placement_events;
mod placement_status;
mod progress;
mod safety_status;
mod served;
mod snapshots;
mod staged;
mod table;
mod tabwriter;
mod timeline;
mod work;

pub use age::human_duration;
pub use catalog::{CRD_GROUP, ENTRIES, Entry};
pub use describe::describe;
pub use events::{EVENTS_GROUP, is_event_kind};
pub use kinds::{KindInfo, resolve_kind};
pub use marks::{MARKS_MAX, Mark, Marks, marks_of};
pub use member_cluster::{
    AGENT_MEMBER, CONDITION_HEALTHY, CONDITION_JOINED, CONDITION_READY_TO_JOIN,
    REASON_AGENT_HEALTHY, REASON_AGENT_JOINED, REASON_HEARTBEAT_NOT_RECEIVED,
    REASON_HEARTBEAT_RECEIVED, REASON_JOIN_STATE_UNKNOWN, REASON_JOINED, REASON_READY_TO_JOIN,
};
pub use objects::{list, render_all, render_all_but_members, render_member, render_object};
pub use served::{ServedType, find_type, served_types, type_of_kind};
pub use staged::runs_cut;
pub use table::{TableColumn, TableData, table, table_data, table_named};
pub use timeline::{actor, decision_line, event_line};
pub use work::{all_works, works_for_cluster};

#[cfg(test)]
mod tests;

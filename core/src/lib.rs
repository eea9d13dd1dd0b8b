//! flotilla-core: the pure, deterministic heart of flotilla.
//!
//! Guarantees:
//! - [`fold::step`] is a pure function of `(state, event)`: no IO, no clock, no randomness, and
//!   no hash-map iteration; the same events in the same order give byte-identical state (see
//!   [`State::hash`]) and identical [`Decision`]s on any machine.
//! - A rejected input changes nothing — not even the fold's clock — and is answered with a
//!   stable [`RejectCode`].
//! - Time is data: it comes from the times the log assigned to events (never a publisher's
//!   claim), and [`fold::next_deadline`] says when the core needs a tick.
//! - [`invariants::check`] states what every folded state satisfies; tests and debug replays
//!   check it after every step.
//! - Decisions are the record users read; inside a step the aggregates tell the rollout passes
//!   what changed through typed [`change::Changes`], never by re-reading decisions.
//!
//! The crate also owns the one binary codec ([`codec`]) and the versioned stored form of every
//! record kind — events, decision batches, checkpoints — and of the JSON form publishers send
//! ([`wire`]): how a stored record reads back ([`wire::LogRecord`]) is decided here, without IO.

//! The public surface is small: [`step`] and [`next_deadline`], the [`State`] they fold, the
//! inputs ([`event`]) and outputs ([`decision`]), the object [`model`], the record formats
//! ([`codec`], [`wire`]), the [`invariants`], and [`query`] — what other crates read of the
//! aggregates (member clusters, placements, the scheduler, rollouts, overrides, staged runs,
//! evictions), whose own modules are private, so an explanation reads the fold's own rules
//! instead of writing them again.

#![warn(clippy::too_many_lines)]

mod availability;
mod catalog;
mod change;
pub mod codec;
pub mod condition;
mod coordinate;
pub mod decision;
mod derived;
pub mod event;
mod eviction;
pub mod fold;
mod growth;
pub mod invariants;
mod kind_scope;
mod manifest;
mod member;
pub mod model;
mod objects;
mod overrides;
mod placement;
pub mod principal;
pub mod query;
mod report;
mod revision;
mod rollout;
mod scheduler;
mod staged;
pub mod state;
pub mod time_text;
pub mod wire;
mod work_status;

pub use decision::{Decision, Decisions, RejectCode};
pub use event::{
    AnalysisResult, Differences, Envelope, Heartbeat, Input, ManifestCondition, ManifestDifference,
    ManifestFailure, ObjectRef, PatchDetail, RESOURCE_INDEX_CURRENT, ResourceUsage, SCHEMA_VERSION,
    WorkReport,
};
pub use fold::{next_deadline, step};
pub use principal::{Principal, TokenRole};
pub use state::{State, StateHash};

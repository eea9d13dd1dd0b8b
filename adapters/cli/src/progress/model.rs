//! The view model of a rollout's progress: a headline, one [`Bar`] per stage, partition or
//! cluster, and an [`Outcome`] — read from the objects as the hub's JSON API serves them
//! (KubeFleet's shapes), so it is tested without a terminal or a hub.
//!
//! An outcome here is what the object alone shows. A staged run's approval, timed wait, `Stop`
//! or `Initialize` state is a wait at once; a rolling or partitioned rollout that stops moving
//! is judged by the hub's explain text instead (see [`super::follow`]).

mod placement;
mod run;
mod view;

pub use placement::placement_view;
pub use run::run_view;
pub use view::{Bar, BarKind, Outcome, View};
pub(crate) use view::{condition, has, object_label, text};

//! Overrides: `ClusterResourceOverride` and `ResourceOverride` customise the selected resources
//! per member cluster before they are placed (KubeFleet's override docs).
//!
//! Contract:
//! - An override is validated on its own when parsed ([`parse_spec`]) and against the stored
//!   overrides when applied: at most [`OVERRIDES_PER_KIND_MAX`] of each kind, one override of a
//!   kind per resource (a CRO and an RO may share one; the RO wins by being applied last), and
//!   an immutable placement reference.
//! - Every spec change takes a new [`OverrideSnapshot`]; the latest one is what applies.
//! - [`render_for_cluster`] is pure: the same state, resources and cluster give the same
//!   manifests (canonical JSON) and the same sorted snapshot lists, or the same
//!   [`OverrideError`] naming the override, rule and patch that failed.

mod apply;
mod matching;
pub mod model;
pub(crate) mod retired;
mod snapshot;
pub(crate) mod store;
pub mod validation;
mod variables;

use serde::{Deserialize, Serialize};

pub use apply::{OverrideError, RenderedWork, render_for_cluster, render_with_snapshots};
pub use matching::applicable_overrides;
pub(crate) use model::parse_spec;
pub use model::{OverrideKind, OverrideSpec};
pub use snapshot::{OVERRIDE_SNAPSHOTS_MAX, OverrideSnapshot, parse_snapshot_name, snapshot_name};

use std::collections::BTreeMap;

use crate::member::Members;
use crate::model::{ObjectKey, ObjectMeta};
use crate::placement::Placement;

crate::revision::stored_objects!(Override => OverrideSpec);

/// What rendering and matching overrides read, borrowed from the state: the stored overrides,
/// the snapshots retired from them that works still use, and the member clusters (their rules
/// select clusters by label). A `&State` converts into it.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    /// ClusterResourceOverrides and ResourceOverrides, with their snapshots.
    pub overrides: &'a BTreeMap<ObjectKey, Override>,
    /// Snapshots gone from their override that a binding's work still uses, by override.
    pub retired: &'a BTreeMap<ObjectKey, Vec<OverrideSnapshot>>,
    /// Member clusters by name.
    pub members: &'a Members,
}

/// The override store a verb changes, borrowed from the state: the overrides and their retired
/// snapshots, the hub's resource version counter, and the placements whose bindings keep
/// retired snapshots in use.
pub(crate) struct Store<'a> {
    /// ClusterResourceOverrides and ResourceOverrides, with their snapshots.
    pub overrides: &'a mut BTreeMap<ObjectKey, Override>,
    /// Snapshots gone from their override that a binding's work still uses, by override.
    pub retired: &'a mut BTreeMap<ObjectKey, Vec<OverrideSnapshot>>,
    /// The last resource version handed out.
    pub resource_version: &'a mut u64,
    /// ClusterResourcePlacements and ResourcePlacements.
    pub placements: &'a BTreeMap<ObjectKey, Placement>,
}

/// Most overrides of one kind that can exist (KubeFleet's limit: the 101st create is denied).
pub const OVERRIDES_PER_KIND_MAX: usize = 100;

/// Reason of a cluster's `Overridden` condition when no override applies.
pub const REASON_NO_OVERRIDE_SPECIFIED: &str = "NoOverrideSpecified";
/// Reason of a cluster's `Overridden` condition when the overrides applied.
pub const REASON_OVERRIDDEN_SUCCEEDED: &str = "OverriddenSucceeded";
/// Reason of a cluster's `Overridden` condition when an override failed to apply.
pub const REASON_OVERRIDDEN_FAILED: &str = "OverriddenFailed";

/// A stored override and its snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Override {
    /// Which kind it is.
    pub kind: OverrideKind,
    /// Metadata.
    pub meta: ObjectMeta,
    /// Validated spec.
    pub spec: OverrideSpec,
    /// Snapshots, oldest first; the last is the latest and always equals `spec`.
    pub snapshots: Vec<OverrideSnapshot>,
}

impl Override {
    /// A new override with its first snapshot (index 0) taken at `now`.
    #[must_use]
    pub fn new(
        kind: OverrideKind,
        meta: ObjectMeta,
        spec: OverrideSpec,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        let mut stored = Self {
            kind,
            meta,
            spec,
            snapshots: Vec::new(),
        };
        stored.take_snapshot(now);
        stored
    }
}

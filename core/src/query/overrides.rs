//! Overrides and their snapshots. What other crates read of `overrides`: the fold's own types and rules,
//! so an explanation never re-derives them.

pub use crate::overrides::{
    OVERRIDE_SNAPSHOTS_MAX, OVERRIDES_PER_KIND_MAX, Override, OverrideError, OverrideSnapshot,
    REASON_NO_OVERRIDE_SPECIFIED, REASON_OVERRIDDEN_FAILED, REASON_OVERRIDDEN_SUCCEEDED,
    RenderedWork, applicable_overrides, parse_snapshot_name, render_for_cluster,
    render_with_snapshots, snapshot_name,
};

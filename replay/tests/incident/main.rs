//! Incident replay on logs recorded in the test by a small hub (a log in memory, exact event
//! times, recorded decisions): the timeline of a placement, a cluster and a run; why a cluster
//! carries what it carries and why a rollout waits; what changed between two points — each
//! compared with its exact text and JSON.

mod diff;
mod explain;
mod nondeterminism;
mod recorder;
mod scenes;
mod timeline;

use flotilla_replay::timeline::PlacementRef;

/// A `ClusterResourcePlacement`.
fn crp(name: &str) -> PlacementRef {
    PlacementRef {
        namespace: None,
        name: name.to_owned(),
    }
}

/// Pretty JSON, as the API would serve it.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("serializable")
}

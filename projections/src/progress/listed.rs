//! The resources a binding's status and its cluster's placement status list by name, from the
//! member's latest report, as KubeFleet's work generator picks them
//! (`pkg/controllers/workgenerator/controller.go`, `setBindingStatus`):
//!
//! - applying, the apply failed: `failedPlacements`, `diffedPlacements` (what a takeover with
//!   `IfNoDiff` found different) and `driftedPlacements`;
//! - applying, applied: `driftedPlacements`, and `failedPlacements` of the manifests not
//!   available when the work is not;
//! - `ReportDiff`, every diff reported: `diffedPlacements`; otherwise nothing (what is known
//!   may be incomplete).
//!
//! `diffedPlacements` and `driftedPlacements` are KubeFleet's v1beta1 `DiffedResourcePlacement`
//! and `DriftedResourcePlacement`: the resource identifier, `observationTime` (the report's event
//! time), `targetClusterObservedGeneration` (left out of a diffed resource that does not exist on
//! the member, where KubeFleet's nil pointer is pruned; 0 for a drift without one),
//! `firstDiffedObservedTime` / `firstDriftedObservedTime` and `observedDiffs` /
//! `observedDrifts` of `{path, valueInMember, valueInHub}` (each value left out when absent).

use chrono::{DateTime, Utc};
use flotilla_core::event::PatchDetail;
use flotilla_core::state::ObservedDifference;
use serde_json::{Map, Value};

use crate::json;

/// What the member's report names, ready to render.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    /// `failedPlacements`.
    pub(crate) failed: Vec<Value>,
    /// `driftedPlacements`.
    pub(crate) drifted: Vec<Value>,
    /// `diffedPlacements`.
    pub(crate) diffed: Vec<Value>,
}

impl Listed {
    /// Adds the non-empty lists to a status object (KubeFleet's fields are `omitempty`).
    pub(crate) fn insert_into(&self, status: &mut Value) {
        for (field, list) in [
            ("failedPlacements", &self.failed),
            ("driftedPlacements", &self.drifted),
            ("diffedPlacements", &self.diffed),
        ] {
            if !list.is_empty() {
                json::insert(status, field, Value::Array(list.clone()));
            }
        }
    }
}

/// Which of KubeFleet's two shapes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Found {
    /// A `DiffedResourcePlacement`.
    Diff,
    /// A `DriftedResourcePlacement`.
    Drift,
}

impl Found {
    fn first_time_field(self) -> &'static str {
        match self {
            Found::Diff => "firstDiffedObservedTime",
            Found::Drift => "firstDriftedObservedTime",
        }
    }

    fn details_field(self) -> &'static str {
        match self {
            Found::Diff => "observedDiffs",
            Found::Drift => "observedDrifts",
        }
    }
}

/// The placements of these kept manifests, observed at `observed`.
pub(crate) fn placements(
    kept: &[ObservedDifference],
    found: Found,
    observed: DateTime<Utc>,
) -> Vec<Value> {
    kept.iter()
        .map(|difference| placement(difference, found, observed))
        .collect()
}

fn placement(difference: &ObservedDifference, found: Found, observed: DateTime<Utc>) -> Value {
    let manifest = &difference.manifest;
    let mut fields: Map<String, Value> = [
        ("group", manifest.group.as_str()),
        ("version", manifest.version.as_str()),
        ("kind", manifest.kind.as_str()),
        ("name", manifest.name.as_str()),
        ("namespace", manifest.namespace.as_str()),
    ]
    .into_iter()
    .filter(|(_, value)| !value.is_empty())
    .map(|(field, value)| (field.to_owned(), Value::from(value)))
    .collect();
    let mut put = |field: &str, value: Value| {
        fields.insert(field.to_owned(), value);
    };
    put("observationTime", Value::from(json::timestamp(observed)));
    match (found, manifest.observed_generation) {
        (_, Some(generation)) => put("targetClusterObservedGeneration", Value::from(generation)),
        (Found::Drift, None) => put("targetClusterObservedGeneration", Value::from(0)),
        (Found::Diff, None) => {}
    }
    put(
        found.first_time_field(),
        Value::from(json::timestamp(difference.first_observed)),
    );
    if !manifest.details.is_empty() {
        let details = manifest.details.iter().map(patch_detail).collect();
        put(found.details_field(), Value::Array(details));
    }
    Value::Object(fields)
}

/// A `PatchDetail`: `valueInMember` and `valueInHub` are `omitempty`.
fn patch_detail(detail: &PatchDetail) -> Value {
    let mut value = json::object([("path", Value::from(detail.path.as_str()))]);
    for (field, text) in [
        ("valueInMember", &detail.value_in_member),
        ("valueInHub", &detail.value_in_hub),
    ] {
        if let Some(text) = text.as_deref().filter(|text| !text.is_empty()) {
            json::insert(&mut value, field, Value::from(text));
        }
    }
    value
}

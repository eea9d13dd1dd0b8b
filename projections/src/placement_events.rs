//! The `Events:` section of `describe` for a placement, as KubeFleet's placement controller
//! records them (seed 002's `kubectl describe crp` sample): one Normal event per milestone the
//! placement has reached, dated by the transition of the condition that marks it. The hub keeps
//! no event history, so each milestone shows its latest occurrence.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::age::age;

/// Reporting component of the events.
const SOURCE: &str = "cluster-resource-placement-controller";

/// Condition-type suffix → (event reason, message), in milestone order (`DiffReported` only
/// occurs for `ReportDiff` placements, in place of `Applied` and `Available`; its texts are
/// KubeFleet's).
const MILESTONES: [(&str, &str, &str); 6] = [
    (
        "RolloutStarted",
        "PlacementRolloutStarted",
        "Started rolling out the latest resources",
    ),
    (
        "Overridden",
        "PlacementOverriddenSucceeded",
        "Placement has been successfully overridden",
    ),
    (
        "WorkSynchronized",
        "PlacementWorkSynchronized",
        "Work(s) have been created or updated successfully for the selected cluster(s)",
    ),
    (
        "Applied",
        "PlacementApplied",
        "Resources have been applied to the selected cluster(s)",
    ),
    (
        "Available",
        "PlacementRolloutCompleted",
        "Resources are available in the selected clusters",
    ),
    (
        "DiffReported",
        "PlacementDiffReported",
        "Configuration differences have been reported on the selected cluster(s)",
    ),
];

/// The `Events:` lines (tab-separated, for the describe aligner) of a rendered placement.
#[must_use]
pub(crate) fn lines(placement: &Value, now: Option<DateTime<Utc>>) -> Vec<String> {
    let conditions = placement["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut events: Vec<(DateTime<Utc>, usize, String)> = Vec::new();
    for (order, (suffix, reason, message)) in MILESTONES.iter().enumerate() {
        let reached = conditions.iter().find(|c| {
            c["type"].as_str().is_some_and(|t| t.ends_with(suffix)) && c["status"] == "True"
        });
        let Some(condition) = reached else { continue };
        let Some(at) = condition["lastTransitionTime"]
            .as_str()
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
        else {
            continue;
        };
        events.push((
            at,
            order,
            format!("  Normal\t{reason}\t{}\t{SOURCE}\t{message}", age(now, at)),
        ));
    }
    events.sort();
    let mut out = vec!["Events:".to_owned()];
    if events.is_empty() {
        out.push("  <none>".to_owned());
        return out;
    }
    out.push("  Type\tReason\tAge\tFrom\tMessage".to_owned());
    out.push("  ----\t------\t----\t----\t-------".to_owned());
    out.extend(events.into_iter().map(|(_, _, line)| line));
    out
}

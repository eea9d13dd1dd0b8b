//! The `Events:` section of `describe` for a placement, as KubeFleet's placement controller
//! records them (KubeFleet's `kubectl describe crp` sample): one Normal event per milestone the
//! placement has reached, dated by the transition of the condition that marks it. The hub keeps
//! no event history, so each milestone shows its latest occurrence.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::age::age;
use crate::events::{Recorded, involved};

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

/// The events of a rendered placement: a Normal one per milestone reached, dated by the
/// condition that marks it, and a Warning per failed condition.
pub(crate) fn recorded(placement: &Value) -> Vec<Recorded> {
    let conditions = placement["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut events = Vec::new();
    for (suffix, reason, message) in MILESTONES {
        let reached = conditions.iter().find(|c| {
            c["type"].as_str().is_some_and(|t| t.ends_with(suffix)) && c["status"] == "True"
        });
        let Some(at) = reached.and_then(|c| c["lastTransitionTime"].as_str()) else {
            continue;
        };
        events.push(Recorded {
            involved: involved(placement),
            kind: "Normal",
            reason: reason.to_owned(),
            message: message.to_owned(),
            at: at.to_owned(),
            component: SOURCE,
        });
    }
    for condition in conditions.iter().filter(|c| c["status"] == "False") {
        let (Some(at), Some(reason)) = (
            condition["lastTransitionTime"].as_str(),
            condition["reason"].as_str(),
        ) else {
            continue;
        };
        events.push(Recorded {
            involved: involved(placement),
            kind: "Warning",
            reason: reason.to_owned(),
            message: condition["message"].as_str().unwrap_or_default().to_owned(),
            at: at.to_owned(),
            component: SOURCE,
        });
    }
    events
}

/// The `Events:` lines (tab-separated, for the describe aligner) of a rendered placement.
#[must_use]
pub(crate) fn lines(placement: &Value, now: Option<DateTime<Utc>>) -> Vec<String> {
    let mut events: Vec<(DateTime<Utc>, usize, String)> = Vec::new();
    for (order, event) in recorded(placement).into_iter().enumerate() {
        let Some(at) = DateTime::parse_from_rfc3339(&event.at)
            .ok()
            .map(|t| t.with_timezone(&Utc))
        else {
            continue;
        };
        events.push((
            at,
            order,
            format!(
                "  {}\t{}\t{}\t{SOURCE}\t{}",
                event.kind,
                event.reason,
                age(now, at),
                event.message
            ),
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

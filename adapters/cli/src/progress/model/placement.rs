//! A placement (`ClusterResourcePlacement`, `ResourcePlacement`) as progress: a `Partitioned`
//! one by its `status.partitions` (clusters ready of each partition's), any other by its
//! `status.placementStatuses` (per cluster, how far along the condition chain
//! `RolloutStarted` → `Overridden` → `WorkSynchronized` → `Applied` → `Available` it got, or
//! `DiffReported` last under `ReportDiff`). The outcome comes from the placement's own
//! conditions: all `True` through the last of the chain is completed, `ApplyFailed` or
//! `OverriddenFailed` is failed.

use serde_json::Value;

use super::view::{Bar, BarKind, Outcome, View, count, object_label, text};

/// The condition chain of a placement whose members apply.
const APPLY_CHAIN: [&str; 5] = [
    "RolloutStarted",
    "Overridden",
    "WorkSynchronized",
    "Applied",
    "Available",
];
/// The condition chain of a `ReportDiff` placement.
const REPORT_DIFF_CHAIN: [&str; 4] = [
    "RolloutStarted",
    "Overridden",
    "WorkSynchronized",
    "DiffReported",
];
/// Placement condition reasons that mean the rollout failed rather than waits.
const FAILED_REASONS: [&str; 2] = ["ApplyFailed", "OverriddenFailed"];

/// The progress of a placement that no staged run drives, from its JSON.
#[must_use]
pub fn placement_view(placement: &Value) -> View {
    let strategy = text(placement, "/spec/strategy/type");
    let strategy = if strategy.is_empty() {
        "RollingUpdate"
    } else {
        strategy
    };
    let chain = chain(placement);
    let bars = if strategy == "Partitioned" {
        partition_bars(placement)
    } else {
        cluster_bars(placement, chain)
    };
    let mut title = format!("{} ({strategy}", object_label(placement));
    if let Some(index) = placement
        .pointer("/status/observedResourceIndex")
        .and_then(Value::as_str)
    {
        title.push_str(&format!(", resource index {index}"));
    }
    title.push(')');
    View {
        title,
        state: placement_state(placement, chain),
        outcome: placement_outcome(placement, chain),
        bars,
    }
}

fn chain(placement: &Value) -> &'static [&'static str] {
    if text(placement, "/spec/strategy/applyStrategy/type") == "ReportDiff" {
        &REPORT_DIFF_CHAIN
    } else {
        &APPLY_CHAIN
    }
}

fn conditions(value: &Value) -> Vec<&Value> {
    value
        .get("conditions")
        .and_then(Value::as_array)
        .map(|list| list.iter().collect())
        .unwrap_or_default()
}

/// The placement's conditions, their kind prefix (`ClusterResourcePlacement`) taken off.
fn placement_conditions(placement: &Value) -> Vec<(&str, &Value)> {
    let kind = text(placement, "/kind");
    let status = placement.get("status").unwrap_or(&Value::Null);
    conditions(status)
        .into_iter()
        .map(|c| {
            let full = text(c, "/type");
            (full.strip_prefix(kind).unwrap_or(full), c)
        })
        .collect()
}

/// The first placement condition not `True` as `Type Status (Reason)`, or that the last one
/// of the chain is `True`.
fn placement_state(placement: &Value, chain: &[&str]) -> String {
    let conditions = placement_conditions(placement);
    if let Some((kind, c)) = conditions
        .iter()
        .find(|(_, c)| text(c, "/status") != "True")
    {
        return format!("{kind} {} ({})", text(c, "/status"), text(c, "/reason"));
    }
    match conditions.last() {
        Some((kind, c)) if chain.last() == Some(kind) => text(c, "/message").to_owned(),
        Some((kind, _)) => format!("{kind} True"),
        None => "not scheduled yet".to_owned(),
    }
}

fn placement_outcome(placement: &Value, chain: &[&str]) -> Outcome {
    let conditions = placement_conditions(placement);
    let label = object_label(placement);
    if let Some((_, failed)) = conditions
        .iter()
        .find(|(_, c)| FAILED_REASONS.contains(&text(c, "/reason")))
    {
        return Outcome::Failed(format!("{label}: {}", text(failed, "/message")));
    }
    let all_true = conditions.iter().all(|(_, c)| text(c, "/status") == "True");
    let reached_end = conditions
        .last()
        .is_some_and(|(kind, _)| chain.last() == Some(kind));
    if all_true && reached_end {
        let clusters = count(cluster_entries(placement).len());
        return Outcome::Completed(format!(
            "{label} rolled out: {clusters} clusters are {}",
            if chain == REPORT_DIFF_CHAIN {
                "diff-reported"
            } else {
                "available"
            }
        ));
    }
    Outcome::Progressing
}

/// Per-cluster entries that name a cluster (entries of clusters that could not be scheduled
/// name none).
fn cluster_entries(placement: &Value) -> Vec<&Value> {
    placement
        .pointer("/status/placementStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|entry| !text(entry, "/clusterName").is_empty())
        .collect()
}

fn cluster_bars(placement: &Value, chain: &[&str]) -> Vec<Bar> {
    cluster_entries(placement)
        .into_iter()
        .map(|entry| {
            let conditions = conditions(entry);
            let status_of = |kind: &str| {
                conditions
                    .iter()
                    .find(|c| text(c, "/type") == kind)
                    .map(|c| (text(c, "/status"), text(c, "/reason")))
            };
            let done = chain
                .iter()
                .take_while(|kind| status_of(kind).is_some_and(|(status, _)| status == "True"))
                .count();
            let note = match chain.get(done) {
                None => chain.last().copied().unwrap_or_default().to_owned(),
                Some(next) => match status_of(next) {
                    Some((status, reason)) => format!("{next} {status} ({reason})"),
                    None => format!("{next} not yet"),
                },
            };
            Bar {
                kind: BarKind::Cluster,
                name: text(entry, "/clusterName").to_owned(),
                done: count(done),
                total: count(chain.len()),
                note,
            }
        })
        .collect()
}

fn partition_bars(placement: &Value) -> Vec<Bar> {
    placement
        .pointer("/status/partitions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|partition| {
            let number = |pointer: &str| partition.pointer(pointer).and_then(Value::as_u64);
            Bar {
                kind: BarKind::Partition,
                name: text(partition, "/name").to_owned(),
                done: number("/summary/ready").unwrap_or(0),
                total: number("/count").unwrap_or(0),
                note: format!(
                    "{} unavailable (max {})",
                    number("/unavailable").unwrap_or(0),
                    number("/maxUnavailable").unwrap_or(0)
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crp(conditions: Value, clusters: Value) -> Value {
        json!({
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp-1"},
            "spec": {"strategy": {"type": "RollingUpdate"}},
            "status": {"observedResourceIndex": "1", "conditions": conditions,
                       "placementStatuses": clusters},
        })
    }

    fn true_conditions(kinds: &[&str]) -> Vec<Value> {
        kinds
            .iter()
            .map(|k| json!({"type": k, "status": "True", "reason": "R", "message": format!("{k} ok")}))
            .collect()
    }

    #[test]
    fn clusters_count_their_conditions_and_all_available_completes() {
        let mut partial = true_conditions(&["Scheduled", "RolloutStarted", "Overridden"]);
        partial.push(json!({"type": "WorkSynchronized", "status": "Unknown", "reason": "WorkSynchronizedUnknown"}));
        let whole = true_conditions(&[
            "Scheduled",
            "RolloutStarted",
            "Overridden",
            "WorkSynchronized",
            "Applied",
            "Available",
        ]);
        let placement_conditions: Vec<Value> = ["Scheduled", "RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available"]
            .iter()
            .map(|k| json!({"type": format!("ClusterResourcePlacement{k}"), "status": "True", "reason": "R", "message": "all 2 available"}))
            .collect();
        let view = placement_view(&crp(
            json!(placement_conditions),
            json!([{"clusterName": "member-1", "conditions": partial},
                   {"clusterName": "member-2", "conditions": whole},
                   {"conditions": [{"type": "Scheduled", "status": "False"}]}]),
        ));
        assert_eq!(
            view.title,
            "clusterresourceplacement/crp-1 (RollingUpdate, resource index 1)"
        );
        assert_eq!(
            view.bars[0].line(),
            "cluster member-1: 2/5 conditions, WorkSynchronized Unknown (WorkSynchronizedUnknown)"
        );
        assert_eq!(
            view.bars[1].line(),
            "cluster member-2: 5/5 conditions, Available"
        );
        assert_eq!(view.bars.len(), 2);
        assert_eq!(view.state, "all 2 available");
        assert!(
            matches!(&view.outcome, Outcome::Completed(t) if t.contains("2 clusters are available"))
        );
    }

    #[test]
    fn apply_failed_fails_and_a_false_condition_progresses() {
        let failed = json!([{"type": "ClusterResourcePlacementApplied", "status": "False",
                             "reason": "ApplyFailed", "message": "Failed to apply resources to 1 clusters"}]);
        let view = placement_view(&crp(failed, json!([])));
        assert_eq!(
            view.outcome,
            Outcome::Failed(
                "clusterresourceplacement/crp-1: Failed to apply resources to 1 clusters"
                    .to_owned()
            )
        );
        let blocked = json!([{"type": "ClusterResourcePlacementRolloutStarted", "status": "False",
                              "reason": "RolloutNotStartedYet"}]);
        let view = placement_view(&crp(blocked, json!([])));
        assert_eq!(view.state, "RolloutStarted False (RolloutNotStartedYet)");
        assert_eq!(view.outcome, Outcome::Progressing);
    }

    #[test]
    fn partitions_count_ready_clusters() {
        let placement = json!({
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "edge"},
            "spec": {"strategy": {"type": "Partitioned"}},
            "status": {"partitions": [
                {"name": "canary", "count": 2, "maxUnavailable": 1, "unavailable": 0, "summary": {"ready": 2}},
                {"name": "rest", "count": 8, "maxUnavailable": 2, "unavailable": 2, "summary": {"ready": 3}},
            ]},
        });
        let view = placement_view(&placement);
        assert_eq!(view.title, "clusterresourceplacement/edge (Partitioned)");
        assert_eq!(
            view.bars[1].line(),
            "partition rest: 3/8 ready, 2 unavailable (max 2)"
        );
        assert_eq!(view.state, "not scheduled yet");
    }
}

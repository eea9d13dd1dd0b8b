//! A partitioned placement's Bundle-shaped status, in `get -o json` and in `describe crp`.

use flotilla_core::model::{CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP};
use serde_json::json;

use super::{Hub, Report, join};
use crate::{describe, render_object};

fn paused_fleet() -> Hub {
    let mut hub = Hub::new();
    for (i, (name, stage)) in [("a1", "demo"), ("a2", "demo"), ("b1", "stable")]
        .into_iter()
        .enumerate()
    {
        join(
            &mut hub,
            i64::try_from(i * 2).unwrap_or(0),
            name,
            &json!({"stage": stage}),
        );
    }
    hub.apply(
        10,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}),
    );
    hub.apply(
        11,
        &json!({"apiVersion": "placement.kubernetes-fleet.io/v1", "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp"},
            "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "app"}],
                "strategy": {"type": "Partitioned", "rolloutStrategy": {"maxUnavailable": 0, "partitions": [
                    {"name": "demo", "clusterSelector": {"matchLabels": {"stage": "demo"}}},
                    {"name": "stable", "clusterSelector": {"matchLabels": {"stage": "stable"}}}]}}}}),
    );
    let ready = Report {
        trackable: true,
        ..Report::untrackable("a1", "crp")
    };
    hub.report(12, ready);
    hub.report(
        13,
        Report {
            cluster: "a2",
            available: Some(false),
            message: "image pull backoff",
            ..ready
        },
    );
    hub
}

fn key() -> ObjectKey {
    ObjectKey::cluster_scoped(PLACEMENT_GROUP, CLUSTER_RESOURCE_PLACEMENT, "crp")
}

#[test]
fn the_status_counts_states_per_partition_and_says_why_it_waits() {
    let hub = paused_fleet();
    let object = render_object(&hub.state, &key()).expect("stored");
    let status = &object["status"];
    assert_eq!(
        status["summary"],
        json!({"notReady": 1, "waitApplied": 0, "errApplied": 0, "outOfSync": 0, "modified": 0,
            "ready": 1, "pending": 1, "desiredReady": 3,
            "nonReadyResources": [
                {"name": "a2", "bundleState": "NotReady", "message": "image pull backoff"},
                {"name": "b1", "bundleState": "Pending"}]})
    );
    assert_eq!(status["partitions"][0]["name"], "demo");
    assert_eq!(status["partitions"][0]["unavailable"], 1);
    assert_eq!(status["partitions"][1]["summary"]["pending"], 1);
    assert_eq!(status["maxUnavailable"], 0);
    assert_eq!(status["maxUnavailablePartitions"], 0);
    assert_eq!(status["unavailablePartitions"], 1);
    assert_eq!(
        status["display"],
        json!({"readyClusters": "1/3", "state": "Pending",
            "message": "partition demo: 1 of 2 clusters NotReady, maxUnavailable 0"})
    );
    assert_eq!(object["spec"]["strategy"].get("rollingUpdate"), None);
}

#[test]
fn describe_shows_the_partitions_and_the_pause_reason() {
    let hub = paused_fleet();
    let text = describe(&hub.state, &key()).expect("stored");
    // Columns are aligned per block; compare with runs of spaces folded.
    let text = text
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n");
    for wanted in [
        "Display:",
        "Message: partition demo: 1 of 2 clusters NotReady, maxUnavailable 0",
        "Ready Clusters: 1/3",
        "Unavailable Partitions: 1",
        "Max Unavailable Partitions: 0",
        "Desired Ready: 3",
    ] {
        assert!(text.contains(wanted), "{wanted:?} missing from:\n{text}");
    }
}

//! The incidents the tests replay, recorded step by step at exact times.

use serde_json::{Value, json};

use crate::recorder::{Recorder, member};

/// Sequences of the rolling update's turning points.
pub struct Rolling {
    pub recorder: Recorder,
    /// After every cluster reported resource index 0 available.
    pub settled: u64,
    /// After cluster-2 reported resource index 1 not available.
    pub unavailable: u64,
}

fn config_map(image: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "web", "namespace": "test-ns"},
        "data": {"image": image}
    })
}

/// KubeFleet's safe-rollout example 1, then a silent cluster: four prod clusters, PickN 3 with
/// maxUnavailable 1 and maxSurge 1; an update goes to cluster-2 alone, which never becomes
/// available and then stops heartbeating.
pub async fn rolling_update() -> Rolling {
    let mut recorder = Recorder::new("2025-03-12T23:00:00Z");
    let prod = json!({"env": "prod"});
    let clusters = ["cluster-1", "cluster-2", "cluster-3", "cluster-4"];
    let members: Vec<Value> = clusters.iter().map(|c| member(c, &prod)).collect();
    recorder.apply(&members).await;
    recorder.heartbeats(&clusters).await;
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test-ns"}});
    recorder.apply(&[namespace, config_map("nginx:1.27")]).await;
    let placement = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp-1"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
            "policy": {"placementType": "PickN", "numberOfClusters": 3},
            "strategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}
        }
    });
    recorder.apply(&[placement]).await;
    recorder.advance(5);
    for cluster in ["cluster-2", "cluster-3", "cluster-4"] {
        recorder.report(cluster, "crp-1", 0, true).await;
    }
    let settled = recorder.seq();
    recorder.advance(55);
    recorder.heartbeats(&clusters).await;
    recorder.advance(5);
    recorder.apply(&[config_map("nginx:does-not-exist")]).await;
    recorder.advance(5);
    recorder.report("cluster-2", "crp-1", 1, false).await;
    let unavailable = recorder.seq();
    for _ in 0..2 {
        recorder.advance(200);
        recorder
            .heartbeats(&["cluster-1", "cluster-3", "cluster-4"])
            .await;
    }
    Rolling {
        recorder,
        settled,
        unavailable,
    }
}

/// Sequences of the staged run's turning points.
pub struct Staged {
    pub recorder: Recorder,
    /// After member1 reported: the staging stage waits for its approval.
    pub staging_done: u64,
}

/// KubeFleet's staged-update run, shortened: member1 in stage staging, member2 in stage canary,
/// each stage followed by an Approval. The canary approval is given too early (before it is
/// requested), the staging one in time; the run ends waiting for the canary approval.
pub async fn staged_run() -> Staged {
    let mut recorder = Recorder::new("2025-03-12T23:20:00Z");
    recorder
        .apply(&[
            member("member1", &json!({"environment": "staging"})),
            member("member2", &json!({"environment": "canary"})),
        ])
        .await;
    recorder.heartbeats(&["member1", "member2"]).await;
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test-namespace"}});
    let placement = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "example-placement"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-namespace"}],
            "policy": {"placementType": "PickAll"},
            "strategy": {"type": "External"}
        }
    });
    let approval = json!([{"type": "Approval"}]);
    let strategy = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "example-strategy"},
        "spec": {"stages": [
            {"name": "staging", "labelSelector": {"matchLabels": {"environment": "staging"}},
             "afterStageTasks": approval},
            {"name": "canary", "labelSelector": {"matchLabels": {"environment": "canary"}},
             "afterStageTasks": approval}
        ]}
    });
    recorder.apply(&[namespace, placement, strategy]).await;
    recorder.advance(99);
    let run = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": "example-run"},
        "spec": {
            "placementName": "example-placement",
            "resourceSnapshotIndex": "0",
            "stagedRolloutStrategyName": "example-strategy",
            "state": "Run"
        }
    });
    recorder.apply(&[run]).await;
    recorder.advance(15);
    recorder
        .report("member1", "example-placement", 0, true)
        .await;
    let staging_done = recorder.seq();
    recorder.advance(6);
    recorder.approve("example-run-after-canary").await;
    recorder.advance(55);
    recorder.approve("example-run-after-staging").await;
    recorder.advance(15);
    recorder
        .report("member2", "example-placement", 0, true)
        .await;
    Staged {
        recorder,
        staging_done,
    }
}

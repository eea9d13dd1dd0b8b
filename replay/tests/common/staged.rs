//! A staged rollout over three rings — staging, canary, production — each a member cluster,
//! with an approval after the first two.

use serde_json::{Value, json};

use super::History;

pub fn member(name: &str, environment: &str) -> Value {
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"environment": environment}},
        "spec": {}
    })
}

pub fn stage(name: &str, approval: bool) -> Value {
    let tasks = if approval {
        json!([{"type": "Approval"}])
    } else {
        json!([])
    };
    json!({
        "name": name,
        "labelSelector": {"matchLabels": {"environment": name}},
        "afterStageTasks": tasks
    })
}

pub fn strategy(order: [&str; 3]) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "rings"},
        "spec": {"stages": [stage(order[0], true), stage(order[1], true), stage(order[2], false)]}
    })
}

pub const MEMBERS: [(&str, &str); 3] = [
    ("member-1", "staging"),
    ("member-2", "canary"),
    ("member-3", "production"),
];

/// The three members, the `web` placement (`External`), the `rings` strategy and the run
/// `release` started on it: inputs #1–#10.
pub fn up_to_the_run(history: &mut History) {
    for (name, environment) in MEMBERS {
        history.apply(&member(name, environment));
    }
    for (name, _) in MEMBERS {
        history.heartbeat(name);
    }
    history.apply(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}));
    history.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "web"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "app"}],
            "policy": {"placementType": "PickAll"},
            "strategy": {"type": "External"}
        }
    }));
    history.apply(&strategy(["staging", "canary", "production"]));
    history.advance(10);
    history.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": "release"},
        "spec": {"placementName": "web", "resourceSnapshotIndex": "0",
                 "stagedRolloutStrategyName": "rings", "state": "Run"}
    }));
}

/// Staging, canary, production, approved after each; the fork point is #10, before the run.
pub fn recording() -> History {
    let mut history = History::new();
    up_to_the_run(&mut history);
    for (name, environment) in MEMBERS {
        history.advance(20);
        history.report_on("web", name, 0, (true, true));
        if environment != "production" {
            history.advance(20);
            history.approve(&format!("release-after-{environment}"));
        }
    }
    history
}

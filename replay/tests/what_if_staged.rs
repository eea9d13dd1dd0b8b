//! What-if on a staged rollout: had the strategy run its stages in the opposite order, the
//! production cluster would have got the version first, and the rollout would have waited
//! for an approval nobody gave; the recorded reports of the clusters it never reached are
//! dropped, and the recorded approvals of requests it never made are refused in the fork.

mod common;

use common::History;
use flotilla_replay::{WhatIfError, what_if};
use serde_json::{Value, json};

fn member(name: &str, environment: &str) -> Value {
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"environment": environment}},
        "spec": {}
    })
}

fn stage(name: &str, approval: bool) -> Value {
    let tasks = if approval { json!([{"type": "Approval"}]) } else { json!([]) };
    json!({
        "name": name,
        "labelSelector": {"matchLabels": {"environment": name}},
        "afterStageTasks": tasks
    })
}

fn strategy(order: [&str; 3]) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "rings"},
        "spec": {"stages": [stage(order[0], true), stage(order[1], true), stage(order[2], false)]}
    })
}

const MEMBERS: [(&str, &str); 3] = [
    ("member-1", "staging"),
    ("member-2", "canary"),
    ("member-3", "production"),
];

/// Staging, canary, production, approved after each; the fork point is #10, before the run.
fn recording() -> History {
    let mut history = History::new();
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

const REVERSED: &str = "\
what-if from #9 2025-03-12T23:00:00Z, changed: ClusterStagedUpdateStrategy/rings
re-fed 4 of 6 recorded inputs up to #15 (2 refused by the what-if); dropped 0 applies or deletes of the changed objects, 2 work reports on work the what-if did not give; skipped 0 rejected records

ClusterResourcePlacement/web
  recorded: finished at index 0 since #15 2025-03-12T23:01:50Z
  what-if:  stalled at index 0 since #15 2025-03-12T23:01:50Z; behind: member-1 (- scheduled), member-2 (- scheduled)
  cluster    recorded                              what-if
  member-1   #9 2025-03-12T23:00:00Z - scheduled   #9 2025-03-12T23:00:00Z - scheduled
             #10 2025-03-12T23:00:10Z 0 pending
             #11 2025-03-12T23:00:30Z 0 ready
  member-2   #9 2025-03-12T23:00:00Z - scheduled   #9 2025-03-12T23:00:00Z - scheduled
             #12 2025-03-12T23:00:50Z 0 pending
             #13 2025-03-12T23:01:10Z 0 ready
  member-3   #9 2025-03-12T23:00:00Z - scheduled   #9 2025-03-12T23:00:00Z - scheduled
             #14 2025-03-12T23:01:30Z 0 pending    #10 2025-03-12T23:00:10Z 0 pending
             #15 2025-03-12T23:01:50Z 0 ready      #15 2025-03-12T23:01:50Z 0 ready
";

#[tokio::test]
async fn a_reversed_stage_order_reaches_production_first_and_waits() -> Result<(), WhatIfError> {
    let (_dir, log) = common::redb_log(&recording().events).await;
    let reversed = strategy(["production", "canary", "staging"]);
    let result = what_if(&log, 9, vec![reversed]).await?;
    assert_eq!(result.to_string(), REVERSED);
    Ok(())
}

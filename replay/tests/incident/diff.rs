//! Diffs between two points: a cluster going silent (its Healthy condition flips, the others'
//! heartbeats move), an update that moves one binding and flips the placement's conditions, and
//! a state against itself.

use flotilla_replay::{Point, diff, diff_points};

use crate::{json, scenes};

#[tokio::test]
async fn a_cluster_going_silent_flips_its_health() {
    let scene = scenes::rolling_update().await;
    let from = Point::Seq(scene.unavailable);
    let silent = diff_points(&scene.recorder.log, from, Point::Seq(u64::MAX))
        .await
        .expect("a diff");
    assert_eq!(
        silent.text(),
        r##"from #20 to #26
~ MemberCluster/cluster-1
    /status/agentStatus/0/lastReceivedHeartbeat: "2025-03-12T23:01:00Z" -> "2025-03-12T23:07:50Z"
~ MemberCluster/cluster-2
    /status/conditions/2/lastTransitionTime: "2025-03-12T23:00:00Z" -> "2025-03-12T23:06:00Z"
    /status/conditions/2/message: "heartbeats from the member agent arrive within 300s" -> "cluster is not connected to the fleet: no heartbeat for 300s (last received 2025-03-12T23:01:00Z)"
    /status/conditions/2/reason: "HeartbeatReceived" -> "HeartbeatTimeout"
    /status/conditions/2/status: "True" -> "False"
~ MemberCluster/cluster-3
    /status/agentStatus/0/lastReceivedHeartbeat: "2025-03-12T23:01:00Z" -> "2025-03-12T23:07:50Z"
~ MemberCluster/cluster-4
    /status/agentStatus/0/lastReceivedHeartbeat: "2025-03-12T23:01:00Z" -> "2025-03-12T23:07:50Z"
condition MemberCluster/cluster-2 status.conditions Healthy: True (HeartbeatReceived) -> False (HeartbeatTimeout)
"##
    );
    assert_eq!(
        json(&silent),
        r##"{
  "from": 20,
  "to": 26,
  "added": [],
  "removed": [],
  "changed": [
    {
      "object": "MemberCluster/cluster-1",
      "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
      "fields": [
        {
          "pointer": "/status/agentStatus/0/lastReceivedHeartbeat",
          "old": "2025-03-12T23:01:00Z",
          "new": "2025-03-12T23:07:50Z"
        }
      ]
    },
    {
      "object": "MemberCluster/cluster-2",
      "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
      "fields": [
        {
          "pointer": "/status/conditions/2/lastTransitionTime",
          "old": "2025-03-12T23:00:00Z",
          "new": "2025-03-12T23:06:00Z"
        },
        {
          "pointer": "/status/conditions/2/message",
          "old": "heartbeats from the member agent arrive within 300s",
          "new": "cluster is not connected to the fleet: no heartbeat for 300s (last received 2025-03-12T23:01:00Z)"
        },
        {
          "pointer": "/status/conditions/2/reason",
          "old": "HeartbeatReceived",
          "new": "HeartbeatTimeout"
        },
        {
          "pointer": "/status/conditions/2/status",
          "old": "True",
          "new": "False"
        }
      ]
    },
    {
      "object": "MemberCluster/cluster-3",
      "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
      "fields": [
        {
          "pointer": "/status/agentStatus/0/lastReceivedHeartbeat",
          "old": "2025-03-12T23:01:00Z",
          "new": "2025-03-12T23:07:50Z"
        }
      ]
    },
    {
      "object": "MemberCluster/cluster-4",
      "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
      "fields": [
        {
          "pointer": "/status/agentStatus/0/lastReceivedHeartbeat",
          "old": "2025-03-12T23:01:00Z",
          "new": "2025-03-12T23:07:50Z"
        }
      ]
    }
  ],
  "bindings": [],
  "conditions": [
    {
      "object": "MemberCluster/cluster-2",
      "path": "status.conditions",
      "type": "Healthy",
      "old": {
        "status": "True",
        "reason": "HeartbeatReceived"
      },
      "new": {
        "status": "False",
        "reason": "HeartbeatTimeout"
      }
    }
  ]
}"##
    );
}

#[tokio::test]
async fn an_update_moves_a_binding_and_flips_conditions() {
    let scene = scenes::rolling_update().await;
    let (from, to) = (Point::Seq(scene.settled), Point::Seq(scene.unavailable));
    let update = diff_points(&scene.recorder.log, from, to)
        .await
        .expect("a diff");
    let text = update.text();
    let summary: Vec<&str> = text
        .lines()
        .filter(|line| !line.starts_with("    "))
        .collect();
    assert_eq!(
        summary.join("\n") + "\n",
        r##"from #14 to #20
+ ClusterResourceSnapshot/crp-1-1-snapshot
~ ClusterResourceBinding/crp-1-cluster-2-ff29414e
~ ClusterResourceBinding/crp-1-cluster-3-936a61fa
~ ClusterResourceBinding/crp-1-cluster-4-9e8b841e
~ ClusterResourcePlacement/crp-1
~ ClusterResourceSnapshot/crp-1-0-snapshot
~ ConfigMap/test-ns/web
~ MemberCluster/cluster-1
~ MemberCluster/cluster-2
~ MemberCluster/cluster-3
~ MemberCluster/cluster-4
~ Work/fleet-member-cluster-2/crp-1-work
binding ClusterResourcePlacement/crp-1 cluster-2: Bound at resource index 0 -> Bound at resource index 1
condition ClusterResourceBinding/crp-1-cluster-2-ff29414e status.conditions Available: True (AllWorkAreAvailable) -> False (NotAllWorkAreAvailable)
condition ClusterResourceBinding/crp-1-cluster-3-936a61fa status.conditions Applied: True (AllWorkHaveBeenApplied) -> (none)
condition ClusterResourceBinding/crp-1-cluster-3-936a61fa status.conditions Available: True (AllWorkAreAvailable) -> (none)
condition ClusterResourceBinding/crp-1-cluster-3-936a61fa status.conditions Overridden: True (NoOverrideSpecified) -> (none)
condition ClusterResourceBinding/crp-1-cluster-3-936a61fa status.conditions RolloutStarted: True (RolloutStarted) -> False (RolloutNotStartedYet)
condition ClusterResourceBinding/crp-1-cluster-3-936a61fa status.conditions WorkSynchronized: True (AllWorkSynced) -> (none)
condition ClusterResourceBinding/crp-1-cluster-4-9e8b841e status.conditions Applied: True (AllWorkHaveBeenApplied) -> (none)
condition ClusterResourceBinding/crp-1-cluster-4-9e8b841e status.conditions Available: True (AllWorkAreAvailable) -> (none)
condition ClusterResourceBinding/crp-1-cluster-4-9e8b841e status.conditions Overridden: True (NoOverrideSpecified) -> (none)
condition ClusterResourceBinding/crp-1-cluster-4-9e8b841e status.conditions RolloutStarted: True (RolloutStarted) -> False (RolloutNotStartedYet)
condition ClusterResourceBinding/crp-1-cluster-4-9e8b841e status.conditions WorkSynchronized: True (AllWorkSynced) -> (none)
condition ClusterResourcePlacement/crp-1 status.conditions ClusterResourcePlacementApplied: True (ApplySucceeded) -> (none)
condition ClusterResourcePlacement/crp-1 status.conditions ClusterResourcePlacementAvailable: True (ResourceAvailable) -> (none)
condition ClusterResourcePlacement/crp-1 status.conditions ClusterResourcePlacementOverridden: True (NoOverrideSpecified) -> (none)
condition ClusterResourcePlacement/crp-1 status.conditions ClusterResourcePlacementRolloutStarted: True (RolloutStarted) -> False (RolloutNotStartedYet)
condition ClusterResourcePlacement/crp-1 status.conditions ClusterResourcePlacementWorkSynchronized: True (WorkSynchronized) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-2].conditions Available: True (AllWorkAreAvailable) -> False (NotAllWorkAreAvailable)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-3].conditions Applied: True (AllWorkHaveBeenApplied) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-3].conditions Available: True (AllWorkAreAvailable) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-3].conditions Overridden: True (NoOverrideSpecified) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-3].conditions RolloutStarted: True (RolloutStarted) -> False (RolloutNotStartedYet)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-3].conditions WorkSynchronized: True (AllWorkSynced) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-4].conditions Applied: True (AllWorkHaveBeenApplied) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-4].conditions Available: True (AllWorkAreAvailable) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-4].conditions Overridden: True (NoOverrideSpecified) -> (none)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-4].conditions RolloutStarted: True (RolloutStarted) -> False (RolloutNotStartedYet)
condition ClusterResourcePlacement/crp-1 status.placementStatuses[cluster-4].conditions WorkSynchronized: True (AllWorkSynced) -> (none)
condition Work/fleet-member-cluster-2/crp-1-work status.conditions Available: True (WorkAvailable) -> False (WorkNotAvailableYet)
"##
    );
    let configmap: Vec<&str> = text
        .lines()
        .skip_while(|line| *line != "~ ConfigMap/test-ns/web")
        .take(4)
        .collect();
    assert_eq!(
        configmap.join("\n") + "\n",
        r##"~ ConfigMap/test-ns/web
    /data/image: "nginx:1.27" -> "nginx:does-not-exist"
    /metadata/generation: 1 -> 2
    /metadata/resourceVersion: "6" -> "8"
"##
    );
    assert_eq!(
        json(&update.diff.bindings),
        r##"[
  {
    "placement": "ClusterResourcePlacement/crp-1",
    "cluster": "cluster-2",
    "old": {
      "state": "Bound",
      "resourceIndex": 0
    },
    "new": {
      "state": "Bound",
      "resourceIndex": 1
    }
  }
]"##
    );
}

#[tokio::test]
async fn a_state_against_itself_has_no_differences() {
    let scene = scenes::rolling_update().await;
    let state = scene.recorder.state();
    let none = diff(state, state);
    assert!(none.is_empty());
    assert_eq!(none.text(), "no differences\n");
    assert_eq!(
        json(&none),
        "{\n  \"added\": [],\n  \"removed\": [],\n  \"changed\": [],\n  \"bindings\": [],\n  \"conditions\": []\n}"
    );
}

//! Explanations: why a rolling update waits for one unavailable, then silent, cluster (with the
//! budget after every step that moved a binding), why a cluster was not picked, why a staged
//! run waits for an approval and which gates a cluster of a later stage passed.

use flotilla_replay::{Point, explain_cluster, explain_placement};

use crate::{crp, json, scenes};

#[tokio::test]
async fn a_rolling_update_waits_for_the_unavailable_cluster() {
    let scene = scenes::rolling_update().await;
    let log = &scene.recorder.log;
    let now = explain_placement(log, &crp("crp-1"), None)
        .await
        .expect("an explanation");
    assert_eq!(
        now.text(),
        r##"ClusterResourcePlacement/crp-1 at #26 (2025-03-12T23:07:50Z), RollingUpdate, latest resource index 1
- 1 of 3 clusters unavailable, maxUnavailable 1: waiting for cluster-2
- 2 clusters not yet at resource index 1: cluster-3, cluster-4
- cluster-2 is unhealthy since 23:06:00, last heartbeat 23:01:00
budget: target 3, maxUnavailable 1, maxSurge 1: 1 of 3 unavailable (cluster-2)
clusters not done:
  cluster-2: Bound at resource index 1 since 23:01:05; reported applied, not available on resource index 1 at 23:01:10 (deployment web: 0 of 2 replicas available); member unhealthy since 23:06:00, last heartbeat 23:01:00
  cluster-3: Bound at resource index 0 since 23:00:00; reported applied, available on resource index 0 at 23:00:05
  cluster-4: Bound at resource index 0 since 23:00:00; reported applied, available on resource index 0 at 23:00:05
conditions not True:
  ClusterResourcePlacementRolloutStarted False (RolloutNotStartedYet): The rollout is being blocked by the rollout strategy in 2 cluster(s)
"##
    );
    assert_eq!(
        json(&now),
        r##"{
  "at": 26,
  "time": "2025-03-12T23:07:50Z",
  "placement": "ClusterResourcePlacement/crp-1",
  "strategy": "RollingUpdate",
  "latestResourceIndex": 1,
  "budget": {
    "latestResourceIndex": 1,
    "target": 3,
    "maxUnavailable": 1,
    "maxSurge": 1,
    "ready": 2,
    "canBeReady": 3,
    "unavailable": 1,
    "unavailableClusters": [
      "cluster-2"
    ],
    "outOfDate": [
      "cluster-3",
      "cluster-4"
    ],
    "notBound": [],
    "failed": []
  },
  "waits": [
    {
      "reason": "Unavailable",
      "text": "1 of 3 clusters unavailable, maxUnavailable 1: waiting for cluster-2",
      "clusters": [
        "cluster-2"
      ]
    },
    {
      "reason": "OutOfDate",
      "text": "2 clusters not yet at resource index 1: cluster-3, cluster-4",
      "clusters": [
        "cluster-3",
        "cluster-4"
      ]
    },
    {
      "reason": "Unhealthy",
      "text": "cluster-2 is unhealthy since 23:06:00, last heartbeat 23:01:00",
      "clusters": [
        "cluster-2"
      ],
      "since": "2025-03-12T23:06:00Z"
    }
  ],
  "clusters": [
    {
      "cluster": "cluster-2",
      "binding": {
        "name": "crp-1-cluster-2-ff29414e",
        "state": "Bound",
        "resourceIndex": 1,
        "latestResourceIndex": 1,
        "boundAt": "2025-03-12T23:01:05Z",
        "readiness": "NotReady"
      },
      "text": "Bound at resource index 1 since 23:01:05; reported applied, not available on resource index 1 at 23:01:10 (deployment web: 0 of 2 replicas available); member unhealthy since 23:06:00, last heartbeat 23:01:00"
    },
    {
      "cluster": "cluster-3",
      "binding": {
        "name": "crp-1-cluster-3-936a61fa",
        "state": "Bound",
        "resourceIndex": 0,
        "latestResourceIndex": 1,
        "boundAt": "2025-03-12T23:00:00Z",
        "readiness": "Ready"
      },
      "text": "Bound at resource index 0 since 23:00:00; reported applied, available on resource index 0 at 23:00:05"
    },
    {
      "cluster": "cluster-4",
      "binding": {
        "name": "crp-1-cluster-4-9e8b841e",
        "state": "Bound",
        "resourceIndex": 0,
        "latestResourceIndex": 1,
        "boundAt": "2025-03-12T23:00:00Z",
        "readiness": "Ready"
      },
      "text": "Bound at resource index 0 since 23:00:00; reported applied, available on resource index 0 at 23:00:05"
    }
  ],
  "conditions": [
    {
      "type": "ClusterResourcePlacementRolloutStarted",
      "status": "False",
      "reason": "RolloutNotStartedYet",
      "message": "The rollout is being blocked by the rollout strategy in 2 cluster(s)"
    }
  ]
}"##
    );
    let settled = explain_placement(log, &crp("crp-1"), Some(Point::Seq(scene.settled)))
        .await
        .expect("an explanation");
    assert_eq!(
        settled.text(),
        r##"ClusterResourcePlacement/crp-1 at #14 (2025-03-12T23:00:05Z), RollingUpdate, latest resource index 0
not waiting: all 3 clusters carry resource index 0 and are available
budget: target 3, maxUnavailable 1, maxSurge 1: 0 of 3 unavailable
"##
    );
    assert!(settled.waits.is_empty());
    let missing = explain_placement(log, &crp("crp-2"), None)
        .await
        .expect("an explanation");
    assert_eq!(
        missing.text(),
        r##"ClusterResourcePlacement/crp-2 at #26 (2025-03-12T23:07:50Z)
- ClusterResourcePlacement/crp-2 does not exist at #26
"##
    );
}

#[tokio::test]
async fn an_out_of_date_cluster_is_explained_with_its_scores_and_budgets() {
    let scene = scenes::rolling_update().await;
    let mut explained = explain_cluster(&scene.recorder.log, "cluster-3", &crp("crp-1"), None)
        .await
        .expect("an explanation");
    assert_eq!(
        explained.text(),
        r##"cluster-3 on ClusterResourcePlacement/crp-1 at #26 (2025-03-12T23:07:50Z)
cluster-3 carries resource index 0 (bound 23:00:00); the latest is 1, not rolled out to it yet; it reported applied, available on resource index 0 at 23:00:05
member: healthy since 23:00:00, last heartbeat 23:07:50
scheduling: policy snapshot 0, PickN 3: picked, affinity 0, topology spread 0 (picked by scheduling policy)
  picked: cluster-2 (affinity 0, topology spread 0), cluster-3 (affinity 0, topology spread 0), cluster-4 (affinity 0, topology spread 0)
  not picked: cluster-1 (affinity 0, topology spread 0): cluster does not score high enough
the rollout waits:
  - 1 of 3 clusters unavailable, maxUnavailable 1: waiting for cluster-2
  - 2 clusters not yet at resource index 1: cluster-3, cluster-4
  - cluster-2 is unhealthy since 23:06:00, last heartbeat 23:01:00
history:
#3 2025-03-12T23:00:00Z test apply MemberCluster/cluster-3
    #3 -> created MemberCluster/cluster-3 (resourceVersion 3, generation 1)
#7 2025-03-12T23:00:00Z test heartbeat cluster-3
    #7 -> cluster cluster-3 joined
#11 2025-03-12T23:00:00Z test apply ClusterResourcePlacement/crp-1
    #11 -> ClusterResourcePlacement/crp-1: resource snapshot 0 taken (hash b154520356be)
    #11 -> ClusterResourcePlacement/crp-1: scheduling policy snapshot 0 taken
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-3 scheduled
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-3 rolled out to resource index 0
    (6 other decisions)
    scores: affinity 0, topology spread 0
    budget after: target 3, maxUnavailable 1, maxSurge 1: 3 of 3 unavailable (cluster-2, cluster-3, cluster-4)
#13 2025-03-12T23:00:05Z test report cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available
    #13 -> work report from cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0
    budget after: target 3, maxUnavailable 1, maxSurge 1: 1 of 3 unavailable (cluster-4)
#19 2025-03-12T23:01:05Z test apply ConfigMap/test-ns/web
    #19 -> ClusterResourcePlacement/crp-1: resource snapshot 1 taken (hash 0da4e72d1b05)
    (2 other decisions)
"##
    );
    let report = explained
        .history
        .iter()
        .find(|step| step.entry.seq == 13)
        .expect("cluster-3's report");
    assert_eq!(
        json(report),
        r##"{
  "seq": 13,
  "time": "2025-03-12T23:00:05Z",
  "source": "test",
  "actor": "test",
  "input": "report",
  "line": "#13 2025-03-12T23:00:05Z test report cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available",
  "recorded": true,
  "decisions": [
    {
      "line": "#13 -> work report from cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0",
      "decision": {
        "WorkReported": {
          "cluster": "cluster-3",
          "placement": {
            "group": "placement.kubernetes-fleet.io",
            "kind": "ClusterResourcePlacement",
            "namespace": "",
            "name": "crp-1"
          },
          "resource_index": 0
        }
      }
    }
  ],
  "decisionsOmitted": 0,
  "budget": {
    "latestResourceIndex": 0,
    "target": 3,
    "maxUnavailable": 1,
    "maxSurge": 1,
    "ready": 2,
    "canBeReady": 3,
    "unavailable": 1,
    "unavailableClusters": [
      "cluster-4"
    ],
    "outOfDate": [],
    "notBound": [],
    "failed": []
  }
}"##
    );
    explained.history.clear();
    assert_eq!(
        json(&explained),
        r##"{
  "at": 26,
  "time": "2025-03-12T23:07:50Z",
  "placement": "ClusterResourcePlacement/crp-1",
  "cluster": "cluster-3",
  "summary": "cluster-3 carries resource index 0 (bound 23:00:00); the latest is 1, not rolled out to it yet; it reported applied, available on resource index 0 at 23:00:05",
  "binding": {
    "name": "crp-1-cluster-3-936a61fa",
    "state": "Bound",
    "resourceIndex": 0,
    "latestResourceIndex": 1,
    "boundAt": "2025-03-12T23:00:00Z",
    "readiness": "Ready"
  },
  "report": {
    "resourceIndex": 0,
    "applied": true,
    "available": true,
    "trackable": true,
    "reportedAt": "2025-03-12T23:00:05Z",
    "availableSince": "2025-03-12T23:00:05Z"
  },
  "member": {
    "joined": true,
    "healthy": true,
    "lastHeartbeat": "2025-03-12T23:07:50Z",
    "healthChangedAt": "2025-03-12T23:00:00Z"
  },
  "scheduling": {
    "policyIndex": 0,
    "placementType": "PickN",
    "numberOfClusters": 3,
    "decision": {
      "cluster": "cluster-3",
      "selected": true,
      "affinity": 0,
      "topologySpread": 0,
      "reason": "picked by scheduling policy"
    },
    "picked": [
      {
        "cluster": "cluster-2",
        "selected": true,
        "affinity": 0,
        "topologySpread": 0,
        "reason": "picked by scheduling policy"
      },
      {
        "cluster": "cluster-3",
        "selected": true,
        "affinity": 0,
        "topologySpread": 0,
        "reason": "picked by scheduling policy"
      },
      {
        "cluster": "cluster-4",
        "selected": true,
        "affinity": 0,
        "topologySpread": 0,
        "reason": "picked by scheduling policy"
      }
    ],
    "notPicked": [
      {
        "cluster": "cluster-1",
        "selected": false,
        "affinity": 0,
        "topologySpread": 0,
        "reason": "cluster does not score high enough"
      }
    ]
  },
  "runs": [],
  "waits": [
    {
      "reason": "Unavailable",
      "text": "1 of 3 clusters unavailable, maxUnavailable 1: waiting for cluster-2",
      "clusters": [
        "cluster-2"
      ]
    },
    {
      "reason": "OutOfDate",
      "text": "2 clusters not yet at resource index 1: cluster-3, cluster-4",
      "clusters": [
        "cluster-3",
        "cluster-4"
      ]
    },
    {
      "reason": "Unhealthy",
      "text": "cluster-2 is unhealthy since 23:06:00, last heartbeat 23:01:00",
      "clusters": [
        "cluster-2"
      ],
      "since": "2025-03-12T23:06:00Z"
    }
  ],
  "history": [],
  "historyOmitted": 0
}"##
    );
}

#[tokio::test]
async fn a_cluster_is_explained_at_a_time() {
    let scene = scenes::rolling_update().await;
    let time = "2025-03-12T23:01:10Z".parse().expect("a time");
    let at = Some(Point::Time(time));
    let explained = explain_cluster(&scene.recorder.log, "cluster-2", &crp("crp-1"), at)
        .await
        .expect("an explanation");
    assert_eq!(explained.at, scene.unavailable);
    assert_eq!(
        explained.text(),
        r##"cluster-2 on ClusterResourcePlacement/crp-1 at #20 (2025-03-12T23:01:10Z)
cluster-2 carries resource index 1 (bound 23:01:05), the latest; it reported applied, not available on resource index 1 at 23:01:10 (deployment web: 0 of 2 replicas available)
member: healthy since 23:00:00, last heartbeat 23:01:00
scheduling: policy snapshot 0, PickN 3: picked, affinity 0, topology spread 0 (picked by scheduling policy)
  picked: cluster-2 (affinity 0, topology spread 0), cluster-3 (affinity 0, topology spread 0), cluster-4 (affinity 0, topology spread 0)
  not picked: cluster-1 (affinity 0, topology spread 0): cluster does not score high enough
the rollout waits:
  - 1 of 3 clusters unavailable, maxUnavailable 1: waiting for cluster-2
  - 2 clusters not yet at resource index 1: cluster-3, cluster-4
history:
#2 2025-03-12T23:00:00Z test apply MemberCluster/cluster-2
    #2 -> created MemberCluster/cluster-2 (resourceVersion 2, generation 1)
#6 2025-03-12T23:00:00Z test heartbeat cluster-2
    #6 -> cluster cluster-2 joined
#11 2025-03-12T23:00:00Z test apply ClusterResourcePlacement/crp-1
    #11 -> ClusterResourcePlacement/crp-1: resource snapshot 0 taken (hash b154520356be)
    #11 -> ClusterResourcePlacement/crp-1: scheduling policy snapshot 0 taken
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-2 scheduled
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 0
    (6 other decisions)
    scores: affinity 0, topology spread 0
    budget after: target 3, maxUnavailable 1, maxSurge 1: 3 of 3 unavailable (cluster-2, cluster-3, cluster-4)
#12 2025-03-12T23:00:05Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available
    #12 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 0
    budget after: target 3, maxUnavailable 1, maxSurge 1: 2 of 3 unavailable (cluster-3, cluster-4)
#19 2025-03-12T23:01:05Z test apply ConfigMap/test-ns/web
    #19 -> ClusterResourcePlacement/crp-1: resource snapshot 1 taken (hash 0da4e72d1b05)
    #19 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 1
    (1 other decision)
    budget after: target 3, maxUnavailable 1, maxSurge 1: 1 of 3 unavailable (cluster-2)
#20 2025-03-12T23:01:10Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1: applied, not available (deployment web: 0 of 2 replicas available)
    #20 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1
    budget after: target 3, maxUnavailable 1, maxSurge 1: 1 of 3 unavailable (cluster-2)
"##
    );
}

#[tokio::test]
async fn a_cluster_not_picked_says_why() {
    let scene = scenes::rolling_update().await;
    let explained = explain_cluster(&scene.recorder.log, "cluster-1", &crp("crp-1"), None)
        .await
        .expect("an explanation");
    assert_eq!(
        explained.text(),
        r##"cluster-1 on ClusterResourcePlacement/crp-1 at #26 (2025-03-12T23:07:50Z)
cluster-1 carries nothing: not picked (cluster does not score high enough)
member: healthy since 23:00:00, last heartbeat 23:07:50
scheduling: policy snapshot 0, PickN 3: not picked, affinity 0, topology spread 0 (cluster does not score high enough)
  picked: cluster-2 (affinity 0, topology spread 0), cluster-3 (affinity 0, topology spread 0), cluster-4 (affinity 0, topology spread 0)
  not picked: cluster-1 (affinity 0, topology spread 0): cluster does not score high enough
the rollout waits:
  - 1 of 3 clusters unavailable, maxUnavailable 1: waiting for cluster-2
  - 2 clusters not yet at resource index 1: cluster-3, cluster-4
  - cluster-2 is unhealthy since 23:06:00, last heartbeat 23:01:00
history:
#1 2025-03-12T23:00:00Z test apply MemberCluster/cluster-1
    #1 -> created MemberCluster/cluster-1 (resourceVersion 1, generation 1)
#5 2025-03-12T23:00:00Z test heartbeat cluster-1
    #5 -> cluster cluster-1 joined
#11 2025-03-12T23:00:00Z test apply ClusterResourcePlacement/crp-1
    #11 -> ClusterResourcePlacement/crp-1: resource snapshot 0 taken (hash b154520356be)
    #11 -> ClusterResourcePlacement/crp-1: scheduling policy snapshot 0 taken
    (8 other decisions)
#19 2025-03-12T23:01:05Z test apply ConfigMap/test-ns/web
    #19 -> ClusterResourcePlacement/crp-1: resource snapshot 1 taken (hash 0da4e72d1b05)
    (2 other decisions)
"##
    );
}

#[tokio::test]
async fn a_staged_run_waits_for_its_approval() {
    let scene = scenes::staged_run().await;
    let log = &scene.recorder.log;
    let placement = crp("example-placement");
    let now = explain_placement(log, &placement, None)
        .await
        .expect("an explanation");
    assert_eq!(
        now.text(),
        r##"ClusterResourcePlacement/example-placement at #12 (2025-03-12T23:23:10Z), External, latest resource index 0
- waiting for approval example-run-after-canary since 23:23:10
"##
    );
    assert_eq!(
        json(&now),
        r##"{
  "at": 12,
  "time": "2025-03-12T23:23:10Z",
  "placement": "ClusterResourcePlacement/example-placement",
  "strategy": "External",
  "latestResourceIndex": 0,
  "waits": [
    {
      "reason": "Approval",
      "text": "waiting for approval example-run-after-canary since 23:23:10",
      "since": "2025-03-12T23:23:10Z"
    }
  ],
  "clusters": [],
  "conditions": []
}"##
    );
    let earlier = explain_placement(log, &placement, Some(Point::Seq(scene.staging_done)))
        .await
        .expect("an explanation");
    assert_eq!(
        earlier.text(),
        r##"ClusterResourcePlacement/example-placement at #9 (2025-03-12T23:21:54Z), External, latest resource index 0
- waiting for approval example-run-after-staging since 23:21:54
clusters not done:
  member2: Scheduled, not bound yet
conditions not True:
  ClusterResourcePlacementRolloutStarted Unknown (RolloutStartedUnknown): There are still 1 cluster(s) in the process of deciding whether to roll out the latest resources or not
"##
    );
}

#[tokio::test]
async fn a_later_stage_cluster_shows_the_gates_it_passed() {
    let scene = scenes::staged_run().await;
    let placement = crp("example-placement");
    let explained = explain_cluster(&scene.recorder.log, "member2", &placement, None)
        .await
        .expect("an explanation");
    assert_eq!(
        explained.text(),
        r##"member2 on ClusterResourcePlacement/example-placement at #12 (2025-03-12T23:23:10Z)
member2 carries resource index 0 (bound 23:22:55 by run example-run), the latest; it reported applied, available on resource index 0 at 23:23:10
member: healthy since 23:20:00, last heartbeat 23:20:00
scheduling: policy snapshot 0, PickAll: picked, affinity 0, topology spread 0 (picked by scheduling policy)
run ClusterStagedUpdateRun/example-run, stage canary: started 23:22:55, succeeded 23:23:10
  gate: approval example-run-after-staging (after stage staging): requested 23:21:54, approved 23:22:55 by test
history:
#2 2025-03-12T23:20:00Z test apply MemberCluster/member2
    #2 -> created MemberCluster/member2 (resourceVersion 2, generation 1)
#4 2025-03-12T23:20:00Z test heartbeat member2
    #4 -> cluster member2 joined
#6 2025-03-12T23:20:00Z test apply ClusterResourcePlacement/example-placement
    #6 -> ClusterResourcePlacement/example-placement: resource snapshot 0 taken (hash a9f57367024e)
    #6 -> ClusterResourcePlacement/example-placement: scheduling policy snapshot 0 taken
    #6 -> ClusterResourcePlacement/example-placement: cluster member2 scheduled
    (3 other decisions)
    scores: affinity 0, topology spread 0
#8 2025-03-12T23:21:39Z test apply ClusterStagedUpdateRun/example-run
    #8 -> created ClusterStagedUpdateRun/example-run (resourceVersion 6, generation 1)
    #8 -> ClusterStagedUpdateRun/example-run: initialized
    #8 -> ClusterStagedUpdateRun/example-run: UpdateRunStarted
    #8 -> ClusterStagedUpdateRun/example-run: stage staging StageUpdatingStarted
    (1 other decision)
#9 2025-03-12T23:21:54Z test report member1 on ClusterResourcePlacement/example-placement at resource index 0: applied, available
    #9 -> ClusterStagedUpdateRun/example-run: stage staging StageUpdatingWaiting
    #9 -> ClusterStagedUpdateRun/example-run: waiting for approval ClusterApprovalRequest/example-run-after-staging
    (2 other decisions)
#10 2025-03-12T23:22:00Z test approve ClusterApprovalRequest/example-run-after-canary
    #10 -> rejected ApprovalRequestNotFound: ClusterApprovalRequest example-run-after-canary not found
#11 2025-03-12T23:22:55Z test approve ClusterApprovalRequest/example-run-after-staging
    #11 -> ClusterApprovalRequest/example-run-after-staging approved
    #11 -> ClusterStagedUpdateRun/example-run: stage staging StageUpdatingSucceeded
    #11 -> ClusterStagedUpdateRun/example-run: stage canary StageUpdatingStarted
    #11 -> ClusterResourcePlacement/example-placement: cluster member2 rolled out to resource index 0
#12 2025-03-12T23:23:10Z test report member2 on ClusterResourcePlacement/example-placement at resource index 0: applied, available
    #12 -> work report from member2 on ClusterResourcePlacement/example-placement at resource index 0
    #12 -> ClusterStagedUpdateRun/example-run: cluster member2 succeeded
    #12 -> ClusterStagedUpdateRun/example-run: stage canary StageUpdatingWaiting
    #12 -> ClusterStagedUpdateRun/example-run: waiting for approval ClusterApprovalRequest/example-run-after-canary
"##
    );
    assert_eq!(
        json(&explained.runs),
        r##"[
  {
    "run": "ClusterStagedUpdateRun/example-run",
    "stage": "canary",
    "startedAt": "2025-03-12T23:22:55Z",
    "finishedAt": "2025-03-12T23:23:10Z",
    "succeeded": true,
    "gates": [
      {
        "run": "ClusterStagedUpdateRun/example-run",
        "stage": "staging",
        "position": "after",
        "task": "Approval",
        "request": "example-run-after-staging",
        "requestedAt": "2025-03-12T23:21:54Z",
        "approvedAt": "2025-03-12T23:22:55Z",
        "approvedBy": "test",
        "passedAt": "2025-03-12T23:22:55Z"
      }
    ]
  }
]"##
    );
}

//! Timelines: what touched a placement, a cluster (through its silence) and a run (an approval
//! sent too early included), in log order with event times; an input the writer has not decided
//! yet is folded again.

use flotilla_replay::Point;
use flotilla_replay::timeline::{RunRef, TimelineFilter, timeline, timeline_at_most};

use crate::{crp, json, scenes};

#[tokio::test]
async fn a_placement_timeline_shows_its_rollout_in_order() {
    let scene = scenes::rolling_update().await;
    let log = &scene.recorder.log;
    let filter = TimelineFilter {
        placement: Some(crp("crp-1")),
        ..TimelineFilter::default()
    };
    let whole = timeline(log, &filter, None, None)
        .await
        .expect("a timeline");
    assert_eq!(
        whole.text(),
        r##"#11 2025-03-12T23:00:00Z test apply ClusterResourcePlacement/crp-1
    #11 -> created ClusterResourcePlacement/crp-1 (resourceVersion 7, generation 1)
    #11 -> ClusterResourcePlacement/crp-1: resource snapshot 0 taken (hash b154520356be)
    #11 -> ClusterResourcePlacement/crp-1: scheduling policy snapshot 0 taken
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-4 scheduled
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-3 scheduled
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-2 scheduled
    #11 -> ClusterResourcePlacement/crp-1: scheduling policy fulfilled: found all the clusters needed as specified by the scheduling policy
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 0
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-3 rolled out to resource index 0
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-4 rolled out to resource index 0
#12 2025-03-12T23:00:05Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available
    #12 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 0
#13 2025-03-12T23:00:05Z test report cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available
    #13 -> work report from cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0
#14 2025-03-12T23:00:05Z test report cluster-4 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available
    #14 -> work report from cluster-4 on ClusterResourcePlacement/crp-1 at resource index 0
#19 2025-03-12T23:01:05Z test apply ConfigMap/test-ns/web
    #19 -> ClusterResourcePlacement/crp-1: resource snapshot 1 taken (hash 0da4e72d1b05)
    #19 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 1
    (1 other decision)
#20 2025-03-12T23:01:10Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1: applied, not available (deployment web: 0 of 2 replicas available)
    #20 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1
"##
    );
    // After #18 up to #20: the update and the report that blocked it.
    let span = timeline(log, &filter, Some(Point::Seq(18)), Some(Point::Seq(20)))
        .await
        .expect("a timeline");
    assert_eq!(
        span.text(),
        r##"#19 2025-03-12T23:01:05Z test apply ConfigMap/test-ns/web
    #19 -> ClusterResourcePlacement/crp-1: resource snapshot 1 taken (hash 0da4e72d1b05)
    #19 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 1
    (1 other decision)
#20 2025-03-12T23:01:10Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1: applied, not available (deployment web: 0 of 2 replicas available)
    #20 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1
"##
    );
    assert_eq!(
        json(&span),
        r##"{
  "after": 18,
  "until": 20,
  "truncated": false,
  "entries": [
    {
      "seq": 19,
      "time": "2025-03-12T23:01:05Z",
      "source": "test",
      "actor": "test",
      "input": "apply",
      "line": "#19 2025-03-12T23:01:05Z test apply ConfigMap/test-ns/web",
      "recorded": true,
      "decisions": [
        {
          "line": "#19 -> ClusterResourcePlacement/crp-1: resource snapshot 1 taken (hash 0da4e72d1b05)",
          "decision": {
            "ResourceSnapshotTaken": {
              "placement": {
                "group": "placement.kubernetes-fleet.io",
                "kind": "ClusterResourcePlacement",
                "namespace": "",
                "name": "crp-1"
              },
              "index": 1,
              "resource_hash": "0da4e72d1b0593aa28412f98bb90fb03dd683a9cec609caa2918801a65fd098e"
            }
          }
        },
        {
          "line": "#19 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 1",
          "decision": {
            "RolloutStarted": {
              "placement": {
                "group": "placement.kubernetes-fleet.io",
                "kind": "ClusterResourcePlacement",
                "namespace": "",
                "name": "crp-1"
              },
              "cluster": "cluster-2",
              "resource_index": 1
            }
          }
        }
      ],
      "decisionsOmitted": 1
    },
    {
      "seq": 20,
      "time": "2025-03-12T23:01:10Z",
      "source": "test",
      "actor": "test",
      "input": "report",
      "line": "#20 2025-03-12T23:01:10Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1: applied, not available (deployment web: 0 of 2 replicas available)",
      "recorded": true,
      "decisions": [
        {
          "line": "#20 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1",
          "decision": {
            "WorkReported": {
              "cluster": "cluster-2",
              "placement": {
                "group": "placement.kubernetes-fleet.io",
                "kind": "ClusterResourcePlacement",
                "namespace": "",
                "name": "crp-1"
              },
              "resource_index": 1
            }
          }
        }
      ],
      "decisionsOmitted": 0
    }
  ]
}"##
    );
}

#[tokio::test]
async fn a_cluster_timeline_follows_it_until_it_goes_silent() {
    let scene = scenes::rolling_update().await;
    let filter = TimelineFilter {
        cluster: Some("cluster-2".to_owned()),
        ..TimelineFilter::default()
    };
    let found = timeline(&scene.recorder.log, &filter, None, None)
        .await
        .expect("a timeline");
    assert_eq!(
        found.text(),
        r##"#2 2025-03-12T23:00:00Z test apply MemberCluster/cluster-2
    #2 -> created MemberCluster/cluster-2 (resourceVersion 2, generation 1)
#6 2025-03-12T23:00:00Z test heartbeat cluster-2
    #6 -> cluster cluster-2 joined
#11 2025-03-12T23:00:00Z test apply ClusterResourcePlacement/crp-1
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-2 scheduled
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 0
    (8 other decisions)
#12 2025-03-12T23:00:05Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available
    #12 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 0
#16 2025-03-12T23:01:00Z test heartbeat cluster-2
#19 2025-03-12T23:01:05Z test apply ConfigMap/test-ns/web
    #19 -> ClusterResourcePlacement/crp-1: cluster cluster-2 rolled out to resource index 1
    (2 other decisions)
#20 2025-03-12T23:01:10Z test report cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1: applied, not available (deployment web: 0 of 2 replicas available)
    #20 -> work report from cluster-2 on ClusterResourcePlacement/crp-1 at resource index 1
#24 2025-03-12T23:07:50Z test heartbeat cluster-1
    #24 -> cluster cluster-2 unhealthy (HeartbeatTimeout)
"##
    );
}

#[tokio::test]
async fn a_placement_and_a_cluster_show_only_that_binding() {
    let scene = scenes::rolling_update().await;
    let filter = TimelineFilter {
        placement: Some(crp("crp-1")),
        cluster: Some("cluster-3".to_owned()),
        ..TimelineFilter::default()
    };
    let found = timeline(&scene.recorder.log, &filter, None, None)
        .await
        .expect("a timeline");
    assert_eq!(
        found.text(),
        r##"#11 2025-03-12T23:00:00Z test apply ClusterResourcePlacement/crp-1
    #11 -> created ClusterResourcePlacement/crp-1 (resourceVersion 7, generation 1)
    #11 -> ClusterResourcePlacement/crp-1: resource snapshot 0 taken (hash b154520356be)
    #11 -> ClusterResourcePlacement/crp-1: scheduling policy snapshot 0 taken
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-3 scheduled
    #11 -> ClusterResourcePlacement/crp-1: scheduling policy fulfilled: found all the clusters needed as specified by the scheduling policy
    #11 -> ClusterResourcePlacement/crp-1: cluster cluster-3 rolled out to resource index 0
    (4 other decisions)
#13 2025-03-12T23:00:05Z test report cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0: applied, available
    #13 -> work report from cluster-3 on ClusterResourcePlacement/crp-1 at resource index 0
"##
    );
}

#[tokio::test]
async fn a_run_timeline_includes_an_approval_sent_before_it_was_requested() {
    let scene = scenes::staged_run().await;
    let filter = TimelineFilter {
        run: Some(RunRef {
            namespace: None,
            name: "example-run".to_owned(),
        }),
        ..TimelineFilter::default()
    };
    // After the staging stage finished: the run and its requests are known from the state there.
    let after = Some(Point::Seq(scene.staging_done));
    let found = timeline(&scene.recorder.log, &filter, after, None)
        .await
        .expect("a timeline");
    assert_eq!(
        found.text(),
        r##"#10 2025-03-12T23:22:00Z test approve ClusterApprovalRequest/example-run-after-canary
    #10 -> rejected ApprovalRequestNotFound: ClusterApprovalRequest example-run-after-canary not found
#11 2025-03-12T23:22:55Z test approve ClusterApprovalRequest/example-run-after-staging
    #11 -> ClusterApprovalRequest/example-run-after-staging approved
    #11 -> ClusterStagedUpdateRun/example-run: stage staging StageUpdatingSucceeded
    #11 -> ClusterStagedUpdateRun/example-run: stage canary StageUpdatingStarted
    #11 -> ClusterResourcePlacement/example-placement: cluster member2 rolled out to resource index 0
#12 2025-03-12T23:23:10Z test report member2 on ClusterResourcePlacement/example-placement at resource index 0: applied, available
    #12 -> ClusterStagedUpdateRun/example-run: cluster member2 succeeded
    #12 -> ClusterStagedUpdateRun/example-run: stage canary StageUpdatingWaiting
    #12 -> ClusterStagedUpdateRun/example-run: waiting for approval ClusterApprovalRequest/example-run-after-canary
    (1 other decision)
"##
    );
}

#[tokio::test]
async fn an_input_not_decided_yet_is_folded_again() {
    let mut scene = scenes::rolling_update().await;
    scene.recorder.advance(10);
    scene.recorder.heartbeats_undecided(&["cluster-2"]).await;
    let filter = TimelineFilter {
        cluster: Some("cluster-2".to_owned()),
        ..TimelineFilter::default()
    };
    let found = timeline(&scene.recorder.log, &filter, Some(Point::Seq(20)), None)
        .await
        .expect("a timeline");
    assert_eq!(
        found.text(),
        r##"#24 2025-03-12T23:07:50Z test heartbeat cluster-1
    #24 -> cluster cluster-2 unhealthy (HeartbeatTimeout)
#27 2025-03-12T23:08:00Z test heartbeat cluster-2 (not decided yet: folded again)
    #27 -> cluster cluster-2 healthy (HeartbeatResumed)
"##
    );
    let last = found.entries.last().expect("the undecided heartbeat");
    assert_eq!(
        json(last),
        r##"{
  "seq": 27,
  "time": "2025-03-12T23:08:00Z",
  "source": "test",
  "actor": "test",
  "input": "heartbeat",
  "line": "#27 2025-03-12T23:08:00Z test heartbeat cluster-2",
  "recorded": false,
  "decisions": [
    {
      "line": "#27 -> cluster cluster-2 healthy (HeartbeatResumed)",
      "decision": {
        "ClusterHealthChanged": {
          "cluster": "cluster-2",
          "healthy": true,
          "reason": "HeartbeatResumed"
        }
      }
    }
  ],
  "decisionsOmitted": 0
}"##
    );
}

#[tokio::test]
async fn a_timeline_nothing_touched_says_so() {
    let scene = scenes::rolling_update().await;
    let filter = TimelineFilter {
        cluster: Some("cluster-9".to_owned()),
        ..TimelineFilter::default()
    };
    let found = timeline(&scene.recorder.log, &filter, None, None)
        .await
        .expect("a timeline");
    assert!(found.entries.is_empty());
    assert_eq!(found.text(), "no input after #0 up to #26 touched it\n");
}

#[tokio::test]
async fn a_long_timeline_stops_at_its_limit_and_goes_on_from_there() {
    let scene = scenes::rolling_update().await;
    let log = &scene.recorder.log;
    let filter = TimelineFilter {
        cluster: Some("cluster-2".to_owned()),
        ..TimelineFilter::default()
    };
    let first = timeline_at_most(log, &filter, (None, None), 2)
        .await
        .expect("a timeline");
    assert_eq!(
        first.text(),
        "#2 2025-03-12T23:00:00Z test apply MemberCluster/cluster-2\n    \
         #2 -> created MemberCluster/cluster-2 (resourceVersion 2, generation 1)\n\
         #6 2025-03-12T23:00:00Z test heartbeat cluster-2\n    \
         #6 -> cluster cluster-2 joined\n\
         (stopped at #6 after 2 inputs: ask again after #6 for more)\n"
    );
    assert!(first.truncated);
    let rest = timeline_at_most(log, &filter, (Some(Point::Seq(first.until)), None), 100)
        .await
        .expect("a timeline");
    assert!(!rest.truncated);
    let seqs: Vec<u64> = rest.entries.iter().map(|entry| entry.seq).collect();
    assert_eq!(seqs, [11, 12, 16, 19, 20, 24]);
}

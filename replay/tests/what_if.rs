//! What-if forks a recorded rollout and re-feeds the facts that still apply: with a smaller
//! `maxUnavailable` the bad version would have stopped after one failed cluster instead of two
//! (the report of a cluster the fork never updated is dropped); with a larger one the fork
//! updates a cluster the recording never reported on, and marks it. Output is exact and
//! deterministic, in text and JSON.

mod common;

use common::{History, memory_log, placement, settings};
use flotilla_eventstore::LogReader;
use flotilla_replay::what_if::{Outcome, Status};
use flotilla_replay::{WhatIfError, what_if};
use serde_json::json;

const CLUSTERS: [&str; 4] = ["cluster-1", "cluster-2", "cluster-3", "cluster-4"];

/// `crp-1` with `maxUnavailable: 2` over four clusters: version 2 of the ConfigMap (index 1)
/// fails on the second and third cluster updated; the placement is applied again, unchanged,
/// at the end (#55).
fn recording() -> History {
    let mut history = History::new();
    history.fleet(&CLUSTERS);
    history.apply(&placement(&json!(2)));
    for cluster in CLUSTERS {
        history.report(cluster, 0, true, true);
    }
    for _ in 0..3 {
        history.quiet(&CLUSTERS, 30);
    }
    history.advance(30);
    history.apply(&settings("2"));
    history.advance(10);
    history.report("cluster-1", 1, true, true);
    history.advance(10);
    history.report("cluster-2", 1, false, false);
    history.advance(10);
    history.report("cluster-3", 1, false, false);
    for _ in 0..4 {
        history.quiet(&CLUSTERS, 30);
    }
    history.apply(&placement(&json!(2)));
    history
}

const SMALLER: &str = "\
what-if from #30 2025-03-12T23:01:30Z, changed: ClusterResourcePlacement/crp-1
re-fed 23 of 25 recorded inputs up to #55 (0 refused by the what-if); dropped 1 applies or deletes of the changed objects, 1 work reports on work the what-if did not give; skipped 0 rejected records

ClusterResourcePlacement/crp-1
  recorded: stalled at index 1 since #34 2025-03-12T23:02:30Z; behind: cluster-2 (1 failed), cluster-3 (1 failed), cluster-4 (0 ready)
  what-if:  stalled at index 1 since #33 2025-03-12T23:02:20Z; behind: cluster-2 (1 failed), cluster-3 (0 ready), cluster-4 (0 ready)
  cluster     recorded                             what-if
  cluster-1   #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
              #31 2025-03-12T23:02:00Z 1 pending   #31 2025-03-12T23:02:00Z 1 pending
              #32 2025-03-12T23:02:10Z 1 ready     #32 2025-03-12T23:02:10Z 1 ready
  cluster-2   #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
              #31 2025-03-12T23:02:00Z 1 pending   #32 2025-03-12T23:02:10Z 1 pending
              #33 2025-03-12T23:02:20Z 1 failed    #33 2025-03-12T23:02:20Z 1 failed
  cluster-3   #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
              #32 2025-03-12T23:02:10Z 1 pending
              #34 2025-03-12T23:02:30Z 1 failed
  cluster-4   #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
";

const LARGER: &str = "\
what-if from #30 2025-03-12T23:01:30Z, changed: ClusterResourcePlacement/crp-1
re-fed 24 of 25 recorded inputs up to #55 (0 refused by the what-if); dropped 1 applies or deletes of the changed objects, 0 work reports on work the what-if did not give; skipped 0 rejected records

ClusterResourcePlacement/crp-1
  recorded: stalled at index 1 since #34 2025-03-12T23:02:30Z; behind: cluster-2 (1 failed), cluster-3 (1 failed), cluster-4 (0 ready)
  what-if:  stalled at index 1 since #34 2025-03-12T23:02:30Z; behind: cluster-2 (1 failed), cluster-3 (1 failed), cluster-4 (1 pending)
  cluster       recorded                             what-if
  cluster-1     #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
                #31 2025-03-12T23:02:00Z 1 pending   #31 2025-03-12T23:02:00Z 1 pending
                #32 2025-03-12T23:02:10Z 1 ready     #32 2025-03-12T23:02:10Z 1 ready
  cluster-2     #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
                #31 2025-03-12T23:02:00Z 1 pending   #31 2025-03-12T23:02:00Z 1 pending
                #33 2025-03-12T23:02:20Z 1 failed    #33 2025-03-12T23:02:20Z 1 failed
  cluster-3     #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
                #32 2025-03-12T23:02:10Z 1 pending   #31 2025-03-12T23:02:00Z 1 pending
                #34 2025-03-12T23:02:30Z 1 failed    #34 2025-03-12T23:02:30Z 1 failed
  cluster-4 *   #30 2025-03-12T23:01:30Z 0 ready     #30 2025-03-12T23:01:30Z 0 ready
                                                     #32 2025-03-12T23:02:10Z 1 pending
  * cluster-4: the what-if gave it index 1, on which the recording holds no report
";

#[tokio::test]
async fn a_smaller_max_unavailable_stops_the_bad_version_earlier() -> Result<(), WhatIfError> {
    let log = memory_log(&recording().events).await;
    let result = what_if(&log, 30, vec![placement(&json!(1))]).await?;
    assert_eq!(result.to_string(), SMALLER);

    let crp = &result.placements[0];
    let failed = |outcome: &Outcome| match outcome {
        Outcome::Stalled { behind, .. } => behind.iter().filter(|b| b.ends_with("failed)")).count(),
        other => panic!("expected a stalled rollout, found {other:?}"),
    };
    assert_eq!((failed(&crp.recorded), failed(&crp.what_if)), (2, 1));
    let cluster_3 = &crp.clusters[2];
    assert_eq!(cluster_3.cluster, "cluster-3");
    assert_eq!(cluster_3.what_if.new_version, None, "never got index 1");
    assert_eq!(cluster_3.recorded.new_version.map(|m| m.seq), Some(32));
    assert!(crp.clusters.iter().all(|c| c.unrecorded.is_empty()));

    let value = serde_json::to_value(&result).expect("serializes");
    assert_eq!(
        value["placements"][0]["clusters"][1]["whatIf"],
        json!({
            "steps": [
                {"seq": 30, "time": "2025-03-12T23:01:30Z", "resourceIndex": 0, "status": "ready"},
                {"seq": 32, "time": "2025-03-12T23:02:10Z", "resourceIndex": 1, "status": "pending"},
                {"seq": 33, "time": "2025-03-12T23:02:20Z", "resourceIndex": 1, "status": "failed"}
            ],
            "stepsDropped": 0,
            "newVersion": {"seq": 32, "time": "2025-03-12T23:02:10Z"},
            "ready": null
        })
    );
    assert_eq!(
        value["placements"][0]["whatIf"],
        json!({
            "state": "stalled",
            "since": {"seq": 33, "time": "2025-03-12T23:02:20Z"},
            "resourceIndex": 1,
            "behind": ["cluster-2 (1 failed)", "cluster-3 (0 ready)", "cluster-4 (0 ready)"]
        })
    );
    Ok(())
}

#[tokio::test]
async fn work_the_recording_never_reported_on_is_marked() -> Result<(), WhatIfError> {
    let log = memory_log(&recording().events).await;
    let result = what_if(&log, 30, vec![placement(&json!(3))]).await?;
    assert_eq!(result.to_string(), LARGER);
    let cluster_4 = &result.placements[0].clusters[3];
    assert_eq!(cluster_4.unrecorded, [1]);
    assert_eq!(
        cluster_4.what_if.steps.last().map(|s| s.look.status),
        Some(Status::Pending)
    );
    Ok(())
}

#[tokio::test]
async fn the_same_what_if_gives_the_same_answer() -> Result<(), WhatIfError> {
    let log = memory_log(&recording().events).await;
    let first = what_if(&log, 30, vec![placement(&json!(1))]).await?;
    let again = what_if(&log, 30, vec![placement(&json!(1))]).await?;
    assert_eq!(first, again);
    assert_eq!(
        serde_json::to_string(&first).expect("serializes"),
        serde_json::to_string(&again).expect("serializes")
    );
    Ok(())
}

#[tokio::test]
async fn a_change_the_hub_would_refuse_fails_the_what_if() {
    let log = memory_log(&recording().events).await;
    let last = log.last_seq().await.expect("the log answers");
    let mut pick_n = placement(&json!(1));
    pick_n["spec"]["policy"] = json!({"placementType": "PickN", "numberOfClusters": 2});
    let refused = what_if(&log, 30, vec![pick_n]).await;
    assert!(
        matches!(&refused, Err(WhatIfError::Rejected { object, seq: 30, message })
            if object == "ClusterResourcePlacement/crp-1" && message.starts_with("ImmutableField")),
        "{refused:?}"
    );
    let nameless = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
    assert!(matches!(
        what_if(&log, 30, vec![nameless]).await,
        Err(WhatIfError::Invalid { position: 1, .. })
    ));
    assert!(matches!(
        what_if(&log, last + 1, vec![settings("3")]).await,
        Err(WhatIfError::PastEnd { .. })
    ));
    assert!(matches!(
        what_if(&log, 30, Vec::new()).await,
        Err(WhatIfError::ObjectCount(0))
    ));
}

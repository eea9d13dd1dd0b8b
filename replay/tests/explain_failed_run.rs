//! A staged run that failed on a cluster is what `explain --placement` says first: the run,
//! its stage, the cluster and the manifest its member reported failed, with the message.

mod common;

use common::staged::up_to_the_run;
use common::{History, memory_log};
use flotilla_core::event::{ManifestCondition, ManifestFailure};
use flotilla_eventstore::memory_log::MemoryLog;
use flotilla_replay::explain::PlacementExplanation;
use flotilla_replay::{PlacementRef, explain_placement, fold_to, waits_in_state};
use serde_json::json;

/// Staging succeeds; canary's member reports its Deployment failed to apply.
fn a_failed_canary() -> History {
    let mut history = History::new();
    up_to_the_run(&mut history);
    history.advance(20);
    history.report_on("web", "member-1", 0, (true, true));
    history.advance(20);
    history.approve("release-after-staging");
    history.advance(20);
    history.report_failed(
        "web",
        "member-2",
        0,
        ManifestFailure {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            namespace: "app".into(),
            name: "web".into(),
            condition: ManifestCondition::Applied,
            message: "image pull: registry.example/web:bad not found".into(),
            reason: None,
        },
    );
    history.advance(20);
    history.tick();
    history
}

/// The failed canary's log, the placement `web`, and its explanation at the log's end.
async fn explained_canary() -> (MemoryLog, PlacementRef, PlacementExplanation) {
    let history = a_failed_canary();
    let log = memory_log(&history.events).await;
    let key = PlacementRef {
        namespace: None,
        name: "web".to_owned(),
    };
    let explained = explain_placement(&log, &key, None).await.expect("explains");
    (log, key, explained)
}

#[tokio::test]
async fn a_failed_run_leads_the_placement_explanation() {
    let (_, _, explained) = explained_canary().await;
    let first = explained.waits.first().expect("a wait");
    assert_eq!(
        serde_json::to_value(first.reason).expect("serializes"),
        json!("RunFailed"),
        "{}",
        explained.text()
    );
    assert_eq!(first.clusters, ["member-2"]);
    for words in [
        "run ClusterStagedUpdateRun/release failed at stage canary",
        "cluster `member-2` in stage `canary` failed to update",
        "; member-2 Deployment app/web (Applied): image pull: registry.example/web:bad not found",
    ] {
        assert!(first.text.contains(words), "{words:?} in {}", first.text);
    }
}

/// The waits alone (what the hub's summary shows) are the explanation's waits.
#[tokio::test]
async fn the_waits_alone_are_the_explanations() {
    let (log, key, explained) = explained_canary().await;
    let folder = fold_to(&log, explained.at).await.expect("folds");
    let waits = waits_in_state(&folder.state, folder.seq, &key.key());
    assert_eq!(
        serde_json::to_value(&waits).expect("serializes"),
        serde_json::to_value(&explained.waits).expect("serializes")
    );
    assert!(!waits.is_empty());
}

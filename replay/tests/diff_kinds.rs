//! `replay diff --kind`: a resource change read without the status churn around it.

mod common;

use common::{History, memory_log, placement, settings};
use flotilla_replay::{Point, diff_points};
use serde_json::json;

#[tokio::test]
async fn a_configmap_change_is_read_alone() {
    let mut history = History::new();
    history.fleet(&["cluster-1", "cluster-2"]);
    history.apply(&placement(&json!(1)));
    for cluster in ["cluster-1", "cluster-2"] {
        history.report(cluster, 0, true, true);
    }
    let before = history.next_seq() - 1;
    history.advance(30);
    history.apply(&settings("2"));
    history.advance(10);
    history.report("cluster-1", 1, true, true);
    let log = memory_log(&history.events).await;
    let mut diff = diff_points(&log, Point::Seq(before), Point::Seq(u64::MAX))
        .await
        .expect("diffs");
    assert!(
        diff.diff.changed.len() > 1,
        "the rollout changed more than the ConfigMap: {}",
        diff.text()
    );
    diff.diff.retain_kinds(&["configmap".to_owned()]);
    assert_eq!(
        diff.diff.text(),
        "~ ConfigMap/app/settings\n    /data/version: \"1\" -> \"2\"\n    \
         /metadata/generation: 1 -> 2\n    /metadata/resourceVersion: \"4\" -> \"6\"\n",
        "{}",
        diff.text()
    );
}

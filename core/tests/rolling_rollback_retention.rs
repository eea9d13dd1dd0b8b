//! A rolling update with `onFailure: Rollback` gives each cluster it moved the work it carried
//! before (`docs/rollout-safety.md`). Retention keeps only `revisionHistoryLimit` snapshots plus
//! those in use, so the snapshots a rollback may return clusters to count as in use while the
//! rollout may still roll back; otherwise the rollback bound clusters to a pruned snapshot (found
//! by `all_inputs` once it generated guarded rolling updates).

mod common;

use common::{Hub, namespace};
use flotilla_core::decision::Decision;
use serde_json::json;

/// A PickAll placement of `test-ns` keeping one snapshot, whose rollouts trip after 60 s
/// without progress and roll back.
fn guarded_crp() -> serde_json::Value {
    let mut placement = common::crp("crp", json!({"placementType": "PickAll"}));
    placement["spec"]["revisionHistoryLimit"] = json!(1);
    placement["spec"]["strategy"] = json!({
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "100%", "progressDeadlineSeconds": 60, "onFailure": "Rollback"}
    });
    placement
}

fn labelled(version: &str) -> serde_json::Value {
    let mut ns = namespace("test-ns");
    ns["metadata"]["labels"] = json!({"version": version});
    ns
}

#[test]
fn a_rollback_returns_clusters_to_a_snapshot_kept_for_it() {
    let mut hub = Hub::new();
    for cluster in ["c1", "c2"] {
        hub.join(cluster, json!({}), json!([]));
    }
    hub.apply(&labelled("1"));
    hub.apply(&guarded_crp());
    for cluster in ["c1", "c2"] {
        hub.report("crp", cluster, true, true);
    }
    // Snapshot 1: both clusters move to it; snapshot 0 is beyond the limit and no binding
    // carries it any more, but the rollout may still give it back.
    hub.apply(&labelled("2"));
    let bound: Vec<Option<u64>> = hub
        .placement("crp")
        .bindings
        .values()
        .map(|b| b.resource_index)
        .collect();
    assert_eq!(bound, [Some(1), Some(1)]);
    // The placement changed again (a label, not its spec): its snapshots are pruned.
    hub.advance(10);
    let mut relabelled = guarded_crp();
    relabelled["metadata"]["labels"] = json!({"team": "a"});
    hub.apply(&relabelled);
    assert!(
        hub.snapshot_indexes("crp").contains(&0),
        "the rollback's target is kept: {:?}",
        hub.snapshot_indexes("crp")
    );
    // No cluster becomes ready on the new work: the deadline trips and the rollback moves both
    // clusters back to snapshot 0, which exists.
    let decisions = hub.advance(61);
    let rolled_back: Vec<(&str, u64)> = decisions
        .iter()
        .filter_map(|d| match d {
            Decision::ClusterRolledBack {
                cluster, to_index, ..
            } => Some((cluster.as_str(), *to_index)),
            _ => None,
        })
        .collect();
    assert!(!rolled_back.is_empty(), "{decisions:?}");
    assert!(
        rolled_back.iter().all(|(_, to)| *to == 0),
        "{rolled_back:?}"
    );
    hub.assert_work_exists("crp");
}

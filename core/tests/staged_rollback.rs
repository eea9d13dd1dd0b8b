//! `onFailure: Rollback` in a stage (`docs/rollout-safety.md`), decision by decision: each cluster
//! the run moved — in the tripped stage and earlier ones — gets its prior work back within the
//! tripped stage's `maxConcurrency` (`ClusterRolledBack`), the run finishes `RolledBack` once they
//! are ready (`RollbackFinished`), fails the rollback when none becomes ready for the stage's
//! `progressDeadlineSeconds`, and a cluster that had no work before keeps the run's.

mod common;

use common::{Hub, namespace};
use flotilla_core::Decision;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::staged::run::UpdateRun;
use serde_json::{Value, json};

/// Members `a1` (stage `a`), `b1`, `b2` (stage `b`, `maxConcurrency` 2, `onFailure: Rollback`,
/// with `extra` fields), namespace `test-ns` with a ConfigMap, an External placement `crp`.
fn fleet(extra: &Value) -> Hub {
    let mut hub = Hub::new();
    hub.join("a1", json!({"env": "a"}), json!([]));
    hub.join("b1", json!({"env": "b", "order": "1"}), json!([]));
    hub.join("b2", json!({"env": "b", "order": "2"}), json!([]));
    hub.apply(&namespace("test-ns"));
    hub.apply(&config_map("1"));
    hub.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "crp"},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                 "policy": {"placementType": "PickAll"}, "strategy": {"type": "External"}}}));
    let mut b = json!({"name": "b", "labelSelector": {"matchLabels": {"env": "b"}},
        "sortingLabelKey": "order", "maxConcurrency": 2, "onFailure": "Rollback"});
    if let (Some(b), Some(extra)) = (b.as_object_mut(), extra.as_object()) {
        b.extend(extra.clone());
    }
    hub.apply(
        &json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy", "metadata": {"name": "guarded"},
        "spec": {"stages": [{"name": "a", "labelSelector": {"matchLabels": {"env": "a"}}}, b]}}),
    );
    hub
}

fn config_map(version: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "test-ns"}, "data": {"version": version}})
}

fn run(name: &str, index: &str) -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun", "metadata": {"name": name},
        "spec": {"placementName": "crp", "resourceSnapshotIndex": index,
                 "stagedRolloutStrategyName": "guarded", "state": "Run"}})
}

fn the_run<'a>(hub: &'a Hub, name: &str) -> &'a UpdateRun {
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        name,
    );
    &hub.state.update_runs()[&key]
}

/// `cluster@index` of every binding of `crp`.
fn bindings(hub: &Hub) -> Vec<String> {
    hub.placement("crp")
        .bindings
        .iter()
        .map(|(c, b)| format!("{c}@{}", b.resource_index.unwrap_or(u64::MAX)))
        .collect()
}

/// `(cluster, from, to)` of every `ClusterRolledBack`.
fn rolled_back(decisions: &[Decision]) -> Vec<(String, u64, u64)> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::ClusterRolledBack {
                placement,
                cluster,
                from_index,
                to_index,
            } => {
                assert_eq!(placement.name, "crp", "the run's placement");
                Some((cluster.clone(), *from_index, *to_index))
            }
            _ => None,
        })
        .collect()
}

fn finished(decisions: &[Decision]) -> Option<(bool, String)> {
    decisions.iter().find_map(|d| match d {
        Decision::RollbackFinished {
            succeeded, message, ..
        } => Some((*succeeded, message.clone())),
        _ => None,
    })
}

/// `(status, reason)` of the run's `Succeeded`, empty while unset.
fn succeeded(hub: &Hub, name: &str) -> (String, String) {
    the_run(hub, name)
        .status
        .succeeded
        .as_ref()
        .map_or_else(Default::default, |c| {
            (c.status.as_str().to_owned(), c.reason.to_string())
        })
}

/// A first run puts every cluster on snapshot 0; the ConfigMap changes (snapshot 1) and
/// `run-2` rolls it out: `a1` succeeds, `b1` and `b2` start together.
fn second_run(extra: &Value) -> Hub {
    let mut hub = fleet(extra);
    hub.apply(&run("run-1", "0"));
    for cluster in ["a1", "b1", "b2"] {
        hub.report("crp", cluster, true, true);
    }
    assert_eq!(succeeded(&hub, "run-1").1, "UpdateRunSucceeded");
    hub.apply(&config_map("2"));
    hub.apply(&run("run-2", "1"));
    hub.report("crp", "a1", true, true);
    assert_eq!(bindings(&hub), ["a1@1", "b1@1", "b2@1"]);
    hub
}

#[test]
fn a_trip_rolls_back_every_moved_cluster_within_max_concurrency() {
    let mut hub = second_run(&json!({}));
    hub.report("crp", "b1", true, true);
    let tripped = hub.report("crp", "b2", false, false);
    assert_eq!(
        rolled_back(&tripped),
        [("b2".to_owned(), 1, 0), ("a1".to_owned(), 1, 0)],
        "b2, failed, at once; one ready cluster fills maxConcurrency 2"
    );
    let progressing = the_run(&hub, "run-2").status.progressing.clone();
    let progressing = progressing.expect("Progressing");
    assert_eq!(progressing.reason, "FailureThresholdExceeded");
    assert!(
        progressing
            .message
            .ends_with("(onFailure: Rollback; rolling back)"),
        "{}",
        progressing.message
    );
    assert_eq!(succeeded(&hub, "run-2"), Default::default());
    let next = hub.report("crp", "b2", true, true);
    assert_eq!(rolled_back(&next), [("b1".to_owned(), 1, 0)]);
    assert_eq!(bindings(&hub), ["a1@0", "b1@0", "b2@0"]);
    assert_eq!(finished(&hub.report("crp", "a1", true, true)), None);
    let done = hub.report("crp", "b1", true, true);
    let (ok, message) = finished(&done).expect("RollbackFinished");
    assert!(ok, "{message}");
    assert_eq!(
        succeeded(&hub, "run-2"),
        ("False".to_owned(), "RolledBack".to_owned())
    );
    assert_eq!(rolled_back(&hub.report("crp", "b2", true, true)), []);
    assert_eq!(bindings(&hub), ["a1@0", "b1@0", "b2@0"]);
    let binding = &hub.placement("crp").bindings.get("a1").expect("a binding");
    assert_eq!(binding.update_run.as_deref(), Some("run-2"));
}

#[test]
fn a_rollback_with_no_cluster_ready_for_the_deadline_fails() {
    let mut hub = second_run(&json!({"progressDeadlineSeconds": 60}));
    hub.report("crp", "b2", false, false);
    assert_eq!(
        bindings(&hub),
        ["a1@1", "b1@0", "b2@0"],
        "b1 and b2, not ready on the new work, go back at once and fill maxConcurrency 2"
    );
    assert_eq!(finished(&hub.advance(30)), None, "not yet");
    let failed = hub.advance(31);
    let (ok, message) = finished(&failed).expect("RollbackFinished");
    assert!(!ok);
    assert!(message.contains("progressDeadlineSeconds"), "{message}");
    assert!(message.contains("a1, b1, b2"), "{message}");
    assert_eq!(
        succeeded(&hub, "run-2"),
        ("False".to_owned(), "RollbackFailed".to_owned())
    );
    hub.report("crp", "b2", true, true);
    assert_eq!(
        bindings(&hub),
        ["a1@1", "b1@0", "b2@0"],
        "a failed rollback moves nothing more"
    );
}

#[test]
fn a_cluster_without_prior_work_keeps_the_runs() {
    let mut hub = fleet(&json!({}));
    hub.apply(&run("run-1", "0"));
    hub.report("crp", "a1", true, true);
    let tripped = hub.report("crp", "b1", false, false);
    assert_eq!(rolled_back(&tripped), []);
    let (ok, _) = finished(&tripped).expect("nothing to wait for");
    assert!(ok);
    assert_eq!(bindings(&hub), ["a1@0", "b1@0", "b2@0"]);
    assert_eq!(
        succeeded(&hub, "run-1"),
        ("False".to_owned(), "RolledBack".to_owned())
    );
}

/// Retention keeps the snapshot a rollback returns clusters to, though no binding carries it
/// while every cluster is on the run's work: the run's clusters' prior work is in use.
#[test]
fn a_rollback_returns_clusters_to_a_snapshot_retention_kept() {
    let mut hub = second_run(&json!({}));
    // Keep one snapshot; re-applying the placement prunes the rest not in use.
    hub.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "crp", "labels": {"team": "a"}},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                 "policy": {"placementType": "PickAll"}, "strategy": {"type": "External"},
                 "revisionHistoryLimit": 1}}));
    hub.report("crp", "b1", true, true);
    let tripped = hub.report("crp", "b2", false, false);
    assert!(!rolled_back(&tripped).is_empty(), "{tripped:?}");
    hub.assert_work_exists("crp");
}

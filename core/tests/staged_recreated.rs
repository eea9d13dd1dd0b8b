//! A staged run initialized against a placement that is then deleted and made again: the new
//! placement's snapshots start over, so the resource snapshot the run recorded may not exist.
//! The run fails validation when it would start, instead of binding clusters to work that does
//! not exist (found by `all_inputs`'s property test). A placement made again with another
//! rollout strategy fails the run as a strategy switch does.

mod common;

use common::{Hub, namespace};
use flotilla_core::model::ObjectKey;
use flotilla_core::query::staged::run::UpdateRun;
use serde_json::{Value, json};

/// An External PickAll placement of namespace `test-ns`.
fn external_crp() -> Value {
    let mut placement = common::crp("crp", json!({"placementType": "PickAll"}));
    placement["spec"]["strategy"] = json!({"type": "External"});
    placement
}

fn run(state: &str) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": "r"},
        "spec": {"placementName": "crp", "stagedRolloutStrategyName": "strategy", "state": state}
    })
}

fn the_run(hub: &Hub) -> &UpdateRun {
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        "r",
    );
    &hub.state.update_runs()[&key]
}

/// A member, an External placement whose namespace changed once (so resource snapshot 1), a
/// one-stage strategy, and run `r` initialized against snapshot 1.
fn initialized() -> Hub {
    let mut hub = Hub::new();
    hub.join("member1", json!({}), json!([]));
    hub.apply(&namespace("test-ns"));
    hub.apply(&external_crp());
    let mut changed = namespace("test-ns");
    changed["metadata"]["labels"] = json!({"version": "2"});
    hub.apply(&changed);
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "strategy"},
        "spec": {"stages": [{"name": "all", "labelSelector": {}}]}
    }));
    hub.apply(&run("Initialize"));
    assert_eq!(the_run(&hub).status.resource_snapshot_index_used, Some(1));
    hub
}

#[test]
fn a_run_whose_snapshot_went_with_its_placement_fails_instead_of_starting() {
    let mut hub = initialized();
    hub.delete("ClusterResourcePlacement", "crp");
    hub.apply(&external_crp());
    hub.apply(&run("Run"));

    let succeeded = the_run(&hub).status.succeeded.clone();
    assert_eq!(
        succeeded.as_ref().map(|c| c.reason.as_str()),
        Some("UpdateRunFailed")
    );
    assert!(succeeded.map(|c| c.message).unwrap_or_default().ends_with(
        "the resource snapshot index used in the updateRun no longer exists, recorded: 1"
    ));
    let placement = hub
        .state
        .placements()
        .values()
        .find(|p| p.bindings.contains_key("member1"))
        .expect("the new placement binds member1");
    assert_eq!(
        placement
            .bindings
            .get("member1")
            .expect("a binding")
            .resource_index,
        None,
        "no work was bound to the missing snapshot"
    );
}

#[test]
fn a_run_whose_placement_came_back_rolling_fails_as_a_strategy_switch() {
    let mut hub = initialized();
    hub.delete("ClusterResourcePlacement", "crp");
    hub.apply(&common::crp("crp", json!({"placementType": "PickAll"})));
    hub.apply(&run("Run"));

    let succeeded = the_run(&hub).status.succeeded.clone();
    assert_eq!(
        succeeded.as_ref().map(|c| c.reason.as_str()),
        Some("UpdateRunFailed")
    );
    assert_eq!(
        succeeded.map(|c| c.message).unwrap_or_default(),
        "cannot continue the updateRun: the placement's rollout strategy type changed from \
         External to RollingUpdate"
    );
    let binding = &hub
        .placement("crp")
        .bindings
        .get("member1")
        .expect("a binding");
    assert_eq!(
        binding.update_run, None,
        "the rolling update binds it, not the run"
    );
}

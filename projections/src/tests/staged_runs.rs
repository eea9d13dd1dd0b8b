//! A run listed with its stages cut (`/v1/runs`) is the run `/v1/objects` renders, with each
//! stage's clusters cut to the first few and `clustersOmitted` counting the rest.

use serde_json::{Value, json};

use super::derived::key;
use super::work::seed_fleet;
use crate::{render_object, runs_cut};

const API: &str = "placement.kubernetes-fleet.io/v1beta1";

#[test]
fn a_listed_run_is_the_rendered_run_with_its_stages_cut() {
    let mut hub = seed_fleet("External");
    hub.apply(
        30,
        &json!({"apiVersion": API, "kind": "ClusterStagedUpdateStrategy",
                "metadata": {"name": "all-at-once"},
                "spec": {"stages": [{"name": "everywhere", "labelSelector": {}}]}}),
    );
    hub.apply(
        31,
        &json!({"apiVersion": API, "kind": "ClusterStagedUpdateRun",
                "metadata": {"name": "run-1"},
                "spec": {"placementName": "crp-1", "stagedRolloutStrategyName": "all-at-once",
                         "state": "Run"}}),
    );
    let full = render_object(&hub.state, &key("ClusterStagedUpdateRun", "", "run-1"))
        .expect("the run is stored");
    let clusters = full["status"]["stagesStatus"][0]["clusters"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(clusters, 3, "the stage holds the seed's three clusters");
    let mut expected = full.clone();
    let stage = &mut expected["status"]["stagesStatus"][0];
    if let Some(Value::Array(list)) = stage.get_mut("clusters") {
        list.truncate(1);
    }
    stage["clustersOmitted"] = json!(2);
    expected["status"]["deletionStageStatus"]["clustersOmitted"] = json!(0);
    assert_eq!(runs_cut(&hub.state, 1), vec![expected]);
    let uncut = runs_cut(&hub.state, 10);
    assert_eq!(
        uncut[0]["status"]["stagesStatus"][0]["clustersOmitted"],
        json!(0)
    );
    assert_eq!(
        uncut[0]["status"]["stagesStatus"][0]["clusters"],
        full["status"]["stagesStatus"][0]["clusters"]
    );
}

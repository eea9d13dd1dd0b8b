//! Proves the placement's status follows the rollout before and between members' reports:
//! nothing reported yet (Applied Unknown), an in-place update held back by `maxUnavailable`
//! (RolloutStarted False, "blocked by the rollout strategy") and an External strategy, which the
//! rollout leaves alone (RolloutStarted Unknown, no works).

use serde_json::{Value, json};

use super::Report;
use super::derived::key;
use super::work::{
    CLUSTERS, binding_name, condition, config_map, crp_key, placement_synchronized, scheduled,
    seed_fleet, synchronized, work_key,
};
use crate::{render_object, works_for_cluster};

#[test]
fn before_any_report_the_placement_waits_on_the_apply() {
    let hub = seed_fleet("RollingUpdate");
    let mut conditions = placement_synchronized();
    conditions.push(condition(
        "ClusterResourcePlacementApplied",
        "Unknown",
        "ApplyPending",
        "There are still 3 cluster(s) in the process of applying the resources on the member \
         cluster",
        20,
    ));
    let object = render_object(&hub.state, &crp_key()).expect("stored");
    assert_eq!(object["status"]["conditions"], json!(conditions));
    let mut cluster = synchronized("kind-cluster-1");
    cluster.push(condition(
        "Applied",
        "Unknown",
        "ApplyPending",
        "In the process of applying the resources on the member cluster",
        20,
    ));
    assert_eq!(
        object["status"]["placementStatuses"][0],
        json!({"clusterName": "kind-cluster-1", "conditions": cluster})
    );
    // The binding shows what is known: nothing past WorkSynchronized.
    let name = binding_name(&hub, "kind-cluster-1");
    let binding =
        render_object(&hub.state, &key("ClusterResourceBinding", "", &name)).expect("derived");
    let types: Vec<&Value> = binding["status"]["conditions"]
        .as_array()
        .map(|all| all.iter().map(|c| &c["type"]).collect())
        .unwrap_or_default();
    assert_eq!(
        types,
        [
            &json!("RolloutStarted"),
            &json!("Overridden"),
            &json!("WorkSynchronized")
        ]
    );
    // A Work exists, without status until its member reports.
    let work = render_object(&hub.state, &work_key("kind-cluster-1")).expect("derived");
    assert_eq!(work["status"], json!({}));
}

#[test]
fn an_in_place_update_held_back_by_max_unavailable_reads_rollout_not_started() {
    let mut hub = seed_fleet("RollingUpdate");
    for cluster in CLUSTERS {
        hub.report(30, Report::untrackable(cluster, "crp-1"));
    }
    // Not trackable: ready once unavailablePeriodSeconds (2s) have passed.
    hub.tick(40);
    hub.apply(50, &config_map("v2"));
    let placement = &hub.state.placements()[&crp_key()];
    let updated: Vec<&str> = CLUSTERS
        .iter()
        .copied()
        .filter(|c| placement.bindings.get(c).expect("a binding").resource_index == Some(1))
        .collect();
    assert_eq!(updated, ["kind-cluster-1"], "maxUnavailable 25% of 3 is 1");
    let object = render_object(&hub.state, &crp_key()).expect("stored");
    let status = &object["status"];
    assert_eq!(status["observedResourceIndex"], "1");
    assert_eq!(
        status["conditions"][1],
        condition(
            "ClusterResourcePlacementRolloutStarted",
            "False",
            "RolloutNotStartedYet",
            "The rollout is being blocked by the rollout strategy in 2 cluster(s)",
            50,
        )
    );
    assert_eq!(status["conditions"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        status["placementStatuses"][1],
        json!({"clusterName": "kind-cluster-2", "conditions": [
            scheduled("kind-cluster-2"),
            condition(
                "RolloutStarted",
                "False",
                "RolloutNotStartedYet",
                "The rollout is being blocked by the rollout strategy",
                50,
            )
        ]})
    );
    let name = binding_name(&hub, "kind-cluster-2");
    let binding =
        render_object(&hub.state, &key("ClusterResourceBinding", "", &name)).expect("derived");
    let mut held = condition(
        "RolloutStarted",
        "False",
        "RolloutNotStartedYet",
        "The resources cannot be updated to the latest because of the rollout strategy",
        50,
    );
    held["observedGeneration"] = json!(2);
    assert_eq!(binding["status"], json!({"conditions": [held]}));
    // Its work still carries index 0 until the rollout moves it.
    let work = render_object(&hub.state, &work_key("kind-cluster-2")).expect("derived");
    assert_eq!(
        work["metadata"]["labels"]["kubernetes-fleet.io/parent-resource-snapshot-index"],
        "0"
    );
    let moved = render_object(&hub.state, &work_key("kind-cluster-1")).expect("derived");
    assert_eq!(
        moved["spec"]["workload"]["manifests"][1]["data"],
        json!({"key": "v2"})
    );
    assert_eq!(moved["metadata"]["generation"], 2);
}

#[test]
fn an_external_strategy_leaves_the_rollout_unknown_and_creates_no_work() {
    let hub = seed_fleet("External");
    let object = render_object(&hub.state, &crp_key()).expect("stored");
    assert_eq!(
        object["status"]["conditions"][1],
        condition(
            "ClusterResourcePlacementRolloutStarted",
            "Unknown",
            "RolloutStartedUnknown",
            "There are still 3 cluster(s) in the process of deciding whether to roll out the \
             latest resources or not",
            20,
        )
    );
    assert_eq!(
        object["status"]["placementStatuses"][2]["conditions"][1],
        condition(
            "RolloutStarted",
            "Unknown",
            "RolloutStartedUnknown",
            "In the process of deciding whether to roll out the latest resources or not",
            20,
        )
    );
    assert!(works_for_cluster(&hub.state, "kind-cluster-1").is_empty());
}

/// A large placement's progress is computed on several threads: the same progress, binding for
/// binding, as on one (here with three members, one per thread, some reported).
#[test]
fn progress_on_several_threads_is_the_progress_on_one() {
    let hub = one_reported();
    let state = &hub.state;
    let key = crp_key();
    let (placement, owner) = owned(state, &key);
    let shown = |threads: usize| -> Vec<(String, Value, Value)> {
        let bindings = placement.bindings.values().collect();
        crate::progress::progress_on(state, &owner, bindings, threads)
            .into_iter()
            .map(|(binding, progress)| {
                let json = |steps: &[crate::progress::Step]| -> Value {
                    steps.iter().map(|step| step.to_json(1)).collect()
                };
                (
                    binding.cluster.to_string(),
                    json(&progress.binding),
                    json(&progress.cluster),
                )
            })
            .collect()
    };
    let one = shown(1);
    assert_eq!(one.len(), CLUSTERS.len());
    assert_eq!(shown(3), one);
    assert_eq!(shown(2), one);
}

/// A table's placement conditions are summed up without keeping each cluster's progress, on
/// one thread or several: the same conditions as the placement's whole status shows.
#[test]
fn summed_up_conditions_are_the_status_conditions_on_any_number_of_threads() {
    let hub = one_reported();
    let state = &hub.state;
    let key = crp_key();
    let (placement, owner) = owned(state, &key);
    let object = render_object(state, &key).expect("stored");
    let shown = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let bindings: Vec<_> = placement.bindings.values().collect();
    for threads in 1..=3 {
        let tally = crate::progress::tally_on(state, &owner, &bindings, threads);
        let summed = tally.conditions(("ClusterResourcePlacement", placement.meta.generation));
        // The status leads with `…Scheduled`, which is not summed up from the clusters.
        assert_eq!(summed, shown[1..], "{threads} threads");
    }
}

/// The seeded fleet, one of its members reported on.
fn one_reported() -> super::Hub {
    let mut hub = seed_fleet("RollingUpdate");
    hub.report(30, Report::untrackable("kind-cluster-1", "crp-1"));
    hub
}

/// The placement under `key` and it as the owner of its derived objects.
fn owned<'a>(
    state: &'a flotilla_core::State,
    key: &'a flotilla_core::model::ObjectKey,
) -> (
    &'a flotilla_core::query::placement::Placement,
    crate::derived::Owner<'a>,
) {
    let placement = state.placements().get(key).expect("the placement");
    (placement, crate::derived::Owner { key, placement })
}

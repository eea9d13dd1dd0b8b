//! Proves a placement that cannot be fully scheduled says so as KubeFleet does: the condition
//! turns False with the count found, and each unfilled PickN / PickFixed slot gets an entry
//! without a cluster name and a `ScheduleFailed` condition carrying the not-selected reason.
//! The rollout binds every picked cluster at once (no member has reported yet, so the status
//! stops at `Applied` Unknown). Also covers scale-in (an unscheduled binding keeps its previous
//! state) and invalid selectors.

use flotilla_core::model::ObjectKey;
use serde_json::{Value, json};

use super::derived::key;
use super::{Hub, at_20, join, member_cluster};
use crate::render_object;

fn crp(name: &str, policy: &Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
            "policy": policy
        }
    })
}

/// A fleet of two joined members without labels (`member1` at t=0s, `member2` at t=2s).
fn two_members() -> Hub {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({}));
    join(&mut hub, 2, "member2", &json!({}));
    hub
}

/// The rendered scheduling policy snapshot called `name`.
fn policy_snapshot(hub: &Hub, name: &str) -> Value {
    render_object(
        &hub.state,
        &key("ClusterSchedulingPolicySnapshot", "", name),
    )
    .expect("derived")
}

fn crp_key(name: &str) -> ObjectKey {
    key("ClusterResourcePlacement", "", name)
}

/// The per-cluster entry of a picked cluster, picked and bound at t=20s (09:58:40), waiting
/// for its member to apply the work.
pub(super) fn picked(cluster: &str, scores: Option<(i32, i32)>) -> Value {
    let message = match scores {
        Some((affinity, spread)) => format!(
            "Successfully scheduled resources for placement in {cluster} (affinity score: \
             {affinity}, topology spread score: {spread}): picked by scheduling policy"
        ),
        None => format!(
            "Successfully scheduled resources for placement in {cluster}: picked by scheduling \
             policy"
        ),
    };
    json!({
        "clusterName": cluster,
        "conditions": [
            at_20("Scheduled", "True", "Scheduled", &message),
            at_20(
                "RolloutStarted",
                "True",
                "RolloutStarted",
                "Detected the new changes on the resources and started the rollout process"
            ),
            at_20(
                "Overridden",
                "True",
                "NoOverrideSpecified",
                "No override rules are configured for the selected resources"
            ),
            at_20(
                "WorkSynchronized",
                "True",
                "AllWorkSynced",
                "All of the works are synchronized to the latest"
            ),
            at_20(
                "Applied",
                "Unknown",
                "ApplyPending",
                "In the process of applying the resources on the member cluster"
            )
        ]
    })
}

/// An unfilled slot: no `clusterName` (empty, and `omitempty` in KubeFleet's API).
fn unfilled(reason: &str) -> Value {
    json!({"conditions": [at_20("Scheduled", "False", "ScheduleFailed", reason)]})
}

/// The placement's conditions: scheduling unfulfilled with `found` clusters, which the rollout
/// bound at once.
fn unfulfilled(found: usize) -> Value {
    let scheduled = at_20(
        "ClusterResourcePlacementScheduled",
        "False",
        "SchedulingPolicyUnfulfilled",
        &format!(
            "could not find all clusters needed as specified by the scheduling policy, found \
             {found} cluster(s) instead"
        ),
    );
    bound_at_once(scheduled, found)
}

/// The placement's conditions: `scheduled`, then those of a rollout that bound its `found`
/// clusters at once, before any member reported on its work.
pub(super) fn bound_at_once(scheduled: Value, found: usize) -> Value {
    json!([
        scheduled,
        at_20(
            "ClusterResourcePlacementRolloutStarted",
            "True",
            "RolloutStarted",
            &format!("All {found} cluster(s) start rolling out the latest resource")
        ),
        at_20(
            "ClusterResourcePlacementOverridden",
            "True",
            "NoOverrideSpecified",
            "No override rules are configured for the selected resources"
        ),
        at_20(
            "ClusterResourcePlacementWorkSynchronized",
            "True",
            "WorkSynchronized",
            &format!(
                "Works(s) are succcesfully created or updated in the {found} target clusters' \
                 namespaces"
            )
        ),
        at_20(
            "ClusterResourcePlacementApplied",
            "Unknown",
            "ApplyPending",
            &format!(
                "There are still {found} cluster(s) in the process of applying the resources on \
                 the member cluster"
            )
        )
    ])
}

/// member1 and member2 join; member3 is registered but its agent never joins.
fn two_joined_one_silent() -> Hub {
    let mut hub = two_members();
    hub.apply(4, &member_cluster("member3"));
    hub
}

/// Applies `crp-3` at t=20s, asking for three clusters (PickN).
fn apply_pick_three(hub: &mut Hub) {
    hub.apply(
        20,
        &crp(
            "crp-3",
            &json!({"placementType": "PickN", "numberOfClusters": 3}),
        ),
    );
}

#[test]
fn pick_n_short_of_clusters_reports_an_unnamed_failed_slot_per_unselected_decision() {
    let mut hub = two_joined_one_silent();
    apply_pick_three(&mut hub);
    let not_joined =
        "ClusterUnschedulable, cluster is not connected to the fleet: member agent not online yet";
    let object = render_object(&hub.state, &crp_key("crp-3")).expect("stored");
    assert_eq!(
        object["status"],
        json!({
            "conditions": unfulfilled(2),
            "observedResourceIndex": "0",
            "placementStatuses": [
                picked("member1", Some((0, 0))),
                picked("member2", Some((0, 0))),
                unfilled(not_joined)
            ]
        })
    );
    let snapshot = policy_snapshot(&hub, "crp-3-0");
    assert_eq!(
        snapshot["status"]["conditions"][0]["reason"],
        "SchedulingPolicyUnfulfilled"
    );
    assert_eq!(
        snapshot["status"]["targetClusters"][2],
        json!({"clusterName": "member3", "reason": not_joined, "selected": false})
    );
}

#[test]
fn pick_n_short_of_clusters_without_unselected_decisions_adds_no_slot() {
    // KubeFleet caps the failed slots at the number of unselected decisions: with two clusters
    // in the fleet and both picked there is nothing to report them with.
    let mut hub = two_members();
    apply_pick_three(&mut hub);
    let object = render_object(&hub.state, &crp_key("crp-3")).expect("stored");
    assert_eq!(object["status"]["conditions"], unfulfilled(2));
    assert_eq!(
        object["status"]["placementStatuses"],
        json!([
            picked("member1", Some((0, 0))),
            picked("member2", Some((0, 0)))
        ])
    );
}

#[test]
fn pick_fixed_with_a_missing_name_reports_it_as_a_failed_slot() {
    let mut hub = two_joined_one_silent();
    let names =
        json!({"placementType": "PickFixed", "clusterNames": ["member2", "ghost", "member1"]});
    hub.apply(20, &crp("fixed", &names));
    let object = render_object(&hub.state, &crp_key("fixed")).expect("stored");
    // PickFixed decisions carry no score, so the message has no score part.
    assert_eq!(
        object["status"],
        json!({
            "conditions": unfulfilled(2),
            "observedResourceIndex": "0",
            "placementStatuses": [
                picked("member1", None),
                picked("member2", None),
                unfilled("specified cluster is not found")
            ]
        })
    );
    let snapshot = policy_snapshot(&hub, "fixed-0");
    assert_eq!(
        snapshot["spec"]["policy"],
        json!({"clusterNames": ["member2", "ghost", "member1"], "placementType": "PickFixed"})
    );
    // PickFixed has no cluster count annotation.
    assert_eq!(
        snapshot["metadata"]["annotations"],
        json!({"kubernetes-fleet.io/CRP-generation": "1"})
    );
    assert_eq!(
        snapshot["status"]["targetClusters"][2],
        json!({"clusterName": "ghost", "reason": "specified cluster is not found", "selected": false})
    );
}

#[test]
fn an_unscored_pick_reads_without_scores() {
    let decision = flotilla_core::query::placement::ClusterDecision {
        cluster: "member1".into(),
        selected: true,
        score: None,
        reason: "picked by scheduling policy".into(),
    };
    assert_eq!(
        crate::derived::decision(&decision),
        json!({"clusterName": "member1", "reason": "picked by scheduling policy", "selected": true})
    );
}

#[test]
fn scaling_in_unschedules_a_binding_and_only_annotates_the_snapshot() {
    let mut hub = two_members();
    hub.apply(
        20,
        &crp(
            "crp-1",
            &json!({"placementType": "PickN", "numberOfClusters": 2}),
        ),
    );
    hub.apply(
        60,
        &crp(
            "crp-1",
            &json!({"placementType": "PickN", "numberOfClusters": 1}),
        ),
    );
    let placement = &hub.state.placements()[&crp_key("crp-1")];
    let (released, kept) = if placement.bindings.get("member1").expect("a binding").state
        == flotilla_core::query::placement::BindingState::Unscheduled
    {
        ("member1", "member2")
    } else {
        ("member2", "member1")
    };
    let name = placement
        .bindings
        .get(released)
        .expect("a binding")
        .name("crp-1");
    let binding =
        render_object(&hub.state, &key("ClusterResourceBinding", "", &name)).expect("derived");
    // The rollout had bound it; it stays until the rollout may remove it (no member has
    // reported its work available, so none is ready and none may go).
    assert_eq!(binding["spec"]["state"], "Unscheduled");
    assert_eq!(
        binding["metadata"]["annotations"],
        json!({"kubernetes-fleet.io/previous-binding-state": "Bound"})
    );
    assert_eq!(binding["metadata"]["generation"], 3);
    let snapshot = policy_snapshot(&hub, "crp-1-0");
    assert_eq!(
        snapshot["metadata"]["annotations"],
        json!({
            "kubernetes-fleet.io/CRP-generation": "2",
            "kubernetes-fleet.io/number-of-clusters": "1"
        })
    );
    // The spec is immutable: it keeps the count the snapshot was taken with.
    assert_eq!(snapshot["spec"]["policy"]["numberOfClusters"], 2);
    let targets = &snapshot["status"]["targetClusters"];
    assert_eq!(targets.as_array().map(Vec::len), Some(1), "{targets}");
    assert_eq!(targets[0]["clusterName"], kept);
    let object = render_object(&hub.state, &crp_key("crp-1")).expect("stored");
    let statuses = &object["status"]["placementStatuses"];
    assert_eq!(statuses.as_array().map(Vec::len), Some(1));
    assert_eq!(statuses[0]["clusterName"], kept);
}

#[test]
fn invalid_selectors_show_the_stored_condition_and_derive_nothing() {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}),
    );
    let mut manifest = crp("crp-1", &json!({"placementType": "PickAll"}));
    manifest["spec"]["resourceSelectors"][0]["name"] = json!("kube-system");
    hub.apply(20, &manifest);
    let object = render_object(&hub.state, &crp_key("crp-1")).expect("stored");
    assert_eq!(
        object["status"],
        json!({"conditions": [{
            "lastTransitionTime": "2024-04-29T09:58:40Z",
            "message": "The resource selectors are invalid: failed to process the request due \
                        to a client error: invalid clusterRresourcePlacement crp-1: namespace \
                        kube-system is not allowed to propagate",
            "observedGeneration": 1,
            "reason": "InvalidResourceSelectors",
            "status": "False",
            "type": "ClusterResourcePlacementScheduled"
        }]})
    );
    let derived = crate::render_all(&hub.state)
        .into_iter()
        .filter(|o| {
            o["apiVersion"]
                .as_str()
                .is_some_and(|v| v.starts_with("placement."))
        })
        .count();
    assert_eq!(derived, 1, "only the placement itself");
}

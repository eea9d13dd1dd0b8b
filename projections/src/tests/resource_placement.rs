//! Proves a `ResourcePlacement` derives the namespaced kinds in its own namespace, that large
//! selections split into sub-snapshots named and labelled as KubeFleet does, and that a
//! `NamespaceAccessible` `ClusterResourcePlacement` gets its `ClusterResourcePlacementStatus`.

use serde_json::{Value, json};

use super::derived::key;
use super::{Hub, join, policy_fulfilled, uid};
use crate::derived::derived_uid;
use crate::{describe, list, render_all, render_object, resolve_kind, table};

/// A ConfigMap `name` in `team-a` holding `data`.
pub(super) fn config_map(name: &str, data: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "team-a"},
        "data": {"value": data}
    })
}

/// Two joined clusters (events 1–4), a ConfigMap in `team-a` (event 5), then the RP `app`
/// (event 6, t=20s, resourceVersion 4) placing every ConfigMap of `team-a` on all clusters.
fn team_a() -> Hub {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({}));
    join(&mut hub, 2, "member2", &json!({}));
    hub.apply(10, &config_map("settings", "on"));
    hub.apply(20, &team_a_placement());
    hub
}

/// The RP `app` placing every ConfigMap of `team-a` on all clusters.
pub(super) fn team_a_placement() -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ResourcePlacement",
        "metadata": {"name": "app", "namespace": "team-a"},
        "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "ConfigMap"}]}
    })
}

fn owner_reference() -> Value {
    json!([{
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "blockOwnerDeletion": true,
        "controller": true,
        "kind": "ResourcePlacement",
        "name": "app",
        "uid": uid(6)
    }])
}

#[test]
fn a_resource_placement_derives_namespaced_snapshots_and_bindings() {
    let hub = team_a();
    let state = &hub.state;
    let placement = &state.placements()[&key("ResourcePlacement", "team-a", "app")];
    let kind = "SchedulingPolicySnapshot";
    let picked = |cluster: &str| {
        json!({
            "clusterName": cluster,
            "clusterScore": {"affinityScore": 0, "priorityScore": 0},
            "reason": "picked by scheduling policy",
            "selected": true
        })
    };
    let expected = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": kind,
        "metadata": {
            "annotations": {"kubernetes-fleet.io/CRP-generation": "1"},
            "creationTimestamp": "2024-04-29T09:58:40Z",
            "generation": 1,
            "labels": {
                "kubernetes-fleet.io/is-latest-snapshot": "true",
                "kubernetes-fleet.io/parent-CRP": "app",
                "kubernetes-fleet.io/policy-index": "0"
            },
            "name": "app-0",
            "namespace": "team-a",
            "ownerReferences": owner_reference(),
            "resourceVersion": "4",
            "uid": derived_uid(&uid(6), kind, "app-0")
        },
        "spec": {
            "policy": {"placementType": "PickAll"},
            "policyHash": placement.policy_snapshots[0].policy_hash
        },
        "status": {
            "conditions": [policy_fulfilled()],
            "observedCRPGeneration": 1,
            "targetClusters": [picked("member1"), picked("member2")]
        }
    });
    assert_eq!(
        render_object(state, &key(kind, "team-a", "app-0")),
        Some(expected)
    );
    assert_eq!(render_object(state, &key(kind, "", "app-0")), None);

    let name = placement
        .bindings
        .get("member2")
        .expect("a binding")
        .name("app");
    let binding = render_object(state, &key("ResourceBinding", "team-a", &name)).expect("derived");
    assert_eq!(binding["metadata"]["namespace"], "team-a");
    assert_eq!(
        binding["metadata"]["labels"],
        json!({"kubernetes-fleet.io/parent-CRP": "app"})
    );
    assert_eq!(binding["spec"]["schedulingPolicySnapshotName"], "app-0");
    assert_eq!(binding["spec"]["clusterDecision"], picked("member2"));

    let snapshot = render_object(state, &key("ResourceSnapshot", "team-a", "app-0-snapshot"))
        .expect("derived");
    assert_eq!(snapshot["metadata"]["ownerReferences"], owner_reference());
    assert_eq!(
        snapshot["spec"]["selectedResources"],
        json!([{
            "apiVersion": "v1",
            "data": {"value": "on"},
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "team-a"}
        }])
    );
    let object = render_object(state, &key("ResourcePlacement", "team-a", "app")).expect("stored");
    assert_eq!(
        object["status"]["conditions"][0]["type"],
        "ResourcePlacementScheduled"
    );
    assert_eq!(
        object["status"]["selectedResources"],
        json!([{"kind": "ConfigMap", "name": "settings", "namespace": "team-a", "version": "v1"}])
    );
}

#[test]
fn namespaced_kinds_list_and_tabulate_per_namespace() {
    let mut hub = team_a();
    hub.tick(3600);
    let state = &hub.state;
    let bindings = resolve_kind(state, "rb").expect("known");
    assert!(bindings.namespaced);
    assert_eq!(list(state, &bindings, Some("team-a")).len(), 2);
    assert!(list(state, &bindings, Some("team-b")).is_empty());
    let names: Vec<String> = ["member1", "member2"]
        .iter()
        .map(|c| {
            state.placements()[&key("ResourcePlacement", "team-a", "app")]
                .bindings
                .get(c)
                .expect("a binding")
                .name("app")
        })
        .collect();
    assert_eq!(
        table(state, &bindings, Some("team-a"), false),
        format!(
            "{:width$}STATE   TARGET-CLUSTER   AGE\n\
             {}   Bound   member1          59m\n\
             {}   Bound   member2          59m\n",
            "NAME",
            names[0],
            names[1],
            width = names[0].len() + 3
        )
    );
    let snapshots = resolve_kind(state, "sps").expect("known");
    assert_eq!(
        table(state, &snapshots, None, false),
        "NAMESPACE   NAME    GEN   AGE\nteam-a      app-0   1     59m\n"
    );
    let resources = resolve_kind(state, "rs").expect("known");
    assert_eq!(resources.kind, "ResourceSnapshot");
    assert_eq!(
        table(state, &resources, Some("team-a"), false),
        "NAME             GEN   AGE\napp-0-snapshot   1     59m\n"
    );
}

#[test]
fn a_large_selection_splits_into_sub_snapshots_and_old_masters_are_not_latest() {
    let mut hub = team_a();
    // Two ConfigMaps of 500 KiB each do not fit one 800 KiB snapshot object.
    let big = "x".repeat(500 * 1024);
    hub.apply(30, &config_map("big-1", &big));
    hub.apply(31, &config_map("big-2", &big));
    let state = &hub.state;
    let kind = resolve_kind(state, "resourcesnapshots").expect("known");
    let all = list(state, &kind, Some("team-a"));
    let summary: Vec<(String, Value, Value, usize)> = all
        .iter()
        .map(|o| {
            (
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                o["metadata"]["labels"].clone(),
                o["metadata"]["annotations"].clone(),
                o["spec"]["selectedResources"]
                    .as_array()
                    .map_or(0, Vec::len),
            )
        })
        .collect();
    let hash = |index: usize| {
        state.placements()[&key("ResourcePlacement", "team-a", "app")].resource_snapshots[index]
            .resource_hash
            .clone()
    };
    let master = |index: usize, latest: bool, parts: usize| {
        (
            json!({
                "kubernetes-fleet.io/is-latest-snapshot": latest.to_string(),
                "kubernetes-fleet.io/parent-CRP": "app",
                "kubernetes-fleet.io/resource-index": index.to_string()
            }),
            json!({
                "kubernetes-fleet.io/number-of-enveloped-object": "0",
                "kubernetes-fleet.io/number-of-resource-snapshots": parts.to_string(),
                "kubernetes-fleet.io/resource-hash": hash(index)
            }),
        )
    };
    let (labels_0, annotations_0) = master(0, false, 1);
    let (labels_1, annotations_1) = master(1, false, 1);
    let (labels_2, annotations_2) = master(2, true, 2);
    // Key order, as kubectl lists: names sort as text.
    assert_eq!(
        summary,
        [
            ("app-0-snapshot".to_owned(), labels_0, annotations_0, 1),
            ("app-1-snapshot".to_owned(), labels_1, annotations_1, 2),
            (
                "app-2-0".to_owned(),
                json!({
                    "kubernetes-fleet.io/parent-CRP": "app",
                    "kubernetes-fleet.io/resource-index": "2"
                }),
                json!({"kubernetes-fleet.io/subindex-of-resource-snapshot": "0"}),
                2
            ),
            ("app-2-snapshot".to_owned(), labels_2, annotations_2, 1),
        ]
    );
    // render_all keeps snapshot order instead: each master before its sub-snapshots.
    let order: Vec<String> = render_all(state)
        .iter()
        .filter(|o| o["kind"] == "ResourceSnapshot")
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        order,
        [
            "app-0-snapshot",
            "app-1-snapshot",
            "app-2-snapshot",
            "app-2-0"
        ]
    );
}

fn accessible_crp() -> Hub {
    let mut hub = Hub::new();
    join(&mut hub, 0, "member1", &json!({}));
    hub.apply(
        10,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test"}}),
    );
    hub.apply(
        20,
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp-ns"},
            "spec": {
                "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "test"}],
                "statusReportingScope": "NamespaceAccessible"
            }
        }),
    );
    hub.tick(100);
    hub
}

#[test]
fn a_namespace_accessible_placement_mirrors_its_status_into_the_namespace() {
    let hub = accessible_crp();
    let state = &hub.state;
    let crp = render_object(state, &key("ClusterResourcePlacement", "", "crp-ns")).expect("stored");
    let kind = "ClusterResourcePlacementStatus";
    let expected = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": kind,
        "lastUpdatedTime": "2024-04-29T10:00:00Z",
        "metadata": {
            "creationTimestamp": "2024-04-29T09:58:40Z",
            "generation": 1,
            "name": "crp-ns",
            "namespace": "test",
            "ownerReferences": [{
                "apiVersion": "placement.kubernetes-fleet.io/v1",
                "blockOwnerDeletion": true,
                "controller": true,
                "kind": "ClusterResourcePlacement",
                "name": "crp-ns",
                "uid": uid(4)
            }],
            "resourceVersion": "3",
            "uid": derived_uid(&uid(4), kind, "crp-ns")
        },
        "sourceStatus": crp["status"]
    });
    assert_eq!(
        render_object(state, &key(kind, "test", "crp-ns")),
        Some(expected.clone())
    );
    assert_eq!(render_object(state, &key(kind, "other", "crp-ns")), None);
    let mirrors = resolve_kind(state, "crps").expect("known");
    assert_eq!(
        list(state, &mirrors, Some("test")),
        std::slice::from_ref(&expected)
    );
    assert!(list(state, &mirrors, Some("other")).is_empty());
    assert_eq!(render_all(state).last(), Some(&expected));
    let text = describe(state, &key(kind, "test", "crp-ns")).expect("derived");
    assert!(
        text.starts_with("Name:               crp-ns\nNamespace:          test\n"),
        "{text}"
    );
    assert!(
        text.contains("\nLast Updated Time:  2024-04-29T10:00:00Z\nMetadata:\n"),
        "{text}"
    );
    assert!(text.contains("\nSource Status:\n  Conditions:\n"), "{text}");
    assert!(
        text.contains("\n  Placement Statuses:\n    Cluster Name:  member1\n"),
        "{text}"
    );
}

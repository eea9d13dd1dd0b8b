//! Proves kubectl-style names resolve to the kinds kubectl would pick.

use serde_json::json;

use super::Hub;
use crate::{KindInfo, resolve_kind};

fn info(group: &str, kind: &str, api_version: &str, namespaced: bool) -> Option<KindInfo> {
    Some(KindInfo {
        group: group.into(),
        kind: kind.into(),
        api_version_default: api_version.into(),
        namespaced,
    })
}

#[test]
fn well_known_names_resolve_case_insensitively() {
    let hub = Hub::new();
    let state = &hub.state;
    let member = info(
        "cluster.kubernetes-fleet.io",
        "MemberCluster",
        "cluster.kubernetes-fleet.io/v1beta1",
        false,
    );
    for name in [
        "membercluster",
        "memberclusters",
        "cluster",
        "MemberCluster",
        "CLUSTER",
    ] {
        assert_eq!(resolve_kind(state, name), member, "{name}");
    }
    let crp = info(
        "placement.kubernetes-fleet.io",
        "ClusterResourcePlacement",
        "placement.kubernetes-fleet.io/v1",
        false,
    );
    for name in [
        "crp",
        "clusterresourceplacements",
        "ClusterResourcePlacement",
    ] {
        assert_eq!(resolve_kind(state, name), crp, "{name}");
    }
    let rp = info(
        "placement.kubernetes-fleet.io",
        "ResourcePlacement",
        "placement.kubernetes-fleet.io/v1",
        true,
    );
    assert_eq!(resolve_kind(state, "rp"), rp);
    assert_eq!(
        resolve_kind(state, "ns"),
        info("", "Namespace", "v1", false)
    );
    assert_eq!(resolve_kind(state, "cm"), info("", "ConfigMap", "v1", true));
    assert_eq!(
        resolve_kind(state, "secret"),
        info("", "Secret", "v1", true)
    );
    assert_eq!(resolve_kind(state, "svc"), info("", "Service", "v1", true));
    assert_eq!(
        resolve_kind(state, "deploy"),
        info("apps", "Deployment", "apps/v1", true)
    );
}

#[test]
fn group_qualified_names_must_name_the_right_group() {
    let hub = Hub::new();
    let state = &hub.state;
    let deployment = info("apps", "Deployment", "apps/v1", true);
    assert_eq!(resolve_kind(state, "deployments.apps"), deployment);
    assert_eq!(resolve_kind(state, "deployments.v1.apps"), deployment);
    assert_eq!(resolve_kind(state, "Deployment.apps"), deployment);
    assert_eq!(resolve_kind(state, "deployments.extensions"), None);
    assert!(resolve_kind(state, "crp.placement.kubernetes-fleet.io").is_some());
    assert_eq!(
        resolve_kind(state, "configmaps.v1"),
        info("", "ConfigMap", "v1", true)
    );
}

#[test]
fn stored_kinds_resolve_by_kind_or_plural() {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "deny", "namespace": "test"},
            "spec": {"podSelector": {}}
        }),
    );
    hub.apply(
        0,
        &json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "reader"},
            "rules": []
        }),
    );
    let state = &hub.state;
    let policy = info(
        "networking.k8s.io",
        "NetworkPolicy",
        "networking.k8s.io/v1",
        true,
    );
    for name in [
        "networkpolicy",
        "networkpolicies",
        "NetworkPolicy",
        "networkpolicies.networking.k8s.io",
    ] {
        assert_eq!(resolve_kind(state, name), policy, "{name}");
    }
    let role = info(
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "rbac.authorization.k8s.io/v1",
        false,
    );
    assert_eq!(resolve_kind(state, "clusterroles"), role);
    // Roles are in the catalog of built-in kinds, stored or not; an unknown name is nothing.
    let roles = resolve_kind(state, "roles").map(|i| i.kind);
    assert_eq!(roles.as_deref(), Some("Role"));
    assert_eq!(resolve_kind(state, "gadgets"), None);
    assert_eq!(resolve_kind(state, ""), None);
    assert_eq!(resolve_kind(state, ".apps"), None);
}

#[test]
fn kinds_derived_from_placements_resolve_by_kubefleets_names() {
    let hub = Hub::new();
    let state = &hub.state;
    // KubeFleet serves the namespaced snapshots and bindings in v1beta1 only.
    let placement = |kind: &str, namespaced: bool| {
        let version = if namespaced { "v1beta1" } else { "v1" };
        info(
            "placement.kubernetes-fleet.io",
            kind,
            &format!("placement.kubernetes-fleet.io/{version}"),
            namespaced,
        )
    };
    let cases = [
        ("csps", "ClusterSchedulingPolicySnapshot", false),
        (
            "clusterschedulingpolicysnapshots",
            "ClusterSchedulingPolicySnapshot",
            false,
        ),
        ("sps", "SchedulingPolicySnapshot", true),
        ("SchedulingPolicySnapshot", "SchedulingPolicySnapshot", true),
        ("crs", "ClusterResourceSnapshot", false),
        ("clusterresourcesnapshot", "ClusterResourceSnapshot", false),
        ("rs", "ResourceSnapshot", true),
        ("resourcesnapshots", "ResourceSnapshot", true),
        ("crb", "ClusterResourceBinding", false),
        ("ClusterResourceBindings", "ClusterResourceBinding", false),
        ("rb", "ResourceBinding", true),
        ("resourcebinding", "ResourceBinding", true),
    ];
    for (name, kind, namespaced) in cases {
        assert_eq!(
            resolve_kind(state, name),
            placement(kind, namespaced),
            "{name}"
        );
    }
    let mirror = info(
        "placement.kubernetes-fleet.io",
        "ClusterResourcePlacementStatus",
        "placement.kubernetes-fleet.io/v1beta1",
        true,
    );
    for name in [
        "crps",
        "clusterresourceplacementstatuses",
        "ClusterResourcePlacementStatus",
    ] {
        assert_eq!(resolve_kind(state, name), mirror, "{name}");
    }
    assert!(resolve_kind(state, "crb.placement.kubernetes-fleet.io").is_some());
    assert_eq!(resolve_kind(state, "crb.apps"), None);
}

#[test]
fn rs_means_replica_sets_while_one_is_stored() {
    let mut hub = Hub::new();
    assert_eq!(
        resolve_kind(&hub.state, "rs").map(|kind| kind.kind),
        Some("ResourceSnapshot".to_owned())
    );
    hub.apply(
        0,
        &json!({
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "test"},
            "spec": {}
        }),
    );
    let replica_sets = info("apps", "ReplicaSet", "apps/v1", true);
    assert_eq!(resolve_kind(&hub.state, "rs"), replica_sets);
    assert_eq!(resolve_kind(&hub.state, "rs.apps"), replica_sets);
    assert_eq!(
        resolve_kind(&hub.state, "rs.placement.kubernetes-fleet.io").map(|kind| kind.kind),
        Some("ResourceSnapshot".to_owned())
    );
    assert_eq!(
        resolve_kind(&hub.state, "resourcesnapshots").map(|kind| kind.kind),
        Some("ResourceSnapshot".to_owned())
    );
}

#[test]
fn served_types_add_crd_declared_and_stored_kinds_once_each() {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
                "versions": [{"name": "v1alpha1", "served": true, "storage": false},
                             {"name": "v1", "served": true, "storage": true},
                             {"name": "v0", "served": false}]}
        }),
    );
    for (kind, name) in [("Foo", "a"), ("Foo", "b"), ("FooBar", "c"), ("Widget", "w")] {
        hub.apply(
            0,
            &json!({"apiVersion": "example.com/v1", "kind": kind, "metadata": {"name": name}}),
        );
    }
    let served = crate::served_types(&hub.state);
    let named = |kind: &str| served.iter().filter(|t| t.kind == kind).collect::<Vec<_>>();
    let widget = named("Widget");
    assert_eq!(widget.len(), 1, "declared once, though also stored");
    assert_eq!(widget[0].plural, "widgets");
    assert_eq!(widget[0].short_names, ["wd"]);
    assert_eq!(
        widget[0].versions,
        ["v1", "v1alpha1"],
        "storage first, unserved left out"
    );
    assert!(!widget[0].namespaced);
    assert_eq!(named("Foo").len(), 1);
    assert_eq!(
        named("FooBar")[0].plural,
        "foobars",
        "a kind sharing a prefix is not skipped"
    );
    assert_eq!(
        crate::find_type(
            &hub.state,
            "placement.kubernetes-fleet.io",
            "clusterresourceoverrides"
        )
        .map(|t| t.short_names),
        Some(vec!["cro".to_owned()])
    );
    let widget_name = resolve_kind(&hub.state, "wd").map(|i| i.kind);
    assert_eq!(widget_name.as_deref(), Some("Widget"));
}

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
    assert_eq!(resolve_kind(state, "roles"), None);
    assert_eq!(resolve_kind(state, ""), None);
    assert_eq!(resolve_kind(state, ".apps"), None);
}

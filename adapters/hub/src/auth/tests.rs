//! The role rules against paths and event bodies: what each persona may and may not do.

use axum::http::Method;
use serde_json::json;

use super::rules::{self, KubePath, Refusal};
use super::tokens::{Grant, Role};

const RP: &str = "/apis/placement.kubernetes-fleet.io/v1beta1";

fn grant(role: Role) -> Grant {
    Grant {
        name: "t".to_owned(),
        role,
    }
}

fn team() -> Grant {
    grant(Role::Namespace {
        namespaces: vec!["team-a".to_owned()],
    })
}

fn agent() -> Grant {
    grant(Role::Agent {
        cluster: "east".to_owned(),
    })
}

/// What the hub knows with no CRDs held: the catalog and the Kubernetes built-ins.
fn scope(group: Option<&str>, kind: &str) -> Option<bool> {
    flotilla_core::query::kind_scope::namespaced(None, group, kind)
}

fn kube(grant: &Grant, method: &Method, path: &str) -> bool {
    rules::kube_request(grant, method, path, &scope).is_ok()
}

#[test]
fn paths_split_as_the_router_splits_them() {
    assert_eq!(rules::kube_path("/apis/g/v1"), Some(KubePath::Discovery));
    assert_eq!(rules::kube_path("/v1/events"), None);
    let Some(KubePath::Resource(core_status)) = rules::kube_path("/api/v1/namespaces/a/status")
    else {
        panic!("not a resource path");
    };
    assert_eq!(
        (core_status.namespace, core_status.plural),
        (None, "namespaces")
    );
    let path = format!("{RP}/namespaces/a/resourceplacements/web/status");
    let Some(KubePath::Resource(rp)) = rules::kube_path(&path) else {
        panic!("not a resource path");
    };
    assert_eq!(rp.namespace, Some("a"));
    assert_eq!((rp.name, rp.subresource), (Some("web"), Some("status")));
}

#[test]
fn a_namespace_token_acts_in_its_namespaces_only() {
    let team = team();
    let own = format!("{RP}/namespaces/team-a/resourceplacements");
    assert!(kube(&team, &Method::POST, &own));
    assert!(kube(&team, &Method::PATCH, &format!("{own}/web/status")));
    assert!(kube(
        &team,
        &Method::GET,
        "/api/v1/namespaces/team-a/configmaps/c"
    ));
    assert!(kube(&team, &Method::GET, "/openapi/v3"));
    assert!(!kube(&team, &Method::POST, "/apis"));
    assert!(!kube(
        &team,
        &Method::POST,
        &format!("{RP}/namespaces/team-b/resourceplacements")
    ));
    assert!(!kube(
        &team,
        &Method::GET,
        &format!("{RP}/resourceplacements")
    ));
    assert!(!kube(
        &team,
        &Method::POST,
        &format!("{RP}/clusterresourceplacements")
    ));
    assert!(!kube(&team, &Method::GET, "/api/v1/namespaces/team-a"));
    assert!(!kube(
        &team,
        &Method::GET,
        "/api/v1/namespaces/team-a/status"
    ));
    assert!(!kube(
        &team,
        &Method::GET,
        "/api/v1/namespaces/team%2Da/configmaps"
    ));
}

#[test]
fn an_agent_token_reads_its_own_works_and_member_cluster_only() {
    let agent = agent();
    let works = format!("{RP}/namespaces/fleet-member-east/works");
    let member = "/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters";
    assert!(kube(&agent, &Method::GET, &works));
    assert!(kube(&agent, &Method::GET, &format!("{works}/w1")));
    assert!(kube(&agent, &Method::GET, &format!("{member}/east")));
    assert!(!kube(&agent, &Method::DELETE, &format!("{works}/w1")));
    assert!(!kube(
        &agent,
        &Method::GET,
        &format!("{RP}/namespaces/fleet-member-west/works")
    ));
    assert!(!kube(&agent, &Method::GET, &format!("{member}/west")));
    assert!(!kube(&agent, &Method::GET, member));
    assert!(!kube(&agent, &Method::GET, "/apis"));
}

#[test]
fn forbidden_is_worded_as_kubernetes_words_it() {
    let refusal = rules::kube_request(
        &team(),
        &Method::POST,
        &format!("{RP}/clusterresourceplacements"),
        &scope,
    );
    let expected = "clusterresourceplacements.placement.kubernetes-fleet.io is forbidden: token \
                    \"t\" cannot create resource \"clusterresourceplacements\" in API group \
                    \"placement.kubernetes-fleet.io\" at the cluster scope";
    assert_eq!(refusal, Err(Refusal::Forbidden(expected.to_owned())));
}

fn events(grant: &Grant, body: &serde_json::Value) -> Result<(), Refusal> {
    rules::events(grant, body.to_string().as_bytes(), &scope)
}

fn config_map(namespace: Option<&str>) -> serde_json::Value {
    let mut metadata = json!({"name": "c"});
    if let Some(ns) = namespace {
        metadata["namespace"] = json!(ns);
    }
    json!({"type": "apply", "manifest": {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": metadata, "data": {"k": "v"}}})
}

#[test]
fn an_agent_posts_only_its_own_heartbeats_reports_and_leave() {
    let agent = agent();
    let beat = |cluster: &str| json!({"type": "heartbeat", "cluster": cluster});
    let report = |cluster: &str| json!({"type": "report", "cluster": cluster, "placement": "p"});
    assert_eq!(
        events(&agent, &json!([beat("east"), report("east")])),
        Ok(())
    );
    let forbidden = |r: &Result<(), Refusal>| matches!(r, Err(Refusal::Forbidden(_)));
    assert!(forbidden(&events(
        &agent,
        &json!([beat("east"), beat("west")])
    )));
    assert!(forbidden(&events(&agent, &report("west"))));
    let leave = |cluster: &str| json!({"type": "leave", "cluster": cluster});
    assert_eq!(events(&agent, &leave("east")), Ok(()));
    assert!(forbidden(&events(&agent, &leave("west"))));
    assert!(forbidden(&events(
        &agent,
        &config_map(Some("fleet-member-east"))
    )));
    assert!(forbidden(&events(&agent, &json!({"type": "tick"}))));
    assert!(matches!(
        events(&agent, &json!({"type": "nonsense"})),
        Err(Refusal::BadRequest(_))
    ));
}

#[test]
fn a_namespace_token_posts_applies_deletes_and_approvals_in_its_namespaces() {
    let team = team();
    let forbidden = |r: Result<(), Refusal>| matches!(r, Err(Refusal::Forbidden(_)));
    assert_eq!(events(&team, &config_map(Some("team-a"))), Ok(()));
    assert!(forbidden(events(&team, &config_map(Some("team-b")))));
    assert!(forbidden(events(&team, &config_map(None))));
    let delete = |kind: &str, ns: &str| json!({"type": "delete", "kind": kind, "namespace": ns, "name": "x"});
    assert_eq!(
        events(&team, &delete("ResourcePlacement", "team-a")),
        Ok(())
    );
    assert!(forbidden(events(
        &team,
        &delete("ResourcePlacement", "team-b")
    )));
    assert!(forbidden(events(
        &team,
        &delete("ClusterResourcePlacement", "team-a")
    )));
    let approve = json!({"type": "approve", "name": "r", "namespace": "team-a"});
    assert_eq!(events(&team, &approve), Ok(()));
    assert!(forbidden(events(
        &team,
        &json!({"type": "approve", "name": "r"})
    )));
    let crp = json!({"type": "apply", "manifest": {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "ClusterResourcePlacement",
        "metadata": {"name": "p", "namespace": "team-a"},
        "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace",
            "name": "team-a"}]}}});
    assert!(forbidden(events(&team, &crp)));
    assert!(forbidden(events(
        &team,
        &json!({"type": "heartbeat", "cluster": "c"})
    )));
}

#[test]
fn v1_reads_need_a_namespaced_kind_in_the_tokens_namespace() {
    let team = team();
    let scope = |kind: &str| Some(kind != "crp");
    assert!(rules::v1_read(&team, "/v1/table/rp", Some("team-a"), scope).is_ok());
    assert!(rules::v1_read(&team, "/v1/kinds", None, scope).is_ok());
    assert!(rules::v1_read(&team, "/v1/table/crp", Some("team-a"), scope).is_err());
    assert!(rules::v1_read(&team, "/v1/table/rp", Some("team-b"), scope).is_err());
    assert!(rules::v1_read(&team, "/v1/table/rp", None, scope).is_err());
    assert!(rules::v1_read(&team, "/v1/log", None, scope).is_err());
    assert!(
        rules::v1_read(
            &agent(),
            "/v1/objects/work",
            Some("fleet-member-east"),
            scope
        )
        .is_err()
    );
    assert!(rules::v1_read(&grant(Role::Admin), "/v1/log", None, scope).is_ok());
}

#[test]
fn the_fleet_wide_summaries_are_for_admin_tokens_only() {
    let scope = |_: &str| Some(true);
    // They count and page every member cluster, which a namespace token may not read.
    for path in ["/v1/summary", "/v1/members", "/v1/marks", "/v1/runs"] {
        assert!(
            rules::v1_read(&team(), path, Some("team-a"), scope).is_err(),
            "{path}"
        );
        assert!(
            rules::v1_read(&agent(), path, None, scope).is_err(),
            "{path}"
        );
        assert!(
            rules::v1_read(&grant(Role::Admin), path, None, scope).is_ok(),
            "{path}"
        );
    }
}

#[test]
fn an_open_api_is_refused_beyond_loopback_only() {
    use super::{Access, TokenSet};
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 7420));
    let wildcard = std::net::SocketAddr::from(([0, 0, 0, 0], 7420));
    assert!(Access::Open.check_listener(loopback).is_ok());
    assert!(Access::Open.check_listener(wildcard).is_err());
    let file = "tokens: [{token: admin-token-0123456789, role: admin}]";
    let tokens = match TokenSet::parse(file, std::path::Path::new("t.yaml")) {
        Ok(tokens) => tokens,
        Err(e) => panic!("{e}"),
    };
    let guarded = Access::Tokens(std::sync::Arc::new(tokens));
    assert!(guarded.check_listener(wildcard).is_ok());
}

fn manifest(api_version: &str, kind: &str) -> serde_json::Value {
    json!({"type": "apply", "manifest": {
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": "x", "namespace": "team-a"}, "spec": {}}})
}

#[test]
fn a_namespace_token_applies_only_kinds_known_as_namespaced() {
    for (api_version, kind) in [
        (
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
        ),
        (
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicyBinding",
        ),
        ("node.k8s.io/v1", "RuntimeClass"),
        ("certificates.k8s.io/v1", "CertificateSigningRequest"),
        ("cert-manager.io/v1", "ClusterIssuer"),
    ] {
        let refusal = events(&team(), &manifest(api_version, kind));
        assert!(
            matches!(&refusal, Err(Refusal::Forbidden(m)) if m.contains("namespace")),
            "{kind}: {refusal:?}"
        );
    }
    assert!(events(&team(), &manifest("v1", "ConfigMap")).is_ok());
    assert!(events(&team(), &manifest("coordination.k8s.io/v1", "Lease")).is_ok());
}

#[test]
fn an_alias_is_judged_as_its_canonical_kind() {
    for kind in [
        "crp",
        "ns",
        "csur",
        "careq",
        "clusterresourceplacements",
        "cluster",
    ] {
        let delete = json!({"type": "delete", "kind": kind, "name": "x",
            "namespace": "team-a"});
        assert!(events(&team(), &delete).is_err(), "{kind}");
    }
    for kind in ["rp", "cm", "deploy", "configmaps"] {
        let delete = json!({"type": "delete", "kind": kind, "name": "x",
            "namespace": "team-a"});
        assert!(events(&team(), &delete).is_ok(), "{kind}");
    }
}

#[test]
fn a_namespace_token_writes_through_the_kubernetes_api_only_namespaced_kinds() {
    let vap = "/apis/admissionregistration.k8s.io/v1/namespaces/team-a/validatingadmissionpolicies";
    assert!(!kube(&team(), &Method::POST, vap));
    // A read is judged by its path.
    assert!(kube(&team(), &Method::GET, vap));
    let issuers = "/apis/cert-manager.io/v1/namespaces/team-a/clusterissuers/x";
    assert!(!kube(&team(), &Method::PUT, issuers));
    assert!(!kube(&team(), &Method::PATCH, issuers));
    assert!(kube(
        &team(),
        &Method::POST,
        "/api/v1/namespaces/team-a/configmaps"
    ));
}

//! A namespace token cannot reach cluster scope on the members: real hub processes with a
//! tokens file, on free loopback ports. Kinds a namespace token may write are those known as
//! namespaced — a kind the hub serves, a Kubernetes built-in, or one a held
//! `CustomResourceDefinition` declares with `scope: Namespaced`; everything else is refused with
//! 403 on `/v1/events` and on the Kubernetes API, and nothing is appended.

use std::path::{Path, PathBuf};

use flotilla_tests::support::{HarnessResult, HubProcess};
use serde_json::{Value, json};

const ADMIN: &str = "admin-token-0123456789";
const TEAM: &str = "team-a-token-0123456789";

/// The kinds a team-a token once stored with `metadata.namespace: team-a`: cluster-scoped on
/// every Kubernetes API server (`ClusterIssuer` is cert-manager's, and the hub holds no CRD).
const ESCAPES: [(&str, &str, &str); 5] = [
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
    ),
    ("node.k8s.io/v1", "RuntimeClass", "runtimeclasses"),
    (
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
    ),
    ("cert-manager.io/v1", "ClusterIssuer", "clusterissuers"),
];

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn start(dir: &Path) -> HarnessResult<HubProcess> {
    let path = dir.join("tokens.yaml");
    let text = format!(
        "tokens:\n\
         - {{name: ops, token: {ADMIN}, role: admin}}\n\
         - {{name: team-a, token: {TEAM}, role: namespace, namespaces: [team-a]}}\n"
    );
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    let tokens = path.display().to_string();
    HubProcess::start(&binary(), &dir.join("data"), &["--tokens", &tokens])
}

/// One HTTP request with `token`.
fn call(method: &str, url: &str, token: &str, body: Option<&Value>) -> HarnessResult<(u16, Value)> {
    flotilla_tests::adversary::call(method, url, Some(token), body)
}

/// How many events the hub's log holds.
fn logged(hub: &HubProcess) -> HarnessResult<usize> {
    let url = format!("{}/v1/log?from=1&max=1000", hub.url);
    let (code, page) = call("GET", &url, ADMIN, None)?;
    assert_eq!(code, 200, "{page}");
    Ok(page["events"].as_array().map_or(0, Vec::len))
}

fn object(api_version: &str, kind: &str, name: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": "team-a"}, "spec": {}})
}

fn apply(manifest: &Value) -> Value {
    json!({"type": "apply", "manifest": manifest})
}

/// The Kubernetes API's collection path of a namespaced resource in team-a.
fn kube_path(api_version: &str, plural: &str) -> String {
    let prefix = if api_version.contains('/') {
        "apis"
    } else {
        "api"
    };
    format!("/{prefix}/{api_version}/namespaces/team-a/{plural}")
}

#[test]
fn a_namespace_token_cannot_apply_a_kind_not_known_as_namespaced() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start(dir.path())?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    let before = logged(&hub)?;
    for (api_version, kind, plural) in ESCAPES {
        let manifest = object(api_version, kind, "escape");
        let (code, body) = call("POST", &events, TEAM, Some(&apply(&manifest)))?;
        assert_eq!(code, 403, "{kind} on /v1/events: {body}");
        assert!(body.to_string().contains(kind), "{kind}: {body}");
        let url = format!("{}{}", hub.url, kube_path(api_version, plural));
        let (code, body) = call("POST", &url, TEAM, Some(&manifest))?;
        assert_eq!(code, 403, "{kind} on the Kubernetes API: {body}");
        assert_eq!(body["reason"], "Forbidden", "{kind}: {body}");
    }
    assert_eq!(logged(&hub)?, before, "a refused request appended nothing");
    hub.stop()
}

#[test]
fn a_kind_a_held_crd_declares_namespaced_is_the_namespace_tokens_to_apply() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start(dir.path())?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    let widget = object("example.com/v1", "Widget", "w1");
    assert_eq!(call("POST", &events, TEAM, Some(&apply(&widget)))?.0, 403);
    let crd = |group: &str, kind: &str, plural: &str, scope: &str| {
        apply(&json!({"apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": scope,
                "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase()},
                "versions": [{"name": "v1", "served": true, "storage": true}]}}))
    };
    let crds = json!([
        crd("example.com", "Widget", "widgets", "Namespaced"),
        crd(
            "cert-manager.io",
            "ClusterIssuer",
            "clusterissuers",
            "Cluster"
        ),
    ]);
    assert_eq!(call("POST", &events, ADMIN, Some(&crds))?.0, 200);
    let (code, body) = call("POST", &events, TEAM, Some(&apply(&widget)))?;
    assert_eq!(code, 200, "{body}");
    let url = format!("{}{}", hub.url, kube_path("example.com/v1", "widgets"));
    let (code, body) = call(
        "POST",
        &url,
        TEAM,
        Some(&object("example.com/v1", "Widget", "w2")),
    )?;
    assert_eq!(code, 201, "{body}");
    // A CRD declaring the kind cluster-scoped keeps it the admins'.
    let issuer = object("cert-manager.io/v1", "ClusterIssuer", "i1");
    assert_eq!(call("POST", &events, TEAM, Some(&apply(&issuer)))?.0, 403);
    hub.stop()
}

#[test]
fn an_alias_is_judged_as_its_canonical_kind() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start(dir.path())?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    let before = logged(&hub)?;
    for kind in [
        "crp",
        "ns",
        "mc",
        "cluster",
        "csur",
        "careq",
        "clusterroles",
        "crd",
    ] {
        let delete = json!({"type": "delete", "kind": kind, "name": "x", "namespace": "team-a"});
        let (code, body) = call("POST", &events, TEAM, Some(&delete))?;
        assert_eq!(code, 403, "{kind}: {body}");
    }
    assert_eq!(logged(&hub)?, before);
    let delete = json!({"type": "delete", "kind": "cm", "name": "x", "namespace": "team-a"});
    assert_eq!(call("POST", &events, TEAM, Some(&delete))?.0, 200);
    hub.stop()
}

#[test]
fn the_hub_stores_no_cluster_scoped_kind_under_a_namespace() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start(dir.path())?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    for (api_version, kind, plural) in ESCAPES.into_iter().take(4) {
        let manifest = object(api_version, kind, "escape");
        let (code, body) = call("POST", &events, ADMIN, Some(&apply(&manifest)))?;
        assert!(
            body.to_string().contains("cluster-scoped"),
            "{kind} ({code}): {body}"
        );
        let url = format!("{}/v1/objects/{plural}?namespace=team-a", hub.url);
        let (_, listed) = call("GET", &url, ADMIN, None)?;
        assert!(!listed.to_string().contains("escape"), "{kind}: {listed}");
    }
    hub.stop()
}

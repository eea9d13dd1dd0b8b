use super::*;
use crate::catalog::ENTRIES;

#[test]
fn the_catalog_and_the_kubernetes_table_agree_on_scope() {
    for entry in ENTRIES {
        for (group, kind, _, _, namespaced) in KUBERNETES_KINDS {
            if entry.group == *group && entry.kind == *kind {
                assert_eq!(entry.namespaced, *namespaced, "{kind}");
            }
        }
    }
}

#[test]
fn the_kinds_a_namespace_token_escaped_with_are_cluster_scoped() {
    for (group, kind) in [
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicyBinding",
        ),
        ("node.k8s.io", "RuntimeClass"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
    ] {
        assert!(is_cluster_scoped(group, kind), "{kind}");
        assert_eq!(namespaced(None, Some(group), kind), Some(false));
    }
    assert_eq!(
        namespaced(None, Some("cert-manager.io"), "ClusterIssuer"),
        None
    );
    assert!(!is_cluster_scoped("cert-manager.io", "ClusterIssuer"));
}

#[test]
fn aliases_resolve_to_their_canonical_kind() {
    let crp = canonical_kind(None, "crp").map(|k| k.kind);
    assert_eq!(crp.as_deref(), Some("ClusterResourcePlacement"));
    let ns = canonical_kind(None, "ns").map(|k| k.kind);
    assert_eq!(ns.as_deref(), Some("Namespace"));
    let deploy = canonical_kind(Some("apps"), "deploy").map(|k| k.kind);
    assert_eq!(deploy.as_deref(), Some("Deployment"));
    assert_eq!(namespaced(None, None, "crp"), Some(false));
    assert_eq!(namespaced(None, None, "cm"), Some(true));
    assert_eq!(namespaced(None, None, "configmaps"), Some(true));
    assert_eq!(namespaced(None, None, "csur"), Some(false));
    assert_eq!(namespaced(None, None, "rp"), Some(true));
}

#[test]
fn an_ambiguous_name_is_judged_by_its_widest_meaning() {
    // `events` is namespaced in both groups that serve it.
    assert_eq!(namespaced(None, None, "events"), Some(true));
    // `rs` is KubeFleet's ResourceSnapshot and apps' ReplicaSet: both namespaced.
    assert_eq!(namespaced(None, None, "rs"), Some(true));
}

#[test]
fn a_held_crd_declares_its_kind_scope() {
    let crd = serde_json::json!({"spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]}}});
    let known = declared(&crd, Some("example.com"), "wd");
    assert_eq!(
        known.map(|k| (k.kind, k.namespaced)),
        Some(("Widget".into(), true))
    );
    let cluster = serde_json::json!({"spec": {
        "group": "cert-manager.io", "scope": "Cluster",
        "names": {"kind": "ClusterIssuer", "plural": "clusterissuers"}}});
    let known = declared(&cluster, None, "ClusterIssuer");
    assert_eq!(known.map(|k| k.namespaced), Some(false));
}

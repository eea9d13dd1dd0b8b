//! Whether a kind is namespaced, from what is known — never from a short list — and what a
//! kind name typed by a user (`crp`, `deploy`, `configmaps`, `ConfigMap`) means.
//!
//! Three sources answer, in order: the kinds the hub serves by name ([`crate::catalog::ENTRIES`]),
//! every resource the Kubernetes API server serves built in ([`KUBERNETES_KINDS`], scopes as
//! `kubectl api-resources` prints them in its `NAMESPACED` column), and the
//! `CustomResourceDefinition`s the hub holds (`spec.scope`, `spec.group`, `spec.names`). A kind
//! none of them knows has no known scope: callers decide (the auth rules refuse it to a namespace
//! token; the fold keeps it as stored).
//!
//! The same names resolve here for the auth rules and the fold, so an alias cannot mean one kind
//! to a rule and another to the state machine.

use serde_json::Value;

use crate::State;
use crate::catalog::{CRD_GROUP, ENTRIES};
use crate::model::ObjectKey;

/// One built-in Kubernetes resource: group, kind, plural, short names, namespaced.
pub type KubernetesKind = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    bool,
);

const ADMISSION: &str = "admissionregistration.k8s.io";
const FLOWCONTROL: &str = "flowcontrol.apiserver.k8s.io";
const NETWORKING: &str = "networking.k8s.io";
const RBAC: &str = "rbac.authorization.k8s.io";
const RESOURCE: &str = "resource.k8s.io";
const STORAGE: &str = "storage.k8s.io";

/// The resources a Kubernetes API server serves built in (through 1.33, alpha and beta groups
/// included), with the scope each has (`kubectl api-resources`, `NAMESPACED`).
pub const KUBERNETES_KINDS: &[KubernetesKind] = &[
    ("", "Binding", "bindings", &[], true),
    ("", "ComponentStatus", "componentstatuses", &["cs"], false),
    ("", "ConfigMap", "configmaps", &["cm"], true),
    ("", "Endpoints", "endpoints", &["ep"], true),
    ("", "Event", "events", &["ev"], true),
    ("", "LimitRange", "limitranges", &["limits"], true),
    ("", "Namespace", "namespaces", &["ns"], false),
    ("", "Node", "nodes", &["no"], false),
    (
        "",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        &["pvc"],
        true,
    ),
    ("", "PersistentVolume", "persistentvolumes", &["pv"], false),
    ("", "Pod", "pods", &["po"], true),
    ("", "PodTemplate", "podtemplates", &[], true),
    (
        "",
        "ReplicationController",
        "replicationcontrollers",
        &["rc"],
        true,
    ),
    ("", "ResourceQuota", "resourcequotas", &["quota"], true),
    ("", "Secret", "secrets", &[], true),
    ("", "ServiceAccount", "serviceaccounts", &["sa"], true),
    ("", "Service", "services", &["svc"], true),
    (
        ADMISSION,
        "MutatingAdmissionPolicy",
        "mutatingadmissionpolicies",
        &[],
        false,
    ),
    (
        ADMISSION,
        "MutatingAdmissionPolicyBinding",
        "mutatingadmissionpolicybindings",
        &[],
        false,
    ),
    (
        ADMISSION,
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        &[],
        false,
    ),
    (
        ADMISSION,
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        &[],
        false,
    ),
    (
        ADMISSION,
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        &[],
        false,
    ),
    (
        ADMISSION,
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        &[],
        false,
    ),
    (
        CRD_GROUP,
        "CustomResourceDefinition",
        "customresourcedefinitions",
        &["crd", "crds"],
        false,
    ),
    (
        "apiregistration.k8s.io",
        "APIService",
        "apiservices",
        &[],
        false,
    ),
    (
        "apps",
        "ControllerRevision",
        "controllerrevisions",
        &[],
        true,
    ),
    ("apps", "DaemonSet", "daemonsets", &["ds"], true),
    ("apps", "Deployment", "deployments", &["deploy"], true),
    ("apps", "ReplicaSet", "replicasets", &["rs"], true),
    ("apps", "StatefulSet", "statefulsets", &["sts"], true),
    (
        "authentication.k8s.io",
        "SelfSubjectReview",
        "selfsubjectreviews",
        &[],
        false,
    ),
    (
        "authentication.k8s.io",
        "TokenReview",
        "tokenreviews",
        &[],
        false,
    ),
    (
        "authorization.k8s.io",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        &[],
        true,
    ),
    (
        "authorization.k8s.io",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        &[],
        false,
    ),
    (
        "authorization.k8s.io",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        &[],
        false,
    ),
    (
        "authorization.k8s.io",
        "SubjectAccessReview",
        "subjectaccessreviews",
        &[],
        false,
    ),
    (
        "autoscaling",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        &["hpa"],
        true,
    ),
    ("batch", "CronJob", "cronjobs", &["cj"], true),
    ("batch", "Job", "jobs", &[], true),
    (
        "certificates.k8s.io",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        &["csr"],
        false,
    ),
    (
        "certificates.k8s.io",
        "ClusterTrustBundle",
        "clustertrustbundles",
        &[],
        false,
    ),
    ("coordination.k8s.io", "Lease", "leases", &[], true),
    (
        "coordination.k8s.io",
        "LeaseCandidate",
        "leasecandidates",
        &[],
        true,
    ),
    (
        "discovery.k8s.io",
        "EndpointSlice",
        "endpointslices",
        &[],
        true,
    ),
    ("events.k8s.io", "Event", "events", &["ev"], true),
    (FLOWCONTROL, "FlowSchema", "flowschemas", &[], false),
    (
        FLOWCONTROL,
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        &[],
        false,
    ),
    (
        "internal.apiserver.k8s.io",
        "StorageVersion",
        "storageversions",
        &[],
        false,
    ),
    (NETWORKING, "IngressClass", "ingressclasses", &[], false),
    (NETWORKING, "Ingress", "ingresses", &["ing"], true),
    (NETWORKING, "IPAddress", "ipaddresses", &["ip"], false),
    (
        NETWORKING,
        "NetworkPolicy",
        "networkpolicies",
        &["netpol"],
        true,
    ),
    (NETWORKING, "ServiceCIDR", "servicecidrs", &[], false),
    ("node.k8s.io", "RuntimeClass", "runtimeclasses", &[], false),
    (
        "policy",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        &["pdb"],
        true,
    ),
    (
        RBAC,
        "ClusterRoleBinding",
        "clusterrolebindings",
        &[],
        false,
    ),
    (RBAC, "ClusterRole", "clusterroles", &[], false),
    (RBAC, "RoleBinding", "rolebindings", &[], true),
    (RBAC, "Role", "roles", &[], true),
    (RESOURCE, "DeviceClass", "deviceclasses", &[], false),
    (RESOURCE, "ResourceClaim", "resourceclaims", &[], true),
    (
        RESOURCE,
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        &[],
        true,
    ),
    (RESOURCE, "ResourceSlice", "resourceslices", &[], false),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        "priorityclasses",
        &["pc"],
        false,
    ),
    (STORAGE, "CSIDriver", "csidrivers", &[], false),
    (STORAGE, "CSINode", "csinodes", &[], false),
    (
        STORAGE,
        "CSIStorageCapacity",
        "csistoragecapacities",
        &[],
        true,
    ),
    (STORAGE, "StorageClass", "storageclasses", &["sc"], false),
    (STORAGE, "VolumeAttachment", "volumeattachments", &[], false),
    (
        STORAGE,
        "VolumeAttributesClass",
        "volumeattributesclasses",
        &["vac"],
        false,
    ),
    (
        "storagemigration.k8s.io",
        "StorageVersionMigration",
        "storageversionmigrations",
        &[],
        false,
    ),
];

/// A kind a name resolved to: its group, its kind as manifests write it, and its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownKind {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind, as written in manifests.
    pub kind: String,
    /// Whether objects of this kind live in a namespace.
    pub namespaced: bool,
}

/// Whether `text` (a kind, its lowercase singular or plural, or a short name; any case) names
/// this kind.
fn names(text: &str, kind: &str, plural: &str, short: &[&str]) -> bool {
    kind.eq_ignore_ascii_case(text)
        || plural.eq_ignore_ascii_case(text)
        || short.iter().any(|s| s.eq_ignore_ascii_case(text))
}

/// Every statically known kind `text` may name in `group` (any group when `None`): the hub's
/// catalog first, then the Kubernetes built-ins.
#[must_use]
pub fn static_kinds(group: Option<&str>, text: &str) -> Vec<KnownKind> {
    let in_group = |g: &str| group.is_none_or(|wanted| wanted == g);
    let catalog = ENTRIES
        .iter()
        .filter(|e| in_group(e.group) && names(text, e.kind, e.plural, e.short_names))
        .map(|e| (e.group, e.kind, e.namespaced));
    let builtin = KUBERNETES_KINDS
        .iter()
        .filter(|(g, kind, plural, short, _)| in_group(g) && names(text, kind, plural, short))
        .map(|(g, kind, _, _, namespaced)| (*g, *kind, *namespaced));
    let mut out: Vec<KnownKind> = Vec::new();
    for (group, kind, namespaced) in catalog.chain(builtin) {
        if !out.iter().any(|k| k.group == group && k.kind == kind) {
            out.push(KnownKind {
                group: group.to_owned(),
                kind: kind.to_owned(),
                namespaced,
            });
        }
    }
    out
}

/// The kinds `text` may name in `group` (any when `None`) among the
/// `CustomResourceDefinition`s `state` holds (`spec.names.kind`, `.plural`, `.singular`,
/// `.shortNames`; `spec.scope` is `Namespaced` or `Cluster`).
#[must_use]
pub fn declared_kinds(state: &State, group: Option<&str>, text: &str) -> Vec<KnownKind> {
    let start = ObjectKey::cluster_scoped(CRD_GROUP, "CustomResourceDefinition", "");
    state
        .resources()
        .range(start..)
        .take_while(|(key, _)| key.group == CRD_GROUP && key.kind == "CustomResourceDefinition")
        .filter_map(|(_, resource)| serde_json::from_str::<Value>(&resource.content).ok())
        .filter_map(|content| declared(&content, group, text))
        .collect()
}

fn declared(content: &Value, group: Option<&str>, text: &str) -> Option<KnownKind> {
    let spec = content.get("spec")?;
    let names_of = spec.get("names")?;
    let field = |name: &str| names_of.get(name).and_then(Value::as_str).unwrap_or("");
    let declared_group = spec.get("group").and_then(Value::as_str)?;
    let kind = names_of.get("kind").and_then(Value::as_str)?;
    let short: Vec<&str> = names_of
        .get("shortNames")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let named = names(text, kind, field("plural"), &short) || field("singular") == text;
    let scope = match spec.get("scope").and_then(Value::as_str) {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        // A CRD without a valid scope declares nothing the API server would serve.
        _ => return None,
    };
    (named && group.is_none_or(|g| g == declared_group)).then(|| KnownKind {
        group: declared_group.to_owned(),
        kind: kind.to_owned(),
        namespaced: scope,
    })
}

/// Every kind `text` may name in `group` (any when `None`): static kinds, then those the
/// hub's CRDs declare (`state`, when given).
#[must_use]
pub fn known_kinds(state: Option<&State>, group: Option<&str>, text: &str) -> Vec<KnownKind> {
    let mut kinds = static_kinds(group, text);
    if let Some(state) = state {
        for declared in declared_kinds(state, group, text) {
            if !kinds
                .iter()
                .any(|k| k.group == declared.group && k.kind == declared.kind)
            {
                kinds.push(declared);
            }
        }
    }
    kinds
}

/// Whether `text` in `group` names only namespaced kinds (`Some(true)`), names some
/// cluster-scoped kind (`Some(false)`), or names nothing known (`None`). An ambiguous name is
/// judged by its widest meaning, so no spelling of a cluster-scoped kind passes as namespaced.
#[must_use]
pub fn namespaced(state: Option<&State>, group: Option<&str>, text: &str) -> Option<bool> {
    let kinds = known_kinds(state, group, text);
    if kinds.is_empty() {
        None
    } else {
        Some(kinds.iter().all(|k| k.namespaced))
    }
}

/// The canonical kind an alias (`crp`, `deploy`, `configmaps`) names, when exactly one known
/// kind of `group` (any when `None`) has that name; `None` otherwise.
#[must_use]
pub fn canonical_kind(group: Option<&str>, text: &str) -> Option<KnownKind> {
    let mut kinds = static_kinds(group, text);
    if kinds.len() == 1 { kinds.pop() } else { None }
}

/// Whether a statically known kind of `group` is cluster-scoped (`false` for unknown kinds).
#[must_use]
pub fn is_cluster_scoped(group: &str, kind: &str) -> bool {
    static_kinds(Some(group), kind)
        .iter()
        .any(|k| k.kind == kind && !k.namespaced)
}

#[cfg(test)]
#[path = "kind_scope_tests.rs"]
mod tests;

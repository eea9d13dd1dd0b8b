//! Where a manifest's objects live in the API: its resource (plural) name and whether it is
//! namespaced. Built-in kinds come from a table — Kubernetes fixes their names and scopes — so
//! the common case costs no discovery call; any other kind (a custom resource) is discovered
//! (`super::discovery`).

use crate::work::ManifestId;

/// One resource of the API, enough to build its URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// The resource (plural) name in URLs.
    pub plural: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
}

/// Groups whose kinds the API server serves itself (the types `kubectl` knows), so patched with
/// a strategic merge patch; every other group is a custom resource, patched with a JSON merge
/// patch (the API server refuses a strategic one for them).
const BUILT_IN_GROUPS: [&str; 20] = [
    "",
    "admissionregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

/// Built-in kinds a Work commonly carries: (group, kind, plural, namespaced).
const BUILT_IN_KINDS: [(&str, &str, &str, bool); 35] = [
    ("", "ConfigMap", "configmaps", true),
    ("", "Endpoints", "endpoints", true),
    ("", "LimitRange", "limitranges", true),
    ("", "Namespace", "namespaces", false),
    ("", "Node", "nodes", false),
    ("", "PersistentVolume", "persistentvolumes", false),
    ("", "PersistentVolumeClaim", "persistentvolumeclaims", true),
    ("", "Pod", "pods", true),
    ("", "ReplicationController", "replicationcontrollers", true),
    ("", "ResourceQuota", "resourcequotas", true),
    ("", "Secret", "secrets", true),
    ("", "Service", "services", true),
    ("", "ServiceAccount", "serviceaccounts", true),
    ("apps", "ControllerRevision", "controllerrevisions", true),
    ("apps", "DaemonSet", "daemonsets", true),
    ("apps", "Deployment", "deployments", true),
    ("apps", "ReplicaSet", "replicasets", true),
    ("apps", "StatefulSet", "statefulsets", true),
    (
        "autoscaling",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
    ),
    ("batch", "CronJob", "cronjobs", true),
    ("batch", "Job", "jobs", true),
    ("coordination.k8s.io", "Lease", "leases", true),
    ("discovery.k8s.io", "EndpointSlice", "endpointslices", true),
    ("networking.k8s.io", "Ingress", "ingresses", true),
    ("networking.k8s.io", "IngressClass", "ingressclasses", false),
    (
        "networking.k8s.io",
        "NetworkPolicy",
        "networkpolicies",
        true,
    ),
    (
        "policy",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "clusterroles",
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    ),
    ("rbac.authorization.k8s.io", "Role", "roles", true),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        "rolebindings",
        true,
    ),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        "priorityclasses",
        false,
    ),
    ("storage.k8s.io", "StorageClass", "storageclasses", false),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    ),
];

impl Resource {
    /// The collection's URL path; `namespace` is used only for a namespaced resource.
    #[must_use]
    pub fn collection_path(&self, namespace: &str) -> String {
        let prefix = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        if self.namespaced {
            format!("{prefix}/namespaces/{namespace}/{}", self.plural)
        } else {
            format!("{prefix}/{}", self.plural)
        }
    }

    /// Whether the API server takes a strategic merge patch for it (a built-in kind).
    #[must_use]
    pub fn is_built_in(&self) -> bool {
        BUILT_IN_GROUPS.contains(&self.group.as_str())
    }

    /// A built-in kind from the table.
    pub(super) fn built_in(id: &ManifestId) -> Option<Self> {
        BUILT_IN_KINDS
            .iter()
            .find(|(group, kind, _, _)| *group == id.group && *kind == id.kind)
            .map(|(group, kind, plural, namespaced)| Self {
                group: (*group).to_owned(),
                version: id.version.clone(),
                kind: (*kind).to_owned(),
                plural: (*plural).to_owned(),
                namespaced: *namespaced,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(group: &str, version: &str, kind: &str) -> ManifestId {
        ManifestId {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            namespace: "shop".into(),
            name: "web".into(),
        }
    }

    #[test]
    fn built_in_kinds_have_fixed_paths_and_take_strategic_patches() {
        let deployment = Resource::built_in(&id("apps", "v1", "Deployment"));
        let deployment = deployment.as_ref();
        assert_eq!(
            deployment.map(|r| r.collection_path("shop")),
            Some("/apis/apps/v1/namespaces/shop/deployments".to_owned())
        );
        assert!(deployment.is_some_and(Resource::is_built_in));
        let namespace = Resource::built_in(&id("", "v1", "Namespace"));
        assert_eq!(
            namespace.map(|r| r.collection_path("ignored")),
            Some("/api/v1/namespaces".to_owned())
        );
        assert!(Resource::built_in(&id("example.com", "v1", "Widget")).is_none());
        let custom = Resource {
            group: "gateway.networking.k8s.io".into(),
            version: "v1".into(),
            kind: "Gateway".into(),
            plural: "gateways".into(),
            namespaced: true,
        };
        // A CRD group that merely ends like a built-in one is still a custom resource.
        assert!(!custom.is_built_in());
    }
}

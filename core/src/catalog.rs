//! The kinds the hub serves by name: KubeFleet's (names, short names, categories and versions as
//! KubeFleet's CRDs declare them), Rancher's `ClusterGroup`, and the built-in Kubernetes kinds a
//! hub holds as placeable resources. Kinds declared by a `CustomResourceDefinition` applied to the
//! hub, and any other stored kind, are added at run time by the projections' `served_types`.
//!
//! KubeFleet's CRDs declare no short names for the overrides and their snapshots; flotilla adds
//! `cro`, `ro`, `cros` and `ros` because users type them (the issue tracker asks for `get cro`).

use crate::model::{CLUSTER_GROUP, PLACEMENT_GROUP};

/// One kind the hub knows by name.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// API group (`""` for the core group).
    pub group: &'static str,
    /// Kind, as written in manifests.
    pub kind: &'static str,
    /// Lowercase plural resource name.
    pub plural: &'static str,
    /// Short names kubectl accepts.
    pub short_names: &'static [&'static str],
    /// Categories (`kubectl get fleet`).
    pub categories: &'static [&'static str],
    /// Served versions, the preferred (storage) one first.
    pub versions: &'static [&'static str],
    /// The version objects are shown in when the reader names none.
    pub display_version: &'static str,
    /// Whether objects of this kind live in a namespace.
    pub namespaced: bool,
}

impl Entry {
    /// The singular resource name: the lowercase kind.
    #[must_use]
    pub fn singular(&self) -> String {
        self.kind.to_ascii_lowercase()
    }

    /// `group/version` (or `version` for the core group) for `version`.
    #[must_use]
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_owned()
        } else {
            format!("{}/{version}", self.group)
        }
    }
}

const FLEET: &[&str] = &["fleet", "fleet-placement"];
const FLEET_CLUSTER: &[&str] = &["fleet", "fleet-cluster"];
const ALL: &[&str] = &["all"];
const NONE: &[&str] = &[];
/// The versions KubeFleet's CRDs serve for most placement kinds, the preferred first: an API
/// server prefers the highest-priority version of a group (`v1` over `v1beta1` over
/// `v1alpha1`), whatever the storage version.
const FLEET_VERSIONS: &[&str] = &["v1", "v1beta1"];
/// Kinds KubeFleet also serves in `v1alpha1`: the cluster-scoped staged update kinds.
const WITH_ALPHA: &[&str] = &["v1", "v1beta1", "v1alpha1"];
/// Overrides and their snapshots: `v1beta1` and `v1alpha1`, the versions flotilla's override
/// model reads (KubeFleet's CRDs add `v1`).
const OVERRIDE_VERSIONS: &[&str] = &["v1beta1", "v1alpha1"];
/// Kinds KubeFleet serves in `v1beta1` and `v1alpha1` only (evictions and disruption budgets).
const BETA_ALPHA: &[&str] = &["v1beta1", "v1alpha1"];
/// Kinds KubeFleet serves in `v1beta1` only.
const BETA: &[&str] = &["v1beta1"];
const V1: &[&str] = &["v1"];

const fn fleet(kind: &'static str, plural: &'static str, short: &'static [&'static str]) -> Entry {
    Entry {
        group: PLACEMENT_GROUP,
        kind,
        plural,
        short_names: short,
        categories: FLEET,
        versions: FLEET_VERSIONS,
        display_version: "v1beta1",
        namespaced: false,
    }
}

const fn namespaced(entry: Entry) -> Entry {
    Entry {
        namespaced: true,
        ..entry
    }
}

const fn shown_as(entry: Entry, version: &'static str) -> Entry {
    Entry {
        display_version: version,
        ..entry
    }
}

const fn builtin(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
    namespaced: bool,
) -> Entry {
    Entry {
        group,
        kind,
        plural,
        short_names: short,
        categories: NONE,
        versions: V1,
        display_version: "v1",
        namespaced,
    }
}

const fn serving(entry: Entry, versions: &'static [&'static str]) -> Entry {
    Entry { versions, ..entry }
}

const fn in_all(entry: Entry) -> Entry {
    Entry {
        categories: ALL,
        ..entry
    }
}

/// Every statically known kind. Order matters where two kinds claim a name: the first wins
/// (kubectl, too, prefers built-in groups; see the projections' `YIELDING_SHORT_NAMES` for `rs`).
pub const ENTRIES: &[Entry] = &[
    Entry {
        group: CLUSTER_GROUP,
        kind: "MemberCluster",
        plural: "memberclusters",
        short_names: &["cluster"],
        categories: FLEET_CLUSTER,
        versions: FLEET_VERSIONS,
        display_version: "v1beta1",
        namespaced: false,
    },
    shown_as(
        fleet(
            "ClusterResourcePlacement",
            "clusterresourceplacements",
            &["crp"],
        ),
        "v1",
    ),
    shown_as(
        namespaced(fleet("ResourcePlacement", "resourceplacements", &["rp"])),
        "v1",
    ),
    shown_as(
        fleet(
            "ClusterSchedulingPolicySnapshot",
            "clusterschedulingpolicysnapshots",
            &["csps"],
        ),
        "v1",
    ),
    serving(
        namespaced(fleet(
            "SchedulingPolicySnapshot",
            "schedulingpolicysnapshots",
            &["sps"],
        )),
        BETA,
    ),
    shown_as(
        fleet(
            "ClusterResourceSnapshot",
            "clusterresourcesnapshots",
            &["crs"],
        ),
        "v1",
    ),
    serving(
        namespaced(fleet("ResourceSnapshot", "resourcesnapshots", &["rs"])),
        BETA,
    ),
    shown_as(
        fleet(
            "ClusterResourceBinding",
            "clusterresourcebindings",
            &["crb"],
        ),
        "v1",
    ),
    serving(
        namespaced(fleet("ResourceBinding", "resourcebindings", &["rb"])),
        BETA,
    ),
    namespaced(fleet(
        "ClusterResourcePlacementStatus",
        "clusterresourceplacementstatuses",
        &["crps"],
    )),
    serving(
        fleet(
            "ClusterResourcePlacementEviction",
            "clusterresourceplacementevictions",
            &["crpe"],
        ),
        BETA_ALPHA,
    ),
    serving(
        fleet(
            "ClusterResourcePlacementDisruptionBudget",
            "clusterresourceplacementdisruptionbudgets",
            &["crpdb"],
        ),
        BETA_ALPHA,
    ),
    namespaced(fleet("Work", "works", NONE)),
    serving(
        fleet(
            "ClusterStagedUpdateStrategy",
            "clusterstagedupdatestrategies",
            &["csus"],
        ),
        WITH_ALPHA,
    ),
    namespaced(fleet(
        "StagedUpdateStrategy",
        "stagedupdatestrategies",
        &["sus"],
    )),
    serving(
        fleet(
            "ClusterStagedUpdateRun",
            "clusterstagedupdateruns",
            &["csur"],
        ),
        WITH_ALPHA,
    ),
    namespaced(fleet("StagedUpdateRun", "stagedupdateruns", &["sur"])),
    serving(
        fleet(
            "ClusterApprovalRequest",
            "clusterapprovalrequests",
            &["careq"],
        ),
        WITH_ALPHA,
    ),
    namespaced(fleet("ApprovalRequest", "approvalrequests", &["areq"])),
    serving(
        shown_as(
            fleet(
                "ClusterResourceOverride",
                "clusterresourceoverrides",
                &["cro"],
            ),
            "v1alpha1",
        ),
        OVERRIDE_VERSIONS,
    ),
    serving(
        shown_as(
            namespaced(fleet("ResourceOverride", "resourceoverrides", &["ro"])),
            "v1alpha1",
        ),
        OVERRIDE_VERSIONS,
    ),
    serving(
        shown_as(
            fleet(
                "ClusterResourceOverrideSnapshot",
                "clusterresourceoverridesnapshots",
                &["cros"],
            ),
            "v1alpha1",
        ),
        OVERRIDE_VERSIONS,
    ),
    serving(
        shown_as(
            namespaced(fleet(
                "ResourceOverrideSnapshot",
                "resourceoverridesnapshots",
                &["ros"],
            )),
            "v1alpha1",
        ),
        OVERRIDE_VERSIONS,
    ),
    serving(
        fleet("ClusterResourceEnvelope", "clusterresourceenvelopes", NONE),
        BETA,
    ),
    serving(
        namespaced(fleet("ResourceEnvelope", "resourceenvelopes", NONE)),
        BETA,
    ),
    Entry {
        group: "fleet.cattle.io",
        kind: "ClusterGroup",
        plural: "clustergroups",
        short_names: NONE,
        categories: &["fleet"],
        versions: &["v1alpha1"],
        display_version: "v1alpha1",
        namespaced: true,
    },
    builtin("", "Namespace", "namespaces", &["ns"], false),
    in_all(builtin("", "ConfigMap", "configmaps", &["cm"], true)),
    builtin("", "Secret", "secrets", NONE, true),
    in_all(builtin("", "Service", "services", &["svc"], true)),
    builtin("", "ServiceAccount", "serviceaccounts", &["sa"], true),
    builtin(
        "",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        &["pvc"],
        true,
    ),
    builtin("", "PersistentVolume", "persistentvolumes", &["pv"], false),
    builtin("", "LimitRange", "limitranges", &["limits"], true),
    builtin("", "ResourceQuota", "resourcequotas", &["quota"], true),
    builtin("", "Event", "events", &["ev"], true),
    builtin("events.k8s.io", "Event", "events", &["ev"], true),
    in_all(builtin(
        "apps",
        "Deployment",
        "deployments",
        &["deploy"],
        true,
    )),
    in_all(builtin("apps", "DaemonSet", "daemonsets", &["ds"], true)),
    in_all(builtin(
        "apps",
        "StatefulSet",
        "statefulsets",
        &["sts"],
        true,
    )),
    in_all(builtin("apps", "ReplicaSet", "replicasets", NONE, true)),
    in_all(builtin("batch", "Job", "jobs", NONE, true)),
    in_all(builtin("batch", "CronJob", "cronjobs", &["cj"], true)),
    builtin(RBAC, "Role", "roles", NONE, true),
    builtin(RBAC, "RoleBinding", "rolebindings", NONE, true),
    builtin(RBAC, "ClusterRole", "clusterroles", NONE, false),
    builtin(
        RBAC,
        "ClusterRoleBinding",
        "clusterrolebindings",
        NONE,
        false,
    ),
    builtin("networking.k8s.io", "Ingress", "ingresses", &["ing"], true),
    builtin(
        "networking.k8s.io",
        "NetworkPolicy",
        "networkpolicies",
        &["netpol"],
        true,
    ),
    builtin(
        "policy",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        &["pdb"],
        true,
    ),
    Entry {
        versions: &["v2"],
        display_version: "v2",
        ..in_all(builtin(
            "autoscaling",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            &["hpa"],
            true,
        ))
    },
    builtin(
        "storage.k8s.io",
        "StorageClass",
        "storageclasses",
        &["sc"],
        false,
    ),
    builtin(
        "scheduling.k8s.io",
        "PriorityClass",
        "priorityclasses",
        &["pc"],
        false,
    ),
    builtin(
        CRD_GROUP,
        "CustomResourceDefinition",
        "customresourcedefinitions",
        &["crd", "crds"],
        false,
    ),
];

const RBAC: &str = "rbac.authorization.k8s.io";
/// The group of `CustomResourceDefinition`.
pub const CRD_GROUP: &str = "apiextensions.k8s.io";

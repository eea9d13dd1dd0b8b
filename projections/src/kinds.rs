//! kubectl-like resource names: which kind a word such as `crp`, `deployments.apps` or
//! `MemberCluster` means.
//!
//! Resolution is case-insensitive and accepts, like kubectl, the kind, its singular and plural
//! resource names and its short names, optionally qualified by group (`deployments.apps`) or by
//! version and group (`deployments.v1.apps`). The well-known kinds below come first; after them,
//! any kind stored among the hub resources, matched by its kind or a plural of it.

use flotilla_core::State;
use flotilla_core::model::{
    CLUSTER_GROUP, CLUSTER_RESOURCE_PLACEMENT, CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET,
    CLUSTER_RESOURCE_PLACEMENT_EVICTION, MEMBER_CLUSTER, ObjectKey, PLACEMENT_GROUP,
    RESOURCE_PLACEMENT,
};

/// What a resource name resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindInfo {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind, as written in manifests.
    pub kind: String,
    /// The `apiVersion` to show and assume for this kind.
    pub api_version_default: String,
    /// Whether objects of this kind live in a namespace.
    pub namespaced: bool,
}

/// A kind flotilla knows by name, with kubectl's names for it.
struct WellKnown {
    group: &'static str,
    kind: &'static str,
    api_version: &'static str,
    namespaced: bool,
    /// Singular, plural and short names, lowercase.
    names: &'static [&'static str],
}

/// `cluster` is KubeFleet's short name for `MemberCluster`; `crp` and `rp` are the placements';
/// `csps`/`sps`, `crs`/`rs`, `crb`/`rb` and `crps` those of the kinds derived from placements;
/// `Work` has no short name; `crpe` and `crpdb` are the eviction's and the disruption budget's;
/// `csur`/`sur`, `careq`/`areq` (and `csus`/`sus`) the staged update kinds'.
const WELL_KNOWN: [WellKnown; 24] = [
    WellKnown {
        group: CLUSTER_GROUP,
        kind: MEMBER_CLUSTER,
        api_version: "cluster.kubernetes-fleet.io/v1beta1",
        namespaced: false,
        names: &["membercluster", "memberclusters", "cluster"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: CLUSTER_RESOURCE_PLACEMENT,
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: false,
        names: &[
            "clusterresourceplacement",
            "clusterresourceplacements",
            "crp",
        ],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: RESOURCE_PLACEMENT,
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: true,
        names: &["resourceplacement", "resourceplacements", "rp"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ClusterSchedulingPolicySnapshot",
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: false,
        names: &[
            "clusterschedulingpolicysnapshot",
            "clusterschedulingpolicysnapshots",
            "csps",
        ],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "SchedulingPolicySnapshot",
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: true,
        names: &[
            "schedulingpolicysnapshot",
            "schedulingpolicysnapshots",
            "sps",
        ],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ClusterResourceSnapshot",
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: false,
        names: &["clusterresourcesnapshot", "clusterresourcesnapshots", "crs"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ResourceSnapshot",
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: true,
        // `rs` yields to a stored ReplicaSet (see `YIELDING_SHORT_NAMES`).
        names: &["resourcesnapshot", "resourcesnapshots", "rs"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ClusterResourceBinding",
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: false,
        names: &["clusterresourcebinding", "clusterresourcebindings", "crb"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ResourceBinding",
        api_version: "placement.kubernetes-fleet.io/v1",
        namespaced: true,
        names: &["resourcebinding", "resourcebindings", "rb"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ClusterResourcePlacementStatus",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: true,
        names: &[
            "clusterresourceplacementstatus",
            "clusterresourceplacementstatuses",
            "crps",
        ],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: CLUSTER_RESOURCE_PLACEMENT_EVICTION,
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: false,
        names: &[
            "clusterresourceplacementeviction",
            "clusterresourceplacementevictions",
            "crpe",
        ],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET,
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: false,
        names: &[
            "clusterresourceplacementdisruptionbudget",
            "clusterresourceplacementdisruptionbudgets",
            "crpdb",
        ],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "Work",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: true,
        names: &["work", "works"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ClusterStagedUpdateStrategy",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: false,
        names: &[
            "clusterstagedupdatestrategy",
            "clusterstagedupdatestrategies",
            "csus",
        ],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "StagedUpdateStrategy",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: true,
        names: &["stagedupdatestrategy", "stagedupdatestrategies", "sus"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ClusterStagedUpdateRun",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: false,
        names: &["clusterstagedupdaterun", "clusterstagedupdateruns", "csur"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "StagedUpdateRun",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: true,
        names: &["stagedupdaterun", "stagedupdateruns", "sur"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ClusterApprovalRequest",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: false,
        names: &["clusterapprovalrequest", "clusterapprovalrequests", "careq"],
    },
    WellKnown {
        group: PLACEMENT_GROUP,
        kind: "ApprovalRequest",
        api_version: "placement.kubernetes-fleet.io/v1beta1",
        namespaced: true,
        names: &["approvalrequest", "approvalrequests", "areq"],
    },
    WellKnown {
        group: "",
        kind: "Namespace",
        api_version: "v1",
        namespaced: false,
        names: &["namespace", "namespaces", "ns"],
    },
    WellKnown {
        group: "",
        kind: "ConfigMap",
        api_version: "v1",
        namespaced: true,
        names: &["configmap", "configmaps", "cm"],
    },
    WellKnown {
        group: "",
        kind: "Secret",
        api_version: "v1",
        namespaced: true,
        names: &["secret", "secrets"],
    },
    WellKnown {
        group: "apps",
        kind: "Deployment",
        api_version: "apps/v1",
        namespaced: true,
        names: &["deployment", "deployments", "deploy"],
    },
    WellKnown {
        group: "",
        kind: "Service",
        api_version: "v1",
        namespaced: true,
        names: &["service", "services", "svc"],
    },
];

/// Short names two kinds claim: kubectl resolves `rs` to `apps/ReplicaSet` before KubeFleet's
/// `ResourceSnapshot` (built-in groups come first), so while a ReplicaSet is stored `rs` means
/// that; otherwise it means `ResourceSnapshot`, the only kind flotilla itself knows by it.
const YIELDING_SHORT_NAMES: [(&str, &str, &str); 1] = [("rs", "apps", "ReplicaSet")];

/// Resolves a kubectl-style resource name to a kind; `None` if nothing by that name is known.
#[must_use]
pub fn resolve_kind(state: &State, text: &str) -> Option<KindInfo> {
    let text = text.trim().to_ascii_lowercase();
    let (name, qualifier) = match text.split_once('.') {
        Some((name, qualifier)) => (name, Some(qualifier)),
        None => (text.as_str(), None),
    };
    if name.is_empty() {
        return None;
    }
    let group_matches = |group: &str| qualifier.is_none_or(|q| qualifies(q, group));
    let yielded = YIELDING_SHORT_NAMES
        .iter()
        .filter(|(short, group, _)| *short == name && group_matches(group))
        .find_map(|(_, group, kind)| {
            stored_kind(state, |key| key.group == *group && key.kind == *kind)
        });
    if yielded.is_some() {
        return yielded;
    }
    let well_known = WELL_KNOWN
        .iter()
        .find(|known| group_matches(known.group) && known.names.contains(&name));
    if let Some(known) = well_known {
        return Some(KindInfo {
            group: known.group.to_owned(),
            kind: known.kind.to_owned(),
            api_version_default: known.api_version.to_owned(),
            namespaced: known.namespaced,
        });
    }
    stored_kind(state, |key| {
        group_matches(&key.group) && kind_names_match(&key.kind, name)
    })
}

/// The kind of the first stored hub resource whose key passes `wanted`. Keys are ordered by
/// group then kind, so the first object of a kind stands for it.
fn stored_kind(state: &State, wanted: impl Fn(&ObjectKey) -> bool) -> Option<KindInfo> {
    state
        .resources()
        .iter()
        .find(|(key, _)| wanted(key))
        .map(|(key, resource)| KindInfo {
            group: key.group.clone(),
            kind: key.kind.clone(),
            api_version_default: resource.meta.api_version.clone(),
            namespaced: !key.namespace.is_empty(),
        })
}

/// `apps` qualifies group `apps`; so does `v1.apps`; a bare version (`v1`) qualifies the core
/// group.
fn qualifies(qualifier: &str, group: &str) -> bool {
    if qualifier == group {
        return true;
    }
    let (version, rest) = qualifier.split_once('.').unwrap_or((qualifier, ""));
    is_version(version) && rest == group
}

/// `v1`, `v1beta1`, `v2alpha3`, …
fn is_version(text: &str) -> bool {
    text.strip_prefix('v')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// A stored kind is named by its lowercase kind, that plus `s`, or its English plural.
fn kind_names_match(kind: &str, name: &str) -> bool {
    let singular = kind.to_ascii_lowercase();
    name == singular || name == format!("{singular}s") || name == plural(&singular)
}

/// The English plural Kubernetes derives for a lowercase kind (`ingress` → `ingresses`,
/// `networkpolicy` → `networkpolicies`).
fn plural(singular: &str) -> String {
    let sibilant = ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| singular.ends_with(end));
    if sibilant {
        return format!("{singular}es");
    }
    if let Some(stem) = singular.strip_suffix('y') {
        let after_vowel = stem.ends_with(['a', 'e', 'i', 'o', 'u']);
        if !after_vowel {
            return format!("{stem}ies");
        }
    }
    format!("{singular}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_english_rules() {
        assert_eq!(plural("ingress"), "ingresses");
        assert_eq!(plural("networkpolicy"), "networkpolicies");
        assert_eq!(plural("gateway"), "gateways");
        assert_eq!(plural("role"), "roles");
    }

    #[test]
    fn qualifiers_name_a_group_or_a_version_and_group() {
        assert!(qualifies("apps", "apps"));
        assert!(qualifies("v1.apps", "apps"));
        assert!(qualifies("v1", ""));
        assert!(!qualifies("extensions", "apps"));
        assert!(!qualifies("apps", ""));
    }
}

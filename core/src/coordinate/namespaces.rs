//! Where a namespace exists on a member cluster, for `ResourcePlacement`s: their resources reach
//! only clusters that have their namespace (KubeFleet's ResourcePlacement docs, "Namespace
//! Prerequisites").
//!
//! A namespace exists on a cluster when it is built in (`default`, `kube-system`, `kube-public`,
//! `kube-node-lease`), when a `ClusterResourcePlacement` carries that Namespace to the cluster (a
//! binding there that carries a resource snapshot holding it), or when the cluster's agent
//! reports it: a heartbeat property named [`NAMESPACE_PROPERTY_PREFIX`]`<namespace>` (any value),
//! which keeps the heartbeat's wire form unchanged (KubeFleet's agents report namespaces in
//! `InternalMemberCluster.status.namespaces`). Everything here is a pure function of the state.

use crate::event::{ManifestCondition, ManifestFailure};
use crate::model::{CLUSTER_RESOURCE_PLACEMENT, ObjectKey, RESOURCE_PLACEMENT};
use crate::placement::envelope::unwrap_all;
use crate::placement::{Binding, BindingState};
use crate::state::State;
use crate::work_status::FAILED_MANIFESTS_MAX;

/// Namespaces every Kubernetes cluster has.
pub const BUILT_IN_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Prefix of the heartbeat property by which an agent reports that a namespace exists.
pub const NAMESPACE_PROPERTY_PREFIX: &str = "namespaces.kubernetes-fleet.io/";

/// Whether `namespace` exists on `cluster` (see the module docs).
#[must_use]
pub fn namespace_exists(state: &State, cluster: &str, namespace: &str) -> bool {
    if BUILT_IN_NAMESPACES.contains(&namespace) {
        return true;
    }
    let reported = state.members.get(cluster).is_some_and(|member| {
        member
            .properties
            .contains_key(&format!("{NAMESPACE_PROPERTY_PREFIX}{namespace}"))
    });
    reported
        || state
            .placements
            .iter()
            .filter(|(key, _)| key.kind == CLUSTER_RESOURCE_PLACEMENT)
            .any(|(_, placement)| {
                placement.bindings.get(cluster).is_some_and(|binding| {
                    carried(&binding).is_some_and(|index| {
                        placement.resource_snapshot(index).is_some_and(|snapshot| {
                            snapshot.resources.iter().any(|resource| {
                                resource.key.group.is_empty()
                                    && resource.key.kind == "Namespace"
                                    && resource.key.name == namespace
                            })
                        })
                    })
                })
            })
}

/// The resource index a binding carries to its cluster, if it carries one.
fn carried(binding: &Binding) -> Option<u64> {
    if binding.state == BindingState::Scheduled {
        return None;
    }
    binding.resource_index
}

/// The namespace of a `ResourcePlacement` that does not exist on `cluster`; `None` for a
/// `ClusterResourcePlacement` or when it exists.
#[must_use]
pub fn missing_namespace<'a>(
    state: &State,
    placement: &'a ObjectKey,
    cluster: &str,
) -> Option<&'a str> {
    (placement.kind == RESOURCE_PLACEMENT
        && !namespace_exists(state, cluster, &placement.namespace))
    .then_some(placement.namespace.as_str())
}

/// The member's work applier's message when the namespace is missing (KubeFleet's
/// `Failed to apply the manifest (error: …)` around the API server's NotFound text).
#[must_use]
pub fn missing_namespace_message(namespace: &str) -> String {
    format!("Failed to apply the manifest (error: namespaces \"{namespace}\" not found)")
}

/// Every manifest of the placement's snapshot at `index` as failed to apply for want of
/// `namespace`, at most [`FAILED_MANIFESTS_MAX`].
#[must_use]
pub fn failed_for_missing_namespace(
    state: &State,
    placement: &ObjectKey,
    index: u64,
    namespace: &str,
) -> Vec<ManifestFailure> {
    let Some(snapshot) = state
        .placements
        .get(placement)
        .and_then(|p| p.resource_snapshot(index))
    else {
        return Vec::new();
    };
    let placed =
        unwrap_all(&snapshot.resources).unwrap_or(std::borrow::Cow::Borrowed(&snapshot.resources));
    placed
        .iter()
        .take(FAILED_MANIFESTS_MAX)
        .map(|resource| ManifestFailure {
            group: resource.key.group.to_string(),
            version: resource
                .api_version
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned(),
            kind: resource.key.kind.to_string(),
            namespace: resource.key.namespace.to_string(),
            name: resource.key.name.to_string(),
            condition: ManifestCondition::Applied,
            message: missing_namespace_message(namespace),
            reason: None,
        })
        .collect()
}

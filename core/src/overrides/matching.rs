//! Which overrides apply to a placement's resources on one cluster (KubeFleet's
//! `pkg/utils/overrider`): only latest snapshots count; a CRO matches a selected cluster-scoped
//! resource by group/version/kind/name, or the namespace of a selected namespaced resource; an
//! RO matches group/version/kind/name in its own namespace; a set `spec.placement` must name the
//! placement (a `ClusterResourcePlacement`, or for `scope: Namespaced` a `ResourcePlacement` in
//! the override's namespace); and some rule's cluster selector must pick the cluster.

use super::Override;
use super::Sources;
use super::model::{OverrideKind, OverrideRule, OverrideSelector, OverrideSpec, PlacementScope};
use super::snapshot::snapshot_name;
use crate::model::{CLUSTER_RESOURCE_PLACEMENT, ObjectKey, RESOURCE_PLACEMENT};
use crate::placement::SelectedResource;

/// Whether a rule's cluster selector picks a cluster with these labels: a nil selector picks
/// none, a selector without terms picks all, and terms are OR'd.
#[must_use]
pub fn rule_selects_cluster(rule: &OverrideRule, labels: &impl crate::model::LabelLookup) -> bool {
    let Some(selector) = &rule.cluster_selector else {
        return false;
    };
    selector.cluster_selector_terms.is_empty()
        || selector.cluster_selector_terms.iter().any(|term| {
            term.label_selector
                .as_ref()
                .is_some_and(|labels_wanted| labels_wanted.matches(labels))
        })
}

/// The version part of an `apiVersion` (`apps/v1` → `v1`).
fn version_of(api_version: &str) -> &str {
    api_version.rsplit('/').next().unwrap_or(api_version)
}

fn names(selector: &OverrideSelector, group: &str, version: &str, kind: &str, name: &str) -> bool {
    selector.group == group
        && selector.version == version
        && selector.kind == kind
        && selector.name == name
}

/// Whether an override (of `kind`, stored under `key`) with `spec` selects `resource`.
pub(super) fn selects(
    kind: OverrideKind,
    key: &ObjectKey,
    spec: &OverrideSpec,
    resource: &SelectedResource,
) -> bool {
    let target = &resource.key;
    let version = version_of(&resource.api_version);
    spec.resource_selectors.iter().any(|selector| match kind {
        OverrideKind::ClusterResourceOverride if target.namespace.is_empty() => {
            names(selector, &target.group, version, &target.kind, &target.name)
        }
        // A namespace selected by a CRO brings every resource in it.
        OverrideKind::ClusterResourceOverride => {
            names(selector, "", "v1", "Namespace", &target.namespace)
        }
        OverrideKind::ResourceOverride => {
            target.namespace == key.namespace
                && names(selector, &target.group, version, &target.kind, &target.name)
        }
    })
}

/// Whether an override (stored under `key`) may apply to `placement` at all: without a
/// reference, to every placement; a `Cluster` reference names a `ClusterResourcePlacement`; a
/// `Namespaced` one (a `ResourceOverride` only) a `ResourcePlacement` in the override's namespace
/// (KubeFleet's `pkg/utils/overrider`, which compares the reference with the placement's key).
fn for_placement(key: &ObjectKey, spec: &OverrideSpec, placement: &ObjectKey) -> bool {
    let Some(reference) = &spec.placement else {
        return true;
    };
    let named = reference.name == placement.name;
    match reference.scope {
        PlacementScope::Cluster => named && placement.kind == CLUSTER_RESOURCE_PLACEMENT,
        PlacementScope::Namespaced => {
            named && placement.kind == RESOURCE_PLACEMENT && placement.namespace == key.namespace
        }
    }
}

/// The latest snapshots of the overrides that apply, in application order: CROs by name, then
/// ROs by (namespace, name) — the order of `state.overrides`.
pub(super) fn matching<'a>(
    sources: Sources<'a>,
    placement: &ObjectKey,
    resources: &[SelectedResource],
    labels: &crate::model::StringMap,
) -> Vec<(&'a ObjectKey, &'a Override)> {
    let mut found: Vec<(&ObjectKey, &Override)> = sources
        .overrides
        .iter()
        .filter(|(key, stored)| {
            stored.latest().is_some_and(|latest| {
                let spec = &latest.spec;
                for_placement(key, spec, placement)
                    && resources
                        .iter()
                        .any(|resource| selects(stored.kind, key, spec, resource))
                    && spec
                        .policy
                        .override_rules
                        .iter()
                        .any(|rule| rule_selects_cluster(rule, labels))
            })
        })
        .collect();
    found.sort_by(|(a_key, a), (b_key, b)| {
        (a.kind, &a_key.namespace, &a_key.name).cmp(&(b.kind, &b_key.namespace, &b_key.name))
    });
    found
}

/// The snapshot names of the overrides that apply to a placement's `resources` on `cluster`:
/// CRO snapshot names sorted, and RO `(namespace, snapshot name)` sorted — what KubeFleet puts in
/// the binding and in `applicableClusterResourceOverrides` / `applicableResourceOverrides`.
/// An unknown cluster has none.
#[must_use]
pub fn applicable_overrides<'a>(
    sources: impl Into<Sources<'a>>,
    placement: &ObjectKey,
    resources: &[SelectedResource],
    cluster: &str,
) -> crate::placement::OverrideSnapshots {
    let sources = sources.into();
    let Some(member) = sources.members.get(cluster) else {
        return Default::default();
    };
    let mut cluster_resource_overrides = thin_vec::ThinVec::new();
    let mut resource_overrides = thin_vec::ThinVec::new();
    // Overrides select the objects envelopes hold; a broken envelope fails the render anyway.
    let placed = crate::placement::envelope::unwrap_all(resources)
        .unwrap_or(std::borrow::Cow::Borrowed(resources));
    for (key, stored) in matching(sources, placement, &placed, &member.meta.labels) {
        let Some(latest) = stored.latest() else {
            continue;
        };
        let name = snapshot_name(&key.name, latest.index);
        match stored.kind {
            OverrideKind::ClusterResourceOverride => cluster_resource_overrides.push(name),
            OverrideKind::ResourceOverride => {
                resource_overrides.push((key.namespace.to_string(), name))
            }
        }
    }
    cluster_resource_overrides.sort();
    resource_overrides.sort();
    (cluster_resource_overrides, resource_overrides)
}

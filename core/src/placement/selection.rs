//! Resource selection: which hub objects a placement's resource selectors pick.
//!
//! A selector names group/version/kind and optionally a name or a label selector. Selecting a
//! `Namespace` also selects every namespaced object in it, unless its `selectionScope` is
//! `NamespaceOnly`. A `ClusterResourcePlacement` selects cluster-scoped objects (and what is in
//! the namespaces it selects); a `ResourcePlacement` selects namespaced objects of its own
//! namespace only. Fleet's own objects are never selected.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::resource_snapshot::SelectedResource;
use crate::model::Resource;
use crate::model::placement::ResourceSelector;
use crate::model::{CLUSTER_GROUP, ObjectKey, PLACEMENT_GROUP, PlacementSpec};

/// Namespace prefixes KubeFleet reserves; selecting one of these namespaces is an error.
pub const RESERVED_NAMESPACE_PREFIXES: [&str; 2] = ["fleet-", "kube-"];
/// Namespaces KubeFleet never propagates.
pub const SKIPPED_NAMESPACES: [&str; 1] = ["default"];

/// KubeFleet's apply order of well-known kinds; other kinds follow, by group/version/kind.
const KIND_ORDER: [&str; 32] = [
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Groups that hold the fleet's own objects, which are never placed.
const FLEET_GROUPS: [&str; 2] = [PLACEMENT_GROUP, CLUSTER_GROUP];

/// Objects never placed: the fleet's own kinds (envelopes excepted), objects each cluster makes
/// for itself, and kinds that describe the hub rather than the workload.
fn is_never_placed(key: &ObjectKey, resource: &Resource) -> bool {
    let envelope = key.group == PLACEMENT_GROUP
        && matches!(
            key.kind.as_str(),
            "ClusterResourceEnvelope" | "ResourceEnvelope"
        );
    if FLEET_GROUPS.contains(&key.group.as_str()) && !envelope {
        return true;
    }
    if matches!(
        key.group.as_str(),
        "events.k8s.io" | "coordination.k8s.io" | "metrics.k8s.io"
    ) {
        return true;
    }
    match (key.group.as_str(), key.kind.as_str(), key.name.as_str()) {
        ("", "Pod" | "Node" | "Event", _)
        | ("", "ConfigMap", "kube-root-ca.crt")
        | ("", "ServiceAccount", "default") => true,
        ("", "Secret", _) => resource
            .content
            .contains(r#""type":"kubernetes.io/service-account-token""#),
        _ => false,
    }
}

fn matches(selector: &ResourceSelector, key: &ObjectKey, resource: &Resource) -> bool {
    selector.group == key.group
        && selector.kind == key.kind
        && selector.name.as_ref().is_none_or(|name| name == &key.name)
        && selector
            .label_selector
            .as_ref()
            .is_none_or(|labels| labels.matches(&resource.meta.labels))
}

/// The resources of one group and kind: keys order by group, then kind, so they are one range.
fn of_kind<'a>(
    resources: &'a BTreeMap<ObjectKey, Resource>,
    group: &'a str,
    kind: &'a str,
) -> impl Iterator<Item = (&'a ObjectKey, &'a Resource)> {
    let first = ObjectKey::cluster_scoped(group, kind, "");
    resources
        .range(first..)
        .take_while(move |(key, _)| key.group == group && key.kind == kind)
}

fn namespace_only(selector: &ResourceSelector) -> bool {
    selector.selection_scope.as_deref() == Some("NamespaceOnly")
}

fn is_reserved(namespace: &str) -> bool {
    RESERVED_NAMESPACE_PREFIXES
        .iter()
        .any(|prefix| namespace.starts_with(prefix))
        || SKIPPED_NAMESPACES.contains(&namespace)
}

/// Selects the resources of a placement. `namespace` is the namespace of a
/// `ResourcePlacement`, `None` for a `ClusterResourcePlacement`.
///
/// # Errors
/// A message when a selector picks a reserved namespace.
pub fn select(
    resources: &BTreeMap<ObjectKey, Resource>,
    namespace: Option<&str>,
    spec: &PlacementSpec,
) -> Result<Vec<SelectedResource>, String> {
    let mut picked: BTreeSet<ObjectKey> = BTreeSet::new();
    for selector in &spec.resource_selectors {
        for (key, resource) in of_kind(resources, &selector.group, &selector.kind) {
            if is_never_placed(key, resource) || !matches(selector, key, resource) {
                continue;
            }
            match namespace {
                Some(own) if key.namespace != own => continue,
                None if !key.namespace.is_empty() => continue,
                _ => {}
            }
            if key.group.is_empty() && key.kind == "Namespace" {
                if is_reserved(&key.name) {
                    return Err(format!(
                        "namespace {} is not allowed to propagate",
                        key.name
                    ));
                }
                if !namespace_only(selector) {
                    picked.extend(
                        resources
                            .iter()
                            .filter(|(k, r)| k.namespace == key.name && !is_never_placed(k, r))
                            .map(|(k, _)| k.clone()),
                    );
                }
            }
            picked.insert(key.clone());
        }
    }
    let mut selected: Vec<SelectedResource> = picked
        .into_iter()
        .filter_map(|key| {
            resources
                .get(&key)
                .map(|resource| to_selected(key, resource))
        })
        .collect();
    selected.sort_by_cached_key(apply_order);
    Ok(selected)
}

/// KubeFleet's order: well-known kinds in [`KIND_ORDER`], then the rest by group/version/kind;
/// within a kind by apiVersion, then `namespace/name`.
fn apply_order(resource: &SelectedResource) -> (usize, String, String) {
    let key = &resource.key;
    let rank = KIND_ORDER
        .iter()
        .position(|kind| *kind == key.kind)
        .unwrap_or(KIND_ORDER.len());
    let kind = if rank < KIND_ORDER.len() {
        resource.api_version.clone()
    } else {
        format!("{}/{}", resource.api_version, key.kind)
    };
    (rank, kind, format!("{}/{}", key.namespace, key.name))
}

/// Annotations the hub's own tooling writes, which KubeFleet strips before placing an object:
/// kubectl's client-side apply record and a Deployment's revision.
const HUB_ONLY_ANNOTATIONS: [&str; 2] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
];

/// The manifest as the member will receive it: user metadata only (without the hub-only
/// annotations), no status, canonical JSON.
fn to_selected(key: ObjectKey, resource: &Resource) -> SelectedResource {
    let mut manifest: Map<String, Value> = match serde_json::from_str(&resource.content) {
        Ok(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    manifest.remove("status");
    let annotations: std::collections::BTreeMap<&str, &str> = resource
        .meta
        .annotations
        .iter()
        .map(|(name, value)| (name, value.as_str()))
        .filter(|(name, _)| !HUB_ONLY_ANNOTATIONS.contains(name))
        .collect();
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::from(key.name.as_str()));
    if !key.namespace.is_empty() {
        metadata.insert("namespace".into(), Value::from(key.namespace.as_str()));
    }
    if !resource.meta.labels.is_empty() {
        metadata.insert(
            "labels".into(),
            serde_json::to_value(&resource.meta.labels).unwrap_or_default(),
        );
    }
    if !annotations.is_empty() {
        metadata.insert(
            "annotations".into(),
            serde_json::to_value(&annotations).unwrap_or_default(),
        );
    }
    manifest.insert(
        "apiVersion".into(),
        Value::from(resource.meta.api_version.as_str()),
    );
    manifest.insert("kind".into(), Value::from(key.kind.as_str()));
    manifest.insert("metadata".into(), Value::Object(metadata));
    SelectedResource {
        api_version: resource.meta.api_version.to_string(),
        manifest: Value::Object(manifest).to_string(),
        key,
    }
}

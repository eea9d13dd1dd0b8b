//! Envelopes: selected objects whose content is placed instead of themselves (KubeFleet's envelope
//! objects, "Envelope Object"; KubeFleet's work generator,
//! `pkg/controllers/workgenerator/envelope.go`).
//!
//! - A `ClusterResourceEnvelope` (cluster-scoped) holds cluster-scoped objects and a
//!   `ResourceEnvelope` (namespaced) objects of its own namespace, each a `data` entry whose
//!   value is the object.
//! - A ConfigMap annotated `kubernetes-fleet.io/envelope-configmap` (any non-empty value) holds,
//!   in each `data` entry, an object of its own namespace as YAML or JSON text (KubeFleet's
//!   envelope-ConfigMap era, `extractResFromConfigMap`).
//!
//! The wrapper itself is never placed; its objects take its place, sorted as KubeFleet sorts them
//! (by their JSON text, descending). An entry that is not an object manifest, or of the wrong
//! scope or namespace, fails the whole envelope with a message naming the entry.

use std::borrow::Cow;

use serde_json::Value;

use super::SelectedResource;
use crate::model::{ObjectKey, PLACEMENT_GROUP, group_of};

/// Why an envelope's content cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("envelope {envelope}, data entry {entry:?}: {reason}")]
pub struct EnvelopeError {
    /// The envelope (`kind/name` or `kind/namespace/name`).
    pub envelope: String,
    /// The `data` key of the failing entry (empty when `data` itself is wrong).
    pub entry: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Which kind of envelope an object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ClusterResourceEnvelope,
    ResourceEnvelope,
    ConfigMap,
}

fn kind_of(resource: &SelectedResource, manifest: &Value) -> Option<Kind> {
    let key = &resource.key;
    match (key.group.as_str(), key.kind.as_str()) {
        (PLACEMENT_GROUP, "ClusterResourceEnvelope") => Some(Kind::ClusterResourceEnvelope),
        (PLACEMENT_GROUP, "ResourceEnvelope") => Some(Kind::ResourceEnvelope),
        ("", "ConfigMap") => manifest["metadata"]["annotations"]
            .get(super::resource_snapshot::ENVELOPE_ANNOTATION)
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
            .map(|_| Kind::ConfigMap),
        _ => None,
    }
}

/// Whether `resource` is an envelope.
#[must_use]
pub fn is_envelope(resource: &SelectedResource) -> bool {
    let fleet = resource.key.group == PLACEMENT_GROUP;
    let config_map = resource.key.group.is_empty() && resource.key.kind == "ConfigMap";
    if !fleet && !config_map {
        return false;
    }
    // A ConfigMap without the annotation's name in its text is no envelope, and the text is
    // not parsed: this is asked of every resource for every cluster a placement renders. The
    // name can only be missing from the text while present in the object if it is written
    // with escapes, which need a backslash.
    let annotation = super::resource_snapshot::ENVELOPE_ANNOTATION;
    if config_map && !resource.manifest.contains(annotation) && !resource.manifest.contains('\\') {
        return false;
    }
    serde_json::from_str::<Value>(&resource.manifest)
        .is_ok_and(|manifest| kind_of(resource, &manifest).is_some())
}

/// The resources as placed: every envelope replaced by the objects it holds. Borrowed when
/// there is no envelope.
///
/// # Errors
/// The first envelope whose content is not placeable.
pub fn unwrap_all(
    resources: &[SelectedResource],
) -> Result<Cow<'_, [SelectedResource]>, EnvelopeError> {
    if !resources.iter().any(is_envelope) {
        return Ok(Cow::Borrowed(resources));
    }
    let mut placed = Vec::with_capacity(resources.len());
    for resource in resources {
        match unwrap(resource)? {
            Some(inner) => placed.extend(inner),
            None => placed.push(resource.clone()),
        }
    }
    Ok(Cow::Owned(placed))
}

/// The objects an envelope holds, sorted; `None` when `resource` is no envelope.
///
/// # Errors
/// An entry that is not placeable.
pub fn unwrap(resource: &SelectedResource) -> Result<Option<Vec<SelectedResource>>, EnvelopeError> {
    let Ok(manifest) = serde_json::from_str::<Value>(&resource.manifest) else {
        return Ok(None);
    };
    let Some(kind) = kind_of(resource, &manifest) else {
        return Ok(None);
    };
    let fail = |entry: &str, reason: String| EnvelopeError {
        envelope: resource.key.display(),
        entry: entry.to_owned(),
        reason,
    };
    let data = match &manifest["data"] {
        Value::Object(data) => data,
        Value::Null => return Ok(Some(Vec::new())),
        _ => return Err(fail("", "data is not a map of entries".into())),
    };
    let mut inner = Vec::with_capacity(data.len());
    for (entry, value) in data {
        let object = entry_object(kind, value).map_err(|reason| fail(entry, reason))?;
        let placed = inner_resource(object).map_err(|reason| fail(entry, reason))?;
        check_scope(kind, &resource.key, &placed.key).map_err(|reason| fail(entry, reason))?;
        inner.push(placed);
    }
    // KubeFleet sorts by the manifests' JSON text, descending, so that a Work does not change
    // while the set stays the same.
    inner.sort_by(|a, b| b.manifest.cmp(&a.manifest));
    Ok(Some(inner))
}

/// The object of one entry: the value itself (envelope kinds) or its text as YAML or JSON
/// (ConfigMap).
fn entry_object(kind: Kind, value: &Value) -> Result<Value, String> {
    let parsed = match (kind, value) {
        (Kind::ConfigMap, Value::String(text)) => serde_saphyr::from_str::<Value>(text)
            .map_err(|error| format!("the manifest is malformatted: {error}"))?,
        (Kind::ConfigMap, _) => return Err("a ConfigMap's data value must be text".into()),
        (_, value) => value.clone(),
    };
    if parsed.is_object() {
        Ok(parsed)
    } else {
        Err("the value is not an object manifest".into())
    }
}

/// An inner object as a selected resource: it needs apiVersion, kind and metadata.name.
fn inner_resource(object: Value) -> Result<SelectedResource, String> {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    };
    let api_version = text("/apiVersion").ok_or("the object has no apiVersion")?;
    let kind = text("/kind").ok_or("the object has no kind")?;
    let name = text("/metadata/name").ok_or("the object has no metadata.name")?;
    let namespace = text("/metadata/namespace").unwrap_or_default();
    let key = ObjectKey {
        group: group_of(&api_version).into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name: name.into(),
    };
    Ok(SelectedResource {
        key,
        api_version,
        // serde_json's map is ordered by key, so this text is canonical.
        manifest: object.to_string(),
    })
}

/// KubeFleet's checks: a cluster envelope holds cluster-scoped objects; the other envelopes
/// namespaced objects of their own namespace.
fn check_scope(kind: Kind, envelope: &ObjectKey, inner: &ObjectKey) -> Result<(), String> {
    match kind {
        Kind::ClusterResourceEnvelope if !inner.namespace.is_empty() => Err(format!(
            "a namespaced object {inner} cannot be wrapped in a cluster resource envelope"
        )),
        Kind::ClusterResourceEnvelope => Ok(()),
        _ if inner.namespace.is_empty() => Err(format!(
            "a cluster-scoped object {inner} cannot be wrapped in a namespaced envelope"
        )),
        _ if inner.namespace != envelope.namespace => Err(format!(
            "the object {inner} is in another namespace than the envelope"
        )),
        _ => Ok(()),
    }
}

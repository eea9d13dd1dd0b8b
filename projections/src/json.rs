//! JSON helpers shared by the renderers: Kubernetes' timestamp form, Go-style field omission
//! and canonical key order.
//!
//! Core types are serialized with their plain serde derives; what Kubernetes would leave out
//! (Go's `omitempty`) is removed here, on the rendered value, so that the core's wire and
//! checkpoint encodings never depend on how objects are displayed.

use chrono::{DateTime, SecondsFormat, Utc};
use flotilla_core::model::StringMap;
use serde_json::{Map, Value};

/// Kubernetes' `metav1.Time` text: RFC 3339, whole seconds (truncated), `Z` suffix.
pub(crate) fn timestamp(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Removes `null` members of every object, recursively (array elements are kept).
pub(crate) fn prune_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, member)| !member.is_null())
                .map(|(field, member)| (field, prune_nulls(member)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(prune_nulls).collect()),
        other => other,
    }
}

/// Go's `omitempty` on a serialized typed value: drops members that are `null`, `[]` or `{}`
/// *as serialized*, recursively.
///
/// An object that only becomes empty because its members were dropped is kept (`{}`): it was a
/// present struct (`labelSelector: {}` selects everything), not an absent pointer. Empty strings
/// and `false` are kept; the few fields where Go omits them are handled by the caller.
pub(crate) fn omit_empty(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, member)| !is_empty_value(member))
                .map(|(field, member)| (field, omit_empty(member)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(omit_empty).collect()),
        other => other,
    }
}

fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// Rebuilds every object with its keys in sorted order.
///
/// `serde_json`'s map is already sorted unless some crate in the build turns on its
/// `preserve_order` feature; this keeps the output byte-identical either way.
pub(crate) fn canonical(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(String, Value)> = map.into_iter().collect();
            members.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                members
                    .into_iter()
                    .map(|(field, member)| (field, canonical(member)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// The member at `path` (object fields only), if every step exists.
pub(crate) fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |current, field| current.get(field))
}

/// A scalar as a table cell shows it: strings bare, numbers and booleans as text, anything
/// else (absent, null, a list or a map) empty.
pub(crate) fn scalar_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        Some(Value::Bool(flag)) => flag.to_string(),
        _ => String::new(),
    }
}

/// An object from `(field, value)` pairs.
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(field, value)| (field.to_owned(), value))
            .collect(),
    )
}

/// A string map as a JSON object.
pub(crate) fn string_map(entries: &StringMap) -> Value {
    Value::Object(
        entries
            .iter()
            .map(|(key, value)| (key.to_owned(), Value::from(value.as_str())))
            .collect(),
    )
}

/// Adds `field: value` to an object value; does nothing to a non-object.
pub(crate) fn insert(target: &mut Value, field: &str, value: Value) {
    if let Value::Object(map) = target {
        map.insert(field.to_owned(), value);
    }
}

/// Removes `field` from an object value, if present.
pub(crate) fn remove(target: &mut Value, field: &str) -> Option<Value> {
    match target {
        Value::Object(map) => map.remove(field),
        _ => None,
    }
}

/// Removes each of `fields` whose value is the empty string (Go's `omitempty` on a string).
pub(crate) fn remove_empty_strings(target: &mut Value, fields: &[&str]) {
    if let Value::Object(map) = target {
        for field in fields {
            if map.get(*field).and_then(Value::as_str) == Some("") {
                map.remove(*field);
            }
        }
    }
}

/// An empty JSON object.
pub(crate) fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Adds `labels`, `annotations` and `ownerReferences` to a derived object's `metadata`, in that
/// order, as snapshots and works carry all three.
pub(crate) fn insert_labels_and_owners(
    metadata: &mut Value,
    labels: &[(&str, String)],
    annotations: &[(&str, String)],
    owner_references: Value,
) {
    insert(metadata, "labels", string_pairs(labels));
    insert(metadata, "annotations", string_pairs(annotations));
    insert(metadata, "ownerReferences", owner_references);
}

/// A string map from `(key, value)` pairs, for labels and annotations.
pub(crate) fn string_pairs(pairs: &[(&str, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), Value::from(value.as_str())))
            .collect(),
    )
}

/// Manifests stored as canonical JSON, as a list: one that no longer parses still takes its
/// place (as null) rather than silently shifting the others.
pub(crate) fn manifest_list<'a>(manifests: impl Iterator<Item = &'a str>) -> Value {
    Value::Array(
        manifests
            .map(|manifest| serde_json::from_str::<Value>(manifest).unwrap_or(Value::Null))
            .collect(),
    )
}

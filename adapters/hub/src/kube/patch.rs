//! The patch types a Kubernetes API server takes: JSON merge patch (RFC 7386), JSON patch
//! (RFC 6902) and strategic merge patch — the last with the merge keys and directives
//! (`$patch`, `$retainKeys`, `$deleteFromPrimitiveList/…`, `$setElementOrder/…`) the built-in
//! kinds declare, which is what kubectl sends for `patch`, `label`, `annotate` and for
//! re-applying a Deployment. Server-side apply lives in `server_side_apply`.

use serde_json::{Map, Value};

use super::status::ApiError;

/// The patch content types, as `Content-Type` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

/// What the server names in a 415.
pub const ACCEPTED: &str = "application/json-patch+json, application/merge-patch+json, \
                            application/apply-patch+yaml, application/strategic-merge-patch+json";

impl PatchType {
    /// The patch type of a `Content-Type`.
    ///
    /// # Errors
    /// 415 for any other type.
    pub fn of(content_type: &str) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(Self::Apply),
            other => Err(ApiError::unsupported_media_type(other, ACCEPTED)),
        }
    }
}

/// Applies a merge, JSON or strategic patch to `live`.
///
/// # Errors
/// A body that is not the patch type's JSON, or a JSON patch operation that fails.
pub fn apply(kind: PatchType, live: &Value, body: &[u8]) -> Result<Value, ApiError> {
    let patch: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the patch is not valid JSON: {e}")))?;
    let mut document = live.clone();
    match kind {
        PatchType::Merge => json_patch::merge(&mut document, &patch),
        PatchType::Json => {
            let operations: json_patch::Patch = serde_json::from_value(patch)
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(&mut document, &operations).map_err(|e| {
                ApiError::invalid(
                    &Default::default(),
                    "",
                    &format!("the JSON patch failed: {e}"),
                )
            })?;
        }
        PatchType::Strategic => document = strategic(live, &patch),
        PatchType::Apply => {
            return Err(ApiError::bad_request(
                "apply patches go through server-side apply",
            ));
        }
    }
    if document.is_object() {
        Ok(document)
    } else {
        Err(ApiError::bad_request(format!(
            "the patch does not leave an object: {}",
            document
        )))
    }
}

/// The merge key of a list field of a built-in kind, by the field's name; `None` means the
/// list is replaced as a whole. Ports are keyed by `containerPort` in a pod and by `port` in a
/// Service.
fn merge_key(field: &str, items: &[Value]) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets" => Some("name"),
        "volumeMounts" | "volumeDevices" => Some("mountPath"),
        "hostAliases" => Some("ip"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        "ports" if items.iter().any(|i| i.get("containerPort").is_some()) => Some("containerPort"),
        "ports" => Some("port"),
        _ => None,
    }
}

/// Primitive lists merged as sets.
fn is_set_list(field: &str) -> bool {
    field == "finalizers"
}

/// A strategic merge patch of `live` by `patch`.
pub fn strategic(live: &Value, patch: &Value) -> Value {
    match (live, patch) {
        (Value::Object(live), Value::Object(patch)) => Value::Object(merge_map(live, patch)),
        (_, patch) => without_directives(patch),
    }
}

fn merge_map(live: &Map<String, Value>, patch: &Map<String, Value>) -> Map<String, Value> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => return strip(patch),
        Some("delete") => return Map::new(),
        _ => {}
    }
    let mut out = live.clone();
    if let Some(Value::Array(keep)) = patch.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        out.retain(|key, _| keep.contains(&key.as_str()));
    }
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Value::Array(gone)) = (out.get_mut(field), value) {
                items.retain(|item| !gone.contains(item));
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        match value {
            Value::Null => {
                out.remove(key);
            }
            Value::Array(items) => {
                let merged = merge_list(key, out.get(key), items);
                out.insert(key.clone(), merged);
            }
            patch_value => {
                let merged = out.get(key).map_or_else(
                    || without_directives(patch_value),
                    |l| strategic(l, patch_value),
                );
                out.insert(key.clone(), merged);
            }
        }
    }
    out
}

fn merge_list(field: &str, live: Option<&Value>, patch: &[Value]) -> Value {
    let live_items = live.and_then(Value::as_array).cloned().unwrap_or_default();
    let replace = patch
        .iter()
        .any(|item| item.get("$patch").and_then(Value::as_str) == Some("replace"));
    if replace {
        return Value::Array(
            patch
                .iter()
                .filter(|i| i.get("$patch").is_none())
                .map(without_directives)
                .collect(),
        );
    }
    if is_set_list(field) {
        let mut items = live_items;
        for item in patch {
            if !items.contains(item) {
                items.push(item.clone());
            }
        }
        return Value::Array(items);
    }
    let Some(key) = merge_key(field, patch) else {
        return Value::Array(patch.iter().map(without_directives).collect());
    };
    let mut items = live_items;
    for item in patch {
        let id = item.get(key);
        let position = items.iter().position(|l| id.is_some() && l.get(key) == id);
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(at), true) => {
                items.remove(at);
            }
            (Some(at), false) => items[at] = strategic(&items[at], item),
            (None, false) => items.push(without_directives(item)),
            (None, true) => {}
        }
    }
    Value::Array(items)
}

fn strip(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(key, _)| !key.starts_with('$'))
        .map(|(key, value)| (key.clone(), without_directives(value)))
        .collect()
}

/// A patch value with its `$…` directives removed (it is being inserted, not merged).
fn without_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(strip(map)),
        Value::Array(items) => Value::Array(items.iter().map(without_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn containers_merge_by_name_and_nulls_delete() {
        let live = json!({"spec": {"replicas": 1, "paused": true, "template": {"spec": {
            "containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
        let patch = json!({"spec": {"paused": null, "template": {"spec": {
            "containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}}}});
        let merged = strategic(&live, &patch);
        assert_eq!(
            merged,
            json!({"spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"},
                {"name": "c", "image": "c:1"}]}}}})
        );
    }

    #[test]
    fn directives_replace_delete_and_retain() {
        let live = json!({"metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
            "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443}]}});
        let patch = json!({"metadata": {"labels": {"$patch": "replace", "c": "3"},
            "finalizers": ["y"]},
            "spec": {"ports": [{"port": 443, "$patch": "delete"}]}});
        assert_eq!(
            strategic(&live, &patch),
            json!({"metadata": {"labels": {"c": "3"}, "finalizers": ["x", "y"]},
                "spec": {"ports": [{"port": 80, "name": "http"}]}})
        );
    }

    #[test]
    fn lists_without_a_merge_key_are_replaced() {
        let live = json!({"spec": {"clusterNames": ["a", "b"]}});
        let patch = json!({"spec": {"clusterNames": ["c"]}});
        assert_eq!(
            strategic(&live, &patch),
            json!({"spec": {"clusterNames": ["c"]}})
        );
    }

    #[test]
    fn unknown_content_types_are_refused_with_415() {
        let refused = PatchType::of("text/plain");
        assert!(refused.is_err_and(|e| e.code.as_u16() == 415));
        assert!(PatchType::of("application/merge-patch+json; charset=utf-8").is_ok());
    }
}

//! Client-side apply's patch: a three-way merge of the configuration last applied (`original`),
//! the configuration to apply now (`modified`) and the object on the cluster (`current`), as
//! `kubectl apply` computes it.
//!
//! - **Changes and additions** come from `current` → `modified`: every field of `modified` that
//!   `current` lacks or has otherwise. Fields only `current` has (defaults, other writers') stay.
//! - **Deletions** come from `original` → `modified`: a field applied last time and no longer
//!   in the manifest is set to `null`, so only what this applier put there is removed.
//!
//! For built-in kinds the patch is a strategic merge patch: lists Kubernetes merges by a key
//! (containers by `name`, container ports by `containerPort`, …, the table below) are patched
//! item by item (an item dropped from the manifest becomes `{"$patch": "delete", key: …}`), and
//! `metadata.finalizers` as a set; every other list is replaced whole, as the strategic merge
//! patch does for lists without a merge strategy. Custom resources get a JSON merge patch
//! (RFC 7386), where every list is replaced whole. An empty patch (`{}`) means nothing to send.
//!
//! The key table covers the merge-keyed lists of the built-in kinds Works commonly carry; a
//! merge-keyed list it misses is replaced whole, which writes the manifest's list exactly (items
//! others added to it are dropped) — correct for the manifest, coarser than `kubectl`.

use serde_json::{Map, Value};

/// How a list at some path is patched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListStrategy {
    /// Replaced whole.
    Replace,
    /// Merged item by item, items matched by this key.
    MergeByKey(&'static str),
    /// A set of scalars: items added, removed with `$deleteFromPrimitiveList`.
    MergeScalars,
}

const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

/// The strategy of the list at `path` (field names from the object's root, no indices).
fn list_strategy(strategic: bool, kind: &str, path: &[&str]) -> ListStrategy {
    if !strategic {
        return ListStrategy::Replace;
    }
    let Some((last, parents)) = path.split_last() else {
        return ListStrategy::Replace;
    };
    let parent = parents.last().copied().unwrap_or_default();
    let in_container = CONTAINER_LISTS.contains(&parent);
    match (*last, parent) {
        (field, _) if CONTAINER_LISTS.contains(&field) => ListStrategy::MergeByKey("name"),
        ("ports", _) if in_container => ListStrategy::MergeByKey("containerPort"),
        ("ports", "spec") if kind == "Service" && parents.len() == 1 => {
            ListStrategy::MergeByKey("port")
        }
        ("env", _) if in_container => ListStrategy::MergeByKey("name"),
        ("volumeMounts", _) if in_container => ListStrategy::MergeByKey("mountPath"),
        ("volumeDevices", _) if in_container => ListStrategy::MergeByKey("devicePath"),
        ("volumes" | "imagePullSecrets" | "schedulingGates" | "resourceClaims", "spec") => {
            ListStrategy::MergeByKey("name")
        }
        ("hostAliases", "spec") => ListStrategy::MergeByKey("ip"),
        ("topologySpreadConstraints", "spec") => ListStrategy::MergeByKey("topologyKey"),
        ("ownerReferences", "metadata") => ListStrategy::MergeByKey("uid"),
        ("finalizers", "metadata") => ListStrategy::MergeScalars,
        ("secrets", "") if kind == "ServiceAccount" => ListStrategy::MergeByKey("name"),
        ("webhooks", "") if kind.ends_with("WebhookConfiguration") => {
            ListStrategy::MergeByKey("name")
        }
        _ => ListStrategy::Replace,
    }
}

/// The patch turning `current` into `modified`, removing what `original` had and `modified`
/// dropped; `strategic` for a built-in kind. `{}` when there is nothing to change.
#[must_use]
pub fn three_way(
    original: Option<&Value>,
    modified: &Value,
    current: &Value,
    strategic: bool,
    kind: &str,
) -> Value {
    let patcher = Patcher { strategic, kind };
    let empty = Map::new();
    let as_map = |value: &Value| value.as_object().cloned().unwrap_or_default();
    let additions = patcher.additions(&as_map(current), &as_map(modified), &mut Vec::new());
    let deletions = match original.and_then(Value::as_object) {
        Some(original) => patcher.deletions(original, &as_map(modified), &mut Vec::new()),
        None => empty,
    };
    Value::Object(patcher.merge(deletions, additions, &mut Vec::new()))
}

struct Patcher<'a> {
    strategic: bool,
    kind: &'a str,
}

/// The value of `item`'s merge key, when it is an object that has one.
fn key_of<'v>(item: &'v Value, key: &str) -> Option<&'v Value> {
    item.as_object().and_then(|map| map.get(key))
}

impl Patcher<'_> {
    fn strategy(&self, path: &[&str]) -> ListStrategy {
        list_strategy(self.strategic, self.kind, path)
    }

    /// What `modified` sets that `current` does not have as set.
    fn additions<'p>(
        &self,
        current: &Map<String, Value>,
        modified: &'p Map<String, Value>,
        path: &mut Vec<&'p str>,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, wanted) in modified {
            path.push(key);
            let change = match (current.get(key), wanted) {
                (Some(have), _) if have == wanted => None,
                (Some(Value::Object(have)), Value::Object(wanted)) => {
                    let sub = self.additions(have, wanted, path);
                    (!sub.is_empty()).then_some(Value::Object(sub))
                }
                (Some(Value::Array(have)), Value::Array(wanted)) => {
                    self.list_additions(have, wanted, path)
                }
                _ => Some(wanted.clone()),
            };
            path.pop();
            if let Some(change) = change {
                out.insert(key.clone(), change);
            }
        }
        out
    }

    fn list_additions<'p>(
        &self,
        have: &[Value],
        wanted: &'p [Value],
        path: &mut Vec<&'p str>,
    ) -> Option<Value> {
        match self.strategy(path) {
            ListStrategy::Replace => Some(Value::Array(wanted.to_vec())),
            ListStrategy::MergeScalars => {
                let added: Vec<Value> = wanted
                    .iter()
                    .filter(|item| !have.contains(item))
                    .cloned()
                    .collect();
                (!added.is_empty()).then_some(Value::Array(added))
            }
            ListStrategy::MergeByKey(key) => {
                let mut items = Vec::new();
                for item in wanted {
                    let (Some(item_map), Some(value)) = (item.as_object(), key_of(item, key))
                    else {
                        // An item without its key cannot be merged: replace the list.
                        return Some(Value::Array(wanted.to_vec()));
                    };
                    let existing = have
                        .iter()
                        .filter_map(Value::as_object)
                        .find(|h| h.get(key) == Some(value));
                    match existing {
                        None => items.push(item.clone()),
                        Some(existing) => {
                            let mut sub = self.additions(existing, item_map, path);
                            if !sub.is_empty() {
                                sub.insert(key.to_owned(), value.clone());
                                items.push(Value::Object(sub));
                            }
                        }
                    }
                }
                (!items.is_empty()).then_some(Value::Array(items))
            }
        }
    }

    /// What `original` set that `modified` no longer does.
    fn deletions<'p>(
        &self,
        original: &'p Map<String, Value>,
        modified: &Map<String, Value>,
        path: &mut Vec<&'p str>,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, was) in original {
            let Some(wanted) = modified.get(key) else {
                out.insert(key.clone(), Value::Null);
                continue;
            };
            path.push(key);
            match (was, wanted) {
                (Value::Object(was), Value::Object(wanted)) => {
                    let sub = self.deletions(was, wanted, path);
                    if !sub.is_empty() {
                        out.insert(key.clone(), Value::Object(sub));
                    }
                }
                (Value::Array(was), Value::Array(wanted)) => {
                    self.list_deletions(key, was, wanted, path, &mut out);
                }
                _ => {}
            }
            path.pop();
        }
        out
    }

    fn list_deletions<'p>(
        &self,
        field: &str,
        was: &'p [Value],
        wanted: &[Value],
        path: &mut Vec<&'p str>,
        out: &mut Map<String, Value>,
    ) {
        match self.strategy(path) {
            ListStrategy::Replace => {}
            ListStrategy::MergeScalars => {
                let removed: Vec<Value> = was
                    .iter()
                    .filter(|item| !wanted.contains(item))
                    .cloned()
                    .collect();
                if !removed.is_empty() {
                    out.insert(
                        format!("$deleteFromPrimitiveList/{field}"),
                        Value::Array(removed),
                    );
                }
            }
            ListStrategy::MergeByKey(key) => {
                let mut items = Vec::new();
                for item in was {
                    let (Some(item_map), Some(value)) = (item.as_object(), key_of(item, key))
                    else {
                        continue;
                    };
                    let kept = wanted
                        .iter()
                        .filter_map(Value::as_object)
                        .find(|w| w.get(key) == Some(value));
                    match kept {
                        None => items.push(serde_json::json!({"$patch": "delete", key: value})),
                        Some(kept) => {
                            let mut sub = self.deletions(item_map, kept, path);
                            if !sub.is_empty() {
                                sub.insert(key.to_owned(), value.clone());
                                items.push(Value::Object(sub));
                            }
                        }
                    }
                }
                if !items.is_empty() {
                    out.insert(field.to_owned(), Value::Array(items));
                }
            }
        }
    }

    /// Both halves in one patch: objects merged field by field, merge-keyed lists item by item.
    fn merge(
        &self,
        mut deletions: Map<String, Value>,
        additions: Map<String, Value>,
        path: &mut Vec<String>,
    ) -> Map<String, Value> {
        for (key, added) in additions {
            let merged = match (deletions.remove(&key), added) {
                (Some(Value::Object(deleted)), Value::Object(added)) => {
                    path.push(key.clone());
                    let merged = self.merge(deleted, added, path);
                    path.pop();
                    Value::Object(merged)
                }
                (Some(Value::Array(deleted)), Value::Array(added)) => {
                    path.push(key.clone());
                    let merged = self.merge_lists(deleted, added, path);
                    path.pop();
                    Value::Array(merged)
                }
                (_, added) => added,
            };
            deletions.insert(key, merged);
        }
        deletions
    }

    fn merge_lists(
        &self,
        mut deleted: Vec<Value>,
        added: Vec<Value>,
        path: &mut Vec<String>,
    ) -> Vec<Value> {
        let borrowed: Vec<&str> = path.iter().map(String::as_str).collect();
        let ListStrategy::MergeByKey(key) = self.strategy(&borrowed) else {
            return added;
        };
        for item in added {
            let position = key_of(&item, key)
                .and_then(|value| deleted.iter().position(|d| key_of(d, key) == Some(value)));
            match (position, item) {
                (Some(index), Value::Object(item)) => {
                    if let Value::Object(existing) = deleted.remove(index) {
                        let merged = self.merge(existing, item, path);
                        deleted.insert(index, Value::Object(merged));
                    }
                }
                (_, item) => deleted.push(item),
            }
        }
        deleted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(image: &str, env: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "web", "image": image, "env": env}]}}}})
    }

    #[test]
    fn containers_merge_by_name_and_a_dropped_env_var_is_deleted_by_key() {
        let original = deployment(
            "nginx:1",
            json!([{"name": "A", "value": "1"},
            {"name": "B", "value": "2"}]),
        );
        let modified = deployment("nginx:2", json!([{"name": "A", "value": "1"}]));
        let mut current = original.clone();
        // A field someone else set stays untouched.
        current["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = json!("Always");
        let patch = three_way(Some(&original), &modified, &current, true, "Deployment");
        assert_eq!(
            patch,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "web",
                "image": "nginx:2",
                "env": [{"$patch": "delete", "name": "B"}]}]}}}})
        );
        // A custom resource's list is replaced whole, and a dropped field is nulled.
        let mut custom_modified = modified.clone();
        custom_modified["spec"]
            .as_object_mut()
            .map(|spec| spec.remove("replicas"));
        let patch = three_way(Some(&original), &custom_modified, &current, false, "Widget");
        assert_eq!(patch["spec"]["replicas"], Value::Null);
        assert!(patch["spec"]["template"]["spec"]["containers"].is_array());
        assert_eq!(
            patch["spec"]["template"]["spec"]["containers"][0]["env"],
            json!([{"name": "A", "value": "1"}])
        );
    }

    #[test]
    fn finalizers_are_a_set() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let modified = json!({"metadata": {"finalizers": ["a", "c"]}});
        let patch = three_way(Some(&original), &modified, &original, true, "ConfigMap");
        assert_eq!(
            patch,
            json!({"metadata": {"finalizers": ["c"],
                "$deleteFromPrimitiveList/finalizers": ["b"]}})
        );
    }
}

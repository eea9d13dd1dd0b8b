//! Server-side apply: a manager's applied configuration merged into the live object, with
//! field ownership. A field is a leaf path of an object (lists are atomic); each owner is
//! recorded with the value it wrote (before the hub filled in defaults). Applying sets the
//! manager's fields, removes the fields it owned before and no longer applies (unless another
//! manager owns them too), and conflicts when it would give a field another manager owns a
//! different value than that manager wrote — unless `force`, which takes the field over.
//! Updates (create, update, patch) make their manager own the fields they changed, taking them
//! from others, as the API server does.
//!
//! Ownership is kept by the serving hub in memory (it is not part of the folded state), so a
//! restarted hub starts with no recorded owners: the first apply after a restart conflicts with
//! nothing.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_core::model::ObjectKey;
use serde_json::{Map, Value};

use super::status::ApiError;
use super::status::Subject;

/// A field: the keys from the object's root to a leaf.
pub type FieldPath = Vec<String>;

/// Who owns which fields, per object and manager.
#[derive(Debug, Default)]
pub struct FieldOwners {
    objects: BTreeMap<ObjectKey, BTreeMap<String, BTreeMap<FieldPath, Value>>>,
}

/// Fields identity and server-assigned metadata consist of, which nobody owns.
fn is_identity(path: &[String]) -> bool {
    match path {
        [first, ..] if first == "apiVersion" || first == "kind" || first == "status" => true,
        [meta, field, ..] if meta == "metadata" => {
            !matches!(field.as_str(), "labels" | "annotations")
        }
        _ => false,
    }
}

/// Every leaf path of `value`, identity fields left out.
pub fn leaves(value: &Value) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    collect(value, &mut Vec::new(), &mut out);
    out.retain(|path| !is_identity(path));
    out
}

fn collect(value: &Value, path: &mut Vec<String>, out: &mut BTreeSet<FieldPath>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                path.push(key.clone());
                collect(child, path, out);
                path.pop();
            }
        }
        _ if !path.is_empty() => {
            out.insert(path.clone());
        }
        _ => {}
    }
}

fn at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |at, key| at.get(key))
}

fn remove(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = value;
    for key in parents {
        match at.get_mut(key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Value::Object(map) = at {
        map.remove(last);
    }
}

/// Objects merged key by key; anything else replaced.
fn deep_merge(live: &mut Value, applied: &Value) {
    match (live, applied) {
        (Value::Object(live), Value::Object(applied)) => {
            for (key, value) in applied {
                match live.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        deep_merge(existing, value);
                    }
                    _ => {
                        live.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (live, applied) => *live = applied.clone(),
    }
}

/// `.spec.policy.numberOfClusters`, as the API server names a field in a conflict.
fn dotted(path: &[String]) -> String {
    path.iter().map(|key| format!(".{key}")).collect()
}

impl FieldOwners {
    /// Merges `manager`'s applied configuration into `live` (`None`: the object is new) and
    /// returns the object to store; records the manager's fields only when `commit` is then
    /// called.
    ///
    /// # Errors
    /// 409 naming the conflicting fields and their managers, when not forced.
    pub fn apply(
        &self,
        key: &ObjectKey,
        subject: &Subject,
        manager: &str,
        live: Option<&Value>,
        applied: &Value,
        force: bool,
    ) -> Result<(Value, Applied), ApiError> {
        let fields = leaves(applied);
        let owners = self.objects.get(key).cloned().unwrap_or_default();
        let mut conflicts = Vec::new();
        let mut taken = Vec::new();
        for (other, owned) in owners.iter().filter(|(m, _)| m.as_str() != manager) {
            for (path, written) in owned.iter().filter(|(path, _)| fields.contains(*path)) {
                if at(applied, path) != Some(written) {
                    conflicts.push(format!("conflict with {other:?}: {}", dotted(path)));
                    taken.push((other.clone(), path.clone()));
                }
            }
        }
        if !conflicts.is_empty() && !force {
            let count = conflicts.len();
            let plural = if count == 1 { "" } else { "s" };
            return Err(ApiError::conflict_because(
                subject,
                &format!(
                    "Apply failed with {count} conflict{plural}: {}",
                    conflicts.join("\n")
                ),
            ));
        }
        let mut object = live.cloned().unwrap_or_else(|| Value::Object(Map::new()));
        let previously = owners.get(manager).cloned().unwrap_or_default();
        for path in previously.keys().filter(|path| !fields.contains(*path)) {
            let shared = owners
                .iter()
                .any(|(m, owned)| m.as_str() != manager && owned.contains_key(path));
            if !shared {
                remove(&mut object, path);
            }
        }
        deep_merge(&mut object, applied);
        let fields = fields
            .into_iter()
            .filter_map(|path| at(applied, &path).cloned().map(|value| (path, value)))
            .collect();
        Ok((
            object,
            Applied {
                manager: manager.to_owned(),
                fields,
                taken,
            },
        ))
    }

    /// Records an apply that was stored.
    pub fn commit(&mut self, key: &ObjectKey, applied: Applied) {
        let owners = self.objects.entry(key.clone()).or_default();
        for (other, path) in &applied.taken {
            if let Some(owned) = owners.get_mut(other) {
                owned.remove(path);
            }
        }
        owners.insert(applied.manager, applied.fields);
    }

    /// Records an update by `manager` that wrote `written` over `before`: it owns the fields
    /// whose values changed, and nobody else does.
    pub fn updated(
        &mut self,
        key: &ObjectKey,
        manager: &str,
        before: Option<&Value>,
        written: &Value,
    ) {
        let changed: BTreeMap<FieldPath, Value> = leaves(written)
            .into_iter()
            .filter_map(|path| {
                let value = at(written, &path)?;
                (before.and_then(|b| at(b, &path)) != Some(value))
                    .then(|| (path.clone(), value.clone()))
            })
            .collect();
        if changed.is_empty() {
            return;
        }
        let owners = self.objects.entry(key.clone()).or_default();
        for owned in owners.values_mut() {
            owned.retain(|path, _| !changed.contains_key(path));
        }
        owners
            .entry(manager.to_owned())
            .or_default()
            .extend(changed);
    }

    /// Forgets a deleted object's owners.
    pub fn forget(&mut self, key: &ObjectKey) {
        self.objects.remove(key);
    }
}

/// An apply waiting to be recorded once it is stored.
#[derive(Debug)]
pub struct Applied {
    manager: String,
    fields: BTreeMap<FieldPath, Value>,
    taken: Vec<(String, FieldPath)>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn key() -> ObjectKey {
        ObjectKey::cluster_scoped(
            "placement.kubernetes-fleet.io",
            "ClusterResourcePlacement",
            "crp",
        )
    }

    #[test]
    fn a_second_manager_conflicts_unless_forced() {
        let mut owners = FieldOwners::default();
        let first = json!({"spec": {"policy": {"numberOfClusters": 2}}});
        let (object, applied) = owners
            .apply(&key(), &Subject::default(), "alice", None, &first, false)
            .map_err(|e| e.message)
            .unwrap_or_else(|m| panic!("{m}"));
        owners.commit(&key(), applied);
        let second = json!({"spec": {"policy": {"numberOfClusters": 3}}});
        let refused = owners.apply(
            &key(),
            &Subject::default(),
            "bob",
            Some(&object),
            &second,
            false,
        );
        assert!(refused.is_err_and(|e| {
            e.code.as_u16() == 409
                && e.message
                    .contains("conflict with \"alice\": .spec.policy.numberOfClusters")
        }));
        let forced = owners.apply(
            &key(),
            &Subject::default(),
            "bob",
            Some(&object),
            &second,
            true,
        );
        assert!(forced.is_ok_and(|(o, _)| o["spec"]["policy"]["numberOfClusters"] == 3));
    }

    #[test]
    fn fields_a_manager_stops_applying_are_removed() {
        let mut owners = FieldOwners::default();
        let first = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        let (object, applied) = owners
            .apply(&key(), &Subject::default(), "m", None, &first, false)
            .map_err(|e| e.message)
            .unwrap_or_else(|m| panic!("{m}"));
        owners.commit(&key(), applied);
        let second = json!({"metadata": {"labels": {"a": "1"}}});
        let again = owners.apply(
            &key(),
            &Subject::default(),
            "m",
            Some(&object),
            &second,
            false,
        );
        assert!(again.is_ok_and(|(o, _)| o["metadata"]["labels"] == json!({"a": "1"})));
    }
}

//! Differences between the hub's manifest and the member's object, as KubeFleet reports them:
//! JSON pointers with the value on each side (`{path, valueInMember, valueInHub}`).
//!
//! Both sides are first made comparable ([`comparable`]): fields the API server or controllers
//! own — identity and bookkeeping metadata, `status`, labels and annotations of the reserved
//! `kubernetes.io/`, `k8s.io/` and `kubernetes-fleet.io/` domains (where the agent's own marks
//! live), pod-template creation timestamps — are dropped, so only what a user could have set is
//! compared. What is compared decides partial or full comparison: a full comparison diffs the
//! manifest against the object, so fields only the member has (defaults included) show; a
//! partial one diffs the object as a server-side apply of the manifest would leave it (a
//! dry run) against the object as it is, so only the manifest's fields can differ.
//!
//! Objects are walked in key order (serde_json keeps maps sorted) and arrays by index, so the
//! same pair always gives the same list. A Secret's `data` and `stringData` values are never
//! shown.

use serde_json::{Map, Value};

use super::marks::SERVER_METADATA;
use crate::applier::PatchDetail;
use crate::report::DIFFS_PER_MANIFEST_MAX;

/// What a redacted value shows.
pub const REDACTED: &str = "(redacted)";

/// Label and annotation domains that users do not set (Kubernetes' own and the fleet's).
const RESERVED_DOMAINS: [&str; 3] = ["kubernetes.io/", "k8s.io/", "kubernetes-fleet.io/"];

/// Metadata fields that name the object or that the API server owns (`marks::SERVER_METADATA`):
/// the two sides never differ in them in a way a user set.
const IDENTITY_METADATA: [&str; 4] = ["name", "namespace", "generateName", "finalizers"];

fn remove_path(object: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = object;
    for key in parents {
        match current.get_mut(*key) {
            Some(next) => current = next,
            None => return,
        }
    }
    if let Some(map) = current.as_object_mut() {
        map.remove(*last);
    }
}

fn drop_reserved(map: &mut Value) {
    if let Some(entries) = map.as_object_mut() {
        entries.retain(|key, _| !RESERVED_DOMAINS.iter().any(|domain| key.contains(domain)));
    }
}

/// The object with every field irrelevant to a comparison removed (see the module docs).
#[must_use]
pub fn comparable(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(metadata) = object.get_mut("metadata") {
        if let Some(map) = metadata.as_object_mut() {
            for field in IDENTITY_METADATA.iter().chain(&SERVER_METADATA) {
                map.remove(*field);
            }
        }
        for field in ["labels", "annotations"] {
            if let Some(entries) = metadata.get_mut(field) {
                drop_reserved(entries);
                if entries.as_object().is_some_and(Map::is_empty) {
                    remove_path(metadata, &[field]);
                }
            }
        }
    }
    remove_path(&mut object, &["status"]);
    remove_path(
        &mut object,
        &["spec", "template", "metadata", "creationTimestamp"],
    );
    remove_path(
        &mut object,
        &[
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "metadata",
            "creationTimestamp",
        ],
    );
    object
}

/// A value as a detail shows it: a string as itself, anything else as JSON.
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `segment` escaped for a JSON pointer.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

struct Walk {
    details: Vec<PatchDetail>,
}

impl Walk {
    fn full(&self) -> bool {
        self.details.len() >= DIFFS_PER_MANIFEST_MAX
    }

    fn push(&mut self, path: &str, member: Option<&Value>, hub: Option<&Value>) {
        if self.full() {
            return;
        }
        self.details.push(PatchDetail {
            path: if path.is_empty() {
                "/".to_owned()
            } else {
                path.to_owned()
            },
            value_in_member: member.map(text),
            value_in_hub: hub.map(text),
        });
    }

    fn compare(&mut self, path: &str, hub: &Value, member: &Value) {
        if self.full() || hub == member {
            return;
        }
        match (hub, member) {
            (Value::Object(hub_map), Value::Object(member_map)) => {
                let mut keys: Vec<&String> = hub_map.keys().chain(member_map.keys()).collect();
                keys.sort();
                keys.dedup();
                for key in keys {
                    let child = format!("{path}/{}", escape(key));
                    match (hub_map.get(key), member_map.get(key)) {
                        (Some(h), Some(m)) => self.compare(&child, h, m),
                        (Some(h), None) => self.push(&child, None, Some(h)),
                        (None, Some(m)) => self.push(&child, Some(m), None),
                        (None, None) => {}
                    }
                }
            }
            (Value::Array(hub_items), Value::Array(member_items)) => {
                for index in 0..hub_items.len().max(member_items.len()) {
                    let child = format!("{path}/{index}");
                    match (hub_items.get(index), member_items.get(index)) {
                        (Some(h), Some(m)) => self.compare(&child, h, m),
                        (Some(h), None) => self.push(&child, None, Some(h)),
                        (None, Some(m)) => self.push(&child, Some(m), None),
                        (None, None) => {}
                    }
                }
            }
            _ => self.push(path, Some(member), Some(hub)),
        }
    }
}

/// The differences between `hub` (the manifest, or a dry run of it) and `member` (the object
/// on the cluster), both made [`comparable`] first; at most [`DIFFS_PER_MANIFEST_MAX`].
#[must_use]
pub fn details(hub: &Value, member: &Value) -> Vec<PatchDetail> {
    let mut walk = Walk {
        details: Vec::new(),
    };
    walk.compare("", &comparable(hub), &comparable(member));
    if hub["apiVersion"] == "v1" && hub["kind"] == "Secret" {
        for detail in &mut walk.details {
            if detail.path.starts_with("/data") || detail.path.starts_with("/stringData") {
                for value in [&mut detail.value_in_member, &mut detail.value_in_hub] {
                    if value.is_some() {
                        *value = Some(REDACTED.to_owned());
                    }
                }
            }
        }
    }
    walk.details
}

/// The one detail of an object the member does not have: the whole object is the difference.
#[must_use]
pub fn absent() -> Vec<PatchDetail> {
    vec![PatchDetail {
        path: "/".to_owned(),
        value_in_member: None,
        value_in_hub: Some("(the whole object)".to_owned()),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_fields_and_reserved_marks_are_not_differences() {
        let hub = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "n", "labels": {"app": "a"}},
            "data": {"k": "v"}});
        let member = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "n", "uid": "u", "resourceVersion": "9",
                "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": [],
                "labels": {"app": "a", "kubernetes-fleet.io/x": "y"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "data": {"k": "v"}});
        assert_eq!(details(&hub, &member), Vec::new());
    }

    #[test]
    fn changed_added_and_removed_fields_are_pointers_with_both_values() {
        let hub = json!({"spec": {"replicas": 3, "a/b": "x", "list": [1, 2]}});
        let member = json!({"spec": {"replicas": 5, "list": [1], "extra": {"k": true}}});
        let found = details(&hub, &member);
        let paths: Vec<(&str, Option<&str>, Option<&str>)> = found
            .iter()
            .map(|d| {
                (
                    d.path.as_str(),
                    d.value_in_member.as_deref(),
                    d.value_in_hub.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            paths,
            [
                ("/spec/a~1b", None, Some("x")),
                ("/spec/extra", Some("{\"k\":true}"), None),
                ("/spec/list/1", None, Some("2")),
                ("/spec/replicas", Some("5"), Some("3")),
            ]
        );
    }

    #[test]
    fn a_secrets_data_is_redacted() {
        let hub = json!({"apiVersion": "v1", "kind": "Secret", "data": {"password": "aHVi"}});
        let member = json!({"apiVersion": "v1", "kind": "Secret", "data": {"password": "bWVt"}});
        let found = details(&hub, &member);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].value_in_hub.as_deref(), Some(REDACTED));
        assert_eq!(found[0].value_in_member.as_deref(), Some(REDACTED));
    }
}

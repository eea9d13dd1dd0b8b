//! `metadata` as the API server validates a custom resource's (`ValidateObjectMetaAccessor`
//! for the object, `objectmeta.Validate` for embedded resources): the fields `ObjectMeta`
//! declares, the name a DNS subdomain, the namespace a DNS label, label and annotation keys
//! qualified names and label values well-formed. Messages are the API server's
//! (`k8s.io/apimachinery/pkg/util/validation`).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};

use super::path::{FieldPath, Segment};
use super::violation::{Checked, Reason, Violation, quoted, shown, type_name};

/// The fields of `ObjectMeta`.
const OBJECT_META: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

const DNS1123_SUBDOMAIN: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

/// Whether `text` matches `pattern` (an RE2 pattern as CRDs and Kubernetes write them,
/// unanchored unless it anchors itself); compiled patterns are kept. A pattern that does not
/// compile matches nothing.
pub fn matches(pattern: &str, text: &str) -> bool {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let compiled = cache
        .entry(pattern.to_owned())
        .or_insert_with(|| Regex::new(pattern).ok());
    compiled.as_ref().is_some_and(|re| re.is_match(text))
}

fn whole(pattern: &str, text: &str) -> bool {
    matches(&format!("^(?:{pattern})$"), text)
}

/// The `metadata` (and, for an embedded resource, `apiVersion` and `kind`) of an object or an
/// embedded resource at `path`.
pub fn check(object: &Map<String, Value>, path: &FieldPath, root: bool, embedded: bool) -> Checked {
    let mut out = Checked::default();
    if embedded {
        for field in ["apiVersion", "kind"] {
            if object
                .get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                let violation = Violation::new(
                    &path.key(field),
                    Reason::Required,
                    None,
                    "must not be empty",
                );
                out.violations.push(violation);
            }
        }
    }
    let meta_path = path.key("metadata");
    let Some(meta) = object.get("metadata") else {
        return out;
    };
    let Some(meta) = meta.as_object() else {
        let actual = quoted(type_name(meta));
        let detail = format!("{meta_path} in body must be of type object: {actual}");
        let violation = Violation::new(&meta_path, Reason::TypeInvalid, Some(actual), detail);
        out.violations.push(violation);
        return out;
    };
    for key in meta.keys().filter(|k| !OBJECT_META.contains(&k.as_str())) {
        out.unknown.push(meta_path.key(key));
    }
    if root {
        names(meta, &meta_path, &mut out.violations);
    }
    string_map(meta, &meta_path, "labels", true, &mut out.violations);
    string_map(meta, &meta_path, "annotations", false, &mut out.violations);
    out
}

fn names(meta: &Map<String, Value>, path: &FieldPath, out: &mut Vec<Violation>) {
    if let Some(name) = meta.get("name").and_then(Value::as_str) {
        let field = path.key("name");
        if name.len() > 253 {
            out.push(invalid(&field, name, "must be no more than 253 characters"));
        }
        if !whole(DNS1123_SUBDOMAIN, name) {
            let detail = format!(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
                 characters, '-' or '.', and must start and end with an alphanumeric character \
                 (e.g. 'example.com', regex used for validation is '{DNS1123_SUBDOMAIN}')"
            );
            out.push(invalid(&field, name, &detail));
        }
    }
    if let Some(namespace) = meta.get("namespace").and_then(Value::as_str) {
        let field = path.key("namespace");
        if namespace.len() > 63 {
            out.push(invalid(
                &field,
                namespace,
                "must be no more than 63 characters",
            ));
        }
        if !whole(DNS1123_LABEL, namespace) {
            let detail = format!(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters \
                 or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  \
                 or '123-abc', regex used for validation is '{DNS1123_LABEL}')"
            );
            out.push(invalid(&field, namespace, &detail));
        }
    }
}

fn invalid(path: &FieldPath, value: &str, detail: &str) -> Violation {
    Violation::new(
        path,
        Reason::Invalid,
        Some(shown(&Value::from(value))),
        detail,
    )
}

/// `labels` or `annotations`: a map of strings with qualified-name keys (and, for labels,
/// label values).
fn string_map(
    meta: &Map<String, Value>,
    path: &FieldPath,
    field: &str,
    labels: bool,
    out: &mut Vec<Violation>,
) {
    let Some(value) = meta.get(field) else {
        return;
    };
    let field_path = path.key(field);
    let Some(map) = value.as_object() else {
        let actual = quoted(type_name(value));
        let detail = format!("{field_path} in body must be of type object: {actual}");
        out.push(Violation::new(
            &field_path,
            Reason::TypeInvalid,
            Some(actual),
            detail,
        ));
        return;
    };
    for (key, item) in map {
        if let Some(problem) = qualified_name_problem(key) {
            out.push(invalid(&field_path, key, &problem));
        }
        let Some(text) = item.as_str() else {
            let item_path = field_path.child(Segment::MapKey(key.clone()));
            let actual = quoted(type_name(item));
            let detail = format!("{item_path} in body must be of type string: {actual}");
            out.push(Violation::new(
                &item_path,
                Reason::TypeInvalid,
                Some(actual),
                detail,
            ));
            continue;
        };
        if labels && (text.len() > 63 || !whole(LABEL_VALUE, text)) {
            let detail = format!(
                "a valid label must be an empty string or consist of alphanumeric characters, \
                 '-', '_' or '.', and must start and end with an alphanumeric character (e.g. \
                 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
                 '{LABEL_VALUE}')"
            );
            out.push(invalid(&field_path, text, &detail));
        }
    }
}

/// Why `key` is not a qualified name (`[prefix/]name`), as `IsQualifiedName` words it.
fn qualified_name_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty() || prefix.len() > 253 || !whole(DNS1123_SUBDOMAIN, prefix))
    {
        return Some(format!(
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case \
                 alphanumeric characters, '-' or '.', and must start and end with an \
                 alphanumeric character (e.g. 'example.com', regex used for validation is \
                 '{DNS1123_SUBDOMAIN}')"
        ));
    }
    if name.is_empty() {
        return Some("name part must be non-empty".to_owned());
    }
    if name.len() > 63 {
        return Some("name part must be no more than 63 characters".to_owned());
    }
    (!whole(QUALIFIED_NAME, name)).then(|| {
        format!(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
             and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
             '123-abc', regex used for validation is '{QUALIFIED_NAME}')"
        )
    })
}

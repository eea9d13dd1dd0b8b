//! The resource types the hub serves over the Kubernetes API: the static catalog, every kind a
//! `CustomResourceDefinition` applied to the hub declares, and any other kind stored among the
//! hub resources (served under the version it was applied with, named by its English plural).

use std::collections::BTreeSet;

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use flotilla_core::state::Resource;
use serde_json::Value;

use crate::catalog::{CRD_GROUP, ENTRIES, Entry};

/// One served resource type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedType {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Lowercase plural resource name (the URL segment).
    pub plural: String,
    /// Lowercase singular name.
    pub singular: String,
    /// Short names.
    pub short_names: Vec<String>,
    /// Categories.
    pub categories: Vec<String>,
    /// Served versions, preferred first.
    pub versions: Vec<String>,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
}

impl ServedType {
    fn from_entry(entry: &Entry) -> Self {
        Self {
            group: entry.group.to_owned(),
            kind: entry.kind.to_owned(),
            plural: entry.plural.to_owned(),
            singular: entry.singular(),
            short_names: entry.short_names.iter().map(|s| (*s).to_owned()).collect(),
            categories: entry.categories.iter().map(|s| (*s).to_owned()).collect(),
            versions: entry.versions.iter().map(|s| (*s).to_owned()).collect(),
            namespaced: entry.namespaced,
        }
    }

    /// `group/version`, or `version` for the core group.
    #[must_use]
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_owned()
        } else {
            format!("{}/{version}", self.group)
        }
    }
}

/// Every served type: the catalog, then CRD-declared kinds, then other stored kinds; a kind is
/// listed once (the first source wins).
#[must_use]
pub fn served_types(state: &State) -> Vec<ServedType> {
    let mut types: Vec<ServedType> = ENTRIES.iter().map(ServedType::from_entry).collect();
    let mut seen: BTreeSet<(String, String)> = types
        .iter()
        .map(|t| (t.group.clone(), t.kind.clone()))
        .collect();
    for (key, resource) in first_of_each_kind(state) {
        let declared: Vec<ServedType> =
            if key.group == CRD_GROUP && key.kind == "CustomResourceDefinition" {
                crds(state)
                    .filter_map(|content| declared_type(&content))
                    .collect()
            } else {
                Vec::new()
            };
        for served in declared.into_iter().chain(stored_type(key, resource)) {
            if seen.insert((served.group.clone(), served.kind.clone())) {
                types.push(served);
            }
        }
    }
    types
}

/// The first stored resource of every stored kind, skipping the rest of each kind: the work is
/// proportional to the number of kinds, not of resources.
fn first_of_each_kind(state: &State) -> Vec<(&ObjectKey, &Resource)> {
    let resources = state.resources();
    let mut out = Vec::new();
    let mut next = resources.iter().next();
    while let Some((key, resource)) = next {
        out.push((key, resource));
        // `kind + "\0"` sorts after every key of this kind and before any other kind.
        let past = ObjectKey {
            group: key.group.clone(),
            kind: format!("{}\0", key.kind).into(),
            namespace: "".into(),
            name: "".into(),
        };
        next = resources.range(past..).next();
    }
    out
}

/// The content of every stored `CustomResourceDefinition`.
fn crds(state: &State) -> impl Iterator<Item = Value> + '_ {
    let start = ObjectKey::cluster_scoped(CRD_GROUP, "CustomResourceDefinition", "");
    state
        .resources()
        .range(start..)
        .take_while(|(key, _)| key.group == CRD_GROUP && key.kind == "CustomResourceDefinition")
        .filter_map(|(_, resource)| serde_json::from_str(&resource.content).ok())
}

/// The type a served `(group, plural)` names, if any.
#[must_use]
pub fn find_type(state: &State, group: &str, plural: &str) -> Option<ServedType> {
    served_types(state)
        .into_iter()
        .find(|t| t.group == group && t.plural == plural)
}

/// The type of a stored kind, as served (its group and kind), if any.
#[must_use]
pub fn type_of_kind(state: &State, group: &str, kind: &str) -> Option<ServedType> {
    served_types(state)
        .into_iter()
        .find(|t| t.group == group && t.kind == kind)
}

/// The type a `CustomResourceDefinition`'s content (its `spec`) declares.
fn declared_type(content: &Value) -> Option<ServedType> {
    let spec = content.get("spec")?;
    let names = spec.get("names")?;
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let list = |value: Option<&Value>| -> Vec<String> {
        value
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let kind = text(names.get("kind"))?;
    let mut versions: Vec<(bool, String)> = spec
        .get("versions")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
                .filter_map(|v| {
                    let storage = v.get("storage").and_then(Value::as_bool).unwrap_or(false);
                    text(v.get("name")).map(|name| (!storage, name))
                })
                .collect()
        })
        .unwrap_or_default();
    // The storage version is preferred; the others keep their declared order.
    versions.sort_by_key(|(not_storage, _)| *not_storage);
    Some(ServedType {
        group: text(spec.get("group"))?,
        plural: text(names.get("plural")).unwrap_or_else(|| plural(&kind.to_ascii_lowercase())),
        singular: text(names.get("singular")).unwrap_or_else(|| kind.to_ascii_lowercase()),
        kind,
        short_names: list(names.get("shortNames")),
        categories: list(names.get("categories")),
        versions: versions.into_iter().map(|(_, name)| name).collect(),
        namespaced: spec.get("scope").and_then(Value::as_str) != Some("Cluster"),
    })
}

/// A stored kind no catalog entry or CRD names: served under the version it was applied with.
fn stored_type(key: &ObjectKey, resource: &Resource) -> Option<ServedType> {
    let version = resource
        .meta
        .api_version
        .rsplit('/')
        .next()
        .unwrap_or("v1")
        .to_owned();
    let singular = key.kind.to_ascii_lowercase();
    Some(ServedType {
        group: key.group.to_string(),
        kind: key.kind.to_string(),
        plural: plural(&singular),
        singular,
        short_names: Vec::new(),
        categories: Vec::new(),
        versions: vec![version],
        namespaced: !key.namespace.is_empty(),
    })
}

/// The English plural Kubernetes derives for a lowercase kind (`ingress` → `ingresses`,
/// `networkpolicy` → `networkpolicies`).
#[must_use]
pub fn plural(singular: &str) -> String {
    let sibilant = ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| singular.ends_with(end));
    if sibilant {
        return format!("{singular}es");
    }
    if let Some(stem) = singular.strip_suffix('y') {
        let after_vowel = stem.ends_with(['a', 'e', 'i', 'o', 'u']);
        if !after_vowel {
            return format!("{stem}ies");
        }
    }
    format!("{singular}s")
}

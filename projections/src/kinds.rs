//! kubectl-like resource names: which kind a word such as `crp`, `deployments.apps` or
//! `MemberCluster` means.
//!
//! Resolution is case-insensitive and accepts, like kubectl, the kind, its singular and plural
//! resource names and its short names, optionally qualified by group (`deployments.apps`) or by
//! version and group (`deployments.v1.apps`). The catalog's kinds come first; then kinds declared
//! by a `CustomResourceDefinition` on the hub; then any kind stored among the hub resources,
//! matched by its kind or a plural of it.

use flotilla_core::State;
use flotilla_core::model::ObjectKey;

use crate::catalog::ENTRIES;

/// What a resource name resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindInfo {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind, as written in manifests.
    pub kind: String,
    /// The `apiVersion` to show and assume for this kind.
    pub api_version_default: String,
    /// Whether objects of this kind live in a namespace.
    pub namespaced: bool,
}

impl KindInfo {
    /// The key of the object `name` of this kind: in `namespace` (`default` when none is
    /// given, as kubectl assumes) for a namespaced kind, in none for a cluster-scoped one.
    #[must_use]
    pub fn key(&self, namespace: Option<&str>, name: &str) -> ObjectKey {
        ObjectKey {
            group: self.group.as_str().into(),
            kind: self.kind.as_str().into(),
            namespace: if self.namespaced {
                namespace.unwrap_or("default").into()
            } else {
                "".into()
            },
            name: name.into(),
        }
    }
}

/// Short names two kinds claim: kubectl resolves `rs` to `apps/ReplicaSet` before KubeFleet's
/// `ResourceSnapshot` (built-in groups come first), so while a ReplicaSet is stored `rs` means
/// that; otherwise it means `ResourceSnapshot`, the only kind flotilla itself knows by it.
const YIELDING_SHORT_NAMES: [(&str, &str, &str); 1] = [("rs", "apps", "ReplicaSet")];

/// Resolves a kubectl-style resource name to a kind; `None` if nothing by that name is known.
#[must_use]
pub fn resolve_kind(state: &State, text: &str) -> Option<KindInfo> {
    let text = text.trim().to_ascii_lowercase();
    let (name, qualifier) = match text.split_once('.') {
        Some((name, qualifier)) => (name, Some(qualifier)),
        None => (text.as_str(), None),
    };
    if name.is_empty() {
        return None;
    }
    let group_matches = |group: &str| qualifier.is_none_or(|q| qualifies(q, group));
    let yielded = YIELDING_SHORT_NAMES
        .iter()
        .filter(|(short, group, _)| *short == name && group_matches(group))
        .find_map(|(_, group, kind)| {
            stored_kind(state, |key| key.group == *group && key.kind == *kind)
        });
    if yielded.is_some() {
        return yielded;
    }
    let well_known = ENTRIES.iter().find(|entry| {
        group_matches(entry.group)
            && (entry.singular() == name
                || entry.plural == name
                || entry.short_names.contains(&name))
    });
    if let Some(entry) = well_known {
        return Some(KindInfo {
            group: entry.group.to_owned(),
            kind: entry.kind.to_owned(),
            api_version_default: entry.api_version(entry.display_version),
            namespaced: entry.namespaced,
        });
    }
    let declared = crate::served::served_types(state)
        .into_iter()
        .skip(ENTRIES.len())
        .find(|served| {
            group_matches(&served.group)
                && (served.singular == name
                    || served.plural == name
                    || served.short_names.iter().any(|s| s == name))
        });
    if let Some(served) = declared {
        let version = served.versions.first().cloned().unwrap_or_default();
        return Some(KindInfo {
            api_version_default: served.api_version(&version),
            group: served.group,
            kind: served.kind,
            namespaced: served.namespaced,
        });
    }
    stored_kind(state, |key| {
        group_matches(&key.group) && kind_names_match(&key.kind, name)
    })
}

/// The kind of the first stored hub resource whose key passes `wanted`. Keys are ordered by
/// group then kind, so the first object of a kind stands for it.
fn stored_kind(state: &State, wanted: impl Fn(&ObjectKey) -> bool) -> Option<KindInfo> {
    state
        .resources()
        .iter()
        .find(|(key, _)| wanted(key))
        .map(|(key, resource)| KindInfo {
            group: key.group.to_string(),
            kind: key.kind.to_string(),
            api_version_default: resource.meta.api_version.to_string(),
            namespaced: !key.namespace.is_empty(),
        })
}

/// `apps` qualifies group `apps`; so does `v1.apps`; a bare version (`v1`) qualifies the core
/// group.
fn qualifies(qualifier: &str, group: &str) -> bool {
    if qualifier == group {
        return true;
    }
    let (version, rest) = qualifier.split_once('.').unwrap_or((qualifier, ""));
    is_version(version) && rest == group
}

/// `v1`, `v1beta1`, `v2alpha3`, …
fn is_version(text: &str) -> bool {
    text.strip_prefix('v')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// A stored kind is named by its lowercase kind, that plus `s`, or its English plural.
fn kind_names_match(kind: &str, name: &str) -> bool {
    let singular = kind.to_ascii_lowercase();
    name == singular || name == format!("{singular}s") || name == crate::served::plural(&singular)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_english_rules() {
        use crate::served::plural;
        assert_eq!(plural("ingress"), "ingresses");
        assert_eq!(plural("networkpolicy"), "networkpolicies");
        assert_eq!(plural("gateway"), "gateways");
        assert_eq!(plural("role"), "roles");
    }

    #[test]
    fn qualifiers_name_a_group_or_a_version_and_group() {
        assert!(qualifies("apps", "apps"));
        assert!(qualifies("v1.apps", "apps"));
        assert!(qualifies("v1", ""));
        assert!(!qualifies("extensions", "apps"));
        assert!(!qualifies("apps", ""));
    }
}

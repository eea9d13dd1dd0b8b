//! Object identity and metadata shared by every kind the hub stores.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::KeyPart;

/// The identity of a stored object: API group, kind, namespace (empty when cluster-scoped), name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectKey {
    /// API group (`""` for core, `apps`, `placement.kubernetes-fleet.io`, …).
    pub group: KeyPart,
    /// Kind, as written in manifests.
    pub kind: KeyPart,
    /// Namespace; empty for cluster-scoped objects.
    pub namespace: KeyPart,
    /// Name.
    pub name: KeyPart,
}

impl ObjectKey {
    /// A cluster-scoped key.
    #[must_use]
    pub fn cluster_scoped(group: &str, kind: &str, name: &str) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
            namespace: KeyPart::empty(),
            name: name.into(),
        }
    }

    /// A namespaced key.
    #[must_use]
    pub fn namespaced(group: &str, kind: &str, namespace: &str, name: &str) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// `kind/name` or `kind/namespace/name`, for messages.
    #[must_use]
    pub fn display(&self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for ObjectKey {
    /// `kind/name` or `kind/namespace/name` (the group is left out, as `kubectl` shows kinds).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → ``).
#[must_use]
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Metadata the user writes (name, namespace, labels, annotations).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMeta {
    /// Object name.
    #[serde(default)]
    pub name: String,
    /// Namespace, for namespaced kinds.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// Metadata of a stored object: what the user wrote plus what the hub assigns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectMeta {
    /// API version the object was last applied with (the fleet's own share static text).
    #[serde(deserialize_with = "super::uid::deserialize_api_version")]
    pub api_version: compact_str::CompactString,
    /// Labels.
    pub labels: super::StringMap,
    /// Annotations.
    pub annotations: super::StringMap,
    /// Stable id, derived from the event that created the object.
    pub uid: super::Uid,
    /// Bumped on every stored change (hub-wide counter, like Kubernetes').
    pub resource_version: u64,
    /// Bumped when the spec (not metadata) changes.
    pub generation: u64,
    /// Event time of creation.
    #[serde(with = "crate::time_text")]
    pub creation_timestamp: DateTime<Utc>,
}

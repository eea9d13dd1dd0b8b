//! Resource snapshots (`ClusterResourceSnapshot` / `ResourceSnapshot`): an immutable, indexed
//! copy of what a placement selected, with a resource hash. A new index is taken only when the
//! selected set or its content changes; old ones beyond `revisionHistoryLimit` are pruned unless
//! still in use (see `retention`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::ObjectKey;

/// Annotation that marks a ConfigMap as an envelope: its data holds manifests that must not be
/// applied on the hub, only on the members.
pub const ENVELOPE_ANNOTATION: &str = "kubernetes-fleet.io/envelope-configmap";
/// Largest selected-resources payload of one snapshot object; beyond it the snapshot is split
/// into sub-snapshots. KubeFleet names the reason, the 1 MB limit of a Kubernetes object;
/// KubeFleet splits at 800 KiB to leave room for the rest of the object, and so do we.
pub const SNAPSHOT_BYTES_MAX: usize = 800 * 1024;

/// One selected object as it is placed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectedResource {
    /// Identity.
    pub key: ObjectKey,
    /// apiVersion.
    pub api_version: String,
    /// The manifest (user metadata only) as canonical JSON.
    pub manifest: String,
}

impl SelectedResource {
    /// Whether this is an envelope: a `ClusterResourceEnvelope` / `ResourceEnvelope`, or a
    /// ConfigMap with the envelope annotation (see [`super::envelope`]).
    #[must_use]
    pub fn is_envelope(&self) -> bool {
        super::envelope::is_envelope(self)
    }
}

/// One resource snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceSnapshot {
    /// `kubernetes-fleet.io/resource-index`.
    pub index: u64,
    /// `kubernetes-fleet.io/resource-hash`.
    pub resource_hash: String,
    /// The selected resources, in apply order.
    pub resources: Vec<SelectedResource>,
    /// `kubernetes-fleet.io/number-of-enveloped-object`.
    pub enveloped_objects: u64,
    /// Creation time.
    pub created: DateTime<Utc>,
}

impl ResourceSnapshot {
    /// Groups the resources into snapshot objects of at most [`SNAPSHOT_BYTES_MAX`] each (a
    /// single larger resource gets its own); the first group is the master snapshot.
    #[must_use]
    pub fn parts(&self) -> Vec<&[SelectedResource]> {
        let mut parts = Vec::new();
        let mut start = 0;
        let mut bytes = 0;
        for (i, resource) in self.resources.iter().enumerate() {
            let size = resource.manifest.len();
            if i > start && bytes + size > SNAPSHOT_BYTES_MAX {
                parts.push(&self.resources[start..i]);
                start = i;
                bytes = 0;
            }
            bytes += size;
        }
        parts.push(&self.resources[start..]);
        parts
    }
}

/// SHA-256 (hex) of `{"selectedResources":[…]}` over the whole list, as KubeFleet hashes it.
#[must_use]
pub fn resource_hash(resources: &[SelectedResource]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"{\"selectedResources\":[");
    for (i, resource) in resources.iter().enumerate() {
        if i > 0 {
            hasher.update(b",");
        }
        hasher.update(resource.manifest.as_bytes());
    }
    hasher.update(b"]}");
    hex::encode(hasher.finalize())
}

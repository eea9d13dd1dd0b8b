//! The object model shared by every aggregate: the API groups and kinds, object identity and
//! metadata, selectors, int-or-percent, and the member cluster and placement specs, typed with the
//! field path of any error ([`FieldError`]). It depends on no aggregate; [`crate::manifest`]
//! routes a manifest to the aggregate that owns its kind.

pub mod bulk;
pub mod cluster_group;
pub mod int_or_percent;
pub mod key_part;
pub mod member_cluster;
pub mod meta;
pub mod partitioned;
pub mod placement;
pub mod placement_validation;
pub mod resource;
pub mod run_scope;
pub mod safety;
pub mod selector;
pub mod string_map;
pub mod uid;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use int_or_percent::{IntOrPercent, Rounding};
pub use key_part::KeyPart;
pub use member_cluster::MemberClusterSpec;
pub use meta::{ObjectKey, ObjectMeta, UserMeta, group_of};
pub use placement::PlacementSpec;
pub use resource::Resource;
pub use selector::LabelSelector;
pub use string_map::{LabelLookup, StringMap, VecMap};
pub use uid::Uid;

/// API group of `MemberCluster`.
pub const CLUSTER_GROUP: &str = "cluster.kubernetes-fleet.io";
/// API group of the placement kinds.
pub const PLACEMENT_GROUP: &str = "placement.kubernetes-fleet.io";
/// Kind name of a member cluster.
pub const MEMBER_CLUSTER: &str = "MemberCluster";
/// Kind name of a cluster-scoped placement.
pub const CLUSTER_RESOURCE_PLACEMENT: &str = "ClusterResourcePlacement";
/// Kind name of a namespaced placement.
pub const RESOURCE_PLACEMENT: &str = "ResourcePlacement";
/// Kind name of a cluster-scoped override.
pub const CLUSTER_RESOURCE_OVERRIDE: &str = "ClusterResourceOverride";
/// Kind name of a namespaced override.
pub const RESOURCE_OVERRIDE: &str = "ResourceOverride";
/// Kind name of an eviction.
pub const CLUSTER_RESOURCE_PLACEMENT_EVICTION: &str = "ClusterResourcePlacementEviction";
/// Kind name of a placement disruption budget.
pub const CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET: &str =
    "ClusterResourcePlacementDisruptionBudget";
/// Kind of a cluster-scoped strategy.
pub const CLUSTER_STAGED_UPDATE_STRATEGY: &str = "ClusterStagedUpdateStrategy";
/// Kind of a namespaced strategy.
pub const STAGED_UPDATE_STRATEGY: &str = "StagedUpdateStrategy";
/// Kind of a cluster-scoped run.
pub const CLUSTER_STAGED_UPDATE_RUN: &str = "ClusterStagedUpdateRun";
/// Kind of a namespaced run.
pub const STAGED_UPDATE_RUN: &str = "StagedUpdateRun";
/// Kind of a cluster-scoped approval request.
pub const CLUSTER_APPROVAL_REQUEST: &str = "ClusterApprovalRequest";
/// Kind of a namespaced approval request.
pub const APPROVAL_REQUEST: &str = "ApprovalRequest";
/// A member cluster's name as a map key: stored inline up to 24 bytes (Kubernetes names are
/// usually shorter), so a lookup in a million-entry map compares keys without following a
/// pointer per key, and a snapshot copies keys without allocating. Ordered, hashed into the
/// state and encoded exactly as a `String` is.
pub type ClusterName = compact_str::CompactString;

/// Longest object name Kubernetes accepts (DNS-1123 subdomain).
pub const NAME_BYTES_MAX: usize = 253;

/// A validation failure: which field, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    /// Field path, e.g. `spec.policy.numberOfClusters`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Deserializes `value` into `T`, reporting the full field path on failure.
pub(crate) fn typed<T: DeserializeOwned>(value: &Value, root: &str) -> Result<T, FieldError> {
    let value = if value.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        value.clone()
    };
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let field = if path == "." {
            root.to_owned()
        } else {
            format!("{root}.{path}")
        };
        FieldError::new(field, error.into_inner().to_string())
    })
}

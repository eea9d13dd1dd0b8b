//! Rancher Fleet's `ClusterGroup` (`fleet.cattle.io/v1alpha1`, namespaced): a named label
//! selector over member clusters, used by partitions' `clusterGroup` and
//! `clusterGroupSelector`. It is stored like any hub resource; this module types and checks it.
//!
//! An omitted `spec.selector` selects no cluster (an empty one, `{}`, selects every cluster),
//! as in Fleet.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{FieldError, LabelSelector, typed};

/// API group of `ClusterGroup`.
pub const FLEET_GROUP: &str = "fleet.cattle.io";
/// Kind name of a cluster group.
pub const CLUSTER_GROUP_KIND: &str = "ClusterGroup";

/// `spec` of a `ClusterGroup`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterGroupSpec {
    /// Member clusters whose labels match; `None` selects none.
    #[serde(default)]
    pub selector: Option<LabelSelector>,
}

impl ClusterGroupSpec {
    /// Parses and checks a `ClusterGroup`'s `spec`.
    ///
    /// # Errors
    /// A wrong field or an invalid selector, with its path.
    pub fn parse(spec: &Value) -> Result<Self, FieldError> {
        let spec: Self = typed(spec, "spec")?;
        if let Some(selector) = &spec.selector {
            selector
                .validate()
                .map_err(|message| FieldError::new("spec.selector", message))?;
        }
        Ok(spec)
    }

    /// Reads the spec back from a stored resource's canonical content (`{"spec": …}`); a
    /// content that no longer parses selects nothing.
    #[must_use]
    pub fn from_content(content: &str) -> Self {
        serde_json::from_str::<Value>(content)
            .ok()
            .and_then(|value| value.get("spec").cloned())
            .and_then(|spec| serde_json::from_value(spec).ok())
            .unwrap_or_default()
    }

    /// Whether a cluster with these labels is in the group.
    #[must_use]
    pub fn selects(&self, labels: &impl super::LabelLookup) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }
}

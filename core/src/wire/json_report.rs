//! What a work report says about single manifests, in the JSON form: the manifests that failed
//! (schema 2, with a `reason` since schema 4) and the manifests whose object on the member
//! differs from the hub's — `diffedManifests` (ReportDiff mode, or a takeover with
//! `whenToTakeOver: IfNoDiff` that found differences) and `driftedManifests` (`whenToApply:
//! IfNotDrifted`), both since schema 4.
//!
//! These names are a contract with member agents: frozen once shipped. Every type refuses
//! unknown fields, so a misspelt field is an error, not silently dropped.

use serde::{Deserialize, Serialize};

use crate::event::{ManifestCondition, ManifestDifference, ManifestFailure, PatchDetail};

/// One failed manifest of a work report, as a member agent writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonManifestFailure {
    /// API group (`""` or absent for the core group).
    #[serde(default)]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (absent for cluster-scoped objects).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The failed condition: `Applied` (default) or `Available`.
    #[serde(default)]
    pub condition: JsonManifestCondition,
    /// Why.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// KubeFleet's reason for the failed condition (`FoundDrifts`, `NotTakenOver`,
    /// `FailedToTakeOver`, `ApplyConflictWithOtherApplier`, …); absent: the hub's generic
    /// reason (schema 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The condition a manifest failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub enum JsonManifestCondition {
    /// It could not be applied.
    #[default]
    Applied,
    /// It is not available.
    Available,
}

/// A manifest whose object on the member differs from the hub's manifest (`diffedManifests`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonDiffedManifest {
    /// API group (`""` or absent for the core group).
    #[serde(default)]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (absent for cluster-scoped objects).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.generation` of the object on the member; absent when it does not exist there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_in_member_cluster_generation: Option<i64>,
    /// The fields that differ.
    #[serde(default)]
    pub observed_diffs: Vec<JsonPatchDetail>,
}

/// A manifest whose object drifted on the member (`driftedManifests`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonDriftedManifest {
    /// API group (`""` or absent for the core group).
    #[serde(default)]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (absent for cluster-scoped objects).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.generation` of the object on the member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_in_member_cluster_generation: Option<i64>,
    /// The fields that drifted.
    #[serde(default)]
    pub observed_drifts: Vec<JsonPatchDetail>,
}

/// One differing field (KubeFleet's `PatchDetail`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonPatchDetail {
    /// A JSON pointer to the field, e.g. `/spec/replicas`.
    pub path: String,
    /// Its value on the member; absent when the member's object lacks the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_in_member: Option<String>,
    /// Its value in the hub's manifest; absent when the manifest lacks the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_in_hub: Option<String>,
}

impl From<JsonManifestFailure> for ManifestFailure {
    fn from(json: JsonManifestFailure) -> Self {
        Self {
            group: json.group,
            version: json.version,
            kind: json.kind,
            namespace: json.namespace,
            name: json.name,
            condition: match json.condition {
                JsonManifestCondition::Applied => ManifestCondition::Applied,
                JsonManifestCondition::Available => ManifestCondition::Available,
            },
            message: json.message,
            reason: json.reason,
        }
    }
}

impl From<&ManifestFailure> for JsonManifestFailure {
    fn from(failure: &ManifestFailure) -> Self {
        Self {
            group: failure.group.clone(),
            version: failure.version.clone(),
            kind: failure.kind.clone(),
            namespace: failure.namespace.clone(),
            name: failure.name.clone(),
            condition: match failure.condition {
                ManifestCondition::Applied => JsonManifestCondition::Applied,
                ManifestCondition::Available => JsonManifestCondition::Available,
            },
            message: failure.message.clone(),
            reason: failure.reason.clone(),
        }
    }
}

impl From<JsonPatchDetail> for PatchDetail {
    fn from(json: JsonPatchDetail) -> Self {
        Self {
            path: json.path,
            value_in_member: json.value_in_member,
            value_in_hub: json.value_in_hub,
        }
    }
}

impl From<&PatchDetail> for JsonPatchDetail {
    fn from(detail: &PatchDetail) -> Self {
        Self {
            path: detail.path.clone(),
            value_in_member: detail.value_in_member.clone(),
            value_in_hub: detail.value_in_hub.clone(),
        }
    }
}

impl From<JsonDiffedManifest> for ManifestDifference {
    fn from(json: JsonDiffedManifest) -> Self {
        Self {
            group: json.group,
            version: json.version,
            kind: json.kind,
            namespace: json.namespace,
            name: json.name,
            observed_generation: json.observed_in_member_cluster_generation,
            details: json.observed_diffs.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<&ManifestDifference> for JsonDiffedManifest {
    fn from(difference: &ManifestDifference) -> Self {
        Self {
            group: difference.group.clone(),
            version: difference.version.clone(),
            kind: difference.kind.clone(),
            namespace: difference.namespace.clone(),
            name: difference.name.clone(),
            observed_in_member_cluster_generation: difference.observed_generation,
            observed_diffs: difference.details.iter().map(Into::into).collect(),
        }
    }
}

impl From<JsonDriftedManifest> for ManifestDifference {
    fn from(json: JsonDriftedManifest) -> Self {
        Self {
            group: json.group,
            version: json.version,
            kind: json.kind,
            namespace: json.namespace,
            name: json.name,
            observed_generation: json.observed_in_member_cluster_generation,
            details: json.observed_drifts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<&ManifestDifference> for JsonDriftedManifest {
    fn from(difference: &ManifestDifference) -> Self {
        Self {
            group: difference.group.clone(),
            version: difference.version.clone(),
            kind: difference.kind.clone(),
            namespace: difference.namespace.clone(),
            name: difference.name.clone(),
            observed_in_member_cluster_generation: difference.observed_generation,
            observed_drifts: difference.details.iter().map(Into::into).collect(),
        }
    }
}

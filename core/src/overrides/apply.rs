//! Rendering a placement's resources for one member cluster (KubeFleet's work generator,
//! `override.go`): for each resource, the matching CRO snapshots are applied first, then (for a
//! namespaced resource) the matching RO snapshots, so an RO wins. Within a policy the rules
//! apply in order and the last write wins; a matching `Delete` rule drops the resource and ends
//! that policy, and nothing after it brings the resource back. Patches follow RFC 6902
//! (`json-patch`), after the reserved variables in their values are substituted.

use json_patch::PatchOperation;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Sources;
use super::matching::{self, rule_selects_cluster, selects};
use super::model::{JsonPatchOverride, OverrideKind, OverrideType, PatchOp};
use super::snapshot::{OverrideSnapshot, parse_snapshot_name};
use super::variables::substitute;
use crate::model::{ObjectKey, PLACEMENT_GROUP};
use crate::placement::SelectedResource;

/// A placement's resources as one member cluster receives them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderedWork {
    /// The overridden manifests as canonical JSON, in apply order; deleted resources left out.
    pub manifests: Vec<String>,
    /// The CRO snapshots applied (`applicableClusterResourceOverrides`), sorted.
    pub cluster_resource_overrides: Vec<String>,
    /// The RO snapshots applied as `(namespace, snapshot name)` (`applicableResourceOverrides`),
    /// sorted.
    pub resource_overrides: Vec<(String, String)>,
}

/// Why overrides could not be applied: a user error, shown as `Overridden=False` with reason
/// [`super::REASON_OVERRIDDEN_FAILED`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    /// The cluster is not a member.
    #[error("member cluster {cluster} not found")]
    UnknownCluster {
        /// The cluster.
        cluster: String,
    },
    /// A snapshot named by the caller does not exist (or was pruned).
    #[error("{kind} snapshot {snapshot} not found")]
    SnapshotNotFound {
        /// `ClusterResourceOverride` or `ResourceOverride`.
        kind: &'static str,
        /// `name` or `namespace/name` of the snapshot.
        snapshot: String,
    },
    /// A selected resource's manifest is not a JSON object.
    #[error("the manifest of {resource} cannot be decoded: {reason}")]
    InvalidManifest {
        /// `kind/name` or `kind/namespace/name`.
        resource: String,
        /// The decoder's message.
        reason: String,
    },
    /// A patch could not be applied.
    #[error("{0}")]
    PatchFailed(Box<PatchFailure>),
    /// An envelope's content cannot be placed (not an override failure: KubeFleet reports it as
    /// a work that cannot be synchronized).
    #[error("{0}")]
    Envelope(#[from] crate::placement::envelope::EnvelopeError),
}

/// Where and why a JSON patch of an override failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "failed to apply the override rules of {override_object} (snapshot {snapshot}) on \
     {resource} for cluster {cluster}: spec.policy.overrideRules[{rule}].jsonPatchOverrides[{patch}]: {reason}"
)]
pub struct PatchFailure {
    /// `ClusterResourceOverride/name` or `ResourceOverride/namespace/name`.
    pub override_object: String,
    /// The snapshot name.
    pub snapshot: String,
    /// Index of the rule.
    pub rule: usize,
    /// Index of the patch within the rule.
    pub patch: usize,
    /// The resource being rendered.
    pub resource: String,
    /// The cluster.
    pub cluster: String,
    /// What went wrong.
    pub reason: String,
}

/// One resolved snapshot to apply.
struct Applied<'a> {
    kind: OverrideKind,
    key: &'a ObjectKey,
    name: String,
    snapshot: &'a OverrideSnapshot,
}

/// The cluster a render is for.
struct Target<'a> {
    name: &'a str,
    labels: &'a crate::model::StringMap,
}

/// Renders `resources` (a placement's selected resources, in apply order) for `cluster` with
/// the latest snapshots of every override that applies (see
/// [`super::applicable_overrides`]).
///
/// # Errors
/// An unknown cluster, or an override that fails on one of the resources.
pub fn render_for_cluster<'a>(
    sources: impl Into<Sources<'a>>,
    placement: &ObjectKey,
    resources: &[SelectedResource],
    cluster: &str,
) -> Result<RenderedWork, OverrideError> {
    let sources = sources.into();
    let (cluster_resource_overrides, resource_overrides) =
        matching::applicable_overrides(sources, placement, resources, cluster);
    render_with_snapshots(
        sources,
        resources,
        cluster,
        &cluster_resource_overrides,
        &resource_overrides,
    )
}

/// Renders `resources` for `cluster` with the named snapshots (as a binding records them):
/// CRO snapshot names and RO `(namespace, snapshot name)`, applied in the order given. Each
/// envelope is replaced by the objects it holds.
///
/// # Errors
/// An unknown cluster, a snapshot that is not kept, an envelope that cannot be unwrapped, or
/// an override that fails.
pub fn render_with_snapshots<'a>(
    sources: impl Into<Sources<'a>>,
    resources: &[SelectedResource],
    cluster: &str,
    cluster_resource_overrides: &[String],
    resource_overrides: &[(String, String)],
) -> Result<RenderedWork, OverrideError> {
    let sources = sources.into();
    let member = sources
        .members
        .get(cluster)
        .ok_or_else(|| OverrideError::UnknownCluster {
            cluster: cluster.to_owned(),
        })?;
    let target = Target {
        name: cluster,
        labels: &member.meta.labels,
    };
    let mut applied = Vec::new();
    for name in cluster_resource_overrides {
        applied.push(resolve(
            sources,
            OverrideKind::ClusterResourceOverride,
            "",
            name,
        )?);
    }
    for (namespace, name) in resource_overrides {
        applied.push(resolve(
            sources,
            OverrideKind::ResourceOverride,
            namespace,
            name,
        )?);
    }
    // Envelopes are unwrapped first: overrides apply to the objects they hold, as KubeFleet's
    // `applyOverridesToEnvelopeManifests` does.
    let placed = crate::placement::envelope::unwrap_all(resources)?;
    let mut manifests = Vec::with_capacity(placed.len());
    for resource in placed.iter() {
        if let Some(manifest) = render_one(resource, &applied, &target)? {
            manifests.push(manifest);
        }
    }
    Ok(RenderedWork {
        manifests,
        cluster_resource_overrides: cluster_resource_overrides.to_vec(),
        resource_overrides: resource_overrides.to_vec(),
    })
}

fn resolve<'a>(
    sources: Sources<'a>,
    kind: OverrideKind,
    namespace: &str,
    snapshot: &str,
) -> Result<Applied<'a>, OverrideError> {
    let not_found = || OverrideError::SnapshotNotFound {
        kind: kind.as_str(),
        snapshot: if namespace.is_empty() {
            snapshot.to_owned()
        } else {
            format!("{namespace}/{snapshot}")
        },
    };
    let (name, index) = parse_snapshot_name(snapshot).ok_or_else(not_found)?;
    let key = ObjectKey {
        group: PLACEMENT_GROUP.into(),
        kind: kind.as_str().into(),
        namespace: namespace.into(),
        name: name.into(),
    };
    // A snapshot gone from its override is still found while a binding's work uses it.
    let live = (sources.overrides.get_key_value(&key))
        .and_then(|(key, stored)| Some((key, stored.snapshot(index)?)));
    let retired = || {
        let (key, snapshots) = sources.retired.get_key_value(&key)?;
        Some((key, snapshots.iter().find(|s| s.index == index)?))
    };
    let (key, found) = live.or_else(retired).ok_or_else(not_found)?;
    Ok(Applied {
        kind,
        key,
        name: snapshot.to_owned(),
        snapshot: found,
    })
}

/// The resource after every applicable snapshot; `None` when a Delete rule dropped it.
fn render_one(
    resource: &SelectedResource,
    applied: &[Applied<'_>],
    target: &Target<'_>,
) -> Result<Option<String>, OverrideError> {
    let mut matching = applied
        .iter()
        .filter(|a| selects(a.kind, a.key, &a.snapshot.spec, resource))
        .peekable();
    if matching.peek().is_none() {
        return Ok(Some(resource.manifest.clone()));
    }
    let mut document: Value =
        serde_json::from_str(&resource.manifest).map_err(|e| OverrideError::InvalidManifest {
            resource: resource.key.display(),
            reason: e.to_string(),
        })?;
    for snapshot in matching {
        if apply_policy(&mut document, snapshot, resource, target)? == Outcome::Deleted {
            return Ok(None);
        }
    }
    // serde_json's map is ordered by key, so this text is canonical.
    Ok(Some(document.to_string()))
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Kept,
    Deleted,
}

/// Applies one snapshot's rules that select the cluster, in order.
fn apply_policy(
    document: &mut Value,
    applied: &Applied<'_>,
    resource: &SelectedResource,
    target: &Target<'_>,
) -> Result<Outcome, OverrideError> {
    let failed = |rule: usize, patch: usize, reason: String| {
        OverrideError::PatchFailed(Box::new(PatchFailure {
            override_object: applied.key.display(),
            snapshot: applied.name.clone(),
            rule,
            patch,
            resource: resource.key.display(),
            cluster: target.name.to_owned(),
            reason,
        }))
    };
    let rules = &applied.snapshot.spec.policy.override_rules;
    for (r, rule) in rules.iter().enumerate() {
        if !rule_selects_cluster(rule, target.labels) {
            continue;
        }
        if rule.override_type == OverrideType::Delete {
            return Ok(Outcome::Deleted);
        }
        let mut operations = Vec::with_capacity(rule.json_patch_overrides.len());
        for (p, patch) in rule.json_patch_overrides.iter().enumerate() {
            operations.push(operation(patch, target).map_err(|reason| failed(r, p, reason))?);
        }
        json_patch::patch(document, &operations).map_err(|error| {
            let path = rule
                .json_patch_overrides
                .get(error.operation)
                .map_or("", |p| p.path.as_str());
            failed(r, error.operation, format!("{path:?}: {}", error.kind))
        })?;
    }
    Ok(Outcome::Kept)
}

/// One RFC 6902 operation, its value's variables substituted for the target cluster.
fn operation(patch: &JsonPatchOverride, target: &Target<'_>) -> Result<PatchOperation, String> {
    let mut fields = Map::new();
    fields.insert("op".into(), Value::from(patch.op.as_str()));
    fields.insert("path".into(), Value::from(patch.path.clone()));
    if patch.op != PatchOp::Remove {
        // An absent value is JSON null, as KubeFleet marshals it.
        let text = patch.value.as_deref().unwrap_or("null");
        let substituted = substitute(text, target.name, target.labels)?;
        let value: Value = serde_json::from_str(&substituted)
            .map_err(|e| format!("the value is not JSON after substitution: {e}"))?;
        fields.insert("value".into(), value);
    }
    serde_json::from_value(Value::Object(fields)).map_err(|e| e.to_string())
}

//! Parsing a manifest: from JSON to a typed, validated [`Manifest`], with the field path of any
//! error. This is the router between the shapes users write and the aggregates that own them:
//! Fleet's own kinds go to their aggregate's spec parser (member clusters and placements in
//! [`crate::model`], overrides, staged updates, evictions in their modules); every other
//! `apiVersion`/`kind` is a hub resource, kept as canonical JSON — content to be placed.

use serde_json::Value;

use crate::model::{
    CLUSTER_GROUP, CLUSTER_RESOURCE_OVERRIDE, CLUSTER_RESOURCE_PLACEMENT,
    CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET, CLUSTER_RESOURCE_PLACEMENT_EVICTION, FieldError,
    MEMBER_CLUSTER, MemberClusterSpec, NAME_BYTES_MAX, ObjectKey, PLACEMENT_GROUP, PlacementSpec,
    RESOURCE_OVERRIDE, RESOURCE_PLACEMENT, UserMeta, cluster_group, group_of, placement_validation,
    typed,
};
use crate::overrides::{self, OverrideKind, OverrideSpec};
use crate::staged;

/// Served versions of the eviction and disruption budget kinds.
const EVICTION_VERSIONS: [&str; 2] = ["v1alpha1", "v1beta1"];
/// Served versions of the override kinds (v1alpha1, and v1beta1 as KubeFleet also serves).
const OVERRIDE_VERSIONS: [&str; 2] = ["v1alpha1", "v1beta1"];
/// Served versions of the staged update kinds.
const STAGED_VERSIONS: [&str; 3] = ["v1alpha1", "v1beta1", "v1"];
/// Whether a statically known kind of a group is cluster-scoped: a kind the hub serves or the
/// Kubernetes API serves built in (see [`crate::kind_scope`]); `false` for a kind not known.
#[must_use]
pub fn is_cluster_scoped(group: &str, kind: &str) -> bool {
    crate::kind_scope::is_cluster_scoped(group, kind)
}

/// A parsed, validated manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// `apiVersion` as written.
    pub api_version: String,
    /// Identity.
    pub key: ObjectKey,
    /// Name, labels, annotations.
    pub meta: UserMeta,
    /// The typed content.
    pub body: Body,
}

/// The typed content of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A member cluster registration.
    MemberCluster(MemberClusterSpec),
    /// A cluster-scoped placement.
    ClusterResourcePlacement(PlacementSpec),
    /// A namespaced placement.
    ResourcePlacement(PlacementSpec),
    /// A cluster-scoped override of placed resources.
    ClusterResourceOverride(OverrideSpec),
    /// A namespaced override of placed resources.
    ResourceOverride(OverrideSpec),
    /// A staged update strategy of either scope (the key's kind says which).
    StagedUpdateStrategy(crate::staged::model::StrategySpec),
    /// A staged update run of either scope (the key's kind says which).
    StagedUpdateRun(crate::staged::model::RunSpec),
    /// An eviction of a placement from one cluster.
    ClusterResourcePlacementEviction(crate::eviction::EvictionSpec),
    /// A disruption budget for the placement of the same name.
    ClusterResourcePlacementDisruptionBudget(crate::eviction::DisruptionBudgetSpec),
    /// Any other object: everything but `apiVersion`/`kind`/`metadata`, as canonical JSON.
    Resource {
        /// Canonical JSON of the remaining top-level fields (`spec`, `data`, …).
        content: String,
    },
}

/// Parses a manifest from JSON text.
///
/// # Errors
/// Malformed JSON, a missing or wrong field, or a spec that fails validation.
pub fn parse_manifest_text(text: &str) -> Result<Manifest, FieldError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| FieldError::new("(document)", e.to_string()))?;
    parse_manifest(&value)
}

/// Parses and validates a manifest.
///
/// # Errors
/// A missing or wrong field, or a spec that fails validation.
pub fn parse_manifest(value: &Value) -> Result<Manifest, FieldError> {
    let object = value
        .as_object()
        .ok_or_else(|| FieldError::new("(document)", "not a mapping"))?;
    let api_version = required_str(value, "apiVersion")?;
    let kind = required_str(value, "kind")?;
    let meta: UserMeta = typed(object.get("metadata").unwrap_or(&Value::Null), "metadata")?;
    validate_name(&meta.name)?;
    let group = group_of(api_version);
    let document = Document {
        value,
        object,
        api_version,
        meta: &meta,
    };
    let body = document.body(group, kind)?;
    let key = key_for(group, kind, &meta)?;
    Ok(Manifest {
        api_version: api_version.to_owned(),
        key,
        meta,
        body,
    })
}

/// A manifest being parsed: the whole document, its `apiVersion` and its metadata.
struct Document<'a> {
    value: &'a Value,
    object: &'a serde_json::Map<String, Value>,
    api_version: &'a str,
    meta: &'a UserMeta,
}

impl Document<'_> {
    /// The typed content for this group and kind: a Fleet kind's parsed and validated spec,
    /// else the document as a hub resource.
    fn body(&self, group: &str, kind: &str) -> Result<Body, FieldError> {
        match (group, kind) {
            (CLUSTER_GROUP, MEMBER_CLUSTER) => self.member_cluster(),
            (PLACEMENT_GROUP, CLUSTER_RESOURCE_PLACEMENT | RESOURCE_PLACEMENT) => {
                self.placement(kind)
            }
            (PLACEMENT_GROUP, CLUSTER_RESOURCE_OVERRIDE | RESOURCE_OVERRIDE) => {
                self.resource_override(kind)
            }
            (
                PLACEMENT_GROUP,
                staged::CLUSTER_STAGED_UPDATE_STRATEGY | staged::STAGED_UPDATE_STRATEGY,
            ) => {
                check_version(self.api_version, &STAGED_VERSIONS)?;
                Ok(Body::StagedUpdateStrategy(staged::model::parse_strategy(
                    self.spec(),
                )?))
            }
            (PLACEMENT_GROUP, staged::CLUSTER_STAGED_UPDATE_RUN | staged::STAGED_UPDATE_RUN) => {
                check_version(self.api_version, &STAGED_VERSIONS)?;
                Ok(Body::StagedUpdateRun(staged::model::parse_run(
                    self.spec(),
                    &self.meta.name,
                )?))
            }
            (
                PLACEMENT_GROUP,
                CLUSTER_RESOURCE_PLACEMENT_EVICTION | CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET,
            ) => self.eviction(kind),
            (cluster_group::FLEET_GROUP, cluster_group::CLUSTER_GROUP_KIND) => self.cluster_group(),
            (PLACEMENT_GROUP, derived) if DERIVED_KINDS.contains(&derived) => {
                Err(FieldError::new("kind", derived_refusal(derived)))
            }
            _ => Ok(self.hub_resource()),
        }
    }

    /// The document's `spec`.
    fn spec(&self) -> &Value {
        spec_of(self.value)
    }

    /// Everything but `apiVersion`/`kind`/`metadata`, kept as a hub resource.
    fn hub_resource(&self) -> Body {
        Body::Resource {
            content: resource_content(self.object),
        }
    }

    /// A MemberCluster registration.
    fn member_cluster(&self) -> Result<Body, FieldError> {
        check_version(self.api_version, &["v1beta1", "v1"])?;
        let mut spec: MemberClusterSpec = typed(self.spec(), "spec")?;
        spec.normalize();
        spec.validate()
            .map_err(|(field, message)| FieldError { field, message })?;
        Ok(Body::MemberCluster(spec))
    }

    /// A ClusterResourcePlacement, or a ResourcePlacement validated against its namespace.
    fn placement(&self, kind: &str) -> Result<Body, FieldError> {
        check_version(self.api_version, &["v1", "v1beta1"])?;
        let mut spec: PlacementSpec = typed(self.spec(), "spec")?;
        spec.normalize();
        if kind == CLUSTER_RESOURCE_PLACEMENT {
            placement_validation::validate(&spec, None)?;
            Ok(Body::ClusterResourcePlacement(spec))
        } else {
            let namespace = self.meta.namespace.as_deref().unwrap_or_default();
            placement_validation::validate(&spec, Some(namespace))?;
            Ok(Body::ResourcePlacement(spec))
        }
    }

    /// A ClusterResourceOverride or a ResourceOverride.
    fn resource_override(&self, kind: &str) -> Result<Body, FieldError> {
        check_version(self.api_version, &OVERRIDE_VERSIONS)?;
        if kind == CLUSTER_RESOURCE_OVERRIDE {
            let spec = overrides::parse_spec(OverrideKind::ClusterResourceOverride, self.spec())?;
            Ok(Body::ClusterResourceOverride(spec))
        } else {
            let spec = overrides::parse_spec(OverrideKind::ResourceOverride, self.spec())?;
            Ok(Body::ResourceOverride(spec))
        }
    }

    /// A ClusterResourcePlacementEviction or a ClusterResourcePlacementDisruptionBudget.
    fn eviction(&self, kind: &str) -> Result<Body, FieldError> {
        check_version(self.api_version, &EVICTION_VERSIONS)?;
        if kind == CLUSTER_RESOURCE_PLACEMENT_EVICTION {
            Ok(Body::ClusterResourcePlacementEviction(
                crate::eviction::parse_eviction_spec(self.spec())?,
            ))
        } else {
            Ok(Body::ClusterResourcePlacementDisruptionBudget(
                crate::eviction::parse_budget_spec(self.spec())?,
            ))
        }
    }

    /// A ClusterGroup: its spec is checked, and it is stored as a hub resource (the
    /// partitioned rollout reads its selector back).
    fn cluster_group(&self) -> Result<Body, FieldError> {
        check_version(self.api_version, &["v1alpha1"])?;
        if self
            .meta
            .namespace
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        {
            return Err(FieldError::new(
                "metadata.namespace",
                "ClusterGroup needs a namespace",
            ));
        }
        cluster_group::ClusterGroupSpec::parse(self.spec())?;
        Ok(self.hub_resource())
    }
}

/// Kinds the hub derives (from placements, update runs and overrides), all in
/// `placement.kubernetes-fleet.io`: applying one would store a look-alike that nothing reads,
/// so it is refused.
pub const DERIVED_KINDS: [&str; 12] = [
    "ClusterSchedulingPolicySnapshot",
    "SchedulingPolicySnapshot",
    "ClusterResourceSnapshot",
    "ResourceSnapshot",
    "ClusterResourceBinding",
    "ResourceBinding",
    "ClusterResourcePlacementStatus",
    "Work",
    staged::CLUSTER_APPROVAL_REQUEST,
    staged::APPROVAL_REQUEST,
    "ClusterResourceOverrideSnapshot",
    "ResourceOverrideSnapshot",
];

/// Why a derived kind cannot be applied, and what to do instead.
fn derived_refusal(kind: &str) -> String {
    if kind == staged::CLUSTER_APPROVAL_REQUEST || kind == staged::APPROVAL_REQUEST {
        return format!(
            "{kind} objects are created by staged update runs and cannot be applied; approve one \
             by setting its Approved condition (kubectl patch {} NAME --type=merge -p \
             '{{\"status\":{{\"conditions\":[{{\"type\":\"Approved\",\"status\":\"True\",…}}]}}}}' \
             --subresource=status) or with `flotilla approve NAME`",
            if kind == staged::APPROVAL_REQUEST {
                "approvalrequests"
            } else {
                "clusterapprovalrequests"
            }
        );
    }
    format!("{kind} objects are derived by the hub and cannot be applied")
}

fn key_for(group: &str, kind: &str, meta: &UserMeta) -> Result<ObjectKey, FieldError> {
    let namespace = meta.namespace.clone().unwrap_or_default();
    let namespaced_kind = group == PLACEMENT_GROUP
        && matches!(
            kind,
            RESOURCE_PLACEMENT
                | RESOURCE_OVERRIDE
                | staged::STAGED_UPDATE_STRATEGY
                | staged::STAGED_UPDATE_RUN
                | staged::APPROVAL_REQUEST
        );
    if is_cluster_scoped(group, kind) && !namespace.is_empty() {
        return Err(FieldError::new(
            "metadata.namespace",
            format!("{kind} is cluster-scoped"),
        ));
    }
    if namespaced_kind && namespace.is_empty() {
        return Err(FieldError::new(
            "metadata.namespace",
            format!("{kind} needs a namespace"),
        ));
    }
    Ok(ObjectKey {
        group: group.into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name: meta.name.as_str().into(),
    })
}

fn required_str<'a>(value: &'a Value, field: &str) -> Result<&'a str, FieldError> {
    match value.get(field) {
        Some(Value::String(text)) if !text.is_empty() => Ok(text),
        Some(Value::String(_)) | None => Err(FieldError::new(field, "is required")),
        Some(_) => Err(FieldError::new(field, "must be a string")),
    }
}

fn check_version(api_version: &str, versions: &[&str]) -> Result<(), FieldError> {
    let version = api_version.rsplit('/').next().unwrap_or_default();
    if versions.contains(&version) {
        Ok(())
    } else {
        Err(FieldError::new(
            "apiVersion",
            format!(
                "{api_version} is not served (versions: {})",
                versions.join(", ")
            ),
        ))
    }
}

fn spec_of(value: &Value) -> &Value {
    value.get("spec").unwrap_or(&Value::Null)
}

fn validate_name(name: &str) -> Result<(), FieldError> {
    let valid_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
    let edges = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
    if name.is_empty() {
        return Err(FieldError::new("metadata.name", "is required"));
    }
    if name.len() > NAME_BYTES_MAX
        || !valid_chars
        || !edges(name.bytes().next())
        || !edges(name.bytes().last())
    {
        return Err(FieldError::new(
            "metadata.name",
            format!(
                "{name:?} is not a valid name (lowercase alphanumerics, '-' and '.', at most {NAME_BYTES_MAX})"
            ),
        ));
    }
    Ok(())
}

/// Server-managed metadata is dropped; the rest (minus apiVersion/kind/metadata) is the content.
fn resource_content(object: &serde_json::Map<String, Value>) -> String {
    let rest: serde_json::Map<String, Value> = object
        .iter()
        .filter(|(field, _)| !matches!(field.as_str(), "apiVersion" | "kind" | "metadata"))
        .map(|(field, value)| (field.clone(), value.clone()))
        .collect();
    // serde_json's map is ordered by key, so this text is canonical.
    Value::Object(rest).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn member_cluster_parses_with_defaults() {
        let manifest = parse_manifest(&json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": "member1", "labels": {"environment": "staging"}},
            "spec": {}
        }))
        .expect("valid");
        let Body::MemberCluster(spec) = manifest.body else {
            panic!("not a member cluster")
        };
        assert_eq!(spec.heartbeat_period_seconds, 60);
        assert_eq!(manifest.key.namespace, "");
    }

    #[test]
    fn type_errors_name_the_field_path() {
        let error = parse_manifest(&json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp"},
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace"}],
                     "policy": {"placementType": "PickN", "numberOfClusters": "two"}}
        }))
        .expect_err("invalid");
        assert_eq!(error.field, "spec.policy.numberOfClusters");
    }

    #[test]
    fn pick_n_needs_a_count() {
        let error = parse_manifest(&json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp"},
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace"}],
                     "policy": {"placementType": "PickN"}}
        }))
        .expect_err("invalid");
        assert_eq!(error.field, "spec.policy.numberOfClusters");
    }

    #[test]
    fn generic_resources_keep_canonical_content() {
        let manifest = parse_manifest(&json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "test-1", "namespace": "test"},
            "data": {"key2": "value2", "key1": "value1"}
        }))
        .expect("valid");
        assert_eq!(
            manifest.body,
            Body::Resource {
                content: r#"{"data":{"key1":"value1","key2":"value2"}}"#.into()
            }
        );
        assert_eq!(manifest.key.display(), "ConfigMap/test/test-1");
    }

    #[test]
    fn bad_names_are_rejected() {
        let error = parse_manifest(&json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "Bad_Name"}}))
        .expect_err("invalid");
        assert_eq!(error.field, "metadata.name");
    }
}

//! The typed spec of `ClusterResourceOverride` and `ResourceOverride`
//! (`placement.kubernetes-fleet.io` v1alpha1 / v1beta1), and its parsing from JSON.
//!
//! Both kinds share one domain type, [`OverrideSpec`]: they differ only in the name of their
//! selector list (`clusterResourceSelectors` / `resourceSelectors`). A JSON patch value is
//! arbitrary JSON, so it is kept as canonical JSON text (keys sorted): the state is encoded with
//! bincode, which cannot carry `serde_json::Value`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

use super::validation;
use crate::model::placement::ClusterSelector;
use crate::model::{FieldError, LabelSelector, typed};

/// The two override kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum OverrideKind {
    /// Cluster-scoped; selects cluster-scoped resources (a namespace brings all it holds).
    ClusterResourceOverride,
    /// Namespaced; selects resources of its own namespace.
    ResourceOverride,
}

impl OverrideKind {
    /// The kind name as written in manifests.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            OverrideKind::ClusterResourceOverride => crate::model::CLUSTER_RESOURCE_OVERRIDE,
            OverrideKind::ResourceOverride => crate::model::RESOURCE_OVERRIDE,
        }
    }

    /// The spec field that holds the selectors.
    #[must_use]
    pub fn selectors_field(self) -> &'static str {
        match self {
            OverrideKind::ClusterResourceOverride => "clusterResourceSelectors",
            OverrideKind::ResourceOverride => "resourceSelectors",
        }
    }
}

/// `spec` of an override, defaults filled in and validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverrideSpec {
    /// The placement this override is limited to; every placement when `None`.
    pub placement: Option<PlacementRef>,
    /// `clusterResourceSelectors` (CRO) or `resourceSelectors` (RO), in order.
    pub resource_selectors: Vec<OverrideSelector>,
    /// The ordered override rules.
    pub policy: OverridePolicy,
}

/// `spec.placement`: the placement an override applies to (KubeFleet's `PlacementRef`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementRef {
    /// Placement name.
    pub name: String,
    /// Whether the name is of a `ClusterResourcePlacement` or of a `ResourcePlacement` in the
    /// override's namespace; `Cluster` when omitted.
    #[serde(default)]
    pub scope: PlacementScope,
}

/// `spec.placement.scope` (KubeFleet's `ResourceScope`): which kind of placement is referred to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlacementScope {
    /// A `ClusterResourcePlacement` (KubeFleet's default).
    #[default]
    Cluster,
    /// A `ResourcePlacement` in the override's own namespace (only a `ResourceOverride`).
    Namespaced,
}

impl PlacementScope {
    /// The value as written in manifests.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PlacementScope::Cluster => "Cluster",
            PlacementScope::Namespaced => "Namespaced",
        }
    }
}

/// One selector: group/version/kind and a name (label selectors are not supported).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OverrideSelector {
    /// API group; empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Object name.
    pub name: String,
}

/// `spec.policy`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverridePolicy {
    /// Rules in application order; a later rule wins over an earlier one.
    pub override_rules: Vec<OverrideRule>,
}

/// One override rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverrideRule {
    /// Which clusters the rule applies to: `None` selects none, no terms select all.
    pub cluster_selector: Option<ClusterSelector>,
    /// `JSONPatch` (default) or `Delete`.
    pub override_type: OverrideType,
    /// The RFC 6902 operations of a `JSONPatch` rule, in order.
    pub json_patch_overrides: Vec<JsonPatchOverride>,
}

/// What a rule does to the resources it selects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OverrideType {
    /// Apply the rule's JSON patches.
    #[default]
    #[serde(rename = "JSONPatch")]
    JsonPatch,
    /// Do not place the resource on the selected clusters.
    Delete,
}

/// A JSON patch operation allowed in an override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatchOp {
    /// RFC 6902 `add`.
    Add,
    /// RFC 6902 `remove`.
    Remove,
    /// RFC 6902 `replace`.
    Replace,
}

impl PatchOp {
    /// The operator as written (`add`, `remove`, `replace`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PatchOp::Add => "add",
            PatchOp::Remove => "remove",
            PatchOp::Replace => "replace",
        }
    }
}

/// One JSON patch of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonPatchOverride {
    /// The operator.
    pub op: PatchOp,
    /// JSON pointer to the target location.
    pub path: String,
    /// The value as canonical JSON text; `None` when absent (a `null` value is `Some("null")`).
    pub value: Option<String>,
}

impl OverrideSpec {
    /// The spec in KubeFleet's JSON shape, for display.
    #[must_use]
    pub fn to_json(&self, kind: OverrideKind) -> Value {
        let selectors: Vec<Value> = self
            .resource_selectors
            .iter()
            .map(
                |s| json!({"group": s.group, "version": s.version, "kind": s.kind, "name": s.name}),
            )
            .collect();
        let rules: Vec<Value> = self.policy.override_rules.iter().map(rule_json).collect();
        let mut spec = serde_json::Map::new();
        if let Some(placement) = &self.placement {
            spec.insert(
                "placement".into(),
                json!({"name": placement.name, "scope": placement.scope.as_str()}),
            );
        }
        spec.insert(kind.selectors_field().into(), Value::Array(selectors));
        spec.insert("policy".into(), json!({"overrideRules": rules}));
        Value::Object(spec)
    }
}

fn rule_json(rule: &OverrideRule) -> Value {
    let patches: Vec<Value> = rule
        .json_patch_overrides
        .iter()
        .map(|patch| {
            let mut fields = serde_json::Map::new();
            fields.insert("op".into(), Value::from(patch.op.as_str()));
            fields.insert("path".into(), Value::from(patch.path.clone()));
            if let Some(text) = &patch.value {
                let value = serde_json::from_str(text).unwrap_or(Value::Null);
                fields.insert("value".into(), value);
            }
            Value::Object(fields)
        })
        .collect();
    let override_type = match rule.override_type {
        OverrideType::JsonPatch => "JSONPatch",
        OverrideType::Delete => "Delete",
    };
    let mut fields = serde_json::Map::new();
    if let Some(selector) = &rule.cluster_selector {
        // A term's absent selector or sorter is left out, as KubeFleet serializes it (its
        // schema has no nullable field).
        let mut selector = serde_json::to_value(selector).unwrap_or(Value::Null);
        drop_nulls(&mut selector);
        fields.insert("clusterSelector".into(), selector);
    }
    fields.insert("overrideType".into(), Value::from(override_type));
    if !patches.is_empty() {
        fields.insert("jsonPatchOverrides".into(), Value::Array(patches));
    }
    Value::Object(fields)
}

/// Removes every `null` member of the objects in `value`, throughout.
fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, member| !member.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// `spec` as written, before validation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecWire {
    #[serde(default)]
    placement: Option<PlacementRef>,
    #[serde(default)]
    cluster_resource_selectors: Option<Vec<SelectorWire>>,
    #[serde(default)]
    resource_selectors: Option<Vec<SelectorWire>>,
    #[serde(default)]
    policy: Option<PolicyWire>,
}

/// A selector as written: a label selector is parsed only to be rejected.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SelectorWire {
    #[serde(default)]
    pub(super) group: String,
    pub(super) version: String,
    pub(super) kind: String,
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) label_selector: Option<LabelSelector>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PolicyWire {
    #[serde(default)]
    override_rules: Vec<RuleWire>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleWire {
    #[serde(default)]
    cluster_selector: Option<ClusterSelector>,
    #[serde(default)]
    override_type: OverrideType,
    #[serde(default)]
    json_patch_overrides: Vec<PatchWire>,
}

#[derive(Deserialize)]
struct PatchWire {
    op: PatchOp,
    #[serde(default)]
    path: String,
    #[serde(default, deserialize_with = "present")]
    value: Option<Value>,
}

/// Keeps an explicit `null` apart from an absent field: present values are always `Some`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A placement reference needs a name; a `ClusterResourceOverride` can only refer to a
/// `ClusterResourcePlacement` (KubeFleet's `PlacementRef` documents it; its matcher ignores the
/// scope of a CRO's reference, so a `Namespaced` one is refused rather than silently misread).
fn placement_ref(kind: OverrideKind, placement: &PlacementRef) -> Result<(), FieldError> {
    if placement.name.is_empty() {
        return Err(FieldError::new("spec.placement.name", "is required"));
    }
    if kind == OverrideKind::ClusterResourceOverride
        && placement.scope == PlacementScope::Namespaced
    {
        return Err(FieldError::new(
            "spec.placement.scope",
            "a ClusterResourceOverride can only refer to a ClusterResourcePlacement \
             (scope Cluster)",
        ));
    }
    Ok(())
}

/// Parses and validates the `spec` of an override of `kind`.
///
/// # Errors
/// A wrong field or a broken rule, with its field path.
pub(crate) fn parse_spec(kind: OverrideKind, spec: &Value) -> Result<OverrideSpec, FieldError> {
    let wire: SpecWire = typed(spec, "spec")?;
    let (selectors, other) = match kind {
        OverrideKind::ClusterResourceOverride => {
            (wire.cluster_resource_selectors, wire.resource_selectors)
        }
        OverrideKind::ResourceOverride => {
            (wire.resource_selectors, wire.cluster_resource_selectors)
        }
    };
    if other.is_some() {
        let wrong = match kind {
            OverrideKind::ClusterResourceOverride => "resourceSelectors",
            OverrideKind::ResourceOverride => "clusterResourceSelectors",
        };
        return Err(FieldError::new(
            format!("spec.{wrong}"),
            format!(
                "is not a field of {}; use spec.{}",
                kind.as_str(),
                kind.selectors_field()
            ),
        ));
    }
    let selectors = selectors.unwrap_or_default();
    let resource_selectors = validation::selectors(kind, &selectors)?;
    let Some(policy) = wire.policy else {
        return Err(FieldError::new("spec.policy", "is required"));
    };
    let rules = policy
        .override_rules
        .into_iter()
        .map(|rule| OverrideRule {
            cluster_selector: rule.cluster_selector,
            override_type: rule.override_type,
            json_patch_overrides: rule
                .json_patch_overrides
                .into_iter()
                .map(|patch| JsonPatchOverride {
                    op: patch.op,
                    path: patch.path,
                    // serde_json's map is ordered by key, so this text is canonical.
                    value: patch.value.map(|value| value.to_string()),
                })
                .collect(),
        })
        .collect();
    let policy = OverridePolicy {
        override_rules: rules,
    };
    validation::policy(&policy)?;
    if let Some(placement) = &wire.placement {
        placement_ref(kind, placement)?;
    }
    Ok(OverrideSpec {
        placement: wire.placement,
        resource_selectors,
        policy,
    })
}

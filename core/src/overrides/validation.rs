//! The checks KubeFleet's override webhook and validator make: on one override alone (at parse
//! time, as [`FieldError`]s naming the field), and against the overrides already stored (at
//! apply time: the per-kind limit, one override per resource, the immutable placement).

use std::collections::BTreeMap;

use super::model::{
    OverrideKind, OverridePolicy, OverrideSelector, OverrideSpec, OverrideType, PatchOp,
    SelectorWire,
};
use super::{OVERRIDES_PER_KIND_MAX, Override};
use crate::decision::RejectCode;
use crate::model::{FieldError, ObjectKey};

/// Most resource selectors one override may carry.
pub const SELECTORS_MAX: usize = 20;
/// Most rules one override policy may carry.
pub const RULES_MAX: usize = 20;
/// Most JSON patches one rule may carry.
pub const PATCHES_MAX: usize = 20;

fn fail<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, FieldError> {
    Err(FieldError::new(field, message))
}

/// Checks the selectors: 1–20, each with a name and no label selector, no duplicates.
pub(super) fn selectors(
    kind: OverrideKind,
    wire: &[SelectorWire],
) -> Result<Vec<OverrideSelector>, FieldError> {
    let base = format!("spec.{}", kind.selectors_field());
    if wire.is_empty() || wire.len() > SELECTORS_MAX {
        return fail(
            base,
            format!("between 1 and {SELECTORS_MAX} selectors are required"),
        );
    }
    let mut selected: Vec<OverrideSelector> = Vec::with_capacity(wire.len());
    for (index, selector) in wire.iter().enumerate() {
        let field = format!("{base}[{index}]");
        if selector.label_selector.is_some() {
            return fail(
                format!("{field}.labelSelector"),
                "label selectors are not supported; select a resource by name",
            );
        }
        if selector.name.is_empty() {
            return fail(
                format!("{field}.name"),
                "a resource name is required for resource selection",
            );
        }
        if selector.version.is_empty() || selector.kind.is_empty() {
            return fail(field, "version and kind are required");
        }
        let typed = OverrideSelector {
            group: selector.group.clone(),
            version: selector.version.clone(),
            kind: selector.kind.clone(),
            name: selector.name.clone(),
        };
        if selected.contains(&typed) {
            return fail(
                field,
                "duplicate resource selector: selectors must be unique",
            );
        }
        selected.push(typed);
    }
    Ok(selected)
}

/// Checks the policy: 1–20 rules; cluster-selector terms are label selectors only; a Delete
/// rule has no patches; a JSONPatch rule has 1–20 valid patches.
pub(super) fn policy(policy: &OverridePolicy) -> Result<(), FieldError> {
    let rules = &policy.override_rules;
    if rules.is_empty() || rules.len() > RULES_MAX {
        return fail(
            "spec.policy.overrideRules",
            format!("between 1 and {RULES_MAX} override rules are required"),
        );
    }
    for (index, rule) in rules.iter().enumerate() {
        let field = format!("spec.policy.overrideRules[{index}]");
        let terms = rule
            .cluster_selector
            .iter()
            .flat_map(|s| &s.cluster_selector_terms);
        for (t, term) in terms.enumerate() {
            let term_field = format!("{field}.clusterSelector.clusterSelectorTerms[{t}]");
            if term.property_selector.is_some() || term.property_sorter.is_some() {
                return fail(
                    term_field,
                    "only labelSelector is supported in override cluster selector terms \
                     (propertySelector and propertySorter are not)",
                );
            }
            let Some(labels) = &term.label_selector else {
                return fail(
                    format!("{term_field}.labelSelector"),
                    "is required: only labelSelector is supported in override cluster selector terms",
                );
            };
            labels.validate().map_err(|message| {
                FieldError::new(format!("{term_field}.labelSelector"), message)
            })?;
        }
        let patches = &rule.json_patch_overrides;
        match rule.override_type {
            OverrideType::Delete if !patches.is_empty() => {
                return fail(
                    format!("{field}.jsonPatchOverrides"),
                    "must be empty when the override type is Delete",
                );
            }
            OverrideType::Delete => {}
            OverrideType::JsonPatch => {
                if patches.is_empty() || patches.len() > PATCHES_MAX {
                    return fail(
                        format!("{field}.jsonPatchOverrides"),
                        format!(
                            "a JSONPatch rule needs between 1 and {PATCHES_MAX} JSON patch overrides"
                        ),
                    );
                }
                for (p, patch) in patches.iter().enumerate() {
                    let patch_field = format!("{field}.jsonPatchOverrides[{p}]");
                    path(&patch.path).map_err(|message| {
                        FieldError::new(format!("{patch_field}.path"), message)
                    })?;
                    if patch.op == PatchOp::Remove && patch.value.is_some() {
                        return fail(
                            format!("{patch_field}.value"),
                            "a remove operation cannot have a value",
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks one patch path: a JSON pointer that leaves the type, most metadata and the status
/// alone. `/metadata/labels…` and `/metadata/annotations…` are allowed.
///
/// # Errors
/// What is wrong with the path.
pub fn path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("path cannot be empty".into());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!("path {path:?} must start with \"/\""));
    };
    let segments: Vec<&str> = rest.split('/').collect();
    match segments.as_slice() {
        ["kind" | "apiVersion"] => {
            return Err(format!(
                "cannot patch {path:?}: the type fields (apiVersion, kind) cannot be overridden"
            ));
        }
        ["metadata", second, ..] if !matches!(*second, "labels" | "annotations") => {
            return Err(format!(
                "cannot patch {path:?}: metadata fields other than labels and annotations cannot be overridden"
            ));
        }
        ["metadata"] => {
            return Err(format!(
                "cannot patch {path:?}: metadata fields other than labels and annotations cannot be overridden"
            ));
        }
        ["status", ..] => {
            return Err(format!(
                "cannot patch {path:?}: the status cannot be overridden"
            ));
        }
        _ => {}
    }
    if segments.iter().any(|segment| segment.trim().is_empty()) {
        return Err(format!("path {path:?} cannot contain an empty segment"));
    }
    for segment in &segments {
        let mut chars = segment.chars();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                return Err(format!(
                    "path {path:?} is not a JSON pointer: \"~\" must be followed by 0 or 1"
                ));
            }
        }
    }
    Ok(())
}

/// A rejection found against the stored overrides.
pub(crate) struct Conflict {
    /// Stable code.
    pub(crate) code: RejectCode,
    /// Message naming the rule.
    pub(crate) message: String,
}

/// Checks an override against the stored ones: the placement reference cannot change, at most
/// [`OVERRIDES_PER_KIND_MAX`] of a kind exist, and no other override of the same kind (for a
/// `ResourceOverride`: in the same namespace) selects one of its resources.
pub(crate) fn against_stored(
    overrides: &BTreeMap<ObjectKey, Override>,
    key: &ObjectKey,
    kind: OverrideKind,
    spec: &OverrideSpec,
) -> Result<(), Conflict> {
    let existing = overrides.get(key);
    if let Some(old) = existing
        && old.spec.placement != spec.placement
    {
        let name = |spec: &OverrideSpec| {
            spec.placement
                .as_ref()
                .map_or_else(|| "(none)".to_owned(), |p| format!("{:?}", p.name))
        };
        return Err(Conflict {
            code: RejectCode::ImmutableField,
            message: format!(
                "spec.placement: the placement reference is immutable (was {}, now {})",
                name(&old.spec),
                name(spec)
            ),
        });
    }
    let same_kind = || overrides.values().filter(|o| o.kind == kind);
    if existing.is_none() && same_kind().count() >= OVERRIDES_PER_KIND_MAX {
        return Err(Conflict {
            code: RejectCode::InvalidObject,
            message: format!(
                "{} {}: at most {OVERRIDES_PER_KIND_MAX} {}s can be created",
                kind.as_str(),
                key.name,
                kind.as_str()
            ),
        });
    }
    for (other_key, other) in overrides {
        if other_key == key || other.kind != kind || other_key.namespace != key.namespace {
            continue;
        }
        if let Some(message) = overlap(kind, spec, other_key, other) {
            return Err(Conflict {
                code: RejectCode::InvalidObject,
                message,
            });
        }
    }
    Ok(())
}

/// The first selector of `spec` that names a resource `other` already selects (same group,
/// kind and name: the version does not make it another resource).
fn overlap(
    kind: OverrideKind,
    spec: &OverrideSpec,
    other_key: &ObjectKey,
    other: &Override,
) -> Option<String> {
    let (index, selector) = spec.resource_selectors.iter().enumerate().find(|(_, s)| {
        other
            .spec
            .resource_selectors
            .iter()
            .any(|o| o.group == s.group && o.kind == s.kind && o.name == s.name)
    })?;
    let resource = if other_key.namespace.is_empty() {
        format!("{}/{}", selector.kind, selector.name)
    } else {
        format!(
            "{}/{}/{}",
            selector.kind, other_key.namespace, selector.name
        )
    };
    Some(format!(
        "spec.{}[{index}]: one override per resource: {resource} is already selected by {} {}",
        kind.selectors_field(),
        kind.as_str(),
        other_key.name
    ))
}

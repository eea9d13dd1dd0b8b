//! KubeFleet's CRD schemas as the contract of every write: an object of a kind KubeFleet
//! publishes is validated against its CRD's `openAPIV3Schema` as the API server validates a
//! custom resource against a structural schema (`apiextensions-apiserver`'s `validation`,
//! `objectmeta`, `listtype` and `cel` packages):
//!
//! - nulls of fields that are not `nullable` are dropped and `default`s filled in first, on a
//!   copy (the API server prunes and defaults before it validates; flotilla stores what was
//!   written and applies its own defaults in the fold);
//! - `type` (with `x-kubernetes-int-or-string`, `nullable`), `enum`, `required`, `minimum` /
//!   `maximum`, `minLength` / `maxLength`, `minItems` / `maxItems`, `minProperties` /
//!   `maxProperties`, `pattern`, `format` (`date-time`, `byte`), `x-kubernetes-list-type`
//!   (`set` and `map` items unique), `x-kubernetes-embedded-resource`;
//! - fields the schema does not declare (outside `x-kubernetes-preserve-unknown-fields`) are
//!   *unknown*, reported apart from violations: the caller decides by `fieldValidation`
//!   whether they refuse the write, warn, or are dropped;
//! - `metadata` by Kubernetes' `ObjectMeta` rules (the name a DNS subdomain, labels and
//!   annotations well-formed) rather than by the CRD's empty `metadata` schema;
//! - the CEL `x-kubernetes-validations` rules, with `self` and, on an update, `oldSelf` (rules
//!   that read `oldSelf` are transition rules and run only where an old value exists), each
//!   failure reporting the rule's `message`. As the API server does, rules are not evaluated
//!   while the object has a type or enum violation.
//! - on an update, a value equal to the stored one at the same place is not checked again
//!   (the API server's validation ratcheting, on by default since Kubernetes 1.30): an edit
//!   of one field is not refused for another field the writer did not touch.
//!
//! flotilla's additions to KubeFleet's schemas are in `extensions`, and the fields it does not
//! require in [`RELAXED`].
//!
//! Kinds without a vendored schema (built-in kinds, Rancher Fleet's, kinds a hub-applied CRD
//! declares) are not checked here.

mod cel;
mod crds;
mod duplicates;
mod extensions;
mod metadata;
mod path;
mod prepare;
mod structural;
#[cfg(test)]
mod tests;
mod violation;

use serde_json::Value;

pub use crds::{VENDORED, all as vendored_kinds, defines};
pub use duplicates::duplicate_fields;
pub use path::{FieldPath, Segment};
pub use violation::{Checked, Reason, Violation};

/// Where flotilla knowingly accepts less than KubeFleet's schema: `(group, kind, field, why)`
/// of a field KubeFleet requires that flotilla neither requires nor reads.
pub const RELAXED: &[(&str, &str, &str, &str)] = &[(
    "cluster.kubernetes-fleet.io",
    "MemberCluster",
    "spec.identity",
    "flotilla authenticates a member's agent with its own tokens or NATS credentials, never \
     through the identity a KubeFleet hub grants RBAC to, so a member needs none",
)];

/// Checks `object` against the schema of `group`/`kind` in `version`; `old` is the stored
/// object on an update (for the `oldSelf` rules). `None` when no vendored CRD defines the kind.
/// A missing field listed in [`RELAXED`] is not a violation.
#[must_use]
pub fn check(
    group: &str,
    kind: &str,
    version: &str,
    object: &Value,
    old: Option<&Value>,
) -> Option<Checked> {
    let (_, schema) = crds::schema(group, kind, version)?;
    let mut checked = structural::check(schema, object, old);
    checked.violations.retain(|violation| {
        violation.reason != Reason::Required
            || !RELAXED
                .iter()
                .any(|(g, k, field, _)| *g == group && *k == kind && *field == violation.field)
    });
    Some(checked)
}

/// Every way `object` (of `kind` in `api_version`, as served or as written) breaks its
/// KubeFleet CRD schema, unknown fields included (as [`Reason::UnknownField`]); empty for a
/// kind no vendored CRD defines.
#[must_use]
pub fn validate(kind: &str, api_version: &str, object: &Value) -> Vec<Violation> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let Some(checked) = check(group, kind, version, object, None) else {
        return Vec::new();
    };
    let unknown = checked.unknown.iter().map(Violation::unknown_field);
    unknown.chain(checked.violations).collect()
}

/// Drops the fields of `object` that its kind's schema in `version` does not declare, as an API
/// server prunes a custom resource it serves in a version other than the one stored (KubeFleet's
/// CRDs convert between versions with strategy `None`). A kind no vendored CRD defines is left
/// alone.
pub fn prune_to_version(group: &str, kind: &str, version: &str, object: &mut Value) {
    if let Some(checked) = check(group, kind, version, object, None) {
        prune(object, &checked.unknown);
    }
}

/// The `openAPIV3Schema` of a kind in a version (see [`crds::schema`] for versions KubeFleet
/// does not publish), for OpenAPI documents.
#[must_use]
pub fn open_api_schema(group: &str, kind: &str, version: &str) -> Option<&'static Value> {
    crds::schema(group, kind, version).map(|(_, schema)| schema)
}

/// How a writer wants unknown and duplicate fields treated: KEP-2885's `fieldValidation`,
/// kubectl's `--validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// Refuse unknown and duplicate fields.
    Strict,
    /// Drop them, with a warning each.
    Warn,
    /// Drop them.
    Ignore,
}

/// A manifest of a KubeFleet kind as a writer outside the Kubernetes API sends it (`flotilla
/// apply`, an `apply` event over HTTP or NATS), checked by its own `apiVersion` and `kind`:
/// what [`check`] finds, `Checked::default()` for a kind without a vendored schema.
#[must_use]
pub fn check_manifest(manifest: &Value) -> Checked {
    let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
    let kind = manifest["kind"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    check(group, kind, version, manifest, None).unwrap_or_default()
}

/// Why a manifest is refused under strict validation, one line per problem (unknown fields
/// first, then violations); empty when it is not.
#[must_use]
pub fn strict_problems(manifest: &Value) -> Vec<String> {
    let checked = check_manifest(manifest);
    let unknown = checked
        .unknown
        .iter()
        .map(|path| format!("unknown field {:?}", path.to_string()));
    unknown
        .chain(checked.violations.iter().map(ToString::to_string))
        .collect()
}

/// Removes the fields at `paths` from `object` (unknown fields that `Warn` and `Ignore` drop,
/// as the API server prunes them).
pub fn prune(object: &mut Value, paths: &[FieldPath]) {
    for path in paths {
        path.remove_from(object);
    }
}

//! Field validation of every write, as KEP-2885 defines it for the API server, against
//! KubeFleet's CRD schemas (`schema`):
//!
//! - `fieldValidation=Strict` (kubectl's default, `--validate=strict`) refuses a write with an
//!   unknown or a duplicate field: `400 BadRequest`, worded as the API server's strict decoding
//!   error (`ClusterResourcePlacement in version "v1beta1" cannot be handled as a
//!   ClusterResourcePlacement: strict decoding error: unknown field "spec.policy.afinity"`);
//! - `Warn` (also what an absent parameter means, as for the API server) drops those fields
//!   and answers with one `Warning` header per field (`unknown field "spec.x"`), which kubectl
//!   prints;
//! - `Ignore` drops them silently.
//!
//! Schema violations (type, enum, required, bounds, patterns, CEL rules) refuse the write under
//! every mode with `422 Invalid`, every field a cause. A field KubeFleet's schema declares but
//! flotilla's model does not act on is stored, with a `Warning` saying flotilla ignores it.
//!
//! A field that is unknown in the written object but present in the stored one, as flotilla
//! renders it, is not the writer's doing (an edit of the object as read) and is left alone.

use flotilla_core::model::placement::PlacementSpec;
use flotilla_core::model::{CLUSTER_GROUP, MemberClusterSpec, PLACEMENT_GROUP, group_of};
use flotilla_core::query::staged::model::{RunSpec, StrategySpec};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::request::{Request, Target};
use super::status::ApiError;
use flotilla_adapters::schema::{self, FieldPath};

pub use flotilla_adapters::schema::FieldValidation;

/// The request's `fieldValidation`; `Warn` when it gives none.
///
/// # Errors
/// 400 for a value other than `Strict`, `Warn` or `Ignore`.
pub fn mode(request: &Request) -> Result<FieldValidation, ApiError> {
    match request.params.get("fieldValidation").map(String::as_str) {
        None | Some("" | "Warn") => Ok(FieldValidation::Warn),
        Some("Strict") => Ok(FieldValidation::Strict),
        Some("Ignore") => Ok(FieldValidation::Ignore),
        Some(other) => Err(ApiError::bad_request(format!(
            "fieldValidation parameter unsupported: {other}; supported values: \"Ignore\", \
             \"Strict\", \"Warn\""
        ))),
    }
}

/// A written object that passed field validation.
#[derive(Debug, Clone)]
pub struct Validated {
    /// The object to store: unknown fields dropped.
    pub object: Value,
    /// The `Warning`s to answer with.
    pub warnings: Vec<String>,
}

/// Validates a prepared, written object of `target`'s kind; `live` is the stored object on an
/// update, `duplicates` the fields the request body repeats.
///
/// # Errors
/// 400 under `Strict` for unknown or duplicate fields; 422 for schema violations.
pub fn validate(
    target: &Target,
    mut object: Value,
    live: Option<&Value>,
    duplicates: &[FieldPath],
    mode: FieldValidation,
) -> Result<Validated, ApiError> {
    let served = &target.served;
    let checked = schema::check(&served.group, &served.kind, &target.version, &object, live)
        .unwrap_or_default();
    let unknown: Vec<FieldPath> = checked
        .unknown
        .into_iter()
        .filter(|path| live.is_none_or(|live| path.lookup(live).is_none()))
        .collect();
    let mut problems: Vec<String> = unknown
        .iter()
        .map(|path| format!("unknown field {:?}", path.to_string()))
        .collect();
    problems.extend(
        duplicates
            .iter()
            .map(|path| format!("duplicate field {:?}", path.to_string())),
    );
    if mode == FieldValidation::Strict && !problems.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding \
             error: {}",
            problems.join(", "),
            kind = served.kind,
            version = target.version,
        )));
    }
    let mut warnings = if mode == FieldValidation::Warn {
        problems
    } else {
        Vec::new()
    };
    if !checked.violations.is_empty() {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let mut refused = ApiError::invalid_fields(&target.subject(name), &checked.violations);
        refused.warnings = warnings;
        return Err(refused);
    }
    schema::prune(&mut object, &unknown);
    warnings.extend(
        unmodelled(&object)
            .into_iter()
            .map(|field| format!("flotilla ignores field {field:?}: its model does not use it")),
    );
    Ok(Validated { object, warnings })
}

/// The `spec` fields of `object` its kind's model in flotilla ignores, as paths.
pub fn unmodelled(object: &Value) -> Vec<String> {
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let group = group_of(object["apiVersion"].as_str().unwrap_or_default());
    match (group, object["kind"].as_str().unwrap_or_default()) {
        (CLUSTER_GROUP, "MemberCluster") => ignored::<MemberClusterSpec>(spec),
        (PLACEMENT_GROUP, "ClusterResourcePlacement" | "ResourcePlacement") => {
            ignored::<PlacementSpec>(spec)
        }
        (PLACEMENT_GROUP, "ClusterStagedUpdateStrategy" | "StagedUpdateStrategy") => {
            ignored::<StrategySpec>(spec)
        }
        (PLACEMENT_GROUP, "ClusterStagedUpdateRun" | "StagedUpdateRun") => ignored::<RunSpec>(spec),
        _ => Vec::new(),
    }
}

fn ignored<T: DeserializeOwned>(spec: Value) -> Vec<String> {
    let mut paths = Vec::new();
    let _: Result<T, _> = serde_ignored::deserialize(spec, |path| {
        // serde_ignored shows an `Option`'s content as a `?` segment; JSON has none.
        let mut text = String::from("spec");
        for part in path.to_string().split('.').filter(|part| *part != "?") {
            if part.bytes().all(|b| b.is_ascii_digit()) {
                text.push_str(&format!("[{part}]"));
            } else {
                text.push('.');
                text.push_str(part);
            }
        }
        paths.push(text);
    });
    paths
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_the_model_ignores_are_named_by_path() {
        let placement = json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace",
                "name": "app", "bogus": 1}], "policy": {"placementType": "PickAll",
                "numberOfCluster": 2}}
        });
        assert_eq!(
            unmodelled(&placement),
            [
                "spec.policy.numberOfCluster",
                "spec.resourceSelectors[0].bogus"
            ]
        );
        let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "y"}});
        assert!(
            unmodelled(&configmap).is_empty(),
            "hub resources keep every field"
        );
    }
}

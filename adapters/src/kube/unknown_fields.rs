//! Fields of a written fleet object that flotilla's model does not keep. They are dropped when
//! the object is stored — as a structural CRD prunes them on a KubeFleet hub — and the write is
//! answered with a `Warning` header per field, which kubectl prints (`Warning: unknown field
//! "spec.x"`). They are not refused, even under `fieldValidation=Strict`: flotilla's schema is a
//! superset of KubeFleet's, and a KubeFleet field it does not model yet must not break a
//! user's apply.

use axum::http::HeaderValue;
use axum::http::header::WARNING;
use axum::response::Response;
use flotilla_core::model::placement::PlacementSpec;
use flotilla_core::model::{CLUSTER_GROUP, MemberClusterSpec, PLACEMENT_GROUP, group_of};
use flotilla_core::staged::model::{RunSpec, StrategySpec};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The `spec` fields of `object` its kind's model ignores, as dotted paths.
pub fn unknown_fields(object: &Value) -> Vec<String> {
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
        let parts: Vec<String> = path
            .to_string()
            .split('.')
            .filter(|part| *part != "?")
            .map(str::to_owned)
            .collect();
        paths.push(format!("spec.{}", parts.join(".")));
    });
    paths
}

/// Adds a `Warning` header per unknown field of `written` to a write's response.
pub fn warn(mut response: Response, written: &Value) -> Response {
    for field in unknown_fields(written) {
        let text = format!("299 - \"unknown field \\\"{field}\\\"\"");
        if let Ok(value) = HeaderValue::from_str(&text) {
            response.headers_mut().append(WARNING, value);
        }
    }
    response
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
            unknown_fields(&placement),
            [
                "spec.policy.numberOfCluster",
                "spec.resourceSelectors.0.bogus"
            ]
        );
        let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "y"}});
        assert!(
            unknown_fields(&configmap).is_empty(),
            "hub resources keep every field"
        );
    }
}

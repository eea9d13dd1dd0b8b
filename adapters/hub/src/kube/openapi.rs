//! OpenAPI for the served kinds: v3 (`/openapi/v3` lists one document per group-version;
//! each has the kinds' paths and schemas) and v2 (one document). kubectl reads v3 to learn
//! that the server validates fields itself (the `fieldValidation` parameter of each PATCH
//! operation) and for `kubectl explain`.
//!
//! A kind KubeFleet publishes is described by the `openAPIV3Schema` of its vendored CRD
//! (`schema`), the schema every write is validated against, so `kubectl explain
//! crp.spec.policy.affinity.clusterAffinity` reads KubeFleet's own field docs at any depth. In
//! v2 the schema drops what Swagger 2.0 cannot say (`nullable`, `anyOf`, CEL rules), as the API
//! server's v2 publishing of CRDs does. Other kinds are described by their envelope
//! (`apiVersion`, `kind`, `metadata`) with `spec` and `status` open.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use flotilla_eventstore::EventLog;
use flotilla_projections::ServedType;
use serde_json::{Map, Value, json};

use super::api::Api;
use super::status::ApiError;

fn served<L: EventLog>(api: &Api<L>) -> Result<Vec<ServedType>, ApiError> {
    let view = api.hub.view().map_err(ApiError::internal)?;
    Ok(flotilla_projections::served_types(&view.folder.state))
}

/// `api/v1` or `apis/{group}/{version}`.
fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Every `(group, version)` served, in first-seen order.
fn group_versions(types: &[ServedType]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for served in types {
        for version in &served.versions {
            let pair = (served.group.clone(), version.clone());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

/// `/openapi/v3`: the index of group-version documents.
pub async fn v3_root<L: EventLog>(State(api): State<Api<L>>) -> Response {
    let types = match served(&api) {
        Ok(types) => types,
        Err(error) => return error.into_response(),
    };
    let mut paths = Map::new();
    for (group, version) in group_versions(&types) {
        let path = group_version_path(&group, &version);
        let url = format!("/openapi/v3/{path}");
        paths.insert(path, json!({"serverRelativeURL": url}));
    }
    Json(json!({"paths": paths})).into_response()
}

/// `/openapi/v3/{api/v1 | apis/group/version}`: one group-version's document.
pub async fn v3_document<L: EventLog>(
    State(api): State<Api<L>>,
    Path(path): Path<String>,
) -> Response {
    let types = match served(&api) {
        Ok(types) => types,
        Err(error) => return error.into_response(),
    };
    let found = group_versions(&types)
        .into_iter()
        .find(|(group, version)| group_version_path(group, version) == path);
    let Some((group, version)) = found else {
        return ApiError::no_resource().into_response();
    };
    let kinds: Vec<&ServedType> = types
        .iter()
        .filter(|t| t.group == group && t.versions.contains(&version))
        .collect();
    Json(document(&kinds, &version, "3.0.0")).into_response()
}

/// `/openapi/v2`: every served kind in one document.
pub async fn v2<L: EventLog>(State(api): State<Api<L>>) -> Response {
    match served(&api) {
        Ok(types) => {
            let all: Vec<&ServedType> = types.iter().collect();
            let mut doc = document(&all, "", "2.0");
            if let Some(schemas) = doc.get_mut("components").and_then(|c| c.get("schemas")) {
                let mut schemas = schemas.clone();
                for_swagger2(&mut schemas);
                doc["definitions"] = schemas;
            }
            if let Some(map) = doc.as_object_mut() {
                map.remove("components");
                map.remove("openapi");
            }
            doc["swagger"] = Value::from("2.0");
            Json(doc).into_response()
        }
        Err(error) => error.into_response(),
    }
}

/// A document over some kinds in one version (`""`: every version each kind serves).
fn document(kinds: &[&ServedType], version: &str, openapi: &str) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for served in kinds {
        let versions: Vec<&String> = if version.is_empty() {
            served.versions.iter().collect()
        } else {
            served.versions.iter().filter(|v| *v == version).collect()
        };
        for version in versions {
            let name = schema_name(served, version);
            schemas.insert(name.clone(), schema(served, version));
            let gvk = json!({"group": served.group, "version": version, "kind": served.kind});
            let (collection, item) = resource_paths(served, version);
            paths.insert(collection, collection_operations(&gvk, &name));
            paths.insert(item, item_operations(&gvk, &name));
        }
    }
    json!({
        "openapi": openapi,
        "info": {"title": "flotilla", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// `io.k8s.flotilla.<group>.<version>.<Kind>` (reversed-domain names, as the API server's).
fn schema_name(served: &ServedType, version: &str) -> String {
    let group = if served.group.is_empty() {
        "core"
    } else {
        &served.group
    };
    format!("{group}.{version}.{}", served.kind)
}

fn resource_paths(served: &ServedType, version: &str) -> (String, String) {
    let base = format!("/{}", group_version_path(&served.group, version));
    let scope = if served.namespaced {
        "/namespaces/{namespace}"
    } else {
        ""
    };
    let collection = format!("{base}{scope}/{}", served.plural);
    let item = format!("{collection}/{{name}}");
    (collection, item)
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn operation(gvk: &Value, action: &str, schema: &str, parameters: &[&str]) -> Value {
    let parameters: Vec<Value> = parameters
        .iter()
        .map(|p| json!({"name": p, "in": "query", "schema": {"type": "string"}, "uniqueItems": true}))
        .collect();
    json!({
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
        "parameters": parameters,
        "responses": {"200": {"description": "OK",
            "content": {"application/json": {"schema": reference(schema)}}}},
    })
}

const WRITE_PARAMETERS: [&str; 3] = ["dryRun", "fieldManager", "fieldValidation"];

fn collection_operations(gvk: &Value, schema: &str) -> Value {
    json!({
        "get": operation(gvk, "list", schema, &["labelSelector", "fieldSelector", "watch",
            "resourceVersion", "timeoutSeconds", "allowWatchBookmarks"]),
        "post": operation(gvk, "post", schema, &WRITE_PARAMETERS),
    })
}

fn item_operations(gvk: &Value, schema: &str) -> Value {
    json!({
        "get": operation(gvk, "get", schema, &[]),
        "put": operation(gvk, "put", schema, &WRITE_PARAMETERS),
        "patch": operation(gvk, "patch", schema, &["dryRun", "fieldManager", "fieldValidation", "force"]),
        "delete": operation(gvk, "delete", schema, &["dryRun"]),
    })
}

/// Removes the keywords Swagger 2.0 does not have from a tree of schemas.
fn for_swagger2(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for keyword in ["nullable", "anyOf", "x-kubernetes-validations"] {
                map.remove(keyword);
            }
            map.values_mut().for_each(for_swagger2);
        }
        Value::Array(items) => items.iter_mut().for_each(for_swagger2),
        _ => {}
    }
}

fn schema(served: &ServedType, version: &str) -> Value {
    let gvk = json!([{"group": served.group, "version": version, "kind": served.kind}]);
    if let Some(vendored) =
        flotilla_adapters::schema::open_api_schema(&served.group, &served.kind, version)
    {
        let mut schema = vendored.clone();
        schema["x-kubernetes-group-version-kind"] = gvk;
        return schema;
    }
    let open = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    json!({
        "type": "object",
        "description": format!("{} ({}), as flotilla serves it.", served.kind, served.api_version(version)),
        "x-kubernetes-group-version-kind": [
            {"group": served.group, "version": version, "kind": served.kind}
        ],
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"type": "object", "description": "Standard object's metadata.",
                "x-kubernetes-preserve-unknown-fields": true},
            "spec": open.clone(),
            "status": open,
        },
    })
}

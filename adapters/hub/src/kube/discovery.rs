//! Discovery in its legacy form (`APIVersions`, `APIGroupList`, `APIResourceList`), which kubectl
//! and client libraries accept when the server answers an aggregated-discovery request with it.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use flotilla_eventstore::EventLog;
use flotilla_projections::ServedType;
use serde_json::{Value, json};

use super::api::Api;
use super::status::ApiError;

/// The Kubernetes minor version `/version` reports (the image's kubectl is 1.32).
pub const KUBERNETES_MINOR: &str = "32";

/// `/version`: kubectl reads `major`, `minor` and a semantic `gitVersion`.
pub async fn version() -> Json<Value> {
    Json(json!({
        "major": "1",
        "minor": KUBERNETES_MINOR,
        "gitVersion": format!("v1.{KUBERNETES_MINOR}.0-flotilla.{}", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    }))
}

/// `/api`: the core group's versions.
pub async fn core_versions() -> Json<Value> {
    Json(json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }))
}

/// `/api/v1`: the core group's resources.
pub async fn core_resources<L: EventLog>(State(api): State<Api<L>>) -> Response {
    resource_list(&api, "", "v1")
}

/// `/apis`: every group but the core one, with its versions.
pub async fn groups<L: EventLog>(State(api): State<Api<L>>) -> Response {
    let types = match served(&api) {
        Ok(types) => types,
        Err(error) => return error.into_response(),
    };
    let mut names: Vec<&str> = Vec::new();
    for served in &types {
        if !served.group.is_empty() && !names.contains(&served.group.as_str()) {
            names.push(&served.group);
        }
    }
    let mut groups: Vec<Value> = names.iter().map(|name| group_json(&types, name)).collect();
    groups.extend(super::review::discovery_groups());
    Json(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})).into_response()
}

/// `/apis/{group}`.
pub async fn group<L: EventLog>(State(api): State<Api<L>>, Path(group): Path<String>) -> Response {
    match served(&api) {
        Ok(types) if types.iter().any(|t| t.group == group) => {
            let mut value = group_json(&types, &group);
            value["kind"] = Value::from("APIGroup");
            value["apiVersion"] = Value::from("v1");
            Json(value).into_response()
        }
        Ok(_) => match super::review::discovery_groups()
            .into_iter()
            .find(|g| g["name"] == group.as_str())
        {
            Some(mut value) => {
                value["kind"] = Value::from("APIGroup");
                value["apiVersion"] = Value::from("v1");
                Json(value).into_response()
            }
            None => ApiError::no_resource().into_response(),
        },
        Err(error) => error.into_response(),
    }
}

/// `/apis/{group}/{version}`.
pub async fn group_resources<L: EventLog>(
    State(api): State<Api<L>>,
    Path((group, version)): Path<(String, String)>,
) -> Response {
    if let Some(list) = super::review::resource_list(&group, &version) {
        return Json(list).into_response();
    }
    resource_list(&api, &group, &version)
}

fn served<L: EventLog>(api: &Api<L>) -> Result<Vec<ServedType>, ApiError> {
    let view = api.hub.view().map_err(ApiError::internal)?;
    Ok(flotilla_projections::served_types(&view.folder.state))
}

/// A group's versions, every version any of its kinds serves, the preferred one first: by
/// Kubernetes version priority (GA, then beta, then alpha, higher numbers first), as an API
/// server orders a group defined by CustomResourceDefinitions.
fn group_versions(types: &[ServedType], group: &str) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for served in types.iter().filter(|t| t.group == group) {
        for version in &served.versions {
            if !versions.contains(version) {
                versions.push(version.clone());
            }
        }
    }
    versions.sort_by(|a, b| version_priority(b).cmp(&version_priority(a)).then(a.cmp(b)));
    versions
}

/// A version's priority (`v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1` > anything else), as
/// `k8s.io/apimachinery`'s `CompareKubeAwareVersionStrings` ranks them.
fn version_priority(version: &str) -> (u8, u64, u64) {
    let Some(rest) = version.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<u64>() else {
        return (0, 0, 0);
    };
    let tail = &rest[digits.len()..];
    let level = |stage: &str, rank: u8| {
        tail.strip_prefix(stage)
            .and_then(|n| n.parse::<u64>().ok())
            .map(|minor| (rank, major, minor))
    };
    if tail.is_empty() {
        return (3, major, 0);
    }
    level("beta", 2)
        .or_else(|| level("alpha", 1))
        .unwrap_or((0, 0, 0))
}

fn group_json(types: &[ServedType], group: &str) -> Value {
    let versions: Vec<Value> = group_versions(types, group)
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
        "versions": versions,
    })
}

fn resource_list<L: EventLog>(api: &Api<L>, group: &str, version: &str) -> Response {
    let types = match served(api) {
        Ok(types) => types,
        Err(error) => return error.into_response(),
    };
    let in_version: Vec<&ServedType> = types
        .iter()
        .filter(|t| t.group == group && t.versions.iter().any(|v| v == version))
        .collect();
    if in_version.is_empty() {
        return ApiError::no_resource().into_response();
    }
    let resources: Vec<Value> = in_version.iter().flat_map(|t| api_resources(t)).collect();
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Json(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
    .into_response()
}

/// A kind's `APIResource` and its `status` subresource.
fn api_resources(served: &ServedType) -> [Value; 2] {
    let mut main = json!({
        "name": served.plural,
        "singularName": served.singular,
        "namespaced": served.namespaced,
        "kind": served.kind,
        "verbs": [
            "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"
        ],
    });
    if !served.short_names.is_empty() {
        main["shortNames"] = json!(served.short_names);
    }
    if !served.categories.is_empty() {
        main["categories"] = json!(served.categories);
    }
    let status = json!({
        "name": format!("{}/status", served.plural),
        "singularName": "",
        "namespaced": served.namespaced,
        "kind": served.kind,
        "verbs": ["get", "patch", "update"],
    });
    [main, status]
}

#[cfg(test)]
mod tests {
    use super::version_priority;

    #[test]
    fn versions_rank_as_kubernetes_ranks_them() {
        let mut versions = vec![
            "v1alpha1", "v1beta1", "v1", "v2beta1", "v1beta2", "foo", "v2",
        ];
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(
            versions,
            [
                "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }
}

//! The Kubernetes API, served by `flotilla serve` beside flotilla's own `/v1/…` API, so that
//! `kubectl`, client libraries and GitOps tools work against the hub unchanged.
//!
//! | path | what |
//! |---|---|
//! | `/version` | the server version kubectl reads |
//! | `/api`, `/api/v1`, `/apis`, `/apis/{group}[/{version}]` | discovery (legacy form) |
//! | `/api/v1/…`, `/apis/{group}/{version}/…` | get, list (paged), watch, create, update, |
//! | | patch, delete, deletecollection |
//! | `…/authorization.k8s.io/v1/selfsubject{access,rules}reviews` | the caller's own reviews |
//! | `…/authentication.k8s.io/v1/selfsubjectreviews` | who the caller is |
//! | `/openapi/v2`, `/openapi/v3[/…]` | the served kinds' schemas |
//!
//! Every write becomes an input event in the log exactly as `flotilla apply` makes it (an
//! `apply` or `delete`, or an `approve` for an Approved condition written to an approval
//! request's status); reads render the folded state. Writes through this API are serialized,
//! so the `resourceVersion` check of an update and its append cannot interleave with another
//! write made here.

mod api;
mod body;
mod delete_collection;
mod discovery;
mod field_validation;
mod generate_name;
mod limits;
mod openapi;
mod paging;
mod patch;
mod preview;
mod protobuf;
mod read;
mod request;
mod review;
mod selector;
mod server_side_apply;
mod status;
mod watch;
mod watch_lines;
mod watch_past;
mod watch_render;
mod write;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use flotilla_eventstore::EventLog;

use crate::runtime::Hub;
use api::Api;
use request::{Params, Request, Target};
pub use status::ApiError;

/// Builds the Kubernetes API router over a hub.
pub fn router<L: EventLog>(hub: Hub<L>) -> Router {
    let api = Api {
        hub,
        writes: Arc::default(),
        renders: Arc::default(),
    };
    Router::new()
        .route("/version", get(discovery::version))
        .route("/api", get(discovery::core_versions))
        .route("/api/v1", get(discovery::core_resources::<L>))
        .route("/apis", get(discovery::groups::<L>))
        .route("/apis/{group}", get(discovery::group::<L>))
        .route(
            "/apis/{group}/{version}",
            get(discovery::group_resources::<L>),
        )
        .route("/api/v1/{*rest}", any(core_request::<L>))
        .route("/apis/{group}/{version}/{*rest}", any(group_request::<L>))
        .route("/openapi/v2", get(openapi::v2::<L>))
        .route("/openapi/v3", get(openapi::v3_root::<L>))
        .route("/openapi/v3/{*path}", get(openapi::v3_document::<L>))
        .with_state(api)
}

async fn core_request<L: EventLog>(
    State(api): State<Api<L>>,
    method: Method,
    Path(rest): Path<String>,
    Query(params): Query<Params>,
    principal: Option<axum::Extension<flotilla_core::Principal>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let principal = crate::auth::principal_of(principal);
    dispatch(
        api, method, "", "v1", &rest, params, headers, body, principal,
    )
    .await
}

async fn group_request<L: EventLog>(
    State(api): State<Api<L>>,
    method: Method,
    Path((group, version, rest)): Path<(String, String, String)>,
    Query(params): Query<Params>,
    principal: Option<axum::Extension<flotilla_core::Principal>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let principal = crate::auth::principal_of(principal);
    dispatch(
        api, method, &group, &version, &rest, params, headers, body, principal,
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn dispatch<L: EventLog>(
    api: Api<L>,
    method: Method,
    group: &str,
    version: &str,
    rest: &str,
    params: Params,
    headers: HeaderMap,
    body: Body,
    principal: flotilla_core::Principal,
) -> Response {
    let mut headers = headers;
    let body = match body::read(body).await {
        Ok(bytes) => body::as_json(&mut headers, bytes),
        Err(error) => Err(error),
    };
    let body = match body {
        Ok(body) => body,
        Err(error) => return error.into_response(),
    };
    if let Some(kind) = review::Review::of(group, version, rest) {
        let request = Request {
            params,
            headers,
            body,
            principal,
        };
        return review::answer(&api, kind, &method, &request).into_response();
    }
    let target = match resolve(&api, group, version, rest) {
        Ok(target) => target,
        Err(error) => return error.into_response(),
    };
    let request = Request {
        params,
        headers,
        body,
        principal,
    };
    let watching = request
        .params
        .get("watch")
        .is_some_and(|w| w == "true" || w == "1");
    let outcome = match (&method, &target.name) {
        (&Method::GET, None) if watching => return watch::serve(&api, &target, &request),
        (&Method::GET, None) => paging::list(&api, &target, &request).await,
        (&Method::GET, Some(name)) => match read::past(&api, &request).await {
            Ok(past) => read::get(
                &api,
                &target,
                name,
                &request,
                past.as_ref().map(|f| &f.state),
            ),
            Err(error) => Err(error),
        },
        (&Method::POST, None) => write::create(&api, &target, &request).await,
        (&Method::PUT, Some(name)) => write::update(&api, &target, name, &request).await,
        (&Method::PATCH, Some(name)) => write::patch(&api, &target, name, &request).await,
        (&Method::DELETE, Some(name)) => write::delete(&api, &target, name, &request).await,
        (&Method::DELETE, None) => delete_collection::delete(&api, &target, &request).await,
        _ => Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({method})"
        ))),
    };
    match outcome {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

/// Parses a resource path (`[namespaces/NS/]PLURAL[/NAME[/SUBRESOURCE]]`) against the served
/// types.
fn resolve<L: EventLog>(
    api: &Api<L>,
    group: &str,
    version: &str,
    rest: &str,
) -> Result<Target, ApiError> {
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let namespaced_path = segments.len() >= 3
        && segments[0] == "namespaces"
        && !(group.is_empty() && matches!(segments[2], "status" | "finalize"));
    let (namespace, rest) = if namespaced_path {
        (Some(segments[1].to_owned()), &segments[2..])
    } else {
        (None, &segments[..])
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
        _ => return Err(ApiError::no_resource()),
    };
    let view = api.hub.view().map_err(ApiError::internal)?;
    let served = flotilla_projections::find_type(&view.folder.state, group, plural)
        .filter(|served| served.versions.iter().any(|v| v == version))
        .ok_or_else(ApiError::no_resource)?;
    if namespace.is_some() && !served.namespaced {
        return Err(ApiError::no_resource());
    }
    if subresource.is_some_and(|sub| sub != "status") {
        return Err(ApiError::no_resource());
    }
    Ok(Target {
        served,
        version: version.to_owned(),
        namespace,
        name: name.map(str::to_owned),
        subresource: subresource.map(str::to_owned),
    })
}

//! The caller's own reviews: `SelfSubjectAccessReview` and `SelfSubjectRulesReview`
//! (`authorization.k8s.io/v1`; `kubectl auth can-i [--list]`) and `SelfSubjectReview`
//! (`authentication.k8s.io/v1`; `kubectl auth whoami`), answered from the token the request
//! was made with.
//!
//! An access review is judged by the very rules the auth middleware applies to a request
//! ([`crate::auth::rules::kube_request`]), on the path the reviewed request would have, so
//! `can-i` never says yes to what the hub would refuse or no to what it would allow. Every
//! authenticated caller may ask about itself, as the API server's `system:basic-user` role
//! allows. Nothing is appended: a review is a read.

use axum::Json;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use flotilla_core::{Principal, TokenRole};
use flotilla_eventstore::EventLog;
use serde_json::{Value, json};

use super::api::Api;
use super::request::Request;
use super::status::ApiError;
use crate::auth::rules;
use crate::auth::{Grant, Role};

/// The authorization group.
const AUTHORIZATION: &str = "authorization.k8s.io";
/// The authentication group.
const AUTHENTICATION: &str = "authentication.k8s.io";

/// A review the hub answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// `selfsubjectaccessreviews`: may I do this?
    Access,
    /// `selfsubjectrulesreviews`: what may I do in this namespace?
    Rules,
    /// `selfsubjectreviews`: who am I?
    Subject,
}

impl Review {
    /// The review a path names, if any.
    pub fn of(group: &str, version: &str, rest: &str) -> Option<Self> {
        match (group, version, rest.trim_matches('/')) {
            (AUTHORIZATION, "v1", "selfsubjectaccessreviews") => Some(Self::Access),
            (AUTHORIZATION, "v1", "selfsubjectrulesreviews") => Some(Self::Rules),
            (AUTHENTICATION, "v1", "selfsubjectreviews") => Some(Self::Subject),
            _ => None,
        }
    }
}

/// The groups discovery lists for the reviews.
pub fn discovery_groups() -> Vec<Value> {
    [AUTHENTICATION, AUTHORIZATION]
        .iter()
        .map(|group| {
            let version = json!({"groupVersion": format!("{group}/v1"), "version": "v1"});
            json!({"name": group, "preferredVersion": version, "versions": [version]})
        })
        .collect()
}

/// The `APIResourceList` of a review group's version; `None` for any other.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    let resource = |name: &str, kind: &str| {
        json!({"name": name, "singularName": "", "namespaced": false, "kind": kind,
               "verbs": ["create"]})
    };
    let resources = match (group, version) {
        (AUTHORIZATION, "v1") => vec![
            resource("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
            resource("selfsubjectrulesreviews", "SelfSubjectRulesReview"),
        ],
        (AUTHENTICATION, "v1") => vec![resource("selfsubjectreviews", "SelfSubjectReview")],
        _ => return None,
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{group}/{version}"),
        "resources": resources,
    }))
}

/// Answers a review (`POST` only).
///
/// # Errors
/// 405 for another method, 400 for a body that is not a review.
pub fn answer<L: EventLog>(
    api: &Api<L>,
    review: Review,
    method: &Method,
    request: &Request,
) -> Result<Response, ApiError> {
    if *method != Method::POST {
        return Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({method})"
        )));
    }
    let mut body: Value = serde_json::from_slice(&request.body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a JSON object: {e}")))?;
    let grant = grant_of(&request.principal);
    let status = match review {
        Review::Subject => json!({"userInfo": user_info(&request.principal, grant.as_ref())}),
        Review::Access => access(api, grant.as_ref(), &body["spec"])?,
        Review::Rules => {
            let namespace = body["spec"]["namespace"].as_str().unwrap_or("");
            rules_in(grant.as_ref(), namespace)
        }
    };
    body["status"] = status;
    if !body["metadata"].is_object() {
        body["metadata"] = json!({});
    }
    body["metadata"]["creationTimestamp"] = Value::Null;
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// The grant a principal acts with; `None` for one that is no token of this API.
fn grant_of(principal: &Principal) -> Option<Grant> {
    let role = match principal {
        // An open loopback hub (or a router no guard protects) acts as admin.
        Principal::Local | Principal::Unrecorded => Role::Admin,
        Principal::Token { role, .. } => match role {
            TokenRole::Admin => Role::Admin,
            TokenRole::Agent { cluster } => Role::Agent {
                cluster: cluster.clone(),
            },
            TokenRole::Namespace { namespaces } => Role::Namespace {
                namespaces: namespaces.clone(),
            },
        },
        _ => return None,
    };
    Some(Grant {
        name: username(principal),
        role,
    })
}

fn username(principal: &Principal) -> String {
    match principal {
        Principal::Token { name, .. } => name.clone(),
        Principal::Local => "loopback".to_owned(),
        _ => "unknown".to_owned(),
    }
}

/// `status.userInfo`: the token's name, a group per role, and what the role is bound to.
fn user_info(principal: &Principal, grant: Option<&Grant>) -> Value {
    let (group, extra) = match grant.map(|g| &g.role) {
        Some(Role::Admin) => ("flotilla:admins", json!({})),
        Some(Role::Agent { cluster }) => {
            ("flotilla:agents", json!({"flotilla/cluster": [cluster]}))
        }
        Some(Role::Namespace { namespaces }) => (
            "flotilla:namespace-tokens",
            json!({"flotilla/namespaces": namespaces}),
        ),
        None => ("flotilla:unknown", json!({})),
    };
    let mut info = json!({
        "username": username(principal),
        "groups": [group, "system:authenticated"],
    });
    if extra.as_object().is_some_and(|e| !e.is_empty()) {
        info["extra"] = extra;
    }
    info
}

/// `SelfSubjectAccessReview.status` for `spec`.
fn access<L: EventLog>(
    api: &Api<L>,
    grant: Option<&Grant>,
    spec: &Value,
) -> Result<Value, ApiError> {
    let Some(grant) = grant else {
        return Ok(json!({"allowed": false, "reason": "not a token of this API"}));
    };
    let view = api.hub.view().map_err(ApiError::internal)?;
    let state = &view.folder.state;
    let scope = |group: Option<&str>, kind: &str| {
        flotilla_core::query::kind_scope::namespaced(Some(state), group, kind)
    };
    let requests = if let Some(attributes) = spec["resourceAttributes"].as_object() {
        resource_requests(attributes, &scope)
    } else if let Some(attributes) = spec["nonResourceAttributes"].as_object() {
        let path = attributes
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("/");
        let verb = attributes
            .get("verb")
            .and_then(Value::as_str)
            .unwrap_or("get");
        methods(verb)
            .into_iter()
            .map(|m| (m, path.to_owned()))
            .collect()
    } else {
        return Err(ApiError::bad_request(
            "spec: Invalid value: exactly one of nonResourceAttributes or resourceAttributes \
             must be specified",
        ));
    };
    for (method, path) in &requests {
        if let Err(refusal) = rules::kube_request(grant, method, path, &scope) {
            let reason = match refusal {
                rules::Refusal::Forbidden(why)
                | rules::Refusal::BadRequest(why)
                | rules::Refusal::TooLarge(why) => why,
            };
            return Ok(json!({"allowed": false, "reason": reason}));
        }
    }
    Ok(json!({"allowed": !requests.is_empty()}))
}

/// The requests a resource review stands for: one per HTTP method its verb maps to, on the
/// path the request would take (the namespace only for a kind known as namespaced, as a
/// cluster-scoped object's path has none).
fn resource_requests(
    attributes: &serde_json::Map<String, Value>,
    scope: &dyn Fn(Option<&str>, &str) -> Option<bool>,
) -> Vec<(Method, String)> {
    let text = |field: &str| attributes.get(field).and_then(Value::as_str).unwrap_or("");
    let (group, resource) = (text("group"), text("resource"));
    let version = Some(text("version"))
        .filter(|v| !v.is_empty())
        .unwrap_or("v1");
    let mut path = if group.is_empty() {
        "/api/v1".to_owned()
    } else {
        format!("/apis/{group}/{version}")
    };
    let namespace = text("namespace");
    if !namespace.is_empty() && scope(Some(group), resource) != Some(false) {
        path.push_str(&format!("/namespaces/{namespace}"));
    }
    path.push_str(&format!("/{resource}"));
    if !text("name").is_empty() {
        path.push_str(&format!("/{}", text("name")));
    }
    if !text("subresource").is_empty() {
        path.push_str(&format!("/{}", text("subresource")));
    }
    methods(text("verb"))
        .into_iter()
        .map(|m| (m, path.clone()))
        .collect()
}

/// The HTTP methods a Kubernetes verb is made with (`*`: every one).
fn methods(verb: &str) -> Vec<Method> {
    match verb {
        "get" | "list" | "watch" => vec![Method::GET],
        "create" => vec![Method::POST],
        "update" => vec![Method::PUT],
        "patch" => vec![Method::PATCH],
        "delete" | "deletecollection" => vec![Method::DELETE],
        "*" => vec![
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ],
        _ => Vec::new(),
    }
}

/// `SelfSubjectRulesReview.status` in `namespace`: the role's rules in RBAC's terms.
fn rules_in(grant: Option<&Grant>, namespace: &str) -> Value {
    let reviews = json!([
        {"verbs": ["create"], "apiGroups": [AUTHORIZATION],
         "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
        {"verbs": ["create"], "apiGroups": [AUTHENTICATION], "resources": ["selfsubjectreviews"]},
    ]);
    let discovery = json!({"verbs": ["get"], "nonResourceURLs":
        ["/api", "/api/*", "/apis", "/apis/*", "/version", "/openapi", "/openapi/*"]});
    let everything = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]});
    let mut resource_rules = reviews.as_array().cloned().unwrap_or_default();
    let mut non_resource_rules = Vec::new();
    match grant.map(|g| &g.role) {
        Some(Role::Admin) => {
            resource_rules.push(everything);
            non_resource_rules.push(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
        }
        Some(Role::Namespace { namespaces }) => {
            if namespaces.iter().any(|n| n == namespace) {
                resource_rules.push(everything);
            }
            non_resource_rules.push(discovery);
        }
        Some(Role::Agent { cluster }) => {
            if namespace == format!("fleet-member-{cluster}") {
                resource_rules.push(json!({"verbs": ["get", "list", "watch"],
                    "apiGroups": ["placement.kubernetes-fleet.io"], "resources": ["works"]}));
            }
            resource_rules.push(json!({"verbs": ["get"],
                "apiGroups": ["cluster.kubernetes-fleet.io"],
                "resources": ["memberclusters", "memberclusters/status"],
                "resourceNames": [cluster]}));
        }
        None => {}
    }
    json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    })
}

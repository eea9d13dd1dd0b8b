//! What each role may do, as pure functions of the request's method, raw path, query and body:
//! the middleware in [`super`] asks, these answer. Anything not allowed here is refused.
//!
//! Paths are read raw, before percent-decoding: a non-admin request whose path holds a `%` is
//! refused, so the namespace and resource read here are the ones the router will act on.

use axum::http::Method;
use flotilla_core::query::manifest::parse_manifest;
use serde_json::Value;

use super::tokens::{Grant, Role};
use flotilla_adapters::json_event::{JsonEnvelope, JsonInput};

/// Placement group of KubeFleet (works live there).
const PLACEMENT_GROUP: &str = "placement.kubernetes-fleet.io";
/// Cluster group of KubeFleet (member clusters live there).
const CLUSTER_GROUP: &str = "cluster.kubernetes-fleet.io";
/// Prefix of a member cluster's reserved namespace on the hub.
const MEMBER_NAMESPACE_PREFIX: &str = "fleet-member-";

/// Whether a kind name (a kind, plural or alias) of a group (any group when `None`) is known as
/// namespaced: `Some(true)` only when every kind it may name is namespaced, `Some(false)` when
/// one is cluster-scoped, `None` when none is known (see `flotilla_core::query::kind_scope`).
pub type Scope<'a> = &'a (dyn Fn(Option<&str>, &str) -> Option<bool> + Send + Sync);

/// A refusal: 403 with a message, or 400 when the request cannot be judged at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not allowed (403).
    Forbidden(String),
    /// Malformed (400): the request would be refused anyway.
    BadRequest(String),
    /// Larger than the hub reads (413).
    TooLarge(String),
}

/// What a Kubernetes API path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KubePath<'a> {
    /// `/version`, discovery (`/api`, `/apis/…` up to a version) or `/openapi/…`.
    Discovery,
    /// A resource path.
    Resource(ResourcePath<'a>),
}

/// A resource path's parts, split as the router splits them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath<'a> {
    /// API group (`""` for the core group).
    pub group: &'a str,
    /// The namespace, for a namespaced path.
    pub namespace: Option<&'a str>,
    /// The plural.
    pub plural: &'a str,
    /// The object's name, if named.
    pub name: Option<&'a str>,
    /// The subresource, if any.
    pub subresource: Option<&'a str>,
}

/// Parses a path of the Kubernetes API; `None` for any other path.
#[must_use]
pub fn kube_path(path: &str) -> Option<KubePath<'_>> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] | ["api" | "apis"] | ["api", "v1"] | ["apis", _] | ["apis", _, _] => {
            Some(KubePath::Discovery)
        }
        ["openapi", ..] => Some(KubePath::Discovery),
        ["api", "v1", rest @ ..] => resource_path("", rest),
        ["apis", group, _, rest @ ..] => resource_path(group, rest),
        _ => None,
    }
}

/// Splits `[namespaces/NS/]PLURAL[/NAME[/SUBRESOURCE]]` exactly as `kube::resolve` does.
fn resource_path<'a>(group: &'a str, segments: &[&'a str]) -> Option<KubePath<'a>> {
    let namespaced = segments.len() >= 3
        && segments[0] == "namespaces"
        && !(group.is_empty() && matches!(segments[2], "status" | "finalize"));
    let (namespace, rest) = if namespaced {
        (Some(segments[1]), &segments[2..])
    } else {
        (None, segments)
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
        _ => return None,
    };
    Some(KubePath::Resource(ResourcePath {
        group,
        namespace,
        plural,
        name,
        subresource,
    }))
}

/// Whether `grant` may send `method` to the Kubernetes API `path`.
///
/// # Errors
/// [`Refusal::Forbidden`] with the message kubectl prints after `Error from server (Forbidden):`.
pub fn kube_request(
    grant: &Grant,
    method: &Method,
    path: &str,
    scope: Scope<'_>,
) -> Result<(), Refusal> {
    let Some(parsed) = kube_path(path).filter(|_| !path.contains('%')) else {
        return Err(path_forbidden(grant, method, path));
    };
    // Every authenticated caller may ask about itself (the API server's `system:basic-user`).
    if *method == Method::POST && is_self_review(&parsed) {
        return Ok(());
    }
    if let (Role::Namespace { .. }, KubePath::Resource(resource)) = (&grant.role, &parsed)
        && resource.namespace.is_some()
    {
        kube_write_scope(grant, method, resource, scope)?;
    }
    let allowed = match (&grant.role, &parsed) {
        (Role::Admin, _) => true,
        (Role::Namespace { .. }, KubePath::Discovery) => method == Method::GET,
        (Role::Namespace { namespaces }, KubePath::Resource(resource)) => resource
            .namespace
            .is_some_and(|ns| namespaces.iter().any(|n| n == ns)),
        (Role::Agent { .. }, KubePath::Discovery) => false,
        (Role::Agent { cluster }, KubePath::Resource(resource)) => {
            method == Method::GET && agent_may_read(cluster, resource)
        }
    };
    match (allowed, parsed) {
        (true, _) => Ok(()),
        (false, KubePath::Resource(resource)) => Err(resource_forbidden(grant, method, &resource)),
        (false, KubePath::Discovery) => Err(path_forbidden(grant, method, path)),
    }
}

/// Whether a path is one of the caller's own reviews (`SelfSubjectAccessReview`,
/// `SelfSubjectRulesReview`, `SelfSubjectReview`), which every token may create.
fn is_self_review(path: &KubePath<'_>) -> bool {
    let KubePath::Resource(resource) = path else {
        return false;
    };
    let own = match resource.group {
        "authorization.k8s.io" => {
            matches!(
                resource.plural,
                "selfsubjectaccessreviews" | "selfsubjectrulesreviews"
            )
        }
        "authentication.k8s.io" => resource.plural == "selfsubjectreviews",
        _ => false,
    };
    own && resource.namespace.is_none() && resource.name.is_none()
}

/// A namespace token writes only kinds known as namespaced: a kind the hub serves, a Kubernetes
/// built-in or one a held CRD declares with `scope: Namespaced`. Reads are judged by path alone.
fn kube_write_scope(
    grant: &Grant,
    method: &Method,
    resource: &ResourcePath<'_>,
    scope: Scope<'_>,
) -> Result<(), Refusal> {
    if *method == Method::GET {
        return Ok(());
    }
    match scope(Some(resource.group), resource.plural) {
        Some(true) => Ok(()),
        known => {
            let qualified = if resource.group.is_empty() {
                resource.plural.to_owned()
            } else {
                format!("{}.{}", resource.plural, resource.group)
            };
            Err(Refusal::Forbidden(format!(
                "{qualified} is forbidden: token {:?} cannot {} resource {:?}: {}",
                grant.name,
                verb(method, resource.name.is_some()),
                resource.plural,
                scope_reason(known),
            )))
        }
    }
}

/// Why a kind known as cluster-scoped, or not known at all, is refused to a namespace token.
fn scope_reason(known: Option<bool>) -> &'static str {
    if known == Some(false) {
        "the kind is cluster-scoped, and a namespace token acts only in its namespaces"
    } else {
        "the kind is not known as namespaced (neither a kind the hub serves, a Kubernetes \
         built-in, nor declared by a CustomResourceDefinition the hub holds with scope \
         Namespaced), so a member could create it cluster-wide"
    }
}

/// An agent reads its own works and its own member cluster, nothing else.
fn agent_may_read(cluster: &str, resource: &ResourcePath<'_>) -> bool {
    let own_namespace = format!("{MEMBER_NAMESPACE_PREFIX}{cluster}");
    let own_works = resource.group == PLACEMENT_GROUP
        && resource.plural == "works"
        && resource.namespace == Some(own_namespace.as_str());
    let own_member = resource.group == CLUSTER_GROUP
        && resource.plural == "memberclusters"
        && resource.namespace.is_none()
        && resource.name == Some(cluster);
    own_works || own_member
}

fn verb(method: &Method, named: bool) -> &'static str {
    match *method {
        Method::GET if named => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "access",
    }
}

/// Worded as the Kubernetes API server words an RBAC refusal.
fn resource_forbidden(grant: &Grant, method: &Method, resource: &ResourcePath<'_>) -> Refusal {
    let qualified = if resource.group.is_empty() {
        resource.plural.to_owned()
    } else {
        format!("{}.{}", resource.plural, resource.group)
    };
    let object = match resource.name {
        Some(name) => format!("{qualified} {name:?}"),
        None => qualified,
    };
    let plural = match resource.subresource {
        Some(sub) => format!("{}/{sub}", resource.plural),
        None => resource.plural.to_owned(),
    };
    let scope = match resource.namespace {
        Some(ns) => format!("in the namespace {ns:?}"),
        None => "at the cluster scope".to_owned(),
    };
    Refusal::Forbidden(format!(
        "{object} is forbidden: token {:?} cannot {} resource {plural:?} in API group {:?} {scope}",
        grant.name,
        verb(method, resource.name.is_some()),
        resource.group,
    ))
}

fn path_forbidden(grant: &Grant, method: &Method, path: &str) -> Refusal {
    Refusal::Forbidden(format!(
        "forbidden: token {:?} cannot {} path {path:?}",
        grant.name,
        method.as_str().to_lowercase()
    ))
}

/// Whether `grant` may read flotilla's own `/v1/…` read endpoints at `path`; `kind_namespaced`
/// says whether a kind name resolves to a namespaced kind on the hub (`None`: unknown).
///
/// # Errors
/// [`Refusal::Forbidden`] naming what was refused.
pub fn v1_read(
    grant: &Grant,
    path: &str,
    namespace: Option<&str>,
    kind_namespaced: impl Fn(&str) -> Option<bool>,
) -> Result<(), Refusal> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let allowed = match (&grant.role, segments.as_slice()) {
        (Role::Admin, _) => true,
        (Role::Namespace { .. }, ["v1", "kinds"]) => true,
        (
            Role::Namespace { namespaces },
            ["v1", "objects" | "table", kind] | ["v1", "describe", kind, _],
        ) => {
            !path.contains('%')
                && namespace.is_some_and(|ns| namespaces.iter().any(|n| n == ns))
                && kind_namespaced(kind) == Some(true)
        }
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(Refusal::Forbidden(format!(
            "token {:?} cannot read {path} (a namespace token reads namespaced kinds with \
             `namespace` set to one of its namespaces; an agent token reads through the \
             Kubernetes API only)",
            grant.name
        )))
    }
}

/// Whether `grant` may append the events of a `POST /v1/events` body.
///
/// # Errors
/// [`Refusal::BadRequest`] when the body is not events; [`Refusal::Forbidden`] naming the first
/// event not allowed.
pub fn events(grant: &Grant, body: &[u8], scope: Scope<'_>) -> Result<(), Refusal> {
    if grant.role == Role::Admin {
        return Ok(());
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Refusal::BadRequest(format!("body is not JSON: {e}")))?;
    let items = match value {
        Value::Array(items) => items,
        single => vec![single],
    };
    for (index, item) in items.into_iter().enumerate() {
        let event = serde_json::from_value::<JsonEnvelope>(item)
            .map_err(|e| Refusal::BadRequest(format!("event {index}: {e}")))?;
        event_allowed(&grant.role, &event.event, scope).map_err(|why| {
            Refusal::Forbidden(format!("token {:?}: event {index}: {why}", grant.name))
        })?;
    }
    Ok(())
}

/// One event against a role; `Err` says why not.
fn event_allowed(role: &Role, event: &JsonInput, scope: Scope<'_>) -> Result<(), String> {
    match (role, event) {
        (Role::Admin, _) => Ok(()),
        (
            Role::Agent { cluster },
            JsonInput::Heartbeat { cluster: named, .. }
            | JsonInput::Report { cluster: named, .. }
            | JsonInput::Leave { cluster: named },
        ) => {
            if named == cluster {
                Ok(())
            } else {
                Err(format!(
                    "an agent token of cluster {cluster:?} cannot report for cluster {named:?}"
                ))
            }
        }
        (Role::Agent { cluster }, _) => Err(format!(
            "an agent token of cluster {cluster:?} may only post its heartbeats, reports and leave"
        )),
        (Role::Namespace { namespaces }, event) => {
            let namespace = namespace_of(event, scope)?;
            if namespaces.contains(&namespace) {
                Ok(())
            } else {
                Err(format!(
                    "namespace {namespace:?} is not one of this token's"
                ))
            }
        }
    }
}

/// The namespace an apply, delete or approve acts in; `Err` for any other event, or one acting
/// on a kind not known as namespaced. Kinds are judged by every kind their name may mean, so
/// an alias (`crp`, `ns`) is judged as its canonical kind.
fn namespace_of(event: &JsonInput, scope: Scope<'_>) -> Result<String, String> {
    let cluster_scoped = || "a namespace token cannot act on cluster-scoped objects".to_owned();
    let kind_scope = |group: Option<&str>, kind: &str| match scope(group, kind) {
        Some(true) => Ok(()),
        known => Err(format!("kind {kind:?}: {}", scope_reason(known))),
    };
    match event {
        JsonInput::Apply { manifest } => {
            let parsed = parse_manifest(manifest)
                .map_err(|e| format!("the manifest is not valid: {}: {}", e.field, e.message))?;
            let key = parsed.key;
            if key.namespace.is_empty() {
                return Err(cluster_scoped());
            }
            kind_scope(Some(&key.group), &key.kind)?;
            Ok(key.namespace.into())
        }
        JsonInput::Delete {
            kind,
            group,
            namespace,
            ..
        } => {
            kind_scope(group.as_deref(), kind)?;
            match namespace {
                Some(ns) if !ns.is_empty() => Ok(ns.clone()),
                _ => Err(cluster_scoped()),
            }
        }
        // A namespaced run's analysis result, like its approval, acts in the run's namespace.
        JsonInput::Approve { namespace, .. } | JsonInput::AnalysisResult { namespace, .. } => {
            match namespace {
                Some(ns) if !ns.is_empty() => Ok(ns.clone()),
                _ => Err(cluster_scoped()),
            }
        }
        JsonInput::Heartbeat { .. }
        | JsonInput::Report { .. }
        | JsonInput::Leave { .. }
        | JsonInput::Tick => Err(
            "a namespace token may only post apply, delete, approve and analysisResult events"
                .to_owned(),
        ),
    }
}

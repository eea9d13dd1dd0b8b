//! Bearer tokens on the hub's API: one axum middleware in front of both flotilla's `/v1/…` API
//! and the Kubernetes API.
//!
//! Guarantees:
//! - With [`Access::Open`] (only ever on a loopback listener: [`Access::check_listener`]) every
//!   request acts as admin, as before tokens existed.
//! - With [`Access::Tokens`] every request but `GET /healthz` and the web page's own files
//!   ([`crate::web::is_public`]) needs `Authorization: Bearer <token>` naming a known token (401
//!   otherwise), and the token's role must allow it (403 otherwise; the rules are in [`rules`]).
//! - Refusals on Kubernetes API paths are `Status` objects (reason `Unauthorized` /
//!   `Forbidden`), as kubectl expects; on other paths `{"error": …}`, as the `/v1` API answers.
//! - Tokens are never logged; a refusal is logged with the token's name.

pub mod rules;
#[cfg(test)]
mod tests;
pub mod tokens;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use flotilla_core::{Principal, TokenRole};
use serde_json::json;

use rules::Refusal;
pub use tokens::{Grant, Role, TokenSet, TokensError};

/// Largest `POST /v1/events` body a non-admin token may send (it is read whole to be checked):
/// the handler's own limit, axum's `DefaultBodyLimit` of 2 MiB, so that a body over it is
/// refused alike (413) whoever sends it.
pub const EVENTS_BODY_BYTES_MAX: usize = 2 * 1024 * 1024;

/// Who may use the API.
#[derive(Debug, Clone)]
pub enum Access {
    /// Everyone acts as admin: a loopback listener without a tokens file.
    Open,
    /// Requests need a known bearer token, and do what its role allows.
    Tokens(Arc<TokenSet>),
}

/// Why a listener may not serve.
#[derive(Debug, thiserror::Error)]
pub enum ListenerError {
    /// A non-loopback address without tokens.
    #[error(
        "refusing to serve on {0} without tokens: a listener beyond loopback requires \
         `--tokens FILE` (see docs/security.md)"
    )]
    OpenBeyondLoopback(SocketAddr),
}

impl Access {
    /// Refuses an open API on an address beyond loopback.
    ///
    /// # Errors
    /// [`ListenerError::OpenBeyondLoopback`].
    pub fn check_listener(&self, address: SocketAddr) -> Result<(), ListenerError> {
        match self {
            Access::Open if !address.ip().is_loopback() => {
                Err(ListenerError::OpenBeyondLoopback(address))
            }
            _ => Ok(()),
        }
    }
}

/// Tells whether a kind name (as typed: `rp`, `configmaps`) resolves to a namespaced kind on the
/// hub; `None` when it resolves to nothing.
pub type KindScope = Arc<dyn Fn(&str) -> Option<bool> + Send + Sync>;

/// Tells whether a kind name of a group (any group when `None`) is known as namespaced from
/// the hub's catalog, the Kubernetes built-ins and the CRDs the hub holds (see
/// [`rules::Scope`]).
pub type KnownScope = Arc<dyn Fn(Option<&str>, &str) -> Option<bool> + Send + Sync>;

struct Guard {
    tokens: Arc<TokenSet>,
    kind_scope: KindScope,
    known_scope: KnownScope,
}

/// Puts `router` behind `access`.
pub fn protect(
    router: Router,
    access: Access,
    kind_scope: KindScope,
    known_scope: KnownScope,
) -> Router {
    match access {
        // Loopback only (`Access::check_listener`): whoever reached the port.
        Access::Open => router.layer(middleware::from_fn(open)),
        Access::Tokens(tokens) => {
            let guard = Arc::new(Guard {
                tokens,
                kind_scope,
                known_scope,
            });
            router.layer(middleware::from_fn_with_state(guard, authorize))
        }
    }
}

/// Every request to an open hub acts as [`Principal::Local`].
async fn open(mut request: Request, next: Next) -> Response {
    request.extensions_mut().insert(Principal::Local);
    next.run(request).await
}

/// The principal a request's events record: what [`protect`] authenticated, or
/// [`Principal::Unrecorded`] on a router it does not guard (never more than it knows).
#[must_use]
pub fn principal_of(extension: Option<axum::Extension<Principal>>) -> Principal {
    extension.map_or(Principal::Unrecorded, |axum::Extension(principal)| {
        principal
    })
}

/// The principal of a request made with `grant`'s token: its name and role, never the body's
/// `source`.
#[must_use]
pub fn token_principal(grant: &Grant) -> Principal {
    let role = match &grant.role {
        Role::Admin => TokenRole::Admin,
        Role::Agent { cluster } => TokenRole::Agent {
            cluster: cluster.clone(),
        },
        Role::Namespace { namespaces } => TokenRole::Namespace {
            namespaces: namespaces.clone(),
        },
    };
    Principal::Token {
        name: grant.name.clone(),
        role,
    }
}

async fn authorize(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    if path == "/healthz" {
        return next.run(request).await;
    }
    // The web page's own files carry no fleet data; its reads and actions carry the token.
    if crate::web::is_public(request.method(), &path) {
        return next.run(request).await;
    }
    let kube = rules::kube_path(&path).is_some();
    let Some(grant) = bearer(&request).and_then(|token| guard.tokens.lookup(token)) else {
        tracing::info!(%path, "refused a request without a known token");
        return unauthorized(kube);
    };
    let grant = grant.clone();
    let method = request.method().clone();
    let (request, verdict) = if kube {
        let verdict = rules::kube_request(&grant, &method, &path, &*guard.known_scope);
        (request, verdict)
    } else if method == Method::POST && path == "/v1/events" {
        check_events(&grant, request, &*guard.known_scope).await
    } else if method == Method::GET {
        let namespace = query_namespace(request.uri());
        let scope = &guard.kind_scope;
        let verdict = rules::v1_read(&grant, &path, namespace.as_deref(), |kind| scope(kind));
        (request, verdict)
    } else {
        let verdict = rules::v1_read(&grant, &path, None, |_| None);
        (request, verdict)
    };
    match verdict {
        Ok(()) => {
            let mut request = request;
            request.extensions_mut().insert(token_principal(&grant));
            next.run(request).await
        }
        Err(refusal) => {
            tracing::info!(token = %grant.name, %method, %path, "refused a request");
            refused(kube, refusal)
        }
    }
}

/// The token of `Authorization: Bearer <token>`, if the header is there and well-formed.
fn bearer(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Reads the body whole (non-admin tokens only), checks every event, and puts it back.
async fn check_events(
    grant: &Grant,
    request: Request,
    scope: rules::Scope<'_>,
) -> (Request, Result<(), Refusal>) {
    if grant.role == Role::Admin {
        return (request, Ok(()));
    }
    let (parts, body) = request.into_parts();
    let verdict;
    let body = match axum::body::to_bytes(body, EVENTS_BODY_BYTES_MAX).await {
        Ok(bytes) => {
            verdict = rules::events(grant, &bytes, scope);
            Body::from(bytes)
        }
        Err(error) => {
            let text = error.to_string();
            let over_limit = error.into_inner().is::<http_body_util::LengthLimitError>();
            verdict = Err(if over_limit {
                Refusal::TooLarge(format!("the body is over {EVENTS_BODY_BYTES_MAX} bytes"))
            } else {
                Refusal::BadRequest(format!("cannot read the body: {text}"))
            });
            Body::empty()
        }
    };
    (Request::from_parts(parts, body), verdict)
}

/// The `namespace` query parameter of a `/v1` read, decoded as the handlers' `Query` decodes it.
fn query_namespace(uri: &axum::http::Uri) -> Option<String> {
    let Query(mut params) = Query::<HashMap<String, String>>::try_from_uri(uri).ok()?;
    params.remove("namespace")
}

fn unauthorized(kube: bool) -> Response {
    respond(
        kube,
        StatusCode::UNAUTHORIZED,
        "Unauthorized",
        "Unauthorized",
    )
}

fn refused(kube: bool, refusal: Refusal) -> Response {
    match refusal {
        Refusal::Forbidden(message) => respond(kube, StatusCode::FORBIDDEN, "Forbidden", &message),
        Refusal::BadRequest(message) => {
            respond(kube, StatusCode::BAD_REQUEST, "BadRequest", &message)
        }
        Refusal::TooLarge(message) => respond(
            kube,
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            &message,
        ),
    }
}

fn respond(kube: bool, code: StatusCode, reason: &str, message: &str) -> Response {
    let body = if kube {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code.as_u16(),
        })
    } else {
        json!({ "error": message })
    };
    (code, axum::Json(body)).into_response()
}

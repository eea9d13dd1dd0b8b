//! Request metrics of the hub's listener: a middleware that counts every answered request by
//! method, matched route and status code, and times it until its answer began
//! ([`crate::hub_metrics::record_http`]). It sits outside the access check, so refused
//! requests are counted too.
//!
//! The route is the template axum matched (`/v1/objects/{kind}`, `/apis/{group}/{version}/{*rest}`),
//! never the request's path: a client choosing paths cannot grow the series. A request no route
//! matched is counted under [`UNMATCHED`]. The time ends when the handler hands back the
//! response head: a watch or a streamed body that runs on afterwards is not in it.

use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;

/// The `route` of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

/// `router` with every request counted and timed.
pub fn track(router: Router) -> Router {
    router.layer(middleware::from_fn(measure))
}

async fn measure(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED.to_owned(), |path| path.as_str().to_owned());
    let response = next.run(request).await;
    crate::hub_metrics::record_http(
        method,
        &route,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

/// The method as a label: one of the standard methods, or `OTHER` (a client choosing methods
/// cannot grow the series either).
fn method_label(method: &Method) -> &'static str {
    static KNOWN: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::OPTIONS,
        Method::CONNECT,
        Method::TRACE,
    ];
    KNOWN
        .iter()
        .find(|known| *known == method)
        .map_or("OTHER", Method::as_str)
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    #[test]
    fn a_method_outside_the_standard_ones_is_other() {
        assert_eq!(super::method_label(&Method::GET), "GET");
        assert_eq!(super::method_label(&Method::DELETE), "DELETE");
        let invented = Method::from_bytes(b"BREW");
        assert!(invented.is_ok_and(|m| super::method_label(&m) == "OTHER"));
    }
}

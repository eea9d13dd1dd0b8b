//! The web page of `flotilla serve`: `GET /` answers the page (HTML whatever the `Accept`
//! header), `GET /web/{file}` its scripts and style, all built into the binary; and
//! `GET /v1/stream` tells the page, as server-sent events, each time the writer folds.
//!
//! The page holds no state of its own: it reads the hub's JSON API (`/v1/status`,
//! `/v1/summary`, `/v1/members`, `/v1/marks`, `/v1/objects/…?at=`, `/v1/explain`,
//! `/v1/timeline`) and acts through it
//! (`POST /v1/events`), sending the user's bearer token when one is set. Its files carry no fleet
//! data, so the auth middleware serves them without a token ([`is_public`]).

mod stream;

use axum::Router;
use axum::extract::Path;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use flotilla_eventstore::EventLog;

use crate::runtime::Hub;

/// Where the page's files are served.
const ASSET_PREFIX: &str = "/web/";

/// The page's files: name under [`ASSET_PREFIX`], content type, text.
const ASSETS: [(&str, &str, &str); 12] = [
    ("app.css", CSS, include_str!("assets/app.css")),
    ("app.js", JS, include_str!("assets/app.js")),
    ("api.js", JS, include_str!("assets/api.js")),
    ("dom.js", JS, include_str!("assets/dom.js")),
    ("summary.js", JS, include_str!("assets/summary.js")),
    ("marks.js", JS, include_str!("assets/marks.js")),
    ("fleet.js", JS, include_str!("assets/fleet.js")),
    ("placements.js", JS, include_str!("assets/placements.js")),
    ("runs.js", JS, include_str!("assets/runs.js")),
    ("partitions.js", JS, include_str!("assets/partitions.js")),
    ("log.js", JS, include_str!("assets/log.js")),
    ("live.js", JS, include_str!("assets/live.js")),
];

const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const INDEX: &str = include_str!("assets/index.html");

/// The page's routes over a hub: `/`, `/web/{file}` and `/v1/stream`.
pub fn router<L: EventLog>(hub: Hub<L>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/web/{file}", get(asset))
        .route("/v1/stream", get(stream::folded::<L>))
        .with_state(hub)
}

/// Whether a request is for one of the page's own files, which any caller may read.
#[must_use]
pub fn is_public(method: &Method, path: &str) -> bool {
    let file = path.strip_prefix(ASSET_PREFIX);
    *method == Method::GET && (path == "/" || file.is_some_and(|f| find(f).is_some()))
}

fn find(name: &str) -> Option<(&'static str, &'static str)> {
    ASSETS
        .iter()
        .find(|(file, _, _)| *file == name)
        .map(|(_, content_type, text)| (*content_type, *text))
}

async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX)
}

async fn asset(Path(file): Path<String>) -> Response {
    match find(&file) {
        Some((content_type, text)) => page(content_type, text),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// A file of the page; never cached, so a newer hub's page is what a reload shows.
fn page(content_type: &'static str, text: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        text,
    )
        .into_response()
}

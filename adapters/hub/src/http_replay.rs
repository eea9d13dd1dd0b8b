//! The replay questions over flotilla's HTTP API, as JSON: `GET /v1/timeline` and
//! `GET /v1/explain` answer what `flotilla replay timeline` and `replay explain` print, from
//! the hub's own log (the web page's incident views use them).

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use flotilla_eventstore::EventLog;
use flotilla_replay::{PlacementRef, Point, RunRef, TimelineFilter};
use serde::Deserialize;

use crate::runtime::Hub;
use flotilla_adapters::api_error::{error, internal};
use flotilla_adapters::log_export::ExportPages;

/// `GET /v1/timeline`'s query.
#[derive(Deserialize)]
pub(crate) struct TimelineQuery {
    placement: Option<String>,
    cluster: Option<String>,
    run: Option<String>,
    namespace: Option<String>,
    after: Option<String>,
    until: Option<String>,
}

/// `GET /v1/explain`'s query.
#[derive(Deserialize)]
pub(crate) struct ExplainQuery {
    placement: String,
    cluster: Option<String>,
    namespace: Option<String>,
    at: Option<String>,
}

fn point(text: Option<&String>) -> Result<Option<Point>, String> {
    text.map(|text| text.parse::<Point>())
        .transpose()
        .map_err(|e| e.to_string())
}

/// The events and decisions that touched a placement, cluster or run.
pub(crate) async fn timeline<L: EventLog>(
    State(hub): State<Hub<L>>,
    Query(query): Query<TimelineQuery>,
) -> Response {
    let (after, until) = match (point(query.after.as_ref()), point(query.until.as_ref())) {
        (Ok(after), Ok(until)) => (after, until),
        (Err(message), _) | (_, Err(message)) => return error(StatusCode::BAD_REQUEST, message),
    };
    let namespace = query.namespace;
    let filter = TimelineFilter {
        placement: query.placement.map(|name| PlacementRef {
            namespace: namespace.clone(),
            name,
        }),
        cluster: query.cluster,
        run: query.run.map(|name| RunRef {
            namespace: namespace.clone(),
            name,
        }),
    };
    match flotilla_replay::timeline(hub.log().as_ref(), &filter, after, until).await {
        Ok(timeline) => Json(timeline).into_response(),
        Err(e) => internal(e),
    }
}

/// Why a cluster has its version (with `cluster`), or why a rollout waits.
pub(crate) async fn explain<L: EventLog>(
    State(hub): State<Hub<L>>,
    Query(query): Query<ExplainQuery>,
) -> Response {
    let at = match point(query.at.as_ref()) {
        Ok(at) => at,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let placement = PlacementRef {
        namespace: query.namespace,
        name: query.placement,
    };
    let log = hub.log().as_ref();
    let answer = match &query.cluster {
        Some(cluster) => flotilla_replay::explain_cluster(log, cluster, &placement, at)
            .await
            .map(|why| Json(why).into_response()),
        None => flotilla_replay::explain_placement(log, &placement, at)
            .await
            .map(|why| Json(why).into_response()),
    };
    answer.unwrap_or_else(internal)
}

/// `GET /v1/log/export`: the log and its decisions as `flotilla replay export` writes them
/// (`flotilla_adapters::log_export`), streamed a page at a time; what `flotilla replay
/// --server` reads, so every replay verb works without the hub's disk. It reads the whole
/// log, every namespace's inputs included, so only an admin token may (`auth::rules`).
pub(crate) async fn log_export<L: EventLog>(State(hub): State<Hub<L>>) -> Response {
    let pages = match ExportPages::open(Arc::clone(hub.log())).await {
        Ok(pages) => pages,
        Err(e) => return internal(e),
    };
    let stream = futures::stream::unfold(Some(pages), |pages| async move {
        let mut pages = pages?;
        match pages.next_page().await {
            Ok(Some(text)) => Some((Ok(text), Some(pages))),
            Ok(None) => None,
            // The status line is gone by now: cutting the body short is how the reader
            // learns (its import fails on the missing lines).
            Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
        }
    });
    (
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response()
}

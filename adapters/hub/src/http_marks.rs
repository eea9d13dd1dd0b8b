//! `GET /v1/marks`: the points of the log worth a mark on the web page's time slider — runs
//! started, succeeded or failed, approvals requested and given — newest first, at most
//! [`flotilla_projections::MARKS_MAX`]. They come from the log's decisions, so a run deleted
//! since keeps its marks (`runtime/marks.rs`); each carries its input's sequence and time.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use flotilla_adapters::api_error::internal;
use flotilla_eventstore::EventLog;
use serde_json::json;

use crate::runtime::Hub;

/// `GET /v1/marks`.
pub(crate) async fn marks<L: EventLog>(State(hub): State<Hub<L>>) -> Response {
    let found = match hub.marks().await {
        Ok(found) => found,
        Err(e) => return internal(e),
    };
    let marks: Vec<_> = found
        .into_iter()
        .map(|timed| {
            let mark = timed.mark;
            json!({ "seq": mark.seq, "time": timed.time, "kind": mark.kind, "label": mark.label })
        })
        .collect();
    Json(json!({ "marks": marks })).into_response()
}

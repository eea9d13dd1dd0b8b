//! `GET /v1/marks`: the points of the log worth a mark on the web page's time slider — runs
//! started, succeeded or failed, approvals requested and given — newest first, at most
//! [`MARKS_MAX`]. They come from the current state's condition times (each is the time of the
//! input that made it), and each time is mapped to the last sequence at or before it by the
//! same binary search `at=TIME` uses, so the answer costs a bounded number of log reads
//! whatever the log's length.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use flotilla_adapters::api_error::internal;
use flotilla_core::condition::{Condition, ConditionStatus};
use flotilla_eventstore::EventLog;
use serde_json::json;

use crate::runtime::Hub;

/// Most marks answered.
pub const MARKS_MAX: usize = 200;

/// One mark before its sequence is known.
struct Mark {
    time: DateTime<Utc>,
    kind: &'static str,
    label: String,
}

/// `GET /v1/marks`.
pub(crate) async fn marks<L: EventLog>(State(hub): State<Hub<L>>) -> Response {
    let mut found = match hub.view() {
        Ok(view) => collect(&view.folder.state),
        Err(e) => return internal(e),
    };
    found.sort_by_key(|mark| std::cmp::Reverse(mark.time));
    found.truncate(MARKS_MAX);
    let log = hub.log().as_ref();
    let mut marks = Vec::with_capacity(found.len());
    for mark in found {
        let point = flotilla_replay::Point::Time(mark.time);
        let seq = match flotilla_replay::resolve(log, point).await {
            Ok(seq) => seq,
            Err(e) => return internal(e),
        };
        marks
            .push(json!({ "seq": seq, "time": mark.time, "kind": mark.kind, "label": mark.label }));
    }
    Json(json!({ "marks": marks })).into_response()
}

/// Every mark the state holds: runs started and finished, approvals requested and given.
fn collect(state: &flotilla_core::State) -> Vec<Mark> {
    let mut marks = Vec::new();
    for (key, run) in state.update_runs() {
        let name = key.name.to_string();
        let started = run.status.stages.first().and_then(|stage| stage.start_time);
        if let Some(time) = started {
            marks.push(Mark {
                time,
                kind: "run",
                label: format!("{name} started"),
            });
        }
        if let Some(done) = run.status.succeeded.as_ref() {
            let (kind, verb) = match done.status {
                ConditionStatus::True => ("run", "succeeded"),
                ConditionStatus::False => ("failure", "failed"),
                ConditionStatus::Unknown => continue,
            };
            let time = done.last_transition_time;
            marks.push(Mark {
                time,
                kind,
                label: format!("{name} {verb}"),
            });
        }
    }
    for (key, approval) in state.approvals() {
        let name = key.name.to_string();
        let time = approval.meta.creation_timestamp;
        marks.push(Mark {
            time,
            kind: "approval",
            label: format!("{name} requested"),
        });
        if let Some(time) = approved_at(approval.approved.as_ref()) {
            marks.push(Mark {
                time,
                kind: "approval",
                label: format!("{name} approved"),
            });
        }
    }
    marks
}

fn approved_at(condition: Option<&Condition>) -> Option<DateTime<Utc>> {
    condition
        .filter(|c| c.status == ConditionStatus::True)
        .map(|c| c.last_transition_time)
}

//! get and list: objects rendered from the folded state in the path's version, as JSON or, when
//! the client asks for it (`kubectl get` does), as a `meta.k8s.io/v1` `Table` with KubeFleet's
//! printer columns.

use axum::Json;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_eventstore::EventLog;
use serde_json::{Value, json};

use super::api::Api;
use super::request::{Request, Target, as_served};
use super::selector::Filter;
use super::status::ApiError;

/// Whether the client asked for the `Table` form.
pub fn wants_table(headers: &HeaderMap) -> bool {
    headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|accept| accept.contains("as=Table"))
}

/// The object `name`, rendered in the path's version; `None` if it does not exist.
pub fn render(state: &State, target: &Target, name: &str) -> Option<Value> {
    let mut object = flotilla_projections::render_object(state, &target.key(name))?;
    as_served(target, &mut object);
    Some(object)
}

/// Every object of the target's kind (in its namespace, if the path names one) that passes the
/// request's selectors, in the path's version.
pub fn matching(state: &State, target: &Target, filter: &Filter) -> Vec<Value> {
    flotilla_projections::list(state, &target.kind_info(), target.namespace.as_deref())
        .into_iter()
        .filter(|object| filter.admits(object))
        .map(|mut object| {
            as_served(target, &mut object);
            object
        })
        .collect()
}

/// The clock a current read counts ages to: the reader's wall clock (kubectl prints a `Table`'s
/// AGE as the server computed it), never behind the hub's own time (a hub on a test clock may
/// run ahead of the wall).
pub fn reader_clock(state: &State) -> Option<DateTime<Utc>> {
    Some(Utc::now()).max(state.now())
}

/// With `?at=SEQ|TIME` (flotilla's time travel, as on its `/v1` reads): the state after that
/// point of the log; `None` without it.
///
/// # Errors
/// A malformed point (400), or a log that cannot be folded there.
pub async fn past<L: EventLog>(
    api: &Api<L>,
    request: &Request,
) -> Result<Option<flotilla_replay::Folder>, ApiError> {
    let Some(at) = request.params.get("at") else {
        return Ok(None);
    };
    let point: flotilla_replay::Point = at
        .parse()
        .map_err(|e: flotilla_replay::seek::PointError| ApiError::bad_request(e.to_string()))?;
    let log = api.hub.log().as_ref();
    let seq = flotilla_replay::resolve(log, point)
        .await
        .map_err(ApiError::internal)?;
    let folder = flotilla_replay::fold_to(log, seq)
        .await
        .map_err(ApiError::internal)?;
    Ok(Some(folder))
}

/// GET of one object (its `status` subresource reads the same), now or in `past`.
pub fn get<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
    request: &Request,
    past: Option<&State>,
) -> Result<Response, ApiError> {
    let view;
    let (state, clock) = match past {
        Some(state) => (state, state.now()),
        None => {
            view = api.hub.view().map_err(ApiError::internal)?;
            (&view.folder.state, reader_clock(&view.folder.state))
        }
    };
    let object =
        render(state, target, name).ok_or_else(|| ApiError::not_found(&target.subject(name)))?;
    if wants_table(&request.headers) {
        return Ok(Json(table(target, &[object], clock)).into_response());
    }
    Ok(Json(object).into_response())
}

/// The `Table` of some objects: KubeFleet's printer columns, each row carrying its object's
/// metadata (`PartialObjectMetadata`), which kubectl reads for names and namespaces. Ages are
/// counted to `clock`: the reader's wall clock, or the state's own time for a past read.
pub fn table(target: &Target, objects: &[Value], clock: Option<DateTime<Utc>>) -> Value {
    let data = flotilla_projections::table_data(&target.kind_info(), objects, clock);
    let columns: Vec<Value> = data
        .columns
        .iter()
        .enumerate()
        .map(|(index, column)| {
            let mut definition = json!({
                "name": title_case(&column.name),
                "type": "string",
                "format": "",
                "description": "",
                "priority": column.priority,
            });
            if index == 0 {
                definition["format"] = Value::from("name");
            }
            definition
        })
        .collect();
    let rows: Vec<Value> = data
        .rows
        .into_iter()
        .zip(objects)
        .map(|(cells, object)| {
            json!({
                "cells": cells,
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": object["metadata"],
                },
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// `WORK-SYNCHRONIZED` → `Work-Synchronized`, the API server's spelling of a column name.
fn title_case(header: &str) -> String {
    header
        .split('-')
        .map(|word| {
            let lower = word.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join("-")
}

//! DELETE of a collection (`deletecollection`): every object of the kind that the request's
//! label and field selectors admit, in the path's namespace or, without one, in all of them.
//!
//! Each deletion is the input a single delete of that object appends; all of them are appended
//! in one batch (whole or not at all) under the write lock, and then folded one by one, so a
//! deletion the fold refuses changes nothing and the others still happen. The answer is the
//! list of the objects deleted, as the API server's `DeleteCollection` returns it; the first
//! refusal, if any, is answered instead.

use axum::Json;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use flotilla_core::{Decision, Envelope, Input};
use flotilla_eventstore::EventLog;
use serde_json::{Value, json};
use uuid::Uuid;

use super::api::{Api, KUBE_SOURCE};
use super::read::matching;
use super::request::{Request, Target};
use super::selector::Filter;
use super::status::{ApiError, Subject, rejection};
use super::write::{delete_input, is_dry_run};
use crate::ingest::{EVENTS_PER_REQUEST_MAX, FOLD_WAIT};

/// One object to delete: its target (in its own namespace), name and input.
struct Deletion {
    target: Target,
    name: String,
    input: Option<Input>,
}

/// DELETE of the target's collection.
///
/// # Errors
/// A malformed selector (400), more objects than one request may delete (413), the log's
/// refusal (503), or the fold's first refusal.
pub async fn delete<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    request: &Request,
) -> Result<Response, ApiError> {
    let filter = Filter::from_params(&request.params)?;
    let mut owners = api.writes.lock().await;
    let objects = {
        let view = api.hub.view().map_err(ApiError::internal)?;
        matching(&view.folder.state, target, &filter)
    };
    if objects.len() > EVENTS_PER_REQUEST_MAX {
        return Err(ApiError::too_large(format!(
            "{} objects match; one request deletes at most {EVENTS_PER_REQUEST_MAX}",
            objects.len()
        )));
    }
    let deletions: Vec<Deletion> = objects.iter().filter_map(|o| deletion(target, o)).collect();
    if !is_dry_run(request) {
        submit_all(api, &deletions, &request.principal).await?;
        for deletion in &deletions {
            owners.forget(&deletion.target.key(&deletion.name));
        }
    }
    Ok(Json(json!({
        "apiVersion": target.api_version(),
        "kind": format!("{}List", target.served.kind),
        "metadata": {},
        "items": objects,
    }))
    .into_response())
}

fn deletion(target: &Target, object: &Value) -> Option<Deletion> {
    let name = object["metadata"]["name"].as_str()?.to_owned();
    let mut target = target.clone();
    if target.served.namespaced {
        target.namespace = object["metadata"]["namespace"].as_str().map(str::to_owned);
    }
    let input = delete_input(&target, &name);
    Some(Deletion {
        target,
        name,
        input,
    })
}

/// Appends every deletion's input in one batch and waits for the fold; the first refused one
/// becomes the error.
async fn submit_all<L: EventLog>(
    api: &Api<L>,
    deletions: &[Deletion],
    principal: &flotilla_core::Principal,
) -> Result<(), ApiError> {
    let submitted: Vec<(&Deletion, Envelope)> = deletions
        .iter()
        .filter_map(|deletion| {
            let input = deletion.input.clone()?;
            let envelope = Envelope::new(Uuid::now_v7(), Utc::now(), KUBE_SOURCE, input)
                .with_principal(principal.clone());
            Some((deletion, envelope))
        })
        .collect();
    if submitted.is_empty() {
        return Ok(());
    }
    let (subjects, envelopes): (Vec<Subject>, Vec<Envelope>) = submitted
        .into_iter()
        .map(|(deletion, envelope)| (deletion.target.subject(&deletion.name), envelope))
        .unzip();
    let appended = api
        .hub
        .submit(envelopes)
        .await
        .map_err(|error| ApiError::refused_write(&error))?;
    let last = appended.iter().map(|a| a.seq).max().unwrap_or(0);
    if !api.hub.wait_folded(last, FOLD_WAIT).await {
        return Err(ApiError::timeout(format!(
            "the deletions were appended up to event {last} but not folded within {FOLD_WAIT:?}"
        )));
    }
    let view = api.hub.view().map_err(ApiError::internal)?;
    for (subject, appended) in subjects.iter().zip(&appended) {
        for decision in view.decisions_for(appended.seq).unwrap_or_default() {
            if let Decision::Rejected { code, message } = decision {
                return Err(rejection(subject, code, &message));
            }
        }
    }
    Ok(())
}

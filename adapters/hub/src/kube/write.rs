//! create, update, patch, delete and the `status` subresource. Each write is checked (the
//! object's identity against the path, `resourceVersion` against the stored one, the object
//! against KubeFleet's CRD schema under the request's `fieldValidation`, the manifest against
//! flotilla's model), then appended as an input event exactly as `flotilla apply`
//! appends it, folded, and answered with the object as the hub now shows it — or with the
//! `Status` of the fold's rejection.

use axum::Json;
use axum::http::StatusCode;
use axum::http::header::{CONTENT_TYPE, USER_AGENT};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use flotilla_core::model::PLACEMENT_GROUP;
use flotilla_core::{Decision, Envelope, Input, ObjectRef, Principal};
use flotilla_eventstore::EventLog;
use serde_json::Value;
use uuid::Uuid;

use super::api::{Api, KUBE_SOURCE};
use super::field_validation::Validated;
use super::generate_name;
use super::patch::{self, PatchType};
use super::preview::preview;
use super::read::render;
use super::request::{Request, Target};
use super::server_side_apply::FieldOwners;
use super::status::{ApiError, Subject, deleted, rejection, warn};
use crate::ingest::FOLD_WAIT;
use flotilla_adapters::schema::{self, FieldPath};

/// Metadata the server assigns; a write never sets it.
const SERVER_METADATA: [&str; 8] = [
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Whether the target is a kind the hub derives (from placements, runs and overrides): a
/// delete is accepted and the object derived again at once, and a write to one changes nothing,
/// as KubeFleet's controllers would undo it.
fn is_derived(target: &Target) -> bool {
    target.served.group == PLACEMENT_GROUP
        && flotilla_core::query::manifest::DERIVED_KINDS.contains(&target.served.kind.as_str())
}

fn is_approval_request(target: &Target) -> bool {
    target.served.group == PLACEMENT_GROUP
        && matches!(
            target.served.kind.as_str(),
            "ClusterApprovalRequest" | "ApprovalRequest"
        )
}

/// The field manager of a write: `fieldManager`, else the client's name from its user agent.
fn manager(request: &Request) -> String {
    if let Some(manager) = request.params.get("fieldManager") {
        return manager.clone();
    }
    request
        .headers
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .and_then(|agent| agent.split('/').next())
        .filter(|name| !name.is_empty())
        .unwrap_or("unknown")
        .to_owned()
}

fn json_body(request: &Request) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(&request.body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a JSON object: {e}")))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(ApiError::bad_request("the body is not a JSON object"))
    }
}

/// Checks a written object's identity against the path and fills in what the path says;
/// removes what the server assigns and the status (the hub computes it).
fn prepare(target: &Target, name: Option<&str>, mut object: Value) -> Result<Value, ApiError> {
    if !object.is_object() {
        return Err(ApiError::bad_request("the body is not a JSON object"));
    }
    let expected = target.api_version();
    match object.get("apiVersion").and_then(Value::as_str) {
        Some(given) if given != expected => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({given}) does not match the expected API version \
                 ({expected})"
            )));
        }
        _ => object["apiVersion"] = Value::from(expected),
    }
    match object.get("kind").and_then(Value::as_str) {
        Some(given) if given != target.served.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({given}) does not match the expected kind ({})",
                target.served.kind
            )));
        }
        _ => object["kind"] = Value::from(target.served.kind.as_str()),
    }
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = Value::Object(serde_json::Map::new());
    }
    let metadata = &mut object["metadata"];
    let given_name = metadata
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match (given_name.as_deref(), name) {
        (Some(given), Some(url)) if given != url => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({given}) does not match the name on the URL ({url})"
            )));
        }
        (None, Some(url)) => metadata["name"] = Value::from(url),
        _ => {}
    }
    if target.served.namespaced {
        let url_namespace = target
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        match metadata.get("namespace").and_then(Value::as_str) {
            Some(given) if given != url_namespace && target.namespace.is_some() => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on \
                     the request",
                ));
            }
            Some(_) => {}
            None => metadata["namespace"] = Value::from(url_namespace),
        }
    } else if let Some(map) = metadata.as_object_mut() {
        map.remove("namespace");
    }
    if let Some(map) = metadata.as_object_mut() {
        for field in SERVER_METADATA {
            map.remove(field);
        }
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    Ok(object)
}

fn name_of(object: &Value) -> Result<String, ApiError> {
    object["metadata"]["name"]
        .as_str()
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ApiError::bad_request("metadata.name: Required value: name is required"))
}

/// Whether the client asked for a dry run (`dryRun=All`): the write is checked, answered with
/// the object it would store, and not appended.
fn dry_run(request: &Request) -> bool {
    request.params.contains_key("dryRun")
}

/// What `store` did with a checked object.
#[derive(Debug, Clone)]
struct Stored {
    /// A dry run: nothing appended.
    dry_run: bool,
    /// The object as validated (unknown fields dropped).
    object: Value,
    /// The `Warning`s to answer with.
    warnings: Vec<String>,
}

/// Appends one input and waits for its fold; the fold's rejection becomes an error.
async fn submit<L: EventLog>(
    api: &Api<L>,
    subject: &Subject,
    input: Input,
    principal: &Principal,
) -> Result<(), ApiError> {
    let envelope = Envelope::new(Uuid::now_v7(), Utc::now(), KUBE_SOURCE, input)
        .with_principal(principal.clone());
    let appended = api
        .hub
        .submit(vec![envelope])
        .await
        .map_err(|error| ApiError::refused_write(&error))?;
    let seq = appended.iter().map(|a| a.seq).max().unwrap_or(0);
    if !api.hub.wait_folded(seq, FOLD_WAIT).await {
        return Err(ApiError::timeout(format!(
            "the write was appended as event {seq} but not folded within {FOLD_WAIT:?}"
        )));
    }
    let decisions = {
        let view = api.hub.view().map_err(ApiError::internal)?;
        view.decisions_for(seq).unwrap_or_default()
    };
    for decision in decisions {
        if let Decision::Rejected { code, message } = decision {
            return Err(rejection(subject, code, &message));
        }
    }
    Ok(())
}

/// The fields a write's body repeats (a JSON patch's body is operations, not the object).
fn body_duplicates(request: &Request) -> Vec<FieldPath> {
    let content_type = request
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if PatchType::of(content_type).is_ok_and(|kind| kind == PatchType::Json) {
        return Vec::new();
    }
    schema::duplicate_fields(&request.body)
}

/// Validates a prepared object against its KubeFleet schema (`field_validation`; `live` is the
/// stored object on an update) and as flotilla's model does, and stores it. A refusal appends
/// nothing.
async fn store<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    object: Value,
    live: Option<&Value>,
    request: &Request,
) -> Result<Stored, ApiError> {
    let name = name_of(&object)?;
    let subject = target.subject(&name);
    super::limits::check(&subject, &object)?;
    let mode = super::field_validation::mode(request)?;
    let duplicates = body_duplicates(request);
    let Validated { object, warnings } =
        super::field_validation::validate(target, object, live, &duplicates, mode)?;
    flotilla_core::query::manifest::parse_manifest(&object)
        .map_err(|error| ApiError::invalid(&subject, &error.field, &error.message))?;
    if dry_run(request) {
        return Ok(Stored {
            dry_run: true,
            object: preview(api, target, &object, live, &request.principal)?,
            warnings,
        });
    }
    let manifest = Input::Apply {
        manifest: object.to_string(),
    };
    submit(api, &subject, manifest, &request.principal).await?;
    Ok(Stored {
        dry_run: false,
        object,
        warnings,
    })
}

fn stored_object<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
) -> Result<Value, ApiError> {
    let view = api.hub.view().map_err(ApiError::internal)?;
    render(&view.folder.state, target, name)
        .ok_or_else(|| ApiError::not_found(&target.subject(name)))
}

fn current<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
) -> Result<Option<Value>, ApiError> {
    let view = api.hub.view().map_err(ApiError::internal)?;
    Ok(render(&view.folder.state, target, name))
}

fn respond(code: StatusCode, object: Value) -> Response {
    (code, Json(object)).into_response()
}

/// POST: create an object that does not exist.
pub async fn create<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    request: &Request,
) -> Result<Response, ApiError> {
    let mut object = prepare(target, None, json_body(request)?)?;
    let mut owners = api.writes.lock().await;
    if let Some(prefix) = generate_name::prefix(&object) {
        object["metadata"]["name"] = Value::from(unused_name(api, target, &prefix)?);
    }
    let name = name_of(&object)?;
    let subject = target.subject(&name);
    if current(api, target, &name)?.is_some() {
        return Err(ApiError::already_exists(&subject));
    }
    let stored = store(api, target, object, None, request).await?;
    if stored.dry_run {
        return Ok(warn(
            respond(StatusCode::CREATED, stored.object),
            &stored.warnings,
        ));
    }
    owners.updated(&target.key(&name), &manager(request), None, &stored.object);
    Ok(warn(
        respond(StatusCode::CREATED, stored_object(api, target, &name)?),
        &stored.warnings,
    ))
}

/// A name from `generateName` that no object of the target's kind has (called under the
/// write lock, so no other write through this API takes it before the append).
fn unused_name<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    prefix: &str,
) -> Result<String, ApiError> {
    for _ in 0..generate_name::ATTEMPTS_MAX {
        let name = generate_name::generate(prefix);
        if current(api, target, &name)?.is_none() {
            return Ok(name);
        }
    }
    Err(ApiError::already_exists(&target.subject(prefix)))
}

/// The `resourceVersion` a write carries must be the stored one, when given.
fn check_version(subject: &Subject, written: &Value, live: &Value) -> Result<(), ApiError> {
    match written["metadata"]["resourceVersion"].as_str() {
        Some(given) if Some(given) != live["metadata"]["resourceVersion"].as_str() => {
            Err(ApiError::conflict(subject))
        }
        _ => Ok(()),
    }
}

/// PUT: replace an object (or write its status).
pub async fn update<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
    request: &Request,
) -> Result<Response, ApiError> {
    let written = json_body(request)?;
    let owners = api.writes.lock().await;
    replace_with(api, target, name, request, owners, |_live| Ok(written)).await
}

/// The shared tail of an update and a patch: under the write lock, `change` turns the live
/// object into the written one, which is checked and stored (or, for `status`, becomes an
/// approval).
async fn replace_with<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
    request: &Request,
    mut owners: tokio::sync::MutexGuard<'_, FieldOwners>,
    change: impl FnOnce(&Value) -> Result<Value, ApiError>,
) -> Result<Response, ApiError> {
    let subject = target.subject(name);
    let live = current(api, target, name)?.ok_or_else(|| ApiError::not_found(&subject))?;
    let written = change(&live)?;
    check_version(&subject, &written, &live)?;
    if target.subresource.is_some() {
        return write_status(api, target, name, &live, &written, &request.principal).await;
    }
    if is_derived(target) || written == live {
        return Ok(respond(StatusCode::OK, live));
    }
    let written = prepare(target, Some(name), written)?;
    let stored = store(api, target, written, Some(&live), request).await?;
    if stored.dry_run {
        return Ok(warn(
            respond(StatusCode::OK, stored.object),
            &stored.warnings,
        ));
    }
    owners.updated(
        &target.key(name),
        &manager(request),
        Some(&live),
        &stored.object,
    );
    Ok(warn(
        respond(StatusCode::OK, stored_object(api, target, name)?),
        &stored.warnings,
    ))
}

/// PATCH: merge, JSON, strategic merge or server-side apply.
pub async fn patch<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
    request: &Request,
) -> Result<Response, ApiError> {
    let content_type = request
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let kind = PatchType::of(content_type)?;
    if kind == PatchType::Apply {
        return server_side_apply(api, target, name, request).await;
    }
    let owners = api.writes.lock().await;
    replace_with(api, target, name, request, owners, |live| {
        patch::apply(kind, live, &request.body)
    })
    .await
}

fn yaml_or_json(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the apply patch is not UTF-8 text"))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("the apply patch is not YAML: {e}")))
        .and_then(|value| {
            value
                .is_object()
                .then_some(value)
                .ok_or_else(|| ApiError::bad_request("the apply patch is not an object"))
        })
}

async fn server_side_apply<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
    request: &Request,
) -> Result<Response, ApiError> {
    if !request.params.contains_key("fieldManager") {
        return Err(ApiError::bad_request(
            "PATCH, application/apply-patch+yaml requests must specify a fieldManager",
        ));
    }
    if target.subresource.is_some() {
        return Err(ApiError::method_not_allowed(
            "server-side apply of status is not supported",
        ));
    }
    let subject = target.subject(name);
    let applied = prepare(target, Some(name), yaml_or_json(&request.body)?)?;
    let force = request.params.get("force").is_some_and(|f| f == "true");
    let mut owners = api.writes.lock().await;
    let live = current(api, target, name)?;
    if let Some(live) = &live {
        check_version(&subject, &applied, live)?;
    }
    let key = target.key(name);
    let (merged, recorded) = owners.apply(
        &key,
        &subject,
        &manager(request),
        live.as_ref(),
        &applied,
        force,
    )?;
    let merged = prepare(target, Some(name), merged)?;
    // A derived object that exists is left as the hub derives it; creating one is refused
    // by the manifest check in `store`.
    if let Some(live) = live.as_ref().filter(|_| is_derived(target)) {
        return Ok(respond(StatusCode::OK, live.clone()));
    }
    let stored = store(api, target, merged, live.as_ref(), request).await?;
    if stored.dry_run {
        return Ok(warn(
            respond(StatusCode::OK, stored.object),
            &stored.warnings,
        ));
    }
    owners.commit(&key, recorded);
    let code = if live.is_some() {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok(warn(
        respond(code, stored_object(api, target, name)?),
        &stored.warnings,
    ))
}

/// A status write: on an approval request an Approved condition set to True becomes an
/// approval; every other kind's status is the hub's to compute.
async fn write_status<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
    live: &Value,
    written: &Value,
    principal: &Principal,
) -> Result<Response, ApiError> {
    let subject = target.subject(name);
    if !is_approval_request(target) {
        return Err(ApiError::invalid(
            &subject,
            "status",
            &format!(
                "the status of a {} is computed by the hub; only approval requests accept \
                 status writes",
                target.served.kind
            ),
        ));
    }
    if let Some(condition) = approved(written).filter(|_| approved(live).is_none()) {
        let namespace = target
            .served
            .namespaced
            .then(|| target.key(name).namespace.into());
        // The approver's words stay with the approval, as a KubeFleet hub stores the status
        // written; the hub validates them as `metav1.Condition` does.
        let text = |field: &str| condition[field].as_str().map(str::to_owned);
        let input = Input::Approve {
            name: name.to_owned(),
            namespace,
            reason: text("reason"),
            message: text("message"),
        };
        submit(api, &subject, input, principal).await?;
    }
    Ok(respond(StatusCode::OK, stored_object(api, target, name)?))
}

/// An object's `Approved` condition, when its status is `True`.
fn approved(object: &Value) -> Option<&Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Approved" && c["status"] == "True")
}

/// DELETE of one object.
pub async fn delete<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    name: &str,
    request: &Request,
) -> Result<Response, ApiError> {
    let subject = target.subject(name);
    let mut owners = api.writes.lock().await;
    if current(api, target, name)?.is_none() {
        return Err(ApiError::not_found(&subject));
    }
    if let Some(input) = delete_input(target, name).filter(|_| !dry_run(request)) {
        submit(api, &subject, input, &request.principal).await?;
        owners.forget(&target.key(name));
    }
    Ok(respond(StatusCode::OK, deleted(&subject)))
}

/// The input a delete of `name` appends; `None` for a derived kind, which the hub derives again
/// at once. Approval requests are derived, but deleting one is an input: its run makes it again
/// while the approval is still owed (KubeFleet's `handleStageApprovalTask`).
pub(crate) fn delete_input(target: &Target, name: &str) -> Option<Input> {
    if is_derived(target) && !is_approval_request(target) {
        return None;
    }
    let key = target.key(name);
    Some(Input::Delete {
        target: ObjectRef {
            kind: key.kind.to_string(),
            group: Some(key.group.to_string()),
            namespace: (!key.namespace.is_empty()).then(|| key.namespace.to_string()),
            name: key.name.to_string(),
        },
    })
}

/// Whether the request is a dry run.
pub(crate) fn is_dry_run(request: &Request) -> bool {
    dry_run(request)
}

//! The answer to a dry run (`dryRun=All`, `kubectl diff`, `--dry-run=server`): the object
//! exactly as the hub would show it had the write been made — its server-assigned metadata,
//! the defaults filled in, its status — so `kubectl diff` shows only the change. The write's
//! input is folded into a copy of the current state, which is then dropped; nothing is
//! appended. As on an API server, a dry run does not move the object's `resourceVersion`.

use chrono::Utc;
use flotilla_core::{Decision, Envelope, Input, Principal};
use flotilla_eventstore::EventLog;
use serde_json::Value;
use uuid::Uuid;

use super::api::{Api, KUBE_SOURCE};
use super::read::render;
use super::request::Target;
use super::status::{ApiError, rejection};

/// `object` as the hub would serve it after applying it; `live` is what it serves now.
///
/// # Errors
/// When the fold would refuse the write (as the write itself would be refused).
pub fn preview<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    object: &Value,
    live: Option<&Value>,
    principal: &Principal,
) -> Result<Value, ApiError> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let subject = target.subject(name);
    let input = Input::Apply {
        manifest: object.to_string(),
    };
    let envelope = Envelope::new(Uuid::now_v7(), Utc::now(), KUBE_SOURCE, input)
        .with_principal(principal.clone());
    let mut state = api
        .hub
        .view()
        .map_err(ApiError::internal)?
        .folder
        .state
        .clone();
    for decision in flotilla_core::step(&mut state, &envelope) {
        if let Decision::Rejected { code, message } = decision {
            return Err(rejection(&subject, code, &message));
        }
    }
    let mut shown = render(&state, target, name).unwrap_or_else(|| object.clone());
    match live.map(|live| &live["metadata"]["resourceVersion"]) {
        Some(version) => shown["metadata"]["resourceVersion"] = version.clone(),
        None => {
            if let Some(metadata) = shown["metadata"].as_object_mut() {
                metadata.remove("resourceVersion");
            }
        }
    }
    Ok(shown)
}

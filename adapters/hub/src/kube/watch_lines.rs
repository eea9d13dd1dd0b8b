//! What a watch sends, live or replayed ([`super::watch`], [`super::watch_past`]): the
//! `{"type", "object"}` lines that take a client from what it last saw to a state, as objects
//! or as `Table` rows, and bookmarks.

use std::sync::Arc;

use axum::body::Bytes;
use flotilla_core::State;
use serde_json::{Value, json};

use super::read::{reader_clock, table};
use super::request::Target;
use super::selector::Filter;
use super::watch_render::{Object, Rendered, render};

/// What one watch sends.
#[derive(Clone)]
pub(super) struct Watch {
    pub(super) target: Target,
    pub(super) filter: Filter,
    pub(super) table: bool,
}

/// Objects by `namespace/name`: what a watch last sent.
pub(super) type Known = Rendered;

pub(super) fn resource_version(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

pub(super) fn line(state: &State, watch: &Watch, kind: &str, object: &Object) -> Bytes {
    if watch.table {
        let value = &object.value;
        let mut table = table(
            &watch.target,
            std::slice::from_ref(value),
            reader_clock(state),
        );
        table["metadata"] = json!({"resourceVersion": value["metadata"]["resourceVersion"]});
        let mut text = json!({"type": kind, "object": table}).to_string();
        text.push('\n');
        return Bytes::from(text);
    }
    // `kind` is one of the watch event types: no escaping needed.
    Bytes::from(format!(
        "{{\"type\":\"{kind}\",\"object\":{}}}\n",
        object.json()
    ))
}

pub(super) fn bookmark(state: &State, watch: &Watch) -> Bytes {
    let object = json!({
        "apiVersion": watch.target.api_version(),
        "kind": watch.target.served.kind,
        "metadata": {"resourceVersion": state.resource_version().to_string()},
    });
    let mut text = json!({"type": "BOOKMARK", "object": object}).to_string();
    text.push('\n');
    Bytes::from(text)
}

/// The rendered objects the watch's selectors admit.
pub(super) fn admitted(watch: &Watch, rendered: &Rendered) -> Known {
    rendered
        .iter()
        .filter(|(_, object)| watch.filter.admits(&object.value))
        .map(|(key, object)| (key.clone(), object.clone()))
        .collect()
}

/// The first lines of a watch and what it then knows.
pub(super) fn start(
    state: &State,
    watch: &Watch,
    rendered: &Rendered,
    since: Option<u64>,
) -> (Vec<Bytes>, Known) {
    let known = admitted(watch, rendered);
    let mut lines = Vec::new();
    for object in known.values() {
        match since {
            None => lines.push(line(state, watch, "ADDED", object)),
            Some(rv) if resource_version(&object.value) > rv => {
                lines.push(line(state, watch, "MODIFIED", object));
            }
            Some(_) => {}
        }
    }
    (lines, known)
}

/// The lines that take a client from `known` to the state's objects, rendered afresh (for a
/// state the shared cache does not hold, such as a replayed past).
pub(super) fn changes(state: &State, watch: &Watch, known: &mut Known) -> Vec<Bytes> {
    let rendered = render(state, &watch.target, Some(known));
    changes_to(state, watch, &rendered, known)
}

/// The lines that take a client from `known` to `rendered`. Unchanged objects share their
/// `Arc` with what the watch knows, so only changed ones are compared by value.
pub(super) fn changes_to(
    state: &State,
    watch: &Watch,
    rendered: &Rendered,
    known: &mut Known,
) -> Vec<Bytes> {
    let now = admitted(watch, rendered);
    let mut lines = Vec::new();
    for (key, object) in &now {
        match known.get(key) {
            None => lines.push(line(state, watch, "ADDED", object)),
            Some(before) if !Arc::ptr_eq(before, object) && before.value != object.value => {
                lines.push(line(state, watch, "MODIFIED", object));
            }
            Some(_) => {}
        }
    }
    for (key, object) in known.iter() {
        if !now.contains_key(key) {
            lines.push(line(state, watch, "DELETED", object));
        }
    }
    *known = now;
    lines
}

/// Sends `lines` in order; `false` when the client has left.
pub(super) async fn send_all(sender: &tokio::sync::mpsc::Sender<Bytes>, lines: Vec<Bytes>) -> bool {
    for line in lines {
        if sender.send(line).await.is_err() {
            return false;
        }
    }
    true
}

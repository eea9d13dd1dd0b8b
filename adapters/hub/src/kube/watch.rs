//! watch (`?watch=true`): a stream of `{"type", "object"}` lines — `ADDED`, `MODIFIED`,
//! `DELETED`, and `BOOKMARK` when the client allows bookmarks — as the folded state changes.
//!
//! After folds the kind's objects (those the selectors admit) — rendered once per fold for all
//! the kind's watches — are compared with what the stream last sent, so a change of status
//! shows as `MODIFIED` even when only derived state moved. Without a `resourceVersion` (or with
//! `0`) the stream starts with an `ADDED` for every current object. From a `resourceVersion`
//! it sends every change made after it, deletions included: the hub notes the resource version
//! of each state it hands readers (the last [`crate::runtime::VERSIONS_KEPT`]), and the watch
//! replays the log from the newest noted state at or before the client's version; a version
//! older than all of them ends the stream with `410 Gone` (`Expired`), and the client lists
//! again. With `at=SEQ|TIME` the watch starts in the past and replays the log from there
//! ([`super::watch_past`]).

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use flotilla_eventstore::EventLog;
use flotilla_replay::Point;
use serde_json::json;
use tokio::sync::mpsc::Sender;

use super::api::Api;
use super::read::wants_table;
use super::request::{Request, Target};
use super::selector::Filter;
use super::status::ApiError;
use super::watch_lines::{Known, Watch, admitted, bookmark, changes_to, send_all, start};
use super::watch_past::{Replayed, replay};
use super::watch_render::render;

/// How long a watch runs when the client sets no `timeoutSeconds`.
pub const WATCH_DEFAULT: Duration = Duration::from_secs(1_800);
/// The longest watch.
pub const WATCH_MAX: Duration = Duration::from_secs(3_600);
/// How often a bookmark is sent to a client that allows them.
pub const BOOKMARK_EVERY: Duration = Duration::from_secs(10);
/// Events buffered for a slow client before the stream waits for it.
const BUFFER: usize = 256;
/// Longest a live watch waits for its client to take a line before the watch ends (the
/// client re-lists, as after any ended watch). A watch blocked on its client computes
/// nothing, so it never slows the writer, but it should not hold its place for ever.
const SLOW_CLIENT: Duration = Duration::from_secs(30);
/// Least time between two looks of one watch at the state. The kind's objects are rendered
/// once per fold for all its watches ([`super::watch_render`]) under the hub's read lock, which
/// the writer waits for; looking at most once in this time, at the newest state, bounds what
/// each watch costs whatever the fold's rate.
const RENDER_EVERY: Duration = Duration::from_millis(200);

/// Starts a watch; the response streams until the timeout, the client leaves or the hub stops.
pub fn serve<L: EventLog>(api: &Api<L>, target: &Target, request: &Request) -> Response {
    let filter = match Filter::from_params(&request.params) {
        Ok(filter) => filter,
        Err(error) => return error.into_response(),
    };
    let since = request
        .params
        .get("resourceVersion")
        .and_then(|rv| rv.parse::<u64>().ok())
        .filter(|rv| *rv > 0);
    let timeout = request
        .params
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(WATCH_DEFAULT, Duration::from_secs)
        .min(WATCH_MAX);
    let bookmarks = request
        .params
        .get("allowWatchBookmarks")
        .is_some_and(|b| b == "true");
    let at = match request.params.get("at").map(|at| at.parse::<Point>()) {
        None => None,
        Some(Ok(point)) => Some(point),
        Some(Err(error)) => return ApiError::bad_request(error.to_string()).into_response(),
    };
    let watch = Watch {
        target: target.clone(),
        filter,
        table: wants_table(&request.headers),
    };
    let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(BUFFER);
    let options = Options {
        since,
        at,
        bookmarks,
        timeout,
    };
    tokio::spawn(run(api.clone(), watch, options, sender));
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver
            .recv()
            .await
            .map(|line| (Ok::<_, Infallible>(line), receiver))
    });
    (
        [(CONTENT_TYPE, "application/json")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// As [`send_all`], ending the watch when its client has not taken a line for [`SLOW_CLIENT`].
async fn send_live(sender: &Sender<Bytes>, lines: Vec<Bytes>) -> bool {
    for line in lines {
        if sender.send_timeout(line, SLOW_CLIENT).await.is_err() {
            return false;
        }
    }
    true
}

/// How one watch runs.
struct Options {
    since: Option<u64>,
    at: Option<Point>,
    bookmarks: bool,
    timeout: Duration,
}

async fn run<L: EventLog>(api: Api<L>, watch: Watch, options: Options, sender: Sender<Bytes>) {
    let mut folded = api.hub.folded_updates();
    let mut shutdown = api.hub.shutdown_signal();
    let deadline = tokio::time::Instant::now() + options.timeout;
    let bookmarks = options.bookmarks;
    let started = match (options.at, options.since) {
        (Some(at), _) => start_in_the_past(&api, &watch, at, &sender, deadline).await,
        (None, Some(since)) => start_after(&api, &watch, since, &sender, deadline).await,
        (None, None) => start_now(&api, &watch, None, &sender).await,
    };
    let Some(mut known) = started else {
        return;
    };
    if bookmarks {
        let Ok(line) = api
            .hub
            .view()
            .map(|view| bookmark(&view.folder.state, &watch))
        else {
            return;
        };
        if !send_all(&sender, vec![line]).await {
            return;
        }
    }
    let mut ticker =
        tokio::time::interval_at(tokio::time::Instant::now() + BOOKMARK_EVERY, BOOKMARK_EVERY);
    let mut rendered = tokio::time::Instant::now();
    loop {
        let lines = tokio::select! {
            changed = folded.changed() => {
                if changed.is_err() {
                    return;
                }
                // Folds that land meanwhile are taken in by the one render after the pause.
                tokio::time::sleep_until(rendered + RENDER_EVERY).await;
                folded.borrow_and_update();
                rendered = tokio::time::Instant::now();
                match api.hub.view() {
                    Ok(view) => {
                        let rendered = api.renders.objects(&view.folder.state, view.folder.seq, &watch.target);
                        changes_to(&view.folder.state, &watch, &rendered, &mut known)
                    }
                    Err(_) => return,
                }
            }
            _ = ticker.tick(), if bookmarks => match api.hub.view() {
                Ok(view) => vec![bookmark(&view.folder.state, &watch)],
                Err(_) => return,
            },
            () = tokio::time::sleep_until(deadline) => return,
            _ = shutdown.changed() => return,
            () = sender.closed() => return,
        };
        if !send_live(&sender, lines).await {
            return;
        }
    }
}

/// Sends the current objects (or those changed since `since`); what the client then knows.
async fn start_now<L: EventLog>(
    api: &Api<L>,
    watch: &Watch,
    since: Option<u64>,
    sender: &Sender<Bytes>,
) -> Option<Known> {
    let first = api.hub.view().map(|view| {
        let rendered = api
            .renders
            .objects(&view.folder.state, view.folder.seq, &watch.target);
        start(&view.folder.state, watch, &rendered, since)
    });
    let Ok((lines, known)) = first else {
        send_error(sender, "the hub's state lock is poisoned").await;
        return None;
    };
    send_all(sender, lines).await.then_some(known)
}

/// Sends the objects as they were at `at`, then every change since, input by input, up to
/// what the hub has folded; what the client then knows.
async fn start_in_the_past<L: EventLog>(
    api: &Api<L>,
    watch: &Watch,
    at: Point,
    sender: &Sender<Bytes>,
    deadline: tokio::time::Instant,
) -> Option<Known> {
    let log = api.hub.log().as_ref();
    let past = async {
        let seq = flotilla_replay::resolve(log, at).await?;
        flotilla_replay::fold_to(log, seq).await
    };
    let folder = match past.await {
        Ok(folder) => folder,
        Err(error) => {
            send_error(sender, &error.to_string()).await;
            return None;
        }
    };
    let rendered = render(&folder.state, &watch.target, None);
    let (lines, known) = start(&folder.state, watch, &rendered, None);
    if !send_all(sender, lines).await {
        return None;
    }
    catch_up(api, watch, (folder, known), sender, deadline).await
}

/// A watch from `resourceVersion` `since`: every change after it, deletions included — the log
/// replayed from the newest state the hub handed readers at or before it. Older than every
/// state the hub noted, the stream ends with `410 Gone` (`Expired`) and the client lists again,
/// as after an API server's watch cache moved on.
async fn start_after<L: EventLog>(
    api: &Api<L>,
    watch: &Watch,
    since: u64,
    sender: &Sender<Bytes>,
    deadline: tokio::time::Instant,
) -> Option<Known> {
    // A fold can change what a watch serves without moving the state's resource version (a
    // cluster scheduled, and so given its Work): a client at the current version may have
    // listed an earlier state of it. So the log is replayed from the first state at that
    // version, unless the hub has folded nothing since.
    let found = api.hub.view().map(|view| {
        let current = view.folder.state.resource_version();
        let seq = view.seq_of_version(since);
        let unmoved = since > current || seq == Some(view.folder.seq);
        (unmoved, seq, current)
    });
    let seq = match found {
        Ok((true, _, _)) => return start_now(api, watch, Some(since), sender).await,
        Ok((false, Some(seq), _)) => seq,
        Ok((false, None, current)) => {
            send_expired(sender, since, current).await;
            return None;
        }
        Err(_) => {
            send_error(sender, "the hub's state lock is poisoned").await;
            return None;
        }
    };
    let folder = match flotilla_replay::fold_to(api.hub.log().as_ref(), seq).await {
        Ok(folder) => folder,
        Err(error) => {
            send_error(sender, &error.to_string()).await;
            return None;
        }
    };
    let rendered = render(&folder.state, &watch.target, None);
    let known = admitted(watch, &rendered);
    catch_up(api, watch, (folder, known), sender, deadline).await
}

/// Replays the log from `folder` up to what the hub has folded, sending each input's changes;
/// what the client then knows.
async fn catch_up<L: EventLog>(
    api: &Api<L>,
    watch: &Watch,
    (mut folder, mut known): (flotilla_replay::Folder, Known),
    sender: &Sender<Bytes>,
    deadline: tokio::time::Instant,
) -> Option<Known> {
    let log = api.hub.log().as_ref();
    let until = api.hub.view().map_or(folder.seq, |view| view.folder.seq);
    match replay(
        log,
        &mut folder,
        until,
        (watch, &mut known),
        sender,
        deadline,
    )
    .await
    {
        Ok(Replayed::CaughtUp) => Some(known),
        Ok(Replayed::Stopped) => None,
        Err(error) => {
            send_error(sender, &error.to_string()).await;
            None
        }
    }
}

/// Ends a stream with the `ERROR` line an API server sends for a `resourceVersion` its watch
/// cache no longer holds.
async fn send_expired(sender: &Sender<Bytes>, since: u64, current: u64) {
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("too old resource version: {since} ({current})"),
        "reason": "Expired",
        "code": 410,
    });
    let mut text = json!({"type": "ERROR", "object": status}).to_string();
    text.push('\n');
    let _ = sender.send(Bytes::from(text)).await;
}

/// Ends a stream with an `ERROR` line carrying a Kubernetes `Status`.
async fn send_error(sender: &Sender<Bytes>, message: &str) {
    let status = ApiError::internal(message).to_status();
    let mut text = json!({"type": "ERROR", "object": status}).to_string();
    text.push('\n');
    let _ = sender.send(Bytes::from(text)).await;
}

//! The hub's JSON HTTP API, served on loopback; the `flotilla` CLI is its client.
//!
//! | method | path | what |
//! |---|---|---|
//! | GET | `/healthz` | liveness |
//! | GET | `/v1/status` | folded sequence, state hash, writer state |
//! | POST | `/v1/events?wait=true` | append one JSON event or an array (schema: `flotilla schema`); 507 with a `Status` while the log's storage is full |
//! | GET | `/v1/kinds?kind=` | how a kind name resolves (kind, group, namespaced, plural, version) |
//! | GET | `/v1/objects/{kind}?namespace=&name=` | objects in KubeFleet's shape |
//! | GET | `/v1/table/{kind}?namespace=&wide=` | `get`-style table text |
//! | GET | `/v1/describe/{kind}/{name}?namespace=` | `describe`-style text |
//! | GET | `/v1/log?from=&max=` | input events and their decisions |
//! | GET | `/v1/timeline?placement=&cluster=&run=&namespace=&after=&until=` | `replay timeline` as JSON |
//! | GET | `/v1/explain?placement=&cluster=&namespace=&at=` | `replay explain` as JSON |
//! | GET | `/v1/summary?at=` | the fleet at a glance: member health counts, placements, runs not done, pending approvals |
//! | GET | `/v1/members?at=&offset=&limit=&health=&q=` | one page of member clusters and how many match |
//! | GET | `/v1/runs?at=&clusters=` | every staged update run, each stage's clusters cut to the first `clusters` (20) |
//! | GET | `/v1/marks` | runs started, succeeded, failed and approvals asked and given, with their seq (at most 200) |
//! | GET | `/metrics` | Prometheus text (`docs/observability.md`) |
//! | GET | `/openapi.json` | OpenAPI 3.1 of this table (not of the Kubernetes API) |
//! | POST | `/v1/test/clock` | test only (`serve --test-clock`): `{"advanceSeconds": N}` or `{"set": TIME}` moves the hub's clock; 404 otherwise |
//!
//! `kinds`, `objects`, `table` and `describe` take `at=SEQ|TIME`: they then answer from the
//! state after that point of the log (`flotilla replay`'s points), folded from the newest
//! checkpoint before it.
//!
//! The same listener serves the Kubernetes API (`/api`, `/apis`, `/openapi/…`, `/version`; see
//! [`crate::kube`]).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use flotilla_core::Principal;
use flotilla_eventstore::EventLog;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ingest::IngestError;
use crate::runtime::Hub;
use flotilla_adapters::api_error::{error, internal};
use flotilla_adapters::json_event::JsonEnvelope;

/// Source of events posted without one.
pub const HTTP_SOURCE: &str = "http";
/// Most events returned by one `/v1/log` call.
pub const LOG_PAGE_MAX: usize = 1_000;

/// Builds the router over a hub.
pub fn router<L: EventLog>(hub: Hub<L>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/v1/status", get(status::<L>))
        .route("/v1/events", post(post_events::<L>))
        .route("/v1/kinds", get(kinds::<L>))
        .route("/v1/objects/{kind}", get(objects::<L>))
        .route("/v1/table/{kind}", get(table::<L>))
        .route("/v1/describe/{kind}/{name}", get(describe::<L>))
        .route("/v1/log", get(log::<L>))
        .route("/v1/log/export", get(crate::http_replay::log_export::<L>))
        .route("/v1/test/clock", post(test_clock::<L>))
        .route("/v1/timeline", get(crate::http_replay::timeline::<L>))
        .route("/v1/explain", get(crate::http_replay::explain::<L>))
        .route("/v1/summary", get(crate::http_summary::summary::<L>))
        .route("/v1/members", get(crate::http_summary::members::<L>))
        .route("/v1/marks", get(crate::http_marks::marks::<L>))
        .route("/v1/runs", get(crate::http_summary::runs_list::<L>))
        .route("/metrics", get(crate::metrics_scrape::scrape::<L>))
        .route("/openapi.json", get(crate::api_doc::openapi_json))
        .with_state(hub.clone())
        .merge(crate::web::router(hub.clone()))
        .merge(crate::kube::router(hub))
}

async fn status<L: EventLog>(State(hub): State<Hub<L>>) -> Response {
    let log_seq = match hub.log().last_seq().await {
        Ok(seq) => seq,
        Err(e) => return internal(e),
    };
    let view = match hub.view() {
        Ok(view) => view,
        Err(e) => return internal(e),
    };
    let hash = match view.state_hash() {
        Ok(hash) => hash.0,
        Err(e) => return internal(e),
    };
    Json(json!({
        "seq": view.folder.seq,
        "logSeq": log_seq,
        "stateHash": hash,
        "now": view.folder.state.now(),
        "memberClusters": view.folder.state.members().len(),
        "fenced": view.fenced,
        "declined": view.declined,
        "following": view.following,
    }))
    .into_response()
}

#[derive(Deserialize)]
struct WaitQuery {
    #[serde(default)]
    wait: bool,
}

async fn post_events<L: EventLog>(
    State(hub): State<Hub<L>>,
    Query(query): Query<WaitQuery>,
    principal: Option<axum::Extension<Principal>>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    // A body over the limit answers 413 as JSON, like every other refusal here.
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return error(rejection.status(), rejection.body_text()),
    };
    let principal = crate::auth::principal_of(principal);
    match crate::ingest::submit_json_as(&hub, &body, HTTP_SOURCE, &principal, query.wait).await {
        Ok(results) => Json(results).into_response(),
        Err(IngestError::BadRequest(message)) => error(StatusCode::BAD_REQUEST, message),
        Err(IngestError::TooLarge(message)) => error(StatusCode::PAYLOAD_TOO_LARGE, message),
        // As the Kubernetes API answers it, so every client reads one shape for it.
        Err(IngestError::StorageFull(message)) => {
            crate::kube::ApiError::insufficient_storage(message).into_response()
        }
        Err(IngestError::Unavailable(message)) => error(StatusCode::SERVICE_UNAVAILABLE, message),
    }
}

#[derive(Deserialize)]
struct KindQuery {
    kind: String,
    at: Option<String>,
}

async fn kinds<L: EventLog>(State(hub): State<Hub<L>>, Query(query): Query<KindQuery>) -> Response {
    let snapshot = match snapshot(&hub, query.at.as_deref()).await {
        Ok(snapshot) => snapshot,
        Err(response) => return response,
    };
    let state = snapshot.state();
    match flotilla_projections::resolve_kind(state, &query.kind) {
        Some(info) => {
            let served = flotilla_projections::type_of_kind(state, &info.group, &info.kind);
            Json(json!({
                "kind": info.kind,
                "group": info.group,
                "namespaced": info.namespaced,
                "plural": served.as_ref().map(|s| s.plural.clone()),
                "version": served.and_then(|s| s.versions.first().cloned()),
            }))
            .into_response()
        }
        None => unknown_kind(&query.kind),
    }
}

#[derive(Deserialize)]
struct ObjectQuery {
    namespace: Option<String>,
    name: Option<String>,
    #[serde(default)]
    wide: bool,
    /// A point in the log (`SEQ` or an RFC 3339 time): answer from the state there.
    at: Option<String>,
}

/// The state a read answers from: the hub's current one, or the state at a point of its log.
pub(crate) enum Snapshot<'a> {
    Now(std::sync::RwLockReadGuard<'a, crate::runtime::View>),
    Past(std::sync::Arc<flotilla_replay::Folder>),
}

impl Snapshot<'_> {
    pub(crate) fn state(&self) -> &flotilla_core::State {
        match self {
            Snapshot::Now(view) => &view.folder.state,
            Snapshot::Past(folder) => &folder.state,
        }
    }

    /// The sequence of the last input folded into [`Self::state`].
    pub(crate) fn seq(&self) -> u64 {
        match self {
            Snapshot::Now(view) => view.folder.seq,
            Snapshot::Past(folder) => folder.seq,
        }
    }
}

/// The current state, or with `at` the state after that point of the log (folded from the
/// newest checkpoint before it).
pub(crate) async fn snapshot<'a, L: EventLog>(
    hub: &'a Hub<L>,
    at: Option<&str>,
) -> Result<Snapshot<'a>, Response> {
    let Some(at) = at else {
        return hub.view().map(Snapshot::Now).map_err(internal);
    };
    let point: flotilla_replay::Point =
        at.parse().map_err(|e: flotilla_replay::seek::PointError| {
            error(StatusCode::BAD_REQUEST, e.to_string())
        })?;
    let log = hub.log().as_ref();
    let seq = flotilla_replay::resolve(log, point)
        .await
        .map_err(internal)?;
    past_folder(log, seq).await.map(Snapshot::Past)
}

/// The last past point folded: which log (its address) and sequence, and the state there.
type PastFold = Option<(usize, u64, std::sync::Arc<flotilla_replay::Folder>)>;

/// The page reads one past point with several requests at once (summary, members, runs,
/// approvals): they share one fold of the log instead of folding it each. The lock is held
/// over the fold, so requests for the same point wait for the first rather than fold again.
static PAST: tokio::sync::Mutex<PastFold> = tokio::sync::Mutex::const_new(None);

/// The state after `seq` of `log`, folded once per point however many reads ask for it.
async fn past_folder<L: EventLog>(
    log: &L,
    seq: u64,
) -> Result<std::sync::Arc<flotilla_replay::Folder>, Response> {
    // The address tells apart the logs of hubs living in one process (tests); a log's past
    // never changes, so a point once folded stays right.
    let id = std::ptr::from_ref(log).cast::<()>() as usize;
    let mut past = PAST.lock().await;
    if let Some((cached_id, cached_seq, folder)) = past.as_ref()
        && *cached_id == id
        && *cached_seq == seq
    {
        return Ok(std::sync::Arc::clone(folder));
    }
    // A point a little after the last one (the slider moved on, a replay plays forward) folds
    // on from it rather than from the checkpoint before it.
    let onward = past
        .as_ref()
        .filter(|(cached_id, cached_seq, _)| {
            *cached_id == id && *cached_seq < seq && seq - *cached_seq <= FOLD_ON_MAX
        })
        .map(|(_, _, folder)| flotilla_replay::Folder::clone(folder));
    let folder = match onward {
        Some(mut folder) => {
            flotilla_replay::fold_on(log, &mut folder, seq)
                .await
                .map_err(internal)?;
            folder
        }
        None => flotilla_replay::fold_to(log, seq).await.map_err(internal)?,
    };
    let folder = std::sync::Arc::new(folder);
    *past = Some((id, seq, std::sync::Arc::clone(&folder)));
    Ok(folder)
}

/// Inputs a past point may lie after the last one folded and still be folded on from it: a
/// copy of the state and this many inputs cost less than decoding a checkpoint at fleet scale.
const FOLD_ON_MAX: u64 = 50_000;

async fn objects<L: EventLog>(
    State(hub): State<Hub<L>>,
    Path(kind): Path<String>,
    Query(query): Query<ObjectQuery>,
) -> Response {
    let (snapshot, info) = match kind_at(&hub, &kind, query.at.as_deref()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let state = snapshot.state();
    match query.name {
        Some(name) => {
            let key = info.key(query.namespace.as_deref(), &name);
            match flotilla_projections::render_object(state, &key) {
                Some(object) => Json(object).into_response(),
                None => not_found(&info, &name),
            }
        }
        None => Json(flotilla_projections::list(
            state,
            &info,
            query.namespace.as_deref(),
        ))
        .into_response(),
    }
}

/// The state at the request's point (`?at=`) and the kind its path names, or the answer to
/// give instead.
async fn kind_at<'a, L: EventLog>(
    hub: &'a Hub<L>,
    kind: &str,
    at: Option<&str>,
) -> Result<(Snapshot<'a>, flotilla_projections::KindInfo), Response> {
    let snapshot = snapshot(hub, at).await?;
    match flotilla_projections::resolve_kind(snapshot.state(), kind) {
        Some(info) => Ok((snapshot, info)),
        None => Err(unknown_kind(kind)),
    }
}

/// The 404 for an object of a known kind that does not exist.
fn not_found(info: &flotilla_projections::KindInfo, name: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("{} {name:?} not found", info.kind),
    )
}

/// The 404 for a kind name that resolves to nothing, worded as kubectl words it.
fn unknown_kind(kind: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("the server doesn't have a resource type {kind:?}"),
    )
}

async fn table<L: EventLog>(
    State(hub): State<Hub<L>>,
    Path(kind): Path<String>,
    Query(query): Query<ObjectQuery>,
) -> Response {
    let (snapshot, info) = match kind_at(&hub, &kind, query.at.as_deref()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let state = snapshot.state();
    let namespace = query.namespace.as_deref();
    match &query.name {
        None => flotilla_projections::table(state, &info, namespace, query.wide).into_response(),
        Some(name) => {
            match flotilla_projections::table_named(state, &info, namespace, name, query.wide) {
                Some(text) => text.into_response(),
                None => not_found(&info, name),
            }
        }
    }
}

async fn describe<L: EventLog>(
    State(hub): State<Hub<L>>,
    Path((kind, name)): Path<(String, String)>,
    Query(query): Query<ObjectQuery>,
) -> Response {
    let (snapshot, info) = match kind_at(&hub, &kind, query.at.as_deref()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let state = snapshot.state();
    let key = info.key(query.namespace.as_deref(), &name);
    match flotilla_projections::describe(state, &key) {
        Some(text) => text.into_response(),
        None => not_found(&info, &name),
    }
}

#[derive(Deserialize)]
struct LogQuery {
    #[serde(default = "one")]
    from: u64,
    #[serde(default = "page")]
    max: usize,
}

fn one() -> u64 {
    1
}

fn page() -> usize {
    LOG_PAGE_MAX
}

async fn log<L: EventLog>(State(hub): State<Hub<L>>, Query(query): Query<LogQuery>) -> Response {
    let max = query.max.clamp(1, LOG_PAGE_MAX);
    let events = match hub.log().read(query.from.max(1), max).await {
        Ok(events) => events,
        Err(e) => return internal(e),
    };
    let Some(last) = events.last().map(|e| e.seq) else {
        return Json(json!({ "events": [], "decisions": [] })).into_response();
    };
    let batches = match hub
        .log()
        .read_decisions(query.from.max(1), LOG_PAGE_MAX)
        .await
    {
        Ok(batches) => batches,
        Err(e) => return internal(e),
    };
    let decisions: Vec<Value> = batches
        .iter()
        .flat_map(|b| b.decisions.iter())
        .filter(|(seq, _)| (query.from..=last).contains(seq))
        .map(|(seq, d)| json!({ "seq": seq, "decisions": d }))
        .collect();
    let events: Vec<Value> = events.iter().map(listed).collect();
    Json(json!({ "events": events, "decisions": decisions })).into_response()
}

/// One listed input record: the event in its JSON form, or a rejected record with its subject,
/// reason and bytes (base64 is left to `replay export`; here the byte count), or a newer frame.
fn listed(stored: &flotilla_eventstore::StoredEvent) -> Value {
    use flotilla_eventstore::LogRecord;
    match &stored.record {
        LogRecord::Event(envelope) => {
            json!({ "seq": stored.seq, "event": JsonEnvelope::from_envelope(envelope) })
        }
        LogRecord::Rejected {
            subject,
            reason,
            bytes,
        } => json!({
            "seq": stored.seq,
            "rejected": { "subject": subject, "reason": reason, "bytes": bytes.len() },
        }),
        LogRecord::Newer {
            kind,
            version,
            subject,
            bytes,
        } => json!({
            "seq": stored.seq,
            "newer": { "kind": kind.name(), "version": version, "subject": subject,
                       "bytes": bytes.len() },
        }),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClockMove {
    advance_seconds: Option<i64>,
    set: Option<chrono::DateTime<chrono::Utc>>,
}

/// Moves the test clock (never backwards) and answers the time it shows.
async fn test_clock<L: EventLog>(
    State(hub): State<Hub<L>>,
    Json(body): Json<ClockMove>,
) -> Response {
    let Some(clock) = hub.test_clock() else {
        return error(
            StatusCode::NOT_FOUND,
            "this hub runs on the system clock".to_owned(),
        );
    };
    let target = match (body.set, body.advance_seconds) {
        (Some(time), None) => time,
        (None, Some(seconds)) => clock.now() + chrono::Duration::seconds(seconds),
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "give one of advanceSeconds and set".to_owned(),
            );
        }
    };
    Json(json!({ "now": clock.set(target) })).into_response()
}

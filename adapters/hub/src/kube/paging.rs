//! LIST with `limit` and `continue` (API conventions, "Retrieving large results sets in
//! chunks"): a page of at most `limit` objects, and a `continue` token when more remain, with
//! `metadata.remainingItemCount`.
//!
//! Pages are consistent: the token names the log sequence the first page was read at and the
//! last object it returned, and every later page is read from the state at that sequence (the
//! hub can fold any past point, as `?at=` reads do), never from a newer one. A token whose point
//! can no longer be read — older than [`CONTINUE_AGE_MAX_SECS`], as etcd's compaction expires the
//! API server's, or a log that no longer folds there — answers `410 Expired` with the API
//! server's wording and a fresh token that continues from the same object now.

use axum::Json;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_eventstore::EventLog;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::api::Api;
use super::read::{matching, past, reader_clock, table, wants_table};
use super::request::{Request, Target};
use super::selector::Filter;
use super::status::ApiError;

/// How long a `continue` token stays readable (the API server's tokens last until etcd compacts
/// their revision, every 5 minutes by default).
pub const CONTINUE_AGE_MAX_SECS: i64 = 15 * 60;

/// The `continue` token: the point of the log and the last object returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Token {
    /// Format of the token (`meta.k8s.io/v1`, as the API server's tokens say).
    v: String,
    /// The log sequence the first page was read at.
    seq: u64,
    /// Namespace and name of the last object returned.
    after: (String, String),
    /// When the first page was served (Unix seconds, the hub's wall clock).
    issued: i64,
}

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

impl Token {
    fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).unwrap_or_default())
    }

    fn decode(text: &str) -> Result<Self, ApiError> {
        let invalid = || ApiError::bad_request("continue key is not valid");
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| invalid())?;
        let token: Self = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
        (token.v == TOKEN_VERSION)
            .then_some(token)
            .ok_or_else(invalid)
    }
}

/// What the request asks for: at most `limit` objects after the token's.
struct Paging {
    limit: Option<usize>,
    token: Option<Token>,
}

impl Paging {
    fn of(request: &Request) -> Result<Self, ApiError> {
        let limit = match request.params.get("limit").map(|l| l.parse::<i64>()) {
            None => None,
            Some(Ok(n)) if n > 0 => usize::try_from(n).ok(),
            Some(Ok(_)) => None,
            Some(Err(_)) => return Err(ApiError::bad_request("limit must be an integer")),
        };
        let token = match request.params.get("continue").filter(|t| !t.is_empty()) {
            Some(text) => Some(Token::decode(text)?),
            None => None,
        };
        Ok(Self { limit, token })
    }
}

/// GET of a collection, now, in the past (`?at=`), or from a `continue` token's point.
///
/// # Errors
/// A malformed selector, limit, token or point (400), an expired token (410).
pub async fn list<L: EventLog>(
    api: &Api<L>,
    target: &Target,
    request: &Request,
) -> Result<Response, ApiError> {
    let filter = Filter::from_params(&request.params)?;
    let paging = Paging::of(request)?;
    let now = Utc::now();
    // A later page counts ages to the reader's clock; a read of the past, to its own time.
    let folder = match &paging.token {
        Some(token) => Some(at_token(api, token, now).await?)
            .map(|folder| (reader_clock(&folder.state), folder)),
        None => past(api, request)
            .await?
            .map(|folder| (folder.state.now(), folder)),
    };
    if let Some((clock, folder)) = folder {
        return Ok(answer(
            target,
            request,
            &folder.state,
            folder.seq,
            &filter,
            &paging,
            clock,
        ));
    }
    let view = api.hub.view().map_err(ApiError::internal)?;
    let (state, seq) = (&view.folder.state, view.folder.seq);
    let clock = reader_clock(state);
    Ok(answer(target, request, state, seq, &filter, &paging, clock))
}

/// The state at a token's point: the hub's own when it has not moved since, else folded.
async fn at_token<L: EventLog>(
    api: &Api<L>,
    token: &Token,
    now: DateTime<Utc>,
) -> Result<flotilla_replay::Folder, ApiError> {
    let current = api.hub.view().map_err(ApiError::internal)?.folder.seq;
    if token.seq > current {
        return Err(ApiError::bad_request("continue key is not valid"));
    }
    let renewed = Token {
        seq: current,
        issued: now.timestamp(),
        ..token.clone()
    };
    if now.timestamp().saturating_sub(token.issued) > CONTINUE_AGE_MAX_SECS {
        return Err(ApiError::expired_continue(Some(renewed.encode())));
    }
    flotilla_replay::fold_to(api.hub.log().as_ref(), token.seq)
        .await
        .map_err(|_| ApiError::expired_continue(Some(renewed.encode())))
}

/// One page of the list at `seq`, as a `…List` or a `Table`.
fn answer(
    target: &Target,
    request: &Request,
    state: &State,
    seq: u64,
    filter: &Filter,
    paging: &Paging,
    clock: Option<DateTime<Utc>>,
) -> Response {
    let mut items = matching(state, target, filter);
    let mut metadata = json!({"resourceVersion": state.resource_version().to_string()});
    if paging.limit.is_some() || paging.token.is_some() {
        items.sort_by_cached_key(key_of);
        if let Some(token) = &paging.token {
            items.retain(|item| key_of(item) > token.after);
        }
        if let Some(limit) = paging.limit.filter(|limit| items.len() > *limit) {
            let remaining = items.split_off(limit);
            let issued = paging
                .token
                .as_ref()
                .map_or_else(|| Utc::now().timestamp(), |token| token.issued);
            let token = Token {
                v: TOKEN_VERSION.to_owned(),
                seq,
                after: items.last().map(key_of).unwrap_or_default(),
                issued,
            };
            metadata["continue"] = Value::from(token.encode());
            metadata["remainingItemCount"] = Value::from(remaining.len());
        }
    }
    if wants_table(&request.headers) {
        let mut table = table(target, &items, clock);
        table["metadata"] = metadata;
        return Json(table).into_response();
    }
    Json(json!({
        "apiVersion": target.api_version(),
        "kind": format!("{}List", target.served.kind),
        "metadata": metadata,
        "items": items,
    }))
    .into_response()
}

/// An object's place in a paged list: namespace, then name.
fn key_of(object: &Value) -> (String, String) {
    let text = |field: &str| object["metadata"][field].as_str().unwrap_or("").to_owned();
    (text("namespace"), text("name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_and_a_tampered_one_is_refused() {
        let token = Token {
            v: TOKEN_VERSION.to_owned(),
            seq: 42,
            after: ("ns".into(), "b".into()),
            issued: 1_700_000_000,
        };
        assert_eq!(Token::decode(&token.encode()).expect("decodes"), token);
        let error = Token::decode("not-a-token").expect_err("refused");
        assert_eq!(error.message, "continue key is not valid");
    }
}

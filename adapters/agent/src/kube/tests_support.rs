//! A kube-rs `Client` over a tower service that records every request and answers from the
//! test's responder (fixtures under `adapters/agent/tests/fixtures/kube/`): the request-building half
//! of the applier tested without an API server.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::marks::{self, Owner};
use super::{KubeApplier, RetryPolicy};
use crate::applier::ManifestOutcome;
use crate::work::{ApplyStrategy, ApplyType, Comparison, DesiredWork, WorkTarget};

/// One request as the API server would have received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `GET`, `POST`, `PATCH`, `DELETE`.
    pub method: String,
    /// The URL path.
    pub path: String,
    /// The query string (without `?`).
    pub query: String,
    /// The `Content-Type` header.
    pub content_type: String,
    /// The body as JSON (`Null` when empty).
    pub body: Value,
}

impl Recorded {
    /// Whether the query has `key=value`.
    pub fn has_query(&self, pair: &str) -> bool {
        self.query.split('&').any(|p| p == pair)
    }
}

/// The requests a client sent, in order.
pub type Requests = Arc<Mutex<Vec<Recorded>>>;

/// Every recorded request.
pub fn sent(requests: &Requests) -> Vec<Recorded> {
    requests.lock().map(|r| r.clone()).unwrap_or_default()
}

/// Writes (anything but GET).
pub fn writes_of(requests: &Requests) -> Vec<Recorded> {
    sent(requests)
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect()
}

/// A fixture from `adapters/agent/tests/fixtures/kube/`.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/kube/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The answer to one request: status code and JSON body.
pub type Answer = (u16, Value);

/// A client whose requests `respond` answers; the requests are recorded.
pub fn client(
    respond: impl Fn(&Recorded) -> Answer + Send + Sync + 'static,
) -> (::kube::Client, Requests) {
    let requests: Requests = Arc::default();
    let respond = Arc::new(respond);
    let recorder = requests.clone();
    let service = tower::service_fn(move |request: http::Request<::kube::client::Body>| {
        let requests = recorder.clone();
        let respond = respond.clone();
        async move {
            let (parts, body) = request.into_parts();
            let bytes = body.collect_bytes().await.unwrap_or_default();
            let recorded = Recorded {
                method: parts.method.to_string(),
                path: parts.uri.path().to_owned(),
                query: parts.uri.query().unwrap_or_default().to_owned(),
                content_type: parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned(),
                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            };
            let (status, body) = respond(&recorded);
            if let Ok(mut all) = requests.lock() {
                all.push(recorded);
            }
            let response = http::Response::builder()
                .status(status)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(::kube::client::Body::from(body.to_string().into_bytes()))
                .unwrap_or_else(|e| panic!("building a response: {e}"));
            Ok::<_, Infallible>(response)
        }
    });
    (::kube::Client::new(service, "default"), requests)
}

/// An applier for member cluster `member-1` over a recording client; retries without pausing.
pub fn fake(
    respond: impl Fn(&Recorded) -> Answer + Send + Sync + 'static,
) -> (KubeApplier, Requests) {
    let (client, requests) = client(respond);
    let retry = RetryPolicy {
        attempts_max: 3,
        pause_first: Duration::ZERO,
        pause_max: Duration::ZERO,
    };
    (KubeApplier::new("member-1", client, retry), requests)
}

/// The Work `shop-work` of placement `shop` with these manifests and strategy.
pub fn work(manifests: Vec<Value>, strategy: ApplyStrategy) -> DesiredWork {
    DesiredWork {
        target: WorkTarget {
            name: "shop-work".into(),
            placement: "shop".into(),
            namespace: None,
        },
        resource_index: 1,
        manifests,
        apply_strategy: strategy,
        override_snapshots: None,
    }
}

/// The 404 Status.
pub fn not_found() -> Answer {
    (404, fixture("status-not-found.json"))
}

/// What the API server answers a create or apply with: the body, with server fields added.
pub fn echo(request: &Recorded) -> Answer {
    let mut object = request.body.clone();
    object["metadata"]["uid"] = json!("0c1f6a4e-8f1b-4c55-9a0e-6b7d2e3f4a5b");
    object["metadata"]["resourceVersion"] = json!("2001");
    object["metadata"]["generation"] = json!(1);
    (if request.method == "POST" { 201 } else { 200 }, object)
}

/// The recorded ConfigMap's URL.
pub const SETTINGS_PATH: &str = "/api/v1/namespaces/shop/configmaps/settings";

/// The ConfigMap of `configmap-settings.json` as a manifest, with this colour.
pub fn settings(colour: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "shop", "labels": {"app": "shop"}},
        "data": {"colour": colour, "size": "L"}})
}

/// The owner marks of `work`'s Work on `member-1`.
pub fn owner() -> Owner {
    Owner::new(
        "member-1",
        &work(Vec::new(), ApplyStrategy::default()).target,
    )
}

/// `fixture` as it is after this agent applied `manifest` to it by client-side apply: the
/// server's fields from the recording, the rest from what was sent.
pub fn applied_by_us(fixture_name: &str, manifest: &Value) -> Value {
    let sent = marks::with_last_applied(&marks::marked(&marks::sanitize(manifest), &owner()))
        .unwrap_or_default();
    let mut live = fixture(fixture_name);
    for (key, value) in sent.as_object().into_iter().flatten() {
        if key != "metadata" {
            live[key] = value.clone();
        }
    }
    live["metadata"]["annotations"] = sent["metadata"]["annotations"].clone();
    live["metadata"]["labels"] = sent["metadata"]["labels"].clone();
    live
}

/// A strategy of this type and comparison, defaults otherwise.
pub fn strategy(apply_type: ApplyType, comparison: Comparison) -> ApplyStrategy {
    ApplyStrategy {
        apply_type,
        comparison,
        ..ApplyStrategy::default()
    }
}

/// Answers GETs with `live` and writes with `written` (or an echo of the request).
pub fn serving(
    live: Value,
    written: Option<Value>,
) -> impl Fn(&Recorded) -> (u16, Value) + Send + Sync {
    move |request| match (request.method.as_str(), &written) {
        ("GET", _) => (200, live.clone()),
        (_, Some(object)) => (200, object.clone()),
        (_, None) => echo(request),
    }
}

/// The only outcome.
pub fn one(outcomes: &[ManifestOutcome]) -> &ManifestOutcome {
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    &outcomes[0]
}

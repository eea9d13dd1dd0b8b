//! Fuzzes the request bodies of the Kubernetes API the hub serves (`kube::router`): create
//! (POST), update (PUT), the `status` subresource, and every patch type the API accepts —
//! JSON merge patch, JSON patch, strategic merge patch and server-side apply (YAML or JSON) —
//! against a real hub over a real redb log (in a temporary directory) holding a namespace, a
//! ConfigMap, a member cluster and a placement. Most writes are dry runs; one in four is
//! appended and folded, so the fold's rejections are answered too.
//!
//! Properties: no panic (in the API, the hub's writer or the fold); no server error; every
//! refusal is a Kubernetes `Status` (`kind: Status`, `status: Failure`, `code` = the HTTP
//! status, a message); every success answers with the object named in the path.

#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arbitrary::{Result, Unstructured};
use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use chrono::Utc;
use flotilla_hub::kube;
use flotilla_hub::runtime::{Hub, HubConfig};
use flotilla_core::{Envelope, Input};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tower::ServiceExt;
use uuid::Uuid;

/// Most bytes of a response read back.
const RESPONSE_BYTES_MAX: usize = 16 * 1024 * 1024;

/// An object the hub holds: its collection's path and its name.
struct Object {
    collection: &'static str,
    name: &'static str,
}

const OBJECTS: [Object; 4] = [
    Object {
        collection: "/api/v1/namespaces/app/configmaps",
        name: "cm",
    },
    Object {
        collection: "/api/v1/namespaces",
        name: "app",
    },
    Object {
        collection: "/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters",
        name: "m1",
    },
    Object {
        collection: "/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourceplacements",
        name: "crp",
    },
];

/// The patch content types the API accepts, and one it does not.
const PATCH_TYPES: [&str; 6] = [
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+json",
    "text/plain",
];

/// The hub the requests go to, started once per fuzzing process.
struct Fixture {
    runtime: tokio::runtime::Runtime,
    router: Router,
    _directory: tempfile::TempDir,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| start().expect("the fuzzing hub starts"))
}

/// Why the fixture could not start.
type Failure = Box<dyn std::error::Error + Send + Sync>;

fn start() -> std::result::Result<Fixture, Failure> {
    let directory = if std::path::Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm")?
    } else {
        tempfile::tempdir()?
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let log = RedbLog::open(&directory.path().join("hub.redb"), RedbOptions::default())?;
    let config = HubConfig {
        idle_wait: Duration::from_millis(5),
        ..HubConfig::default()
    };
    let router = runtime.block_on(async {
        let hub = Hub::open(Arc::new(log), config).await?;
        let writer = hub.clone();
        tokio::spawn(async move { writer.run_writer().await });
        let seeded = hub.submit(seed_objects()).await?;
        let last = seeded.iter().map(|a| a.seq).max().unwrap_or(0);
        assert!(
            hub.wait_folded(last, Duration::from_secs(10)).await,
            "seeds fold"
        );
        Ok::<_, Failure>(kube::router(hub))
    })?;
    Ok(Fixture {
        runtime,
        router,
        _directory: directory,
    })
}

fn seed_objects() -> Vec<Envelope> {
    let manifests = [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cm", "namespace": "app"}, "data": {"k": "v"}}),
        json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
               "metadata": {"name": "m1", "labels": {"env": "prod"}},
               "spec": {"heartbeatPeriodSeconds": 60}}),
        json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
               "kind": "ClusterResourcePlacement", "metadata": {"name": "crp"},
               "spec": {"resourceSelectors": [{"group": "", "version": "v1",
                                               "kind": "Namespace", "name": "app"}],
                        "policy": {"placementType": "PickAll"}}}),
    ];
    manifests
        .iter()
        .map(|manifest| {
            let input = Input::Apply {
                manifest: manifest.to_string(),
            };
            Envelope::new(Uuid::now_v7(), Utc::now(), "fuzz", input)
        })
        .collect()
}

/// One request the fuzz bytes describe.
struct Planned {
    request: Request<Body>,
    /// The object a success must answer with, when the path names it.
    name: Option<&'static str>,
}

fn plan(input: &mut Unstructured<'_>) -> Result<Planned> {
    let object = input.choose(&OBJECTS)?;
    let dry_run = !input.ratio(1, 4)?;
    let mut query = vec![];
    if dry_run {
        query.push("dryRun=All");
    }
    let (method, path, content_type, name) = match input.int_in_range(0..=3_u8)? {
        0 => {
            // A create is always a dry run: appended objects would pile up over a run.
            query.retain(|q| *q != "dryRun=All");
            query.push("dryRun=All");
            (
                Method::POST,
                object.collection.to_owned(),
                "application/json",
                None,
            )
        }
        1 => (
            Method::PUT,
            item(object),
            "application/json",
            Some(object.name),
        ),
        2 => (
            Method::PUT,
            format!("{}/status", item(object)),
            "application/json",
            None,
        ),
        _ => {
            let content_type = *input.choose(&PATCH_TYPES)?;
            if content_type.starts_with("application/apply-patch") && !input.ratio(1, 16)? {
                query.push("fieldManager=fuzz");
                if input.arbitrary()? {
                    query.push("force=true");
                }
            }
            (Method::PATCH, item(object), content_type, Some(object.name))
        }
    };
    let body = input.bytes(input.len())?.to_vec();
    let uri = if query.is_empty() {
        path
    } else {
        format!("{path}?{}", query.join("&"))
    };
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    Ok(Planned { request, name })
}

fn item(object: &Object) -> String {
    format!("{}/{}", object.collection, object.name)
}

fuzz_target!(|bytes: &[u8]| {
    let Ok(planned) = plan(&mut Unstructured::new(bytes)) else {
        return;
    };
    let fixture = fixture();
    let (status, body) = fixture.runtime.block_on(async {
        let response = fixture
            .router
            .clone()
            .oneshot(planned.request)
            .await
            .expect("the router answers");
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), RESPONSE_BYTES_MAX)
            .await
            .expect("the response body reads");
        (status, body)
    });
    let answer: Value = serde_json::from_slice(&body).expect("every answer is JSON");
    assert!(!status.is_server_error(), "server error {status}: {answer}");
    if status.is_success() {
        answers_with_the_object(&answer, planned.name);
    } else {
        is_a_failure_status(status, &answer);
    }
});

fn answers_with_the_object(answer: &Value, name: Option<&str>) {
    assert!(
        answer.is_object(),
        "a success answers with an object: {answer}"
    );
    if let Some(name) = name {
        assert_eq!(
            answer["metadata"]["name"], name,
            "the object in the path: {answer}"
        );
    }
}

fn is_a_failure_status(status: StatusCode, answer: &Value) {
    assert_eq!(answer["kind"], "Status", "{answer}");
    assert_eq!(answer["apiVersion"], "v1", "{answer}");
    assert_eq!(answer["status"], "Failure", "{answer}");
    assert_eq!(answer["code"], status.as_u16(), "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "a refusal says why: {answer}");
}

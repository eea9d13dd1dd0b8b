//! Kubernetes client libraries against `flotilla serve`: the official Python client (PyPI
//! `kubernetes`) and kube-rs each create, list (with a label selector) and watch a
//! ClusterResourcePlacement through the hub's Kubernetes API, using a kubeconfig as users do.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HubProcess, stderr};
use futures::TryStreamExt;
use kube::api::{Api, DynamicObject, ListParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

#[test]
fn the_python_client_creates_lists_and_watches_a_placement() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kube_client.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(kubectl.config())
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    assert!(output.status.success(), "{}", stderr(&output));
    let found: Value = serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())?;
    assert_eq!(found["listed"], json!(["from-python"]), "{found}");
    assert_eq!(
        found["watched"],
        json!([["ADDED", "from-python"]]),
        "{found}"
    );
    assert_eq!(found["again"], json!([409, "AlreadyExists"]), "{found}");
    assert!(found["uid"].as_str().is_some_and(|uid| !uid.is_empty()));
    let shown = kubectl.ok(&["get", "crp", "from-python"])?;
    assert!(shown.contains("from-python"), "{shown}");
    hub.stop()
}

/// Runs `tests/kube_client_watch.py` with `args`; its JSON line.
fn python_watch(kubectl: &Kubectl, args: &[&str]) -> Result<Value, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kube_client_watch.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(kubectl.config())
        .args(args)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())
}

#[test]
fn the_python_client_watches_every_change_relists_after_410_and_pages() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    let hub = HubProcess::start(&binary(), &data, &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    // From the list's version: the deletion made after it is not skipped.
    let found = python_watch(&kubectl, &["changes"])?;
    assert_eq!(
        found["watched"],
        json!([["DELETED", "crp-a"], ["ADDED", "crp-c"]]),
        "{found}"
    );
    let version = found["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // A restarted hub holds no earlier version: the client gets 410, relists and goes on.
    hub.stop()?;
    let hub = HubProcess::start(&binary(), &data, &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let found = python_watch(&kubectl, &["expired", &version])?;
    assert_eq!(found["gone"][0], 410, "{found}");
    assert_eq!(found["relisted"], json!(["crp-b", "crp-c"]), "{found}");
    assert_eq!(found["after"], json!([["ADDED", "crp-d"]]), "{found}");
    // Paging: crp-b, crp-c, crp-d in pages of two, with the count still to come.
    let found = python_watch(&kubectl, &["pages"])?;
    assert_eq!(
        found["pages"],
        json!([[["crp-b", "crp-c"], 1], [["crp-d"], null]]),
        "{found}"
    );
    hub.stop()
}

async fn kube_rs_round_trip(config: &Path) -> Result<(Vec<String>, Vec<String>), String> {
    let kubeconfig = Kubeconfig::read_from(config).map_err(|e| e.to_string())?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
    let gvk = GroupVersionKind::gvk(
        "placement.kubernetes-fleet.io",
        "v1beta1",
        "ClusterResourcePlacement",
    );
    let (resource, _) = kube::discovery::pinned_kind(&client, &gvk)
        .await
        .map_err(|e| format!("discovery: {e}"))?;
    let placements: Api<DynamicObject> = Api::all_with(client, &resource);
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "from-kube-rs", "labels": {"made-by": "kube-rs"}},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
            "policy": {"placementType": "PickAll"},
        },
    }))
    .map_err(|e| e.to_string())?;
    placements
        .create(&PostParams::default(), &object)
        .await
        .map_err(|e| format!("create: {e}"))?;
    let listed = placements
        .list(&ListParams::default().labels("made-by=kube-rs"))
        .await
        .map_err(|e| format!("list: {e}"))?;
    let names = listed
        .items
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    let events: Vec<WatchEvent<DynamicObject>> = placements
        .watch(&WatchParams::default().timeout(2), "0")
        .await
        .map_err(|e| format!("watch: {e}"))?
        .try_collect()
        .await
        .map_err(|e| format!("watch stream: {e}"))?;
    let watched = events
        .iter()
        .map(|event| match event {
            WatchEvent::Added(o) => {
                format!("ADDED {}", o.metadata.name.clone().unwrap_or_default())
            }
            WatchEvent::Modified(o) => {
                format!("MODIFIED {}", o.metadata.name.clone().unwrap_or_default())
            }
            WatchEvent::Deleted(o) => {
                format!("DELETED {}", o.metadata.name.clone().unwrap_or_default())
            }
            WatchEvent::Bookmark(_) => "BOOKMARK".to_owned(),
            WatchEvent::Error(e) => format!("ERROR {e}"),
        })
        .collect();
    Ok((names, watched))
}

#[test]
fn kube_rs_discovers_creates_lists_and_watches_a_placement() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let outcome = runtime.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(30),
            kube_rs_round_trip(kubectl.config()),
        )
        .await
    });
    let (listed, watched) = outcome.map_err(|_| "kube-rs timed out".to_owned())??;
    assert_eq!(listed, ["from-kube-rs"]);
    assert_eq!(
        watched,
        ["ADDED from-kube-rs", "BOOKMARK"],
        "kube-rs allows bookmarks; one follows the initial objects"
    );
    hub.stop()
}

//! An agent lists its cluster's Works, then watches from the list's `resourceVersion`. A fold
//! between the two may give the cluster a Work without moving the state's resource version (its
//! first heartbeat joins it and the placement schedules it): the watch still sends that Work.

use std::path::PathBuf;
use std::time::Duration;

use flotilla_tests::support::{HubProcess, http_client};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const WORKS: &str =
    "/apis/placement.kubernetes-fleet.io/v1beta1/namespaces/fleet-member-member-1/works";

async fn get(url: &str) -> Result<String, String> {
    let response = http_client()
        .get(url)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    response.text().await.map_err(|e| e.to_string())
}

#[test]
fn a_work_given_after_the_list_is_sent_by_the_watch() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let member = json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster", "metadata": {"name": "member-1"},
        "spec": {"heartbeatPeriodSeconds": 60}});
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}});
    let placement = json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "web"},
        "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace",
            "name": "web"}], "policy": {"placementType": "PickAll"}}});
    let applies: Vec<Value> = [member, namespace, placement]
        .into_iter()
        .map(|manifest| json!({"type": "apply", "manifest": manifest}))
        .collect();
    hub.post_events(&Value::Array(applies))?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let list: Value = serde_json::from_str(&runtime.block_on(get(&format!("{}{WORKS}", hub.url)))?)
        .map_err(|e| e.to_string())?;
    assert_eq!(list["items"], json!([]), "not joined yet: no Work");
    let listed_at = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_owned();

    // The first heartbeat joins member-1 and the placement schedules it: a Work, and (this is
    // the case) no new resource version of the state.
    hub.post_events(&json!([{"type": "heartbeat", "cluster": "member-1"}]))?;
    let after: Value =
        serde_json::from_str(&runtime.block_on(get(&format!("{}{WORKS}", hub.url)))?)
            .map_err(|e| e.to_string())?;
    assert_eq!(after["items"].as_array().map(Vec::len), Some(1), "{after}");
    assert_eq!(
        after["metadata"]["resourceVersion"],
        json!(listed_at),
        "{after}"
    );

    let watch = format!(
        "{}{WORKS}?watch=true&resourceVersion={listed_at}&timeoutSeconds=2",
        hub.url
    );
    let lines = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(20), get(&watch))
            .await
            .map_err(|_| "the watch did not end".to_owned())?
    })?;
    assert!(
        lines
            .lines()
            .any(|line| line.contains("\"ADDED\"") || line.contains("\"MODIFIED\"")),
        "the watch sent no Work: {lines}"
    );
    hub.stop()
}

//! Every kind the hub stores or derives can be listed, read, described and deleted by kind,
//! plural and short name — with the `flotilla` CLI and with kubectl — and `flotilla patch`
//! works as `kubectl patch` does. Deleting a derived object (a snapshot, a binding, a Work) is
//! accepted and the object is derived again at once, as KubeFleet's controllers would.

use std::path::{Path, PathBuf};

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<String, String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(stdout(&output))
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

/// A hub with members, overrides, a placement bound to both members, a staged run waiting for
/// approval and an eviction and budget.
fn fleet(dir: &Path) -> Result<(HubProcess, Kubectl), String> {
    let hub = HubProcess::start(&binary(), &dir.join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    ok(&hub, &["apply", "-f", &fixture("staged-fleet.yaml")])?;
    hub.post_events(&json!([
        {"schemaVersion": 1, "type": "heartbeat", "cluster": "member1"},
        {"schemaVersion": 1, "type": "heartbeat", "cluster": "member2"},
        {"schemaVersion": 1, "type": "heartbeat", "cluster": "member3"},
    ]))?;
    for file in [
        "002-override-3.yaml",
        "002-override-5.yaml",
        "002-crp-1.yaml",
    ] {
        ok(
            &hub,
            &["apply", "-f", &fixture(&format!("seed-yaml/{file}"))],
        )?;
    }
    ok(&hub, &["apply", "-f", &fixture("staged-rollout.yaml")])?;
    ok(&hub, &["apply", "-f", &fixture("staged-run.yaml")])?;
    ok(&hub, &["run", "start", "example-run"])?;
    hub.post_events(
        &json!({"schemaVersion": 1, "type": "report", "cluster": "member1",
        "placement": "example-placement", "resourceIndex": 0, "applied": true, "available": true}),
    )?;
    let extra = dir.join("eviction.yaml");
    std::fs::write(
        &extra,
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementDisruptionBudget\n\
         metadata: {name: example-placement}\nspec: {maxUnavailable: 1}\n---\n\
         apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementEviction\n\
         metadata: {name: evict-1}\nspec: {placementName: example-placement, clusterName: member3}\n",
    )
    .map_err(|e| e.to_string())?;
    ok(&hub, &["apply", "-f", &extra.display().to_string()])?;
    Ok((hub, kubectl))
}

/// Every kind, by each of its names, with an object it must list.
const KINDS: [(&[&str], &str); 14] = [
    (&["clusterresourceoverrides", "cro"], "cro-1"),
    (&["resourceoverrides", "ro"], "ro-1"),
    (&["clusterresourceoverridesnapshots", "cros"], "cro-1-0"),
    (&["resourceoverridesnapshots", "ros"], "ro-1-0"),
    (
        &["clusterresourcebindings", "crb"],
        "example-placement-member1",
    ),
    (
        &["clusterresourcesnapshots", "crs"],
        "example-placement-0-snapshot",
    ),
    (
        &["clusterschedulingpolicysnapshots", "csps"],
        "example-placement-0",
    ),
    (&["works", "work"], "example-placement-work"),
    (
        &["clusterapprovalrequests", "careq"],
        "example-run-after-staging",
    ),
    (&["clusterresourceplacementevictions", "crpe"], "evict-1"),
    (
        &["clusterresourceplacementdisruptionbudgets", "crpdb"],
        "example-placement",
    ),
    (&["clusterstagedupdateruns", "csur"], "example-run"),
    (
        &["clusterstagedupdatestrategies", "csus"],
        "example-strategy",
    ),
    (&["memberclusters", "cluster"], "member1"),
];

#[test]
fn every_stored_and_derived_kind_lists_by_each_name() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (hub, kubectl) = fleet(dir.path())?;
    for (names, object) in KINDS {
        for name in names {
            let listed = ok(&hub, &["get", name, "-A"]).or_else(|_| ok(&hub, &["get", name]))?;
            assert!(listed.contains(object), "flotilla get {name}: {listed}");
            let by_kubectl = kubectl.ok(&["get", name, "-A"])?;
            assert!(
                by_kubectl.contains(object),
                "kubectl get {name}: {by_kubectl}"
            );
        }
    }
    let described = ok(&hub, &["describe", "cro", "cro-1"])?;
    assert!(described.contains("ClusterResourceOverride"), "{described}");
    let snapshot: Value =
        serde_json::from_str(&ok(&hub, &["get", "cros", "cro-1-0", "-o", "json"])?)
            .map_err(|e| e.to_string())?;
    assert_eq!(
        snapshot["metadata"]["labels"]["kubernetes-fleet.io/parent-resource-override"],
        "cro-1"
    );
    assert!(
        snapshot["spec"]["overrideSpec"]["policy"].is_object(),
        "{snapshot}"
    );
    hub.stop()
}

#[test]
fn derived_objects_come_back_when_deleted_and_stored_ones_go() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (hub, kubectl) = fleet(dir.path())?;
    let deleted = ok(&hub, &["delete", "crs", "example-placement-0-snapshot"])?;
    assert_eq!(
        deleted,
        "clusterresourcesnapshot.placement.kubernetes-fleet.io/example-placement-0-snapshot deleted\n"
    );
    ok(&hub, &["get", "crs", "example-placement-0-snapshot"])?;
    let first = |kind: &str| -> Result<(String, String), String> {
        let list: Value = serde_json::from_str(&kubectl.ok(&["get", kind, "-A", "-o", "json"])?)
            .map_err(|e| e.to_string())?;
        let metadata = &list["items"][0]["metadata"];
        Ok((
            metadata["name"].as_str().unwrap_or_default().to_owned(),
            metadata["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned(),
        ))
    };
    let (binding, _) = first("crb")?;
    kubectl.ok(&["delete", "crb", &binding])?;
    kubectl.ok(&["get", "crb", &binding])?;
    let (work, namespace) = first("work")?;
    kubectl.ok(&["delete", "work", &work, "-n", &namespace])?;
    kubectl.ok(&["get", "work", &work, "-n", &namespace])?;

    let gone = ok(&hub, &["delete", "cro", "cro-1"])?;
    assert_eq!(
        gone,
        "clusterresourceoverride.placement.kubernetes-fleet.io/cro-1 deleted\n"
    );
    assert!(ok(&hub, &["get", "cros"]).is_ok_and(|t| !t.contains("cro-1-0")));
    kubectl.ok(&["delete", "ro", "ro-1", "-n", "application-1"])?;
    kubectl.fails(&["get", "ro", "ro-1", "-n", "application-1"])?;
    hub.stop()
}

#[test]
fn flotilla_patch_approves_and_stops_as_kubectl_patch_does() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (hub, _kubectl) = fleet(dir.path())?;
    let approved = ok(
        &hub,
        &[
            "patch",
            "careq",
            "example-run-after-staging",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Approved","status":"True","reason":"lgtm","message":"lgtm","lastTransitionTime":"2026-11-23T00:00:00Z","observedGeneration":1}]}}"#,
            "--subresource",
            "status",
        ],
    )?;
    assert_eq!(
        approved,
        "clusterapprovalrequest.placement.kubernetes-fleet.io/example-run-after-staging patched\n"
    );
    let request: Value = serde_json::from_str(&ok(
        &hub,
        &["get", "careq", "example-run-after-staging", "-o", "json"],
    )?)
    .map_err(|e| e.to_string())?;
    let conditions = request["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "ApprovalAccepted" && c["status"] == "True"),
        "{request}"
    );
    ok(
        &hub,
        &[
            "patch",
            "csur",
            "example-run",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"state":"Stop"}}"#,
        ],
    )?;
    let run: Value =
        serde_json::from_str(&ok(&hub, &["get", "csur", "example-run", "-o", "json"])?)
            .map_err(|e| e.to_string())?;
    assert_eq!(run["spec"]["state"], "Stop");
    let refused = hub.cli(&[
        "patch",
        "crp",
        "example-placement",
        "--type",
        "merge",
        "-p",
        r#"{"status":{}}"#,
        "--subresource",
        "status",
    ])?;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("Error from server (Invalid)"),
        "{}",
        stderr(&refused)
    );
    hub.stop()
}

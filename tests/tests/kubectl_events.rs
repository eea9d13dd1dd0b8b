//! Events with the machine's `kubectl`: a hub, two `sim` agent processes, a placement that
//! rolls out, one whose Deployment never becomes available (the sim's bad-image marker) and an
//! eviction. `kubectl get events` lists what KubeFleet's controllers record — the placement's
//! milestones, a Warning for the failed one, the member's joining, the eviction's verdict — in
//! `v1` and `events.k8s.io/v1`; `kubectl describe` shows each object's Events, found by
//! `involvedObject` as kubectl asks (a cluster-scoped object's namespace is `""`).

use std::path::PathBuf;

use flotilla_tests::agents::{Agent, wait_for};
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::{crp_available, kube_json, write};
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const FLEET: &str = "apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-1}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-2}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: v1
kind: Namespace
metadata: {name: broken}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: broken}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: \"nginx:bad\"}]}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: crp-1}
spec:
  resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: app}]
  policy: {placementType: PickAll}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: crp-2}
spec:
  resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: broken}]
  policy: {placementType: PickFixed, clusterNames: [member-1]}
";

const EVICTION: &str = "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata: {name: evict-1}
spec: {placementName: crp-1, clusterName: member-2}
";

/// `(type, reason, kind/name)` of every `v1` event, across namespaces.
fn events(kubectl: &Kubectl, extra: &[&str]) -> Result<Vec<(String, String, String)>, String> {
    let mut args = vec!["get", "events", "-A"];
    args.extend(extra);
    let list = kube_json(kubectl, &args)?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Ok((list["items"].as_array().into_iter().flatten())
        .map(|e| {
            let object = &e["involvedObject"];
            let about = format!("{}/{}", text(&object["kind"]), text(&object["name"]));
            (text(&e["type"]), text(&e["reason"]), about)
        })
        .collect())
}

fn has(found: &[(String, String, String)], kind: &str, reason: &str, about: &str) -> bool {
    found
        .iter()
        .any(|(k, r, a)| k == kind && r == reason && a == about)
}

#[test]
fn kubectl_lists_and_describes_what_the_controllers_record() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    kubectl.ok(&["apply", "-f", &write(dir, "fleet.yaml", FLEET)?])?;
    let _agents: Vec<Agent> = ["member-1", "member-2"]
        .iter()
        .map(|cluster| {
            let state = dir.join(format!("state-{cluster}"));
            Agent::start_with(&binary(), &["--hub", &hub.url], cluster, "sim", &state, &[])
        })
        .collect::<Result<_, _>>()?;
    wait_for("crp-1 available", || {
        Ok(crp_available(&kubectl, "crp-1")?.then_some(()))
    })?;
    let crp = "ClusterResourcePlacement";
    let found = wait_for("crp-2's warning", || {
        let found = events(&kubectl, &[])?;
        let warned = found
            .iter()
            .any(|(k, _, a)| k == "Warning" && a == &format!("{crp}/crp-2"));
        Ok(warned.then_some(found))
    })?;
    for reason in ["PlacementRolloutStarted", "PlacementRolloutCompleted"] {
        assert!(
            has(&found, "Normal", reason, &format!("{crp}/crp-1")),
            "{reason}: {found:?}"
        );
    }
    assert!(
        has(
            &found,
            "Normal",
            "MemberClusterJoined",
            "MemberCluster/member-1"
        ),
        "{found:?}"
    );
    let warnings = events(&kubectl, &["--field-selector", "type=Warning"])?;
    assert!(
        !warnings.is_empty() && warnings.iter().all(|(k, ..)| k == "Warning"),
        "{warnings:?}"
    );

    // describe finds an object's events by involvedObject (namespace "" for cluster scope).
    let described = kubectl.ok(&["describe", "crp", "crp-1"])?;
    let events_section = described.split("Events:").nth(1).unwrap_or_default();
    assert!(
        events_section.contains("PlacementRolloutCompleted"),
        "{described}"
    );
    assert!(
        events_section.contains("cluster-resource-placement-controller"),
        "{described}"
    );
    assert!(
        !events_section.contains("crp-2"),
        "only crp-1's events: {described}"
    );

    // The eviction's verdict is an event of the eviction.
    kubectl.ok(&["apply", "-f", &write(dir, "eviction.yaml", EVICTION)?])?;
    let eviction = "ClusterResourcePlacementEviction/evict-1";
    wait_for("the eviction's event", || {
        let found = events(&kubectl, &[])?;
        Ok(found.iter().any(|(_, _, a)| a == eviction).then_some(()))
    })?;
    let described = kubectl.ok(&["describe", "clusterresourceplacementeviction", "evict-1"])?;
    assert!(described.contains("eviction-controller"), "{described}");

    // The same events in events.k8s.io/v1's shape.
    let modern = kube_json(&kubectl, &["get", "events.v1.events.k8s.io", "-A"])?;
    let first = modern["items"].get(0).cloned().unwrap_or_default();
    assert_eq!(first["apiVersion"], "events.k8s.io/v1");
    assert!(
        first["regarding"]["kind"].is_string() && first["note"].is_string(),
        "{first}"
    );
    Ok(())
}

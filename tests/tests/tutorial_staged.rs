//! The staged-update walk-through as a user runs it: a hub, one `flotilla agent` process per
//! member (`sim` for staging and canary, `dir` for production, so files land on disk), and the
//! machine's `kubectl` for every step the walk-through shows — the External placement and the
//! update run pasted as written, the approvals with its exact `kubectl patch … --subresource=status`,
//! stop and resume with its `kubectl patch csur`, and `kubectl describe csur`.
//!
//! The walk-through's run names `stagedRolloutStrategyName: example-strategy` without showing
//! it; the strategy here has its approval names (`example-run-before-canary`,
//! `example-run-after-canary`) and no TimedWait (its waits are an hour).

use std::path::{Path, PathBuf};

use flotilla_tests::agents::{Agent, wait_for};
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::{is_true, kube_json as json, write};
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const FLEET: &str = "\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: staging-1, labels: {environment: staging}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: canary-1, labels: {environment: canary}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: prod-1, labels: {environment: production}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: v1
kind: Namespace
metadata: {name: test-namespace}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: test-namespace}
data: {greeting: hello}
";

/// The walk-through's cluster-scoped External placement, as written.
const PLACEMENT: &str = r#"apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: example-placement
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      name: test-namespace
      version: v1
  policy:
    placementType: PickAll
  strategy:
    type: External # enables staged updates
"#;

const STRATEGY: &str = "\
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: example-strategy
spec:
  stages:
    - name: staging
      labelSelector:
        matchLabels:
          environment: staging
    - name: canary
      labelSelector:
        matchLabels:
          environment: canary
      beforeStageTasks:
        - type: Approval
      afterStageTasks:
        - type: Approval
    - name: production
      labelSelector:
        matchLabels:
          environment: production
";

/// The walk-through's cluster-scoped update run, as written.
const RUN: &str = "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: example-run
spec:
  placementName: example-placement              # Required: Name of Target ClusterResourcePlacement
  resourceSnapshotIndex: \"0\"                    # Optional: Resource version (omit for latest)
  stagedRolloutStrategyName: example-strategy   # Required: Name of the strategy to execute
  state: Run                                    # Optional: Initialize (default), Run, or Stop
";

/// The walk-through's approval, word for word; `$(date -u …)` as the shell would expand it.
fn approve(kubectl: &Kubectl, request: &str) -> Result<String, String> {
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ");
    let patch = format!(
        r#"{{"status":{{"conditions":[{{"type":"Approved","status":"True","reason":"approved","message":"approved","lastTransitionTime":"{now}","observedGeneration":1}}]}}}}"#
    );
    let kind = "clusterapprovalrequests";
    kubectl.ok(&[
        "patch",
        kind,
        request,
        "--type=merge",
        "-p",
        &patch,
        "--subresource=status",
    ])
}

fn wait_request(kubectl: &Kubectl, name: &str) -> Result<(), String> {
    wait_for(&format!("approval request {name}"), || {
        Ok(kubectl
            .run(&["get", "careq", name])?
            .status
            .success()
            .then_some(()))
    })
}

/// Whether every cluster of the run's stage `index` has succeeded.
fn stage_done(run: &Value, index: usize) -> bool {
    let stage = &run["status"]["stagesStatus"][index];
    (stage["conditions"].as_array().into_iter().flatten())
        .any(|c| c["type"] == "Succeeded" && c["status"] == "True")
}

fn start_agents(hub: &HubProcess, scratch: &Path) -> Result<Vec<Agent>, String> {
    let gitops = format!("dir:{}", scratch.join("members").display());
    [
        ("staging-1", "sim".to_owned()),
        ("canary-1", "sim".to_owned()),
        ("prod-1", gitops),
    ]
    .iter()
    .map(|(cluster, applier)| {
        let state = scratch.join(format!("state-{cluster}"));
        Agent::start(&binary(), &["--hub", &hub.url], cluster, applier, &state)
    })
    .collect()
}

#[test]
fn the_staged_update_walk_through_with_agents_and_kubectl() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    kubectl.ok(&["apply", "-f", &write(dir, "fleet.yaml", FLEET)?])?;
    let agents = start_agents(&hub, dir)?;
    let created = kubectl.ok(&["apply", "-f", &write(dir, "crp.yaml", PLACEMENT)?])?;
    assert!(created.contains("example-placement created"), "{created}");
    // "The Placement remains in a scheduled but not available state, waiting for an UpdateRun."
    wait_for("the placement scheduled on three clusters", || {
        let crp = json(&kubectl, &["get", "crp", "example-placement"])?;
        Ok(is_true(&crp, "ClusterResourcePlacementScheduled").then_some(crp))
    })
    .and_then(
        |crp| match is_true(&crp, "ClusterResourcePlacementAvailable") {
            true => Err(format!("available before a run: {crp}")),
            false => Ok(()),
        },
    )?;
    kubectl.ok(&["apply", "-f", &write(dir, "strategy.yaml", STRATEGY)?])?;
    kubectl.ok(&["apply", "-f", &write(dir, "run.yaml", RUN)?])?;

    wait_request(&kubectl, "example-run-before-canary")?;
    let run = json(&kubectl, &["get", "csur", "example-run"])?;
    assert!(
        stage_done(&run, 0),
        "staging is done before the canary gate: {run}"
    );
    // A deleted request is made again while its approval is owed.
    let deleted = kubectl.ok(&["delete", "careq", "example-run-before-canary"])?;
    assert!(deleted.contains("deleted"), "{deleted}");
    wait_request(&kubectl, "example-run-before-canary")?;
    let events = hub
        .cli(&["events"])
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())?;
    assert!(
        events
            .lines()
            .any(|l| l.contains("delete") && l.contains("example-run-before-canary")),
        "the delete reached the log:\n{events}"
    );
    let again = json(&kubectl, &["get", "careq", "example-run-before-canary"])?;
    assert!(
        !is_true(&again, "Approved"),
        "made again, unapproved: {again}"
    );
    let patched = approve(&kubectl, "example-run-before-canary")?;
    assert!(
        patched.contains("example-run-before-canary patched"),
        "{patched}"
    );
    wait_request(&kubectl, "example-run-after-canary")?;

    // Pause, approve meanwhile: production does not start while the run is stopped.
    let stop = r#"{"spec":{"state":"Stop"}}"#;
    // `--type='merge'` as the shell passes it.
    kubectl.ok(&["patch", "csur", "example-run", "--type=merge", "-p", stop])?;
    wait_for("the run stopped", || {
        let run = json(&kubectl, &["get", "csur", "example-run"])?;
        let stopped = (run["status"]["conditions"].as_array().into_iter().flatten())
            .any(|c| c["reason"] == "UpdateRunStopped");
        Ok(stopped.then_some(()))
    })?;
    approve(&kubectl, "example-run-after-canary")?;
    std::thread::sleep(std::time::Duration::from_secs(2));
    let run = json(&kubectl, &["get", "csur", "example-run"])?;
    assert!(
        !stage_done(&run, 2),
        "production waits while stopped: {run}"
    );
    assert!(
        !dir.join("members/prod-1").exists(),
        "nothing on prod-1 yet"
    );

    let resume = r#"{"spec":{"state":"Run"}}"#;
    kubectl.ok(&["patch", "csur", "example-run", "--type=merge", "-p", resume])?;
    wait_for("the run to succeed", || {
        let run = json(&kubectl, &["get", "csur", "example-run"])?;
        Ok(is_true(&run, "Succeeded").then_some(()))
    })?;
    let files = std::fs::read_dir(dir.join("members/prod-1/example-placement"))
        .map_err(|e| e.to_string())?
        .count();
    assert_eq!(files, 2, "the namespace and the config map on prod-1");
    let described = kubectl.ok(&["describe", "csur", "example-run"])?;
    for text in ["staging", "canary", "production", "Succeeded"] {
        assert!(described.contains(text), "{text} missing:\n{described}");
    }
    let crp = json(&kubectl, &["get", "crp", "example-placement"])?;
    assert!(is_true(&crp, "ClusterResourcePlacementAvailable"), "{crp}");
    drop(agents);
    hub.stop()
}

//! The partitioned-rollout walk-through's strict scenario ("200 Clusters (Strict Readiness,
//! Manual partitions)", scaled to four clusters) as a user runs it: a hub, one `sim` agent
//! process per member, and the machine's `kubectl`. The walk-through's `rolloutStrategy`
//! (`maxUnavailable: 0`, `maxUnavailablePartitions: 0`, partitions `demoRollout` and `stable`
//! by `stage` label) sits under a ClusterResourcePlacement's `strategy.type: Partitioned`.
//!
//! A Deployment with a bad image reaches the `demoRollout` partition only: its clusters never
//! become ready, so the rollout pauses and `stable` gets nothing; fixing the image switches the
//! NotReady clusters, and once `demoRollout` is ready the rollout proceeds to `stable` ("only
//! when the current one is considered ready"). With `maxUnavailable: 0` a Ready cluster is
//! never switched to newer work (Fleet's rule), which is why both demo clusters start broken.

use std::path::PathBuf;
use std::time::Duration;

use flotilla_tests::agents::{Agent, wait_for};
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::{crp_available, kube_json, write};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const CLUSTERS: [(&str, &str); 4] = [
    ("demo-1", "demoRollout"),
    ("demo-2", "demoRollout"),
    ("stable-1", "stable"),
    ("stable-2", "stable"),
];

const PLACEMENT: &str = "\
apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: app}
spec:
  resourceSelectors:
    - {group: \"\", kind: Namespace, version: v1, name: app}
  policy: {placementType: PickAll}
  strategy:
    type: Partitioned
    rolloutStrategy:
      maxUnavailable: 0
      maxUnavailablePartitions: 0
      partitions:
      - name: demoRollout
        clusterSelector:
          matchLabels:
            stage: demoRollout
      - name: stable
        clusterSelector:
          matchLabels:
            stage: stable
";

/// The namespace and its Deployment.
fn workload(image: &str) -> String {
    format!(
        "apiVersion: v1
kind: Namespace
metadata: {{name: app}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: app}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: \"{image}\"}}]
"
    )
}

fn fleet() -> String {
    CLUSTERS
        .iter()
        .map(|(cluster, stage)| {
            format!(
                "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n\
                 metadata: {{name: {cluster}, labels: {{stage: {stage}}}}}\n\
                 spec: {{heartbeatPeriodSeconds: 2}}\n---\n"
            )
        })
        .collect()
}

/// Each cluster's resource snapshot index, by cluster.
fn indexes(kubectl: &Kubectl) -> Result<Vec<(String, String)>, String> {
    let list = kube_json(kubectl, &["get", "clusterresourcebindings"])?;
    let mut found: Vec<(String, String)> = (list["items"].as_array().into_iter().flatten())
        .map(|b| {
            let name = b["spec"]["resourceSnapshotName"]
                .as_str()
                .unwrap_or_default();
            let index = name
                .trim_end_matches("-snapshot")
                .rsplit('-')
                .next()
                .unwrap_or("");
            let cluster = b["spec"]["targetCluster"].as_str().unwrap_or_default();
            (cluster.to_owned(), index.to_owned())
        })
        .collect();
    found.sort();
    Ok(found)
}

fn all_at(kubectl: &Kubectl, index: &str) -> Result<bool, String> {
    let now = indexes(kubectl)?;
    Ok(now.len() == CLUSTERS.len() && now.iter().all(|(_, i)| i == index))
}

#[test]
fn strict_manual_partitions_pause_on_a_not_ready_partition() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    kubectl.ok(&["apply", "-f", &write(dir, "fleet.yaml", &fleet())?])?;
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "app.yaml", &workload("nginx:1.27"))?,
    ])?;
    let agents: Vec<Agent> = CLUSTERS
        .iter()
        .map(|(cluster, _)| {
            let state = dir.join(format!("state-{cluster}"));
            // The demo clusters run the `:broken` image as one that never becomes ready.
            let marker = if cluster.starts_with("demo") {
                ":broken"
            } else {
                ":never"
            };
            let extra = [
                "--sim-bad-image",
                marker,
                "--sim-available-delay-ms-max",
                "500",
            ];
            Agent::start_with(
                &binary(),
                &["--hub", &hub.url],
                cluster,
                "sim",
                &state,
                &extra,
            )
        })
        .collect::<Result<_, _>>()?;
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "app.yaml", &workload("nginx:broken"))?,
    ])?;
    kubectl.ok(&["apply", "-f", &write(dir, "crp.yaml", PLACEMENT)?])?;
    let worked = |now: &[(String, String)], prefix: &str, index: &str| {
        now.iter()
            .filter(|(c, i)| c.starts_with(prefix) && i == index)
            .count()
    };
    wait_for("the demoRollout partition deployed", || {
        Ok((worked(&indexes(&kubectl)?, "demo", "0") == 2).then_some(()))
    })?;
    // Several availability delays: the demo clusters never become ready, stable gets nothing.
    std::thread::sleep(Duration::from_secs(4));
    let paused = indexes(&kubectl)?;
    assert_eq!(
        worked(&paused, "stable", "0"),
        0,
        "stable waits: {paused:?}"
    );
    assert!(!crp_available(&kubectl, "app")?);

    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "app.yaml", &workload("nginx:1.28"))?,
    ])?;
    wait_for("the fixed image everywhere", || {
        Ok((all_at(&kubectl, "1")? && crp_available(&kubectl, "app")?).then_some(()))
    })?;
    drop(agents);
    hub.stop()
}

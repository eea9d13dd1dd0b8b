//! An override that fails on a cluster, with real `dir` agent processes: the cluster keeps the
//! work it has (its files stay on disk, nothing is withdrawn), the placement's status for that
//! cluster says `Overridden` False (`OverriddenFailed`), and once the override is deleted the failed cluster
//! is rolled again whatever the budget, so the next resource snapshot reaches every cluster.

use std::path::{Path, PathBuf};

use flotilla_tests::agents::{Agent, get_json, ok, wait_for};
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::write;
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const FLEET: &str = "\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: edge-1, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: edge-2, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-ns}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: team-ns}
data: {greeting: hello}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: app}
spec:
  resourceSelectors:
    - {group: \"\", kind: Namespace, name: team-ns, version: v1}
  policy: {placementType: PickAll}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 1, unavailablePeriodSeconds: 1}
";

/// Replaces a label the namespace does not have: fails on every cluster.
const BAD_OVERRIDE: &str = "\
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ClusterResourceOverride
metadata: {name: bad-cro}
spec:
  clusterResourceSelectors:
    - {group: \"\", kind: Namespace, name: team-ns, version: v1}
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector: {matchLabels: {env: prod}}
        jsonPatchOverrides:
          - {op: replace, path: /metadata/labels/team, value: a}
";

/// The placement's condition of `kind`: `(status, reason)`.
fn condition(placement: &Value, kind: &str) -> Option<(String, String)> {
    listed_condition(&placement["status"]["conditions"], kind)
}

/// The condition of `kind` in a list of conditions: `(status, reason)`.
fn listed_condition(conditions: &Value, kind: &str) -> Option<(String, String)> {
    let found = conditions.as_array()?.iter().find(|c| c["type"] == kind)?;
    Some((
        found["status"].as_str()?.to_owned(),
        found["reason"].as_str()?.to_owned(),
    ))
}

/// Waits until the placement is available on every cluster at resource snapshot `index`.
fn wait_available(hub: &HubProcess, index: u64) -> Result<(), String> {
    wait_for(&format!("the placement available at index {index}"), || {
        let placement = get_json(hub, &["crp", "app"])?;
        let available = condition(&placement, "ClusterResourcePlacementAvailable")
            .is_some_and(|(status, _)| status == "True");
        let at = placement["status"]["observedResourceIndex"].as_str() == Some(&index.to_string());
        Ok((available && at).then_some(()))
    })
}

/// The files the `dir` agent of `cluster` wrote for the placement.
fn files(root: &Path, cluster: &str) -> Vec<String> {
    let directory = root.join(cluster).join("app");
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_failing_override_keeps_the_members_work_and_its_removal_rolls_the_fleet_on()
-> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(
        &hub,
        &["apply", "-f", &write(scratch.path(), "fleet.yaml", FLEET)?],
    )?;
    let root = scratch.path().join("members");
    let applier = format!("dir:{}", root.display());
    let agents: Vec<Agent> = ["edge-1", "edge-2"]
        .into_iter()
        .map(|cluster| {
            let state = scratch.path().join(format!("state-{cluster}"));
            Agent::start(&binary(), &["--hub", &hub.url], cluster, &applier, &state)
        })
        .collect::<Result<_, _>>()?;
    wait_available(&hub, 0)?;
    let placed = files(&root, "edge-1");
    assert_eq!(
        placed.len(),
        2,
        "the namespace and the config map: {placed:?}"
    );

    let bad = write(scratch.path(), "bad.yaml", BAD_OVERRIDE)?;
    ok(&hub, &["apply", "-f", &bad])?;
    // The first cluster rolled fails; the other is held back by maxUnavailable, so the
    // placement says RolloutStarted False and names the failure on the failed cluster's status.
    let (_, reason) = wait_for("Overridden False on the placement's cluster", || {
        let placement = get_json(&hub, &["crp", "app"])?;
        let failed = (placement["status"]["placementStatuses"]
            .as_array()
            .into_iter())
        .flatten()
        .find_map(|cluster| {
            listed_condition(&cluster["conditions"], "Overridden")
                .filter(|(status, _)| status == "False")
        });
        Ok(failed)
    })?;
    assert_eq!(reason, "OverriddenFailed");
    // Long enough for an agent to act on a withdrawn work (it polls every second or so).
    std::thread::sleep(std::time::Duration::from_secs(3));
    for (agent, cluster) in agents.iter().zip(["edge-1", "edge-2"]) {
        assert_eq!(files(&root, cluster), placed, "{cluster} keeps its files");
        let withdrawn = agent.output().into_iter().find(|l| l.contains("withdrawn"));
        assert!(withdrawn.is_none(), "{withdrawn:?}");
    }

    ok(&hub, &["delete", "clusterresourceoverride", "bad-cro"])?;
    wait_available(&hub, 0)?;
    // The next resource snapshot reaches both clusters, the one that failed included.
    let changed = FLEET.replace("greeting: hello", "greeting: bonjour");
    ok(
        &hub,
        &[
            "apply",
            "-f",
            &write(scratch.path(), "fleet.yaml", &changed)?,
        ],
    )?;
    wait_available(&hub, 1)?;
    for cluster in ["edge-1", "edge-2"] {
        let config = root.join(cluster).join("app");
        let texts: Vec<String> = std::fs::read_dir(&config)
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
            .collect();
        assert!(
            texts.iter().any(|text| text.contains("bonjour")),
            "{cluster} has the new config map"
        );
    }
    drop(agents);
    hub.stop()
}

//! Every object the hub serves, of every KubeFleet kind and served version, validates against
//! KubeFleet's own CRD schema (vendored under `adapters/crds/kubefleet`): a fleet of `sim` agent
//! processes runs rolling placements (one failing on a bad image), a ResourcePlacement,
//! overrides, a staged update run through its approval, a disruption budget and an eviction;
//! then each kind is listed in each version it is served in, as a typed client would read it.

use std::path::PathBuf;

use flotilla_tests::agents::{Agent, wait_for};
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HubProcess, http_client};
use flotilla_tests::walkthrough::{kube_json, write};
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const FLEET: &str = "apiVersion: cluster.kubernetes-fleet.io/v1
kind: MemberCluster
metadata: {name: prod-1, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1
kind: MemberCluster
metadata: {name: prod-2, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1
kind: MemberCluster
metadata: {name: canary-1, labels: {env: canary}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: app}
data: {greeting: hello}
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
apiVersion: v1
kind: Namespace
metadata: {name: staged}
";

const PLACEMENTS: &str = "apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: app}
spec:
  resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: app}]
  policy: {placementType: PickAll}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 1, unavailablePeriodSeconds: 1}
---
apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: broken}
spec:
  resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: broken}]
  policy:
    placementType: PickN
    numberOfClusters: 1
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms: [{labelSelector: {matchLabels: {env: canary}}}]
---
apiVersion: placement.kubernetes-fleet.io/v1
kind: ResourcePlacement
metadata: {name: settings, namespace: app}
spec:
  resourceSelectors: [{group: \"\", version: v1, kind: ConfigMap, name: settings}]
  policy: {placementType: PickFixed, clusterNames: [prod-1]}
---
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ClusterResourceOverride
metadata: {name: label-app}
spec:
  placement: {name: app}
  clusterResourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: app}]
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms: [{labelSelector: {matchLabels: {env: prod}}}]
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {cluster: \"${MEMBER-CLUSTER-NAME}\"}}
---
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ResourceOverride
metadata: {name: greet, namespace: app}
spec:
  placement: {name: settings, scope: Namespaced}
  resourceSelectors: [{group: \"\", version: v1, kind: ConfigMap, name: settings}]
  policy:
    overrideRules:
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: replace, path: /data/greeting, value: hi}
---
apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: staged}
spec:
  resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: staged}]
  policy: {placementType: PickAll}
  strategy: {type: External}
---
apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterStagedUpdateStrategy
metadata: {name: two-stages}
spec:
  stages:
    - name: canary
      labelSelector: {matchLabels: {env: canary}}
      afterStageTasks: [{type: Approval}]
    - name: prod
      labelSelector: {matchLabels: {env: prod}}
---
apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterStagedUpdateRun
metadata: {name: run-1}
spec:
  placementName: staged
  resourceSnapshotIndex: \"0\"
  stagedRolloutStrategyName: two-stages
  state: Run
";

const EVICTION: &str = "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata: {name: app}
spec: {minAvailable: 1}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata: {name: evict-prod-2}
spec: {placementName: app, clusterName: prod-2}
";

fn approve(kubectl: &Kubectl, request: &str) -> Result<String, String> {
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ");
    let patch = format!(
        r#"{{"status":{{"conditions":[{{"type":"Approved","status":"True","reason":"lgtm","message":"lgtm","lastTransitionTime":"{now}","observedGeneration":1}}]}}}}"#
    );
    kubectl.ok(&[
        "patch",
        "clusterapprovalrequests",
        request,
        "--type=merge",
        "-p",
        &patch,
        "--subresource=status",
    ])
}

/// Runs the fleet until the staged run succeeded and the eviction was executed.
fn run_the_fleet(kubectl: &Kubectl, dir: &std::path::Path) -> Result<(), String> {
    kubectl.ok(&["apply", "-f", &write(dir, "placements.yaml", PLACEMENTS)?])?;
    wait_for("the canary approval request", || {
        let found = kubectl.run(&["get", "careq", "run-1-after-canary"])?;
        Ok(found.status.success().then_some(()))
    })?;
    approve(kubectl, "run-1-after-canary")?;
    wait_for("run-1 to succeed", || {
        let run = kube_json(kubectl, &["get", "csur", "run-1"])?;
        let done = (run["status"]["conditions"].as_array().into_iter().flatten())
            .any(|c| c["type"] == "Succeeded" && c["status"] == "True");
        Ok(done.then_some(()))
    })?;
    kubectl.ok(&["apply", "-f", &write(dir, "eviction.yaml", EVICTION)?])?;
    wait_for("the eviction's verdict", || {
        let eviction = kube_json(kubectl, &["get", "crpe", "evict-prod-2"])?;
        let judged = (eviction["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten())
        .any(|c| c["type"] == "Executed");
        Ok(judged.then_some(()))
    })?;
    Ok(())
}

/// `(group, plural, kind, versions)` of every served KubeFleet kind, from discovery.
async fn served_kinds(url: &str) -> Result<Vec<(String, String, String, Vec<String>)>, String> {
    let client = http_client();
    let mut kinds: Vec<(String, String, String, Vec<String>)> = Vec::new();
    for group in [
        "placement.kubernetes-fleet.io",
        "cluster.kubernetes-fleet.io",
    ] {
        let described: Value = get(&client, &format!("{url}/apis/{group}")).await?;
        for version in described["versions"].as_array().into_iter().flatten() {
            let version = version["version"].as_str().unwrap_or_default();
            let list: Value = get(&client, &format!("{url}/apis/{group}/{version}")).await?;
            for resource in list["resources"].as_array().into_iter().flatten() {
                let plural = resource["name"].as_str().unwrap_or_default();
                if plural.contains('/') {
                    continue;
                }
                let kind = resource["kind"].as_str().unwrap_or_default().to_owned();
                match kinds.iter_mut().find(|k| k.0 == group && k.1 == plural) {
                    Some(entry) => entry.3.push(version.to_owned()),
                    None => kinds.push((
                        group.to_owned(),
                        plural.to_owned(),
                        kind,
                        vec![version.to_owned()],
                    )),
                }
            }
        }
    }
    Ok(kinds)
}

async fn get(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .json()
        .await
        .map_err(|e| format!("{url}: {e}"))
}

/// The paths of `null`s in `value`: KubeFleet's schemas declare no nullable field, and a typed
/// client fails on one (the validator drops them first, as an API server does on a write).
fn nulls(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Null => found.push(format!("{path}: null")),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                nulls(item, &format!("{path}[{index}]"), found);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                nulls(item, &path, found);
            }
        }
        _ => {}
    }
}

/// Every violation of every served object, as `kind version name: violation`; and how many
/// objects were checked.
async fn violations(url: &str) -> Result<(Vec<String>, usize), String> {
    let client = http_client();
    let mut found = Vec::new();
    let mut checked = 0;
    for (group, plural, kind, versions) in served_kinds(url).await? {
        for version in versions {
            let list = get(&client, &format!("{url}/apis/{group}/{version}/{plural}")).await?;
            for object in list["items"].as_array().into_iter().flatten() {
                checked += 1;
                let api_version = format!("{group}/{version}");
                let name = object["metadata"]["name"].as_str().unwrap_or_default();
                for violation in flotilla_adapters::schema::validate(&kind, &api_version, object) {
                    found.push(format!("{kind} {version} {name}: {violation}"));
                }
                let mut null = Vec::new();
                nulls(object, "", &mut null);
                found.extend(null.iter().map(|n| format!("{kind} {version} {name}: {n}")));
            }
        }
    }
    Ok((found, checked))
}

#[test]
fn every_served_object_validates_against_kubefleets_schemas() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    kubectl.ok(&["apply", "-f", &write(dir, "fleet.yaml", FLEET)?])?;
    let _agents: Vec<Agent> = ["prod-1", "prod-2", "canary-1"]
        .iter()
        .map(|cluster| {
            let state = dir.join(format!("state-{cluster}"));
            Agent::start(&binary(), &["--hub", &hub.url], cluster, "sim", &state)
        })
        .collect::<Result<_, _>>()?;
    run_the_fleet(&kubectl, dir)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (found, checked) = runtime.block_on(violations(&hub.url))?;
    assert!(checked > 40, "only {checked} objects served");
    assert!(
        found.is_empty(),
        "{} violations:\n{}",
        found.len(),
        found.join("\n")
    );
    hub.stop()
}

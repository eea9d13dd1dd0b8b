//! The placement walk-throughs as a user runs them: a hub, one `flotilla agent` process per
//! member (`dir` agents, so what lands on a member is files on disk), and the machine's
//! `kubectl` for every step.
//!
//! - A ClusterResourcePlacement with `selectionScope: NamespaceOnly` places the namespace alone;
//!   a ResourcePlacement in it (PickFixed) places the selected ConfigMap on the two clusters it
//!   names (the walk-through's YAML, `fixtures/seed-yaml/002-rp-1.yaml`).
//! - Taints, eviction and a disruption budget: a new `NoSchedule` taint keeps what a member
//!   has; an eviction a `minAvailable` budget forbids is not executed and removes nothing; once
//!   the budget allows it, the eviction removes the placement's objects from the tainted member,
//!   and the scheduler does not pick it again; a placement that tolerates the taint (`operator:
//!   Exists`, as the walk-through writes it) is placed there, one that does not is not.

use std::path::{Path, PathBuf};

use flotilla_tests::agents::{Agent, wait_for};
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::{condition, is_true, kube_json as json, seed_yaml, write};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const CLUSTERS: [&str; 3] = ["prod-cluster-1", "prod-cluster-2", "dev-cluster-1"];

const FLEET: &str = "\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: prod-cluster-1, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: prod-cluster-2, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: dev-cluster-1, labels: {env: dev}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: v1
kind: Namespace
metadata: {name: my-app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings, namespace: my-app, labels: {app: my-application}}
data: {mode: prod}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: my-app}
data: {mode: other}
";

const TAINTED: &str = "\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: prod-cluster-2, labels: {env: prod}}
spec:
  heartbeatPeriodSeconds: 2
  taints:
    - {key: maintenance, value: planned, effect: NoSchedule}
";

/// A PickAll placement of namespace `shared-ns`, tolerating the maintenance taint or not.
fn shared(name: &str, tolerates: bool) -> String {
    let tolerations = if tolerates {
        "    tolerations:\n    - key: maintenance\n      operator: Exists\n"
    } else {
        ""
    };
    format!(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {{name: {name}}}
spec:
  resourceSelectors:
  - {{group: \"\", kind: Namespace, name: shared-ns, version: v1}}
  policy:
    placementType: PickAll
{tolerations}"
    )
}

fn budget(min_available: u32) -> String {
    format!(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata: {{name: app-namespace-crp}}
spec: {{minAvailable: {min_available}}}
"
    )
}

fn eviction(name: &str) -> String {
    format!(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata: {{name: {name}}}
spec: {{placementName: app-namespace-crp, clusterName: prod-cluster-2}}
"
    )
}

/// Every file a member's `dir` agent wrote, as paths under its root, sorted.
fn files(root: &Path, cluster: &str) -> Vec<String> {
    let base = root.join(cluster);
    let mut found = Vec::new();
    let mut pending = vec![base.clone()];
    // Two levels (placement directory, file): bounded however the tree looks.
    for _ in 0..3 {
        let mut next = Vec::new();
        for dir in pending {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    next.push(path);
                } else if let Ok(relative) = path.strip_prefix(&base) {
                    found.push(relative.display().to_string());
                }
            }
        }
        pending = next;
    }
    found.sort();
    found
}

fn available(kubectl: &Kubectl, kind: &str, name: &str, ns: Option<&str>) -> Result<bool, String> {
    let mut args = vec!["get", kind, name];
    if let Some(ns) = ns {
        args.extend(["-n", ns]);
    }
    let placement = json(kubectl, &args)?;
    let kind = if ns.is_some() {
        "ResourcePlacementAvailable"
    } else {
        "ClusterResourcePlacementAvailable"
    };
    Ok(is_true(&placement, kind))
}

fn start_agents(hub: &HubProcess, scratch: &Path, root: &Path) -> Result<Vec<Agent>, String> {
    let applier = format!("dir:{}", root.display());
    CLUSTERS
        .iter()
        .map(|cluster| {
            let state = scratch.join(format!("state-{cluster}"));
            Agent::start(&binary(), &["--hub", &hub.url], cluster, &applier, &state)
        })
        .collect()
}

#[test]
fn namespace_only_placement_resource_placement_taints_and_eviction() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let root = dir.join("members");
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    kubectl.ok(&["apply", "-f", &write(dir, "fleet.yaml", FLEET)?])?;
    let agents = start_agents(&hub, dir, &root)?;
    kubectl.ok(&["apply", "-f", &seed_yaml("002-rp-1.yaml")])?;
    wait_for("both placements available", || {
        let crp = available(&kubectl, "crp", "app-namespace-crp", None)?;
        let rp = available(&kubectl, "rp", "app-configs-rp", Some("my-app"))?;
        Ok((crp && rp).then_some(()))
    })?;
    for cluster in CLUSTERS {
        let placed = files(&root, cluster);
        let namespaces = placed.iter().filter(|f| f.contains("namespace")).count();
        assert_eq!(namespaces, 1, "{cluster}: the namespace alone: {placed:?}");
        assert!(
            !placed.iter().any(|f| f.contains("unrelated")),
            "{placed:?}"
        );
        let settings = placed.iter().any(|f| f.contains("app-settings"));
        assert_eq!(
            settings,
            cluster.starts_with("prod"),
            "{cluster}: {placed:?}"
        );
    }

    // A new taint keeps what prod-cluster-2 has.
    kubectl.ok(&["apply", "-f", &write(dir, "tainted.yaml", TAINTED)?])?;
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(available(&kubectl, "crp", "app-namespace-crp", None)?);
    assert!(
        files(&root, "prod-cluster-2")
            .iter()
            .any(|f| f.contains("namespace"))
    );

    // A budget of three available clusters forbids evicting one of three.
    kubectl.ok(&["apply", "-f", &write(dir, "budget.yaml", &budget(3))?])?;
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "evict-1.yaml", &eviction("evict-1"))?,
    ])?;
    let refused = wait_for("the first eviction judged", || {
        let evicted = json(&kubectl, &["get", "crpe", "evict-1"])?;
        Ok(condition(&evicted, "Executed").map(|c| (c["status"].clone(), evicted.clone())))
    })?;
    assert_eq!(refused.0, "False", "{}", refused.1);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(
        files(&root, "prod-cluster-2")
            .iter()
            .any(|f| f.contains("namespace"))
    );

    // Two of three may do: a new eviction removes the namespace from the tainted cluster, and
    // the scheduler does not pick it again.
    kubectl.ok(&["apply", "-f", &write(dir, "budget.yaml", &budget(2))?])?;
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "evict-2.yaml", &eviction("evict-2"))?,
    ])?;
    wait_for("the second eviction executed", || {
        let evicted = json(&kubectl, &["get", "crpe", "evict-2"])?;
        Ok(is_true(&evicted, "Executed").then_some(()))
    })?;
    wait_for("prod-cluster-2 without the namespace placement", || {
        let placed = files(&root, "prod-cluster-2");
        Ok((!placed.iter().any(|f| f.starts_with("app-namespace-crp"))).then_some(()))
    })?;
    std::thread::sleep(std::time::Duration::from_secs(2));
    let bindings = kubectl.ok(&["get", "clusterresourcebindings"])?;
    assert!(
        !bindings
            .lines()
            .any(|l| l.contains("app-namespace-crp") && l.contains("prod-cluster-2")),
        "not picked again:\n{bindings}"
    );

    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shared-ns}\n";
    kubectl.ok(&["apply", "-f", &write(dir, "shared-ns.yaml", ns)?])?;
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "tolerant.yaml", &shared("tolerant", true))?,
    ])?;
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "plain.yaml", &shared("plain", false))?,
    ])?;
    wait_for("both shared placements available", || {
        let both = available(&kubectl, "crp", "tolerant", None)?
            && available(&kubectl, "crp", "plain", None)?;
        Ok(both.then_some(()))
    })?;
    let placed = files(&root, "prod-cluster-2");
    assert!(
        placed.iter().any(|f| f.starts_with("tolerant")),
        "{placed:?}"
    );
    assert!(!placed.iter().any(|f| f.starts_with("plain")), "{placed:?}");
    assert!(
        files(&root, "prod-cluster-1")
            .iter()
            .any(|f| f.starts_with("plain"))
    );
    drop(agents);
    hub.stop()
}

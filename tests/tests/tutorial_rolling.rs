//! The rolling-update walk-through's two examples as a user runs them: a hub, one `sim` agent
//! process per member (a Deployment becomes available after a seeded delay, never with a bad
//! image), and the machine's `kubectl` applying the walk-through's placements
//! (`fixtures/seed-yaml/001-maxunavailable-maxsurge-*.yaml`).
//!
//! - Example 1: PickN 3 of 4, `maxUnavailable: 1`, `maxSurge: 1`. A bad image reaches one
//!   cluster, whose Deployment never becomes available; the other two stay on the old
//!   resources, and the fourth cluster is never picked (an in-place update does not surge).
//! - Example 2: PickN 2 with `maxSurge: 2`, moved from `loc: west` to `loc: east`: the east
//!   clusters get the resources before the west ones lose them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flotilla_tests::agents::{Agent, wait_for};
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::{
    crp_available as available, kube_json as json, seed_yaml, write,
};
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const CLUSTERS: [&str; 4] = ["cluster-1", "cluster-2", "cluster-3", "cluster-4"];

fn fleet(labels: [&str; 4], image: &str) -> String {
    let mut text = String::new();
    for (cluster, labels) in CLUSTERS.iter().zip(labels) {
        text.push_str(&format!(
            "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n\
             metadata: {{name: {cluster}, labels: {{{labels}}}}}\n\
             spec: {{heartbeatPeriodSeconds: 2}}\n---\n"
        ));
    }
    text.push_str("apiVersion: v1\nkind: Namespace\nmetadata: {name: test-ns}\n---\n");
    text.push_str(&deployment(image));
    text
}

fn deployment(image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: test-ns}}
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

/// The placement's bindings: `(cluster, resource snapshot name)`, by cluster.
fn bindings(kubectl: &Kubectl, placement: &str) -> Result<Vec<(String, String)>, String> {
    let list = json(kubectl, &["get", "clusterresourcebindings"])?;
    let mut found: Vec<(String, String)> = (list["items"].as_array().into_iter().flatten())
        .filter(|b| b["metadata"]["labels"]["kubernetes-fleet.io/parent-CRP"] == placement)
        .map(|b| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                text(&b["spec"]["targetCluster"]),
                text(&b["spec"]["resourceSnapshotName"]),
            )
        })
        .collect();
    found.sort();
    Ok(found)
}

fn start_agents(hub: &HubProcess, dir: &Path) -> Result<Vec<Agent>, String> {
    CLUSTERS
        .iter()
        .map(|cluster| {
            let state = dir.join(format!("state-{cluster}"));
            let delays = ["--sim-available-delay-ms-max", "800"];
            Agent::start_with(
                &binary(),
                &["--hub", &hub.url],
                cluster,
                "sim",
                &state,
                &delays,
            )
        })
        .collect()
}

#[test]
fn example_1_a_bad_image_stops_at_one_cluster_and_does_not_surge() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    let prod = ["env: prod"; 4];
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "fleet.yaml", &fleet(prod, "nginx:1.27"))?,
    ])?;
    let agents = start_agents(&hub, dir)?;
    kubectl.ok(&[
        "apply",
        "-f",
        &seed_yaml("001-maxunavailable-maxsurge-1.yaml"),
    ])?;
    wait_for("three clusters available", || {
        Ok(available(&kubectl, "crp-example-1")?.then_some(()))
    })?;
    let first = bindings(&kubectl, "crp-example-1")?;
    assert_eq!(first.len(), 3, "{first:?}");

    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "bad.yaml", &deployment("nginx:bad"))?,
    ])?;
    let updated = |list: &[(String, String)]| {
        list.iter()
            .filter(|(_, s)| s.ends_with("-1-snapshot"))
            .count()
    };
    wait_for("the bad image on one cluster", || {
        Ok((updated(&bindings(&kubectl, "crp-example-1")?) == 1).then_some(()))
    })?;
    // Long enough for several availability delays: the rollout stays stuck on that cluster.
    std::thread::sleep(Duration::from_secs(4));
    let stuck = bindings(&kubectl, "crp-example-1")?;
    assert_eq!(updated(&stuck), 1, "{stuck:?}");
    assert_eq!(
        stuck.len(),
        3,
        "maxSurge is not used for an in-place update: {stuck:?}"
    );
    let clusters: Vec<&String> = stuck.iter().map(|(c, _)| c).collect();
    let firsts: Vec<&String> = first.iter().map(|(c, _)| c).collect();
    assert_eq!(clusters, firsts, "the same three clusters");
    assert!(!available(&kubectl, "crp-example-1")?);
    drop(agents);
    hub.stop()
}

#[test]
fn example_2_max_surge_places_on_the_east_before_removing_the_west() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    let labels = ["loc: west", "loc: west", "loc: east", "loc: east"];
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir, "fleet.yaml", &fleet(labels, "nginx:1.27"))?,
    ])?;
    let agents = start_agents(&hub, dir)?;
    kubectl.ok(&[
        "apply",
        "-f",
        &seed_yaml("001-maxunavailable-maxsurge-2.yaml"),
    ])?;
    wait_for("the west clusters available", || {
        Ok(available(&kubectl, "crp-example-2")?.then_some(()))
    })?;
    let west: Vec<String> = bindings(&kubectl, "crp-example-2")?
        .into_iter()
        .map(|b| b.0)
        .collect();
    assert_eq!(west, ["cluster-1", "cluster-2"]);

    kubectl.ok(&[
        "apply",
        "-f",
        &seed_yaml("001-maxunavailable-maxsurge-3.yaml"),
    ])?;
    let mut most = 0;
    let started = Instant::now();
    let east = loop {
        let now: Vec<String> = bindings(&kubectl, "crp-example-2")?
            .into_iter()
            .map(|b| b.0)
            .collect();
        most = most.max(now.len());
        if now == ["cluster-3", "cluster-4"] && available(&kubectl, "crp-example-2")? {
            break now;
        }
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("the move to the east did not finish: {now:?}"));
        }
    };
    assert_eq!(east, ["cluster-3", "cluster-4"]);
    assert!(
        most >= 3,
        "the east clusters were added before the west ones left ({most})"
    );
    drop(agents);
    hub.stop()
}

//! `flotilla drain` and `flotilla uncordon` against a real hub and three `dir` agents, as
//! KubeFleet's `kubectl fleet draincluster` / `uncordoncluster` behave: the drain cordons the
//! member and evicts each placement bound to it; the unbudgeted placement's files leave the
//! member, the one a disruption budget guards stays and is reported with the budget's reason
//! (exit status 1); a placement applied later keeps away from the cordoned member; an unknown
//! member changes nothing; a member without placements is cordoned and says so; uncordon
//! removes only the cordon taint, and the evicted PickAll placement returns.

use std::path::{Path, PathBuf};
use std::process::Output;

use flotilla_tests::agents::{Agent, get_json, items, ok, wait_for};
use flotilla_tests::support::{HubProcess, stderr, stdout};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const MEMBERS: [&str; 3] = ["member-1", "member-2", "member-3"];

/// Three members with agents, a fourth without one (so nothing is placed there) that carries
/// labels, an annotation, its own heartbeat period and a taint the drain must keep; two PickAll
/// placements, and a budget that lets no `api` cluster go (minAvailable 3 of 3).
const FLEET: &str = "\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-1, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-2, labels: {env: prod, zone: b}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-3, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-4, labels: {env: lab}, annotations: {owner: team-a}}
spec:
  heartbeatPeriodSeconds: 7
  taints:
    - {key: site, value: lab, effect: NoSchedule}
---
apiVersion: v1
kind: Namespace
metadata: {name: web-ns}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: web-ns}
data: {greeting: hello}
---
apiVersion: v1
kind: Namespace
metadata: {name: api-ns}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: api-config, namespace: api-ns}
data: {greeting: hello}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: web}
spec:
  resourceSelectors:
    - {group: \"\", kind: Namespace, name: web-ns, version: v1}
  policy: {placementType: PickAll}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: api}
spec:
  resourceSelectors:
    - {group: \"\", kind: Namespace, name: api-ns, version: v1}
  policy: {placementType: PickAll}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata: {name: api}
spec: {minAvailable: 3}
";

/// A placement applied once member-2 is cordoned.
const LATE: &str = "\
apiVersion: v1
kind: Namespace
metadata: {name: late-ns}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: late}
spec:
  resourceSelectors:
    - {group: \"\", kind: Namespace, name: late-ns, version: v1}
  policy: {placementType: PickAll}
";

const CORDON: &str = r#"{"effect":"NoSchedule","key":"cordon-key","value":"cordon-value"}"#;

fn write(dir: &Path, name: &str, text: &str) -> Result<String, String> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

/// The files the `dir` agent of `cluster` holds for `placement`.
fn files(root: &Path, cluster: &str, placement: &str) -> usize {
    std::fs::read_dir(root.join(cluster).join(placement)).map_or(0, Iterator::count)
}

/// Waits until `cluster` holds `count` files of `placement`.
fn wait_files(root: &Path, cluster: &str, placement: &str, count: usize) -> Result<(), String> {
    wait_for(
        &format!("{count} files of {placement} on {cluster}"),
        || Ok((files(root, cluster, placement) == count).then_some(())),
    )
}

/// Whether the placement reports `Available=True`.
fn available(hub: &HubProcess, placement: &str) -> Result<bool, String> {
    let object = get_json(hub, &["crp", placement])?;
    Ok(object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "ClusterResourcePlacementAvailable" && c["status"] == "True"))
}

/// The clusters `placement` has bindings on, sorted.
fn bound_clusters(hub: &HubProcess, placement: &str) -> Result<Vec<String>, String> {
    let mut clusters: Vec<String> = items(&get_json(hub, &["clusterresourcebindings"])?)
        .iter()
        .filter(|b| b["metadata"]["labels"]["kubernetes-fleet.io/parent-CRP"] == placement)
        .filter_map(|b| b["spec"]["targetCluster"].as_str().map(str::to_owned))
        .collect();
    clusters.sort();
    Ok(clusters)
}

fn member(hub: &HubProcess, name: &str) -> Result<Value, String> {
    get_json(hub, &["membercluster", name])
}

fn taints(member: &Value) -> String {
    member["spec"]["taints"].to_string()
}

/// The name a line gives the eviction (`eviction NAME was …`), checked against KubeFleet's
/// scheme `drain-eviction-<placement>-<cluster>-<8 hex>`.
fn eviction_in(line: &str, placement: &str) -> Result<String, String> {
    let name = line
        .split_whitespace()
        .nth(1)
        .ok_or_else(|| format!("no eviction name in {line:?}"))?;
    let prefix = format!("drain-eviction-{placement}-member-2-");
    let suffix = name.strip_prefix(&prefix).unwrap_or_default();
    assert!(
        suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_hexdigit()),
        "{name}"
    );
    Ok(name.to_owned())
}

fn line_with<'a>(text: &'a str, needle: &str) -> Result<&'a str, String> {
    text.lines()
        .find(|l| l.contains(needle))
        .ok_or_else(|| format!("no line with {needle:?} in:\n{text}"))
}

const BLOCKED: &str = "was not executed successfully for CRP api targeting member cluster \
    member-2: Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, \
    availablePlacements: 3, totalPlacements: 3";

/// The first drain of member-2: `web` evicted, `api` blocked by its budget, exit status 1.
fn check_first_drain(hub: &HubProcess, drained: &Output) -> Result<(), String> {
    let (out, err) = (stdout(drained), stderr(drained));
    println!("flotilla drain member-2:\n{out}{err}");
    assert_eq!(drained.status.code(), Some(1), "{out}{err}");
    assert!(
        out.starts_with("Successfully cordoned member cluster member-2 by adding cordon taint\n"),
        "{out}"
    );
    let executed = line_with(
        &out,
        "was executed successfully for CRP web targeting member cluster member-2",
    )?;
    let web = eviction_in(executed, "web")?;
    line_with(
        &out,
        "evicted resource ''/v1/Namespace/''/web-ns propagated by CRP web targeting member \
         cluster member-2",
    )?;
    let api = eviction_in(line_with(&out, BLOCKED)?, "api")?;
    assert!(!out.contains("drain was successful"), "{out}");
    assert!(
        out.ends_with("reminder: uncordon the cluster member-2 to remove cordon taint if needed\n"),
        "{out}"
    );
    assert!(
        err.contains(
            "drain was not successful for cluster member-2: the eviction of api was not executed"
        ),
        "{err}"
    );
    // The evictions are there, each with its terminal conditions.
    let executed = get_json(hub, &["crpe", &web])?;
    assert_eq!(
        executed["spec"],
        json!({"placementName": "web", "clusterName": "member-2"})
    );
    let blocked = get_json(hub, &["crpe", &api])?;
    let conditions = blocked["status"]["conditions"].to_string();
    assert!(conditions.contains(r#""reason":"ClusterResourcePlacementEvictionNotExecuted""#));
    Ok(())
}

/// member-2 carries the cordon taint and kept its labels and heartbeat period.
fn check_cordoned(hub: &HubProcess) -> Result<(), String> {
    let cordoned = member(hub, "member-2")?;
    assert_eq!(taints(&cordoned), format!("[{CORDON}]"));
    assert_eq!(
        cordoned["metadata"]["labels"],
        json!({"env": "prod", "zone": "b"})
    );
    assert_eq!(cordoned["spec"]["heartbeatPeriodSeconds"], 2);
    Ok(())
}

/// An unknown member: an error, and nothing written.
fn check_unknown_member(hub: &HubProcess) -> Result<(), String> {
    let seq_before = hub.status()?["logSeq"]
        .as_u64()
        .ok_or("a status without logSeq")?;
    let unknown = hub.cli(&["drain", "member-9"])?;
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains(r#"member cluster "member-9" not found; nothing was changed"#),
        "{}",
        stderr(&unknown)
    );
    // Only the agents' heartbeats and reports were appended since.
    let since = hub.get_text(&format!("/v1/log?from={}", seq_before + 1))?;
    assert!(!since.contains("member-9"), "{since}");
    assert!(!since.contains(r#""source":"kube-api""#), "{since}");
    assert!(
        hub.cli(&["get", "membercluster", "member-9"])?
            .status
            .code()
            != Some(0)
    );
    Ok(())
}

/// A member with nothing placed: cordoned, says so, succeeds; drained again, it is already
/// cordoned; uncordoned, only the cordon taint goes.
fn check_member_without_placements(hub: &HubProcess) -> Result<(), String> {
    let site = r#"{"effect":"NoSchedule","key":"site","value":"lab"}"#;
    let out = ok(hub, &["drain", "member-4"])?;
    line_with(
        &out,
        "There are currently no resources propagated to member-4 from fleet using \
         ClusterResourcePlacement resources",
    )?;
    line_with(&out, "drain was successful for cluster member-4")?;
    let again = ok(hub, &["drain", "member-4"])?;
    assert!(
        again.starts_with("member cluster member-4 is already cordoned\n"),
        "{again}"
    );
    let cordoned = member(hub, "member-4")?;
    assert_eq!(taints(&cordoned), format!("[{site},{CORDON}]"));
    assert_eq!(cordoned["metadata"]["labels"], json!({"env": "lab"}));
    assert_eq!(
        cordoned["metadata"]["annotations"],
        json!({"owner": "team-a"})
    );
    assert_eq!(cordoned["spec"]["heartbeatPeriodSeconds"], 7);
    let out = ok(hub, &["uncordon", "member-4"])?;
    assert_eq!(out, "uncordoned member cluster member-4\n");
    assert_eq!(taints(&member(hub, "member-4")?), format!("[{site}]"));
    let out = ok(hub, &["uncordon", "member-4"])?;
    assert_eq!(
        out,
        "member cluster member-4 has no cordon taint; nothing to do\n"
    );
    Ok(())
}

#[test]
fn drain_evicts_what_no_budget_guards_and_uncordon_lets_it_back() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(
        &hub,
        &["apply", "-f", &write(scratch.path(), "fleet.yaml", FLEET)?],
    )?;
    let root = scratch.path().join("members");
    let applier = format!("dir:{}", root.display());
    let agents: Vec<Agent> = MEMBERS
        .into_iter()
        .map(|cluster| {
            let state = scratch.path().join(format!("state-{cluster}"));
            Agent::start(&binary(), &["--hub", &hub.url], cluster, &applier, &state)
        })
        .collect::<Result<_, _>>()?;
    for cluster in MEMBERS {
        for placement in ["web", "api"] {
            // The namespace and its config map.
            wait_files(&root, cluster, placement, 2)?;
        }
    }
    wait_for("both placements available everywhere", || {
        Ok((available(&hub, "web")? && available(&hub, "api")?).then_some(()))
    })?;

    check_unknown_member(&hub)?;
    check_member_without_placements(&hub)?;

    let drained = hub.cli(&["drain", "member-2"])?;
    check_first_drain(&hub, &drained)?;
    check_cordoned(&hub)?;
    wait_files(&root, "member-2", "web", 0)?;
    assert_eq!(files(&root, "member-2", "api"), 2, "the budget keeps api");
    assert_eq!(bound_clusters(&hub, "web")?, ["member-1", "member-3"]);

    // Cordoned: a placement applied now keeps away from member-2.
    ok(
        &hub,
        &["apply", "-f", &write(scratch.path(), "late.yaml", LATE)?],
    )?;
    wait_files(&root, "member-1", "late", 1)?;
    wait_files(&root, "member-3", "late", 1)?;
    assert_eq!(bound_clusters(&hub, "late")?, ["member-1", "member-3"]);

    // Draining again is idempotent: the taint is there, only api is left, and still blocked.
    let again = hub.cli(&["drain", "member-2"])?;
    let out = stdout(&again);
    assert_eq!(again.status.code(), Some(1), "{out}");
    assert!(
        out.starts_with("member cluster member-2 is already cordoned\n"),
        "{out}"
    );
    line_with(&out, BLOCKED)?;
    assert!(!out.contains("CRP web"), "{out}");
    check_cordoned(&hub)?;

    // Uncordoned: the taint goes, and the PickAll placements pick member-2 again.
    assert_eq!(
        ok(&hub, &["uncordon", "member-2"])?,
        "uncordoned member cluster member-2\n"
    );
    assert_eq!(member(&hub, "member-2")?["spec"].get("taints"), None);
    wait_files(&root, "member-2", "web", 2)?;
    wait_files(&root, "member-2", "late", 1)?;
    assert_eq!(bound_clusters(&hub, "web")?, MEMBERS);
    drop(agents);
    hub.stop()
}

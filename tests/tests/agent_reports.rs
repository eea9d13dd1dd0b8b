//! What a member agent owes its hub, with real processes: a `flotilla serve` hub (or one on a
//! three-node `nats-server` cluster), `sim` agents and a `dir` agent. A report belongs to the
//! content of the Work it is about — its manifests and the override snapshots they were rendered
//! with, not only its resource index — so an override added, changed or deleted after a rollout
//! is applied, reported, and the placement is Available again; and a report whose publish failed
//! (the hub killed with `kill -9`, or the NATS input stream's leader, while the agent applied)
//! stays owed until the hub has it, and the placement becomes Available.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flotilla_agent::sim_status::delay_ms;
use flotilla_eventstore::nats_test_cluster::NatsTestCluster;
use flotilla_tests::agents::{Agent, get_json, ok, wait_for};
use flotilla_tests::support::HubProcess;
use serde_json::{Value, json};

/// The seed `Agent::start_with` gives every agent.
const AGENT_SEED: u64 = 7;
/// The slow `sim` agent's longest apply delay per changed manifest.
const SLOW_APPLY_MS_MAX: u64 = 4000;
/// How long the hub or NATS server may stay down before the agent must have given up
/// publishing (the agent's own retries of one publish are shorter than this).
const DOWN_MAX: Duration = Duration::from_secs(45);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// Members with a two-second heartbeat, the namespace `tour` with the ConfigMap `greeting`
/// (`data.greeting` = `greeting`), and the PickAll placement `tour` that rolls out to every
/// member at once (a `dir` member's objects are not trackable, so its wait is one second).
fn fleet(members: &[&str], greeting: &str) -> String {
    let mut yaml = String::new();
    for member in members {
        yaml.push_str(&format!(
            "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n\
             metadata: {{name: {member}}}\nspec: {{heartbeatPeriodSeconds: 2}}\n---\n"
        ));
    }
    yaml.push_str(&format!(
        r#"apiVersion: v1
kind: Namespace
metadata: {{name: tour}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: greeting, namespace: tour}}
data: {{greeting: {greeting}}}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {{name: tour}}
spec:
  resourceSelectors:
    - {{group: "", kind: Namespace, name: tour, version: v1}}
  policy: {{placementType: PickAll}}
  strategy:
    type: RollingUpdate
    rollingUpdate: {{maxUnavailable: 100%, maxSurge: 0, unavailablePeriodSeconds: 1}}
"#
    ));
    yaml
}

/// The ClusterResourceOverride `label-ns`: labels the namespace `served-by: PREFIX<member>`.
fn label_override(prefix: &str) -> String {
    format!(
        r#"apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ClusterResourceOverride
metadata: {{name: label-ns}}
spec:
  placement: {{name: tour}}
  clusterResourceSelectors:
    - {{group: "", kind: Namespace, version: v1, name: tour}}
  policy:
    overrideRules:
      - clusterSelector: {{clusterSelectorTerms: []}}
        jsonPatchOverrides:
          - op: add
            path: /metadata/labels
            value: {{served-by: "{prefix}${{MEMBER-CLUSTER-NAME}}"}}
"#
    )
}

/// The ResourceOverride `annotate-greeting`: annotates the ConfigMap with its member's name.
const ANNOTATE_OVERRIDE: &str = r#"apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ResourceOverride
metadata: {name: annotate-greeting, namespace: tour}
spec:
  placement: {name: tour}
  resourceSelectors:
    - {group: "", kind: ConfigMap, version: v1, name: greeting}
  policy:
    overrideRules:
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - op: add
            path: /metadata/annotations
            value: {tour/member: "${MEMBER-CLUSTER-NAME}"}
"#;

/// Writes `yaml` to a file in `dir` and applies it.
fn apply(hub: &HubProcess, dir: &Path, name: &str, yaml: &str) -> Result<(), String> {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, yaml).map_err(|e| format!("{}: {e}", path.display()))?;
    ok(hub, &["apply", "-f", &path.display().to_string()]).map(drop)
}

/// What the placement `tour` must show once every member reported on its current work.
struct Expected<'a> {
    members: usize,
    resource_index: &'a str,
    cluster_overrides: Value,
    resource_overrides: Value,
}

/// Whether `tour` is Available on every member at the expected resource index with the
/// expected override snapshots. A binding's report is dropped when it is bound to a new work
/// (another index or other override snapshots), so an entry that names the new snapshots and
/// is Available is one whose member reported on the new work.
fn available(hub: &HubProcess, expected: &Expected<'_>) -> Result<bool, String> {
    let crp = get_json(hub, &["crp", "tour"])?;
    let status = &crp["status"];
    let is_true = |conditions: &Value, kind: &str| {
        conditions
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == kind && c["status"] == "True")
    };
    if status["observedResourceIndex"] != expected.resource_index
        || !is_true(&status["conditions"], "ClusterResourcePlacementAvailable")
    {
        return Ok(false);
    }
    let entries: Vec<&Value> = status["placementStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|entry| entry["clusterName"].is_string())
        .collect();
    let settled = |entry: &&Value| {
        is_true(&entry["conditions"], "Available")
            && entry["applicableClusterResourceOverrides"] == expected.cluster_overrides
            && entry["applicableResourceOverrides"] == expected.resource_overrides
    };
    Ok(entries.len() == expected.members && entries.iter().all(settled))
}

fn wait_available(hub: &HubProcess, what: &str, expected: &Expected<'_>) -> Result<(), String> {
    let started = Instant::now();
    let result = wait_for(what, || Ok(available(hub, expected)?.then_some(())));
    if result.is_err() {
        let crp = get_json(hub, &["crp", "tour"])?;
        return Err(format!(
            "{what}: not Available after {:?}: {}",
            started.elapsed(),
            crp["status"]
        ));
    }
    result
}

/// A manifest as the `dir` agent wrote it (`PATH/<member>/tour/<file>`).
fn dir_manifest(root: &Path, member: &str, file: &str) -> Result<Value, String> {
    let path = root.join(member).join("tour").join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A manifest as a `sim` agent's simulated cluster holds it, by `kind` and `name`.
fn sim_manifest(state: &Path, kind: &str, name: &str) -> Result<Value, String> {
    let path = state.join("sim-cluster.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cluster: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    cluster["objects"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, object)| &object["manifest"])
        .find(|m| m["kind"] == kind && m["metadata"]["name"] == name)
        .cloned()
        .ok_or_else(|| format!("{}: no {kind} {name}", path.display()))
}

/// The namespace's `served-by` label on the `dir` member's disk and in a `sim` member.
fn served_by(gitops: &Path, sim_state: &Path) -> Result<(Value, Value), String> {
    let on_disk = dir_manifest(gitops, "gitops-1", "namespace-tour.yaml")?;
    let simulated = sim_manifest(sim_state, "Namespace", "tour")?;
    Ok((
        on_disk["metadata"]["labels"]["served-by"].clone(),
        simulated["metadata"]["labels"]["served-by"].clone(),
    ))
}

/// The ConfigMap's `tour/member` annotation on the `dir` member's disk and in a `sim` member.
fn annotated_with(gitops: &Path, sim_state: &Path) -> Result<(Value, Value), String> {
    let on_disk = dir_manifest(gitops, "gitops-1", "configmap-tour-greeting.yaml")?;
    let simulated = sim_manifest(sim_state, "ConfigMap", "greeting")?;
    Ok((
        on_disk["metadata"]["annotations"]["tour/member"].clone(),
        simulated["metadata"]["annotations"]["tour/member"].clone(),
    ))
}

#[test]
fn overrides_added_changed_and_deleted_after_a_rollout_are_reported_and_available()
-> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    let members = ["member-1", "member-2", "gitops-1"];
    apply(&hub, scratch.path(), "fleet", &fleet(&members, "hello"))?;
    let state = |name: &str| scratch.path().join(format!("state-{name}"));
    let gitops = scratch.path().join("gitops");
    let link = ["--hub", hub.url.as_str()];
    let dir_applier = format!("dir:{}", gitops.display());
    let agents = [
        Agent::start(&binary(), &link, "member-1", "sim", &state("member-1"))?,
        Agent::start(&binary(), &link, "member-2", "sim", &state("member-2"))?,
        Agent::start(
            &binary(),
            &link,
            "gitops-1",
            &dir_applier,
            &state("gitops-1"),
        )?,
    ];
    let mut expected = Expected {
        members: members.len(),
        resource_index: "0",
        cluster_overrides: Value::Null,
        resource_overrides: Value::Null,
    };
    wait_available(&hub, "the first rollout", &expected)?;

    // The same resource index, re-rendered: each member's namespace gets its own label.
    apply(&hub, scratch.path(), "cro", &label_override(""))?;
    expected.cluster_overrides = json!(["label-ns-0"]);
    wait_available(&hub, "the override added", &expected)?;
    assert_eq!(
        served_by(&gitops, &state("member-1"))?,
        (json!("gitops-1"), json!("member-1"))
    );

    apply(&hub, scratch.path(), "cro", &label_override("edge-"))?;
    expected.cluster_overrides = json!(["label-ns-1"]);
    wait_available(&hub, "the override changed", &expected)?;
    assert_eq!(
        served_by(&gitops, &state("member-2"))?,
        (json!("edge-gitops-1"), json!("edge-member-2"))
    );

    ok(&hub, &["delete", "clusterresourceoverride", "label-ns"])?;
    expected.cluster_overrides = Value::Null;
    wait_available(&hub, "the override deleted", &expected)?;
    assert_eq!(
        served_by(&gitops, &state("member-1"))?,
        (Value::Null, Value::Null)
    );

    // A namespaced ResourceOverride re-renders the ConfigMap the same way.
    apply(&hub, scratch.path(), "ro", ANNOTATE_OVERRIDE)?;
    expected.resource_overrides = json!([{"name": "annotate-greeting-0", "namespace": "tour"}]);
    wait_available(&hub, "the resource override added", &expected)?;
    assert_eq!(
        annotated_with(&gitops, &state("member-2"))?,
        (json!("gitops-1"), json!("member-2"))
    );
    // Agents first: the hub's shutdown waits for their open watches.
    drop(agents);
    hub.stop()
}

/// Waits (bounded) until `agent` printed a line containing `text`; when it was seen.
fn wait_line(agent: &Agent, what: &str, text: &str) -> Result<Instant, String> {
    wait_for(what, || {
        Ok(agent
            .output()
            .iter()
            .any(|l| l.contains(text))
            .then_some(()))
    })?;
    Ok(Instant::now())
}

/// Waits up to [`DOWN_MAX`] until `agent` printed, after its line `after`, one containing
/// `text`: the agent gave up publishing its report.
fn wait_gave_up(agent: &Agent, after: &str, text: &str) -> Result<(), String> {
    let started = Instant::now();
    while started.elapsed() < DOWN_MAX {
        let output = agent.output();
        let from = output.iter().position(|l| l.contains(after)).unwrap_or(0);
        if output[from..].iter().any(|l| l.contains(text)) {
            println!(
                "the agent gave up publishing {:?} after the kill",
                started.elapsed()
            );
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "the agent did not fail to report within {DOWN_MAX:?}"
    ))
}

/// The line the slow agent prints when it starts applying resource index 1.
const APPLYING_INDEX_1: &str = "applying work tour-work (resource index 1";

/// How long the slow `sim` agent takes over index 1's ConfigMap: long enough for the test to
/// kill what it reports to before it reports (the draw is seeded, so it is the same every run).
fn slow_apply() -> Duration {
    let draw = "apply /v1/ConfigMap/tour/greeting@1";
    let pause = delay_ms(AGENT_SEED, draw, SLOW_APPLY_MS_MAX);
    assert!(pause >= 2000, "index 1's apply takes {pause} ms");
    Duration::from_millis(pause)
}

#[test]
fn a_report_whose_publish_failed_is_sent_once_the_restarted_hub_is_back() -> Result<(), String> {
    // The hub is killed at once: the slow apply leaves the agent seconds before it reports.
    slow_apply();
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = scratch.path().join("hub");
    let hub = HubProcess::start(&binary(), &data, &[])?;
    let listen = hub
        .url
        .strip_prefix("http://")
        .ok_or("the hub's URL is not http")?
        .to_owned();
    apply(
        &hub,
        scratch.path(),
        "fleet",
        &fleet(&["member-1"], "hello"),
    )?;
    let link = ["--hub", hub.url.as_str()];
    let delay = SLOW_APPLY_MS_MAX.to_string();
    let slow = ["--sim-apply-delay-ms-max", delay.as_str()];
    let state = scratch.path().join("state-member-1");
    let agent = Agent::start_with(&binary(), &link, "member-1", "sim", &state, &slow)?;
    let mut expected = Expected {
        members: 1,
        resource_index: "0",
        cluster_overrides: Value::Null,
        resource_overrides: Value::Null,
    };
    wait_available(&hub, "the first rollout", &expected)?;

    apply(
        &hub,
        scratch.path(),
        "fleet",
        &fleet(&["member-1"], "bonjour"),
    )?;
    wait_line(&agent, "the apply of index 1", APPLYING_INDEX_1)?;
    hub.kill_hard();
    wait_gave_up(&agent, APPLYING_INDEX_1, "] error: ")?;
    let hub = HubProcess::start_on(&binary(), &data, &listen, &[])?;
    expected.resource_index = "1";
    wait_available(&hub, "index 1 after the hub restarted", &expected)?;
    let simulated = sim_manifest(&state, "ConfigMap", "greeting")?;
    assert_eq!(simulated["data"]["greeting"], "bonjour");
    drop(agent);
    hub.stop()
}

/// The input stream on NATS.
const INPUT_STREAM: &str = "FLOTILLA_INPUT";

/// How long before the slow apply ends the input stream's leader is killed: the agent then
/// publishes its report while the other nodes have not elected a new leader (which takes them
/// seconds), so every attempt is refused at once ("no stream found") and it gives up.
const KILL_BEFORE_THE_REPORT: Duration = Duration::from_millis(600);

/// Waits until every stream of the cluster has a leader and current replicas again: the hub
/// writes a checkpoint when it stops, and fails its exit when the checkpoints' stream is still
/// electing a leader after the restart of the node that led it.
fn wait_streams_current(nats: &NatsTestCluster, node: usize) -> Result<(), String> {
    let jsz = nats
        .monitoring(node, "/jsz?streams=true")
        .ok_or("no JetStream monitoring answer")?;
    let names: Vec<String> = jsz["account_details"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|account| account["stream_detail"].as_array())
        .flatten()
        .filter_map(|stream| stream["name"].as_str().map(str::to_owned))
        .collect();
    for name in names {
        nats.wait_stream_current(&name).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[test]
fn a_report_whose_publish_failed_is_sent_once_the_input_stream_has_a_leader_again()
-> Result<(), String> {
    let apply_takes = slow_apply();
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut nats = NatsTestCluster::start().map_err(|e| e.to_string())?;
    let urls = nats.urls();
    let hub_args = ["--nats", urls.as_str(), "--nats-replicas", "3"];
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &hub_args)?;
    wait_for("the hub to take the writer role", || {
        Ok((hub.status()?["following"] == false).then_some(()))
    })?;
    apply(
        &hub,
        scratch.path(),
        "fleet",
        &fleet(&["member-1"], "hello"),
    )?;
    // The agent talks to a node that stays up, so what it publishes is answered (refused)
    // rather than held in its client until it reconnects.
    let leader = nats
        .wait_stream_leader(INPUT_STREAM, None)
        .map_err(|e| e.to_string())?;
    let kept = (leader + 1) % 3;
    let url = nats.url(kept).map_err(|e| e.to_string())?;
    let delay = SLOW_APPLY_MS_MAX.to_string();
    let slow = ["--sim-apply-delay-ms-max", delay.as_str()];
    let state = scratch.path().join("state-member-1");
    let link = ["--nats", url.as_str()];
    let agent = Agent::start_with(&binary(), &link, "member-1", "sim", &state, &slow)?;
    let mut expected = Expected {
        members: 1,
        resource_index: "0",
        cluster_overrides: Value::Null,
        resource_overrides: Value::Null,
    };
    wait_available(&hub, "the first rollout", &expected)?;

    apply(
        &hub,
        scratch.path(),
        "fleet",
        &fleet(&["member-1"], "bonjour"),
    )?;
    let applying = wait_line(&agent, "the apply of index 1", APPLYING_INDEX_1)?;
    let leader = nats
        .wait_stream_leader(INPUT_STREAM, None)
        .map_err(|e| e.to_string())?;
    let kill_at = applying + apply_takes.saturating_sub(KILL_BEFORE_THE_REPORT);
    std::thread::sleep(kill_at.saturating_duration_since(Instant::now()));
    nats.kill(leader).map_err(|e| e.to_string())?;
    wait_gave_up(&agent, APPLYING_INDEX_1, "] error: ")?;
    nats.restart(leader).map_err(|e| e.to_string())?;
    expected.resource_index = "1";
    wait_available(
        &hub,
        "index 1 after the stream has a leader again",
        &expected,
    )?;
    drop(agent);
    wait_streams_current(&nats, kept)?;
    hub.stop()
}

//! `flotilla replay` against a running hub's redb log and its export: the state at a point is
//! what `get` showed then (also over the API's `?at=`), a time names the last input at or
//! before it, export → import → export is byte-identical and verifies, and a decision altered
//! in the file is caught by `verify` at its exact sequence; a Kubernetes watch from a past
//! point replays what changed since.

use std::path::{Path, PathBuf};
use std::process::Output;

use flotilla_tests::agents::{get_json, ok};
use flotilla_tests::support::{HubProcess, fixture, http_client, stderr, stdout};
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn replay(args: &[&str]) -> Result<Output, String> {
    std::process::Command::new(binary())
        .arg("replay")
        .args(args)
        .output()
        .map_err(|e| e.to_string())
}

fn replay_ok(args: &[&str]) -> Result<String, String> {
    let output = replay(args)?;
    if output.status.success() {
        Ok(stdout(&output))
    } else {
        Err(format!(
            "replay {args:?}: {}{}",
            stdout(&output),
            stderr(&output)
        ))
    }
}

fn heartbeat(cluster: &str) -> Value {
    serde_json::json!({"type": "heartbeat", "cluster": cluster, "source": "test"})
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn replay_answers_from_a_running_hubs_log_and_its_export() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = scratch.path().join("hub");
    let hub = HubProcess::start(&binary(), &data, &[])?;
    ok(&hub, &["apply", "-f", &fixture("agents-fleet.yaml")])?;
    hub.post_events(&Value::Array(vec![
        heartbeat("member-1"),
        heartbeat("member-2"),
    ]))?;
    // What `get` shows now, and at which sequence.
    let seq_then = hub.status()?["seq"].as_u64().ok_or("no seq")?;
    let bindings_then = get_json(&hub, &["clusterresourcebindings"])?;
    let member_then = get_json(&hub, &["membercluster", "member-2"])?;
    // More happens afterwards.
    hub.post_events(&Value::Array(vec![
        heartbeat("member-3"),
        heartbeat("gitops-1"),
    ]))?;
    let seq_now = hub.status()?["seq"].as_u64().ok_or("no seq")?;
    assert!(seq_now > seq_then);

    // Read-only, while the hub runs.
    let data_arg = path(&data);
    let at = seq_then.to_string();
    let state = replay_ok(&[
        "--data", &data_arg, "state", "--at", &at, "crb", "-o", "json",
    ])?;
    let replayed: Value = serde_json::from_str(&state).map_err(|e| format!("{e}: {state}"))?;
    assert_eq!(
        replayed["items"], bindings_then["items"],
        "bindings as get showed them"
    );
    let member = replay_ok(&[
        "--data",
        &data_arg,
        "state",
        "--at",
        &at,
        "membercluster",
        "member-2",
        "-o",
        "json",
    ])?;
    let member: Value = serde_json::from_str(&member).map_err(|e| e.to_string())?;
    assert_eq!(member, member_then);
    // The API answers the same at that point.
    let url = format!("{}/v1/objects/membercluster?name=member-2&at={at}", hub.url);
    let past: Value = tokio::runtime::Runtime::new()
        .map_err(|e| e.to_string())?
        .block_on(async {
            let response = http_client().get(url).send().await?;
            response.json().await
        })
        .map_err(|e| e.to_string())?;
    assert_eq!(past, member_then, "?at= answers from that point");
    let url = format!(
        "{}/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters/member-2?at={at}",
        hub.url
    );
    let kube_past: Value = tokio::runtime::Runtime::new()
        .map_err(|e| e.to_string())?
        .block_on(async { http_client().get(url).send().await?.json().await })
        .map_err(|e| e.to_string())?;
    assert_eq!(
        kube_past["status"], member_then["status"],
        "the Kubernetes API's ?at="
    );
    assert_eq!(kube_past["metadata"], member_then["metadata"]);
    let url = format!("{}/v1/timeline?cluster=member-2", hub.url);
    let timeline: Value = tokio::runtime::Runtime::new()
        .map_err(|e| e.to_string())?
        .block_on(async { http_client().get(url).send().await?.json().await })
        .map_err(|e| e.to_string())?;
    let lines = timeline["entries"].to_string();
    assert!(lines.contains("heartbeat member-2"), "{timeline}");

    // A time names the last input at or before it.
    let log = replay_ok(&[
        "--data",
        &data_arg,
        "export",
        "--to",
        &path(&scratch.path().join("probe.jsonl")),
    ])?;
    assert!(log.starts_with("exported"), "{log}");
    let exported =
        std::fs::read_to_string(scratch.path().join("probe.jsonl")).map_err(|e| e.to_string())?;
    let record: Value = exported
        .lines()
        .nth(usize::try_from(seq_then).map_err(|e| e.to_string())?)
        .and_then(|line| serde_json::from_str(line).ok())
        .ok_or("no record line")?;
    let time = record["event"]["time"].as_str().ok_or("no time")?;
    let seek = replay_ok(&["--data", &data_arg, "seek", "--at", time])?;
    assert_eq!(seek.trim(), at, "the time of input {at} names it");

    // Export, import, export again: the same bytes; the import verifies.
    hub.stop()?;
    let first = scratch.path().join("first.jsonl");
    replay_ok(&["--data", &data_arg, "export", "--to", &path(&first)])?;
    let imported = scratch.path().join("imported");
    replay_ok(&["import", &path(&first), "--data", &path(&imported)])?;
    let second = scratch.path().join("second.jsonl");
    replay_ok(&["--data", &path(&imported), "export", "--to", &path(&second)])?;
    let (a, b) = (
        std::fs::read(&first).map_err(|e| e.to_string())?,
        std::fs::read(&second).map_err(|e| e.to_string())?,
    );
    assert!(a == b, "export → import → export changed the log");
    let verified = replay_ok(&["--data", &path(&imported), "verify"])?;
    assert!(
        verified.contains(&format!("verified inputs 1..={seq_now}")),
        "{verified}"
    );
    let from_file = replay_ok(&[
        "--file",
        &path(&first),
        "state",
        "--at",
        &at,
        "crb",
        "-o",
        "json",
    ])?;
    assert_eq!(
        from_file, state,
        "the file answers as the data directory did"
    );

    // The incident commands answer from the imported copy.
    let imported_arg = path(&imported);
    let timeline = replay_ok(&["--data", &imported_arg, "timeline", "--cluster", "member-2"])?;
    assert!(timeline.contains("heartbeat member-2"), "{timeline}");
    assert!(
        timeline.contains("-> cluster member-2 joined"),
        "{timeline}"
    );
    let diff = replay_ok(&["--data", &imported_arg, "diff", "0", &at])?;
    assert!(diff.contains("+ MemberCluster/member-2"), "{diff}");
    let why = replay_ok(&[
        "--data",
        &imported_arg,
        "explain",
        "--placement",
        "shop",
        "--cluster",
        "member-2",
        "--at",
        &at,
        "-o",
        "json",
    ])?;
    let why: Value = serde_json::from_str(&why).map_err(|e| format!("{e}: {why}"))?;
    assert_eq!(why["cluster"], "member-2", "{why}");

    // A recorded decision altered in the file: verify names that input.
    let text = String::from_utf8(a).map_err(|e| e.to_string())?;
    let (line_no, line) = text
        .lines()
        .enumerate()
        .find(|(_, line)| line.starts_with("{\"batch\"") && line.contains("ClusterJoined"))
        .ok_or("no batch with a join")?;
    let changed = line.replacen("\"member-", "\"memb3r-", 1);
    let mut lines: Vec<&str> = text.lines().collect();
    lines[line_no] = &changed;
    let tampered = scratch.path().join("tampered.jsonl");
    std::fs::write(&tampered, lines.join("\n") + "\n").map_err(|e| e.to_string())?;
    let rebuilt = scratch.path().join("tampered");
    replay_ok(&["import", &path(&tampered), "--data", &path(&rebuilt)])?;
    let failed = replay(&["--data", &path(&rebuilt), "verify"])?;
    assert!(
        !failed.status.success(),
        "verify accepted an altered decision"
    );
    let joined_seq = joined_input(line)?;
    let message = stderr(&failed);
    assert!(
        message.contains(&format!("input {joined_seq}")),
        "verify names input {joined_seq}: {message}"
    );
    Ok(())
}

/// The input sequence of the first decision in a batch line that mentions a join.
fn joined_input(line: &str) -> Result<u64, String> {
    let batch: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    batch["batch"]["decisions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["decisions"].to_string().contains("ClusterJoined"))
        .and_then(|d| d["seq"].as_u64())
        .ok_or_else(|| "no joined decision".to_owned())
}

/// `GET …/memberclusters?watch=true&at=SEQ`: the objects as they were, then what each later
/// input changed, in order, then live.
#[test]
fn a_watch_from_a_past_point_replays_the_changes_since() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(&hub, &["apply", "-f", &fixture("agents-fleet.yaml")])?;
    let then = hub.status()?["seq"].as_u64().ok_or("no seq")?;
    let members_then = get_json(&hub, &["memberclusters"])?;
    hub.post_events(&Value::Array(vec![heartbeat("member-2")]))?;
    let member_2_now = get_json(&hub, &["membercluster", "member-2"])?;
    let url = format!(
        "{}/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters?watch=true&at={then}&timeoutSeconds=2",
        hub.url
    );
    let body = tokio::runtime::Runtime::new()
        .map_err(|e| e.to_string())?
        .block_on(async { http_client().get(url).send().await?.text().await })
        .map_err(|e| e.to_string())?;
    let events: Vec<Value> = body
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{e}: {body}"))?;
    let items_then = flotilla_tests::agents::items(&members_then);
    let (added, later) = events.split_at(items_then.len().min(events.len()));
    assert!(added.iter().all(|e| e["type"] == "ADDED"), "{body}");
    assert_eq!(
        added
            .iter()
            .map(|e| e["object"].clone())
            .collect::<Vec<_>>(),
        items_then,
        "the members exactly as get showed them then: {body}"
    );
    // The heartbeat that came after: one MODIFIED, to the state get shows now.
    assert_eq!(later.len(), 1, "{body}");
    assert_eq!(later[0]["type"], "MODIFIED");
    assert_eq!(later[0]["object"], member_2_now);
    hub.stop()
}

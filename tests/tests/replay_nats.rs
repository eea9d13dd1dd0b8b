//! `flotilla replay --nats URL` against a hub's JetStream log on a real `nats-server`: the
//! state at a point is what `get` showed then, `info` names the stream's first and last input,
//! the timeline reads the stream, and the log
//! exported from NATS imports into a redb directory that verifies and answers the same.

use std::path::PathBuf;

use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::agents::{get_json, ok};
use flotilla_tests::support::{HubProcess, fixture, run_ok};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn replay(args: &[&str]) -> Result<String, String> {
    run_ok(&binary(), &[&["replay"][..], args].concat())
}

#[test]
fn replay_reads_a_nats_log_and_its_export() -> Result<(), String> {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let url = nats.url();
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &["--nats", &url])?;
    ok(&hub, &["apply", "-f", &fixture("agents-fleet.yaml")])?;
    let beats = ["member-1", "member-2"]
        .map(|c| json!({"type": "heartbeat", "cluster": c, "source": format!("agent/{c}")}));
    hub.post_events(&Value::Array(beats.to_vec()))?;
    let status = hub.status()?;
    let seq = status["seq"].as_u64().ok_or("no seq")?.to_string();
    let bindings = get_json(&hub, &["crb"])?;
    let member = get_json(&hub, &["membercluster", "member-1"])?;

    let source = ["--nats", url.as_str()];
    let ask = |args: &[&str]| replay(&[&source[..], args].concat());
    let replayed = ask(&[
        "state",
        "--at",
        &seq,
        "membercluster",
        "member-1",
        "-o",
        "json",
    ])?;
    let replayed: Value = serde_json::from_str(&replayed).map_err(|e| e.to_string())?;
    assert_eq!(
        replayed, member,
        "the state on NATS at {seq} is what get showed"
    );
    let info: Value =
        serde_json::from_str(&ask(&["info", "-o", "json"])?).map_err(|e| e.to_string())?;
    assert_eq!(info["first"]["seq"], 1, "{info:#}");
    let last = info["last"]["seq"].as_u64().ok_or("no last input")?;
    assert!(last >= seq.parse().unwrap_or(u64::MAX), "{info:#}");
    assert!(info["last"]["time"].is_string(), "{info:#}");
    let streams = info["streams"].as_array().map_or(0, Vec::len);
    assert_eq!(streams, 2, "the input and decision streams: {info:#}");
    let text = ask(&["info"])?;
    assert!(text.contains("NATS JetStream at"), "{text}");
    let timeline = ask(&["timeline", "--cluster", "member-1"])?;
    assert!(
        timeline.contains("-> cluster member-1 joined"),
        "{timeline}"
    );

    let export = scratch.path().join("nats.jsonl").display().to_string();
    ask(&["export", "--to", &export])?;
    let copy = scratch.path().join("copy").display().to_string();
    replay(&["import", &export, "--data", &copy])?;
    let verified = replay(&["--data", &copy, "verify"])?;
    // The hub may have decided a tick since; every input up to `seq` at least was checked.
    let checked: u64 = verified
        .split("verified inputs 1..=")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no verification line: {verified}"))?;
    let folded: u64 = seq.parse().map_err(|e| format!("{e}"))?;
    assert!(checked >= folded, "{verified}");
    let copied = replay(&["--data", &copy, "state", "--at", &seq, "crb", "-o", "json"])?;
    let copied: Value = serde_json::from_str(&copied).map_err(|e| e.to_string())?;
    assert_eq!(
        copied["items"], bindings["items"],
        "the import answers as the stream did"
    );
    hub.stop()
}

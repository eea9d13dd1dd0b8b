//! The time slider's marks (`GET /v1/marks`) come from the log's decisions: a staged run driven
//! through the `flotilla` command to success — started, its approval requested and given, then
//! succeeded — keeps its four marks after the run is deleted, and after the hub restarts from
//! a checkpoint taken since (the marks then read back from the log), at the same sequences and
//! times.

use std::path::PathBuf;

use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<String, String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        return Ok(stdout(&output));
    }
    Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
}

fn report(cluster: &str) -> Value {
    json!([{"type": "report", "cluster": cluster, "placement": "example-placement",
        "resourceIndex": 0, "applied": true, "available": true}])
}

/// `(seq, time, kind, label)` of each mark, newest first.
fn marks(hub: &HubProcess) -> Result<Vec<(u64, String, String, String)>, String> {
    let text = hub.get_text("/v1/marks")?;
    let body: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    let text_of = |mark: &Value, field: &str| mark[field].as_str().unwrap_or_default().to_owned();
    Ok((body["marks"].as_array().into_iter().flatten())
        .map(|mark| {
            let seq = mark["seq"].as_u64().unwrap_or_default();
            let time = text_of(mark, "time");
            (seq, time, text_of(mark, "kind"), text_of(mark, "label"))
        })
        .collect())
}

fn labels(marks: &[(u64, String, String, String)]) -> Vec<(&str, &str)> {
    marks
        .iter()
        .map(|(_, _, kind, label)| (kind.as_str(), label.as_str()))
        .collect()
}

#[test]
fn a_deleted_runs_marks_stay_on_the_slider_across_a_restart() -> Result<(), String> {
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), data.path(), &[])?;
    ok(&hub, &["apply", "-f", &fixture("staged-fleet.yaml")])?;
    let beats: Vec<Value> = ["member1", "member2", "member3"]
        .iter()
        .map(|c| json!({"type": "heartbeat", "cluster": c}))
        .collect();
    hub.post_events(&Value::Array(beats))?;
    ok(&hub, &["apply", "-f", &fixture("staged-rollout.yaml")])?;
    ok(&hub, &["apply", "-f", &fixture("staged-run.yaml")])?;
    ok(&hub, &["run", "start", "example-run"])?;
    hub.post_events(&report("member1"))?;
    ok(
        &hub,
        &["approve", "example-run-after-staging", "-m", "lgtm"],
    )?;
    for cluster in ["member2", "member3"] {
        hub.post_events(&report(cluster))?;
    }
    let expected = [
        ("run", "example-run succeeded"),
        ("approval", "example-run-after-staging approved"),
        ("approval", "example-run-after-staging requested"),
        ("run", "example-run started"),
    ];
    let finished = marks(&hub)?;
    assert_eq!(labels(&finished), expected, "{finished:?}");
    assert!(
        finished.windows(2).all(|pair| pair[0].0 > pair[1].0),
        "newest first, each at its own input: {finished:?}"
    );

    ok(&hub, &["delete", "csur", "example-run"])?;
    let deleted = marks(&hub)?;
    assert_eq!(deleted, finished, "the deleted run keeps its marks");

    // Stopped, the hub checkpoints everything it folded: restarted, it restores from there and
    // reads the marks back from the log's decisions.
    hub.stop()?;
    let hub = HubProcess::start(&binary(), data.path(), &[])?;
    let restarted = marks(&hub)?;
    assert_eq!(restarted, finished, "the same marks, read from the log");
    hub.stop()
}

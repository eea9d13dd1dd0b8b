//! A served hub with a retention window (`serve --retain`), on a test clock: inputs older than
//! the window leave its log, `replay info` shows the window and the base it starts from,
//! `replay verify` passes from the base, a point before it is refused by name, and the hub
//! restarts on the cut log.

use std::path::{Path, PathBuf};

use flotilla_tests::support::{HubProcess, fixture, run_ok, stderr, stdout};
use serde_json::{Value, json};

const START: &str = "2026-03-01T00:00:00Z";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn start(data: &Path) -> Result<HubProcess, String> {
    let args = [
        "--test-clock",
        START,
        "--retain",
        "60s",
        "--checkpoint-every",
        "20",
    ];
    HubProcess::start(&binary(), data, &args)
}

/// `flotilla replay --data DIR ARGS`: its stdout, or why it failed.
fn replay(data: &Path, args: &[&str]) -> Result<String, String> {
    let data = data.display().to_string();
    run_ok(
        &binary(),
        &[&["replay", "--data", &data][..], args].concat(),
    )
}

fn heartbeats() -> Value {
    let beats = ["member1", "member2", "member3"]
        .map(|cluster| json!({"schemaVersion": 1, "type": "heartbeat", "cluster": cluster}));
    Value::Array(beats.to_vec())
}

#[test]
fn a_retained_log_keeps_its_window_verifies_from_its_base_and_restarts() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    let hub = start(&data)?;
    let applied = hub.cli(&["apply", "-f", &fixture("staged-fleet.yaml")])?;
    assert!(applied.status.success(), "{}", stderr(&applied));
    for step in 1..=40 {
        hub.set_clock(START, step * 10)?;
        hub.post_events(&heartbeats())?;
    }
    let seq = hub.status()?["seq"].as_u64().ok_or("no seq")?;
    hub.stop()?;

    let info: Value = serde_json::from_str(&replay(&data, &["info", "-o", "json"])?)
        .map_err(|e| e.to_string())?;
    let base = info["baseSeq"].as_u64().ok_or("no base")?;
    let first = info["first"]["seq"].as_u64().ok_or("no first input")?;
    assert!(base > 0 && first == base + 1, "{info:#}");
    assert_eq!(info["last"]["seq"].as_u64(), Some(seq), "{info:#}");
    let time = |at: &str| {
        let text = info[at]["time"].as_str().unwrap_or_default();
        chrono::DateTime::parse_from_rfc3339(text).map_err(|e| format!("{at}: {e}"))
    };
    let window = (time("last")? - time("first")?).num_seconds();
    // The base is at least the window (60 s) older than the last input, and the first kept
    // input comes within one step (10 s) after it. Beyond the window the log keeps the inputs
    // between two kept checkpoints: about an eighth of the window when checkpoints keep up,
    // but they are paced by their cost in wall time, so a loaded machine writes fewer of them
    // over these 400 s of test clock. Well short of 400 s, the window still cut the log.
    assert!(
        (50..=300).contains(&window),
        "a window of {window} s: {info:#}"
    );

    let verified = replay(&data, &["verify"])?;
    let from_base = format!("verified inputs {first}..={seq}");
    assert!(verified.contains(&from_base), "{verified}");
    let last = seq.to_string();
    let state = replay(&data, &["state", "--at", &last, "membercluster", "member1"])?;
    assert!(state.contains("member1"), "{state}");
    let before = replay(&data, &["state", "--at", "1", "membercluster", "member1"]);
    let refused = before.err().unwrap_or_default();
    assert!(
        refused.contains("before the log's retained inputs"),
        "{refused}"
    );

    let restarted = start(&data)?;
    assert_eq!(restarted.status()?["seq"].as_u64(), Some(seq));
    let member = restarted.cli(&["get", "membercluster", "member1", "-o", "json"])?;
    assert!(stdout(&member).contains("member1"), "{}", stderr(&member));
    restarted.stop()
}

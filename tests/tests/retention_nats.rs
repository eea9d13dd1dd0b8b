//! A hub on NATS with a retention window (`serve --nats URL --retain`), on a test clock: it
//! prints its window, its writer cuts the input and decision streams at its checkpoints and
//! sets the input stream's `max_age`, `replay --nats info` shows the base and the window,
//! `replay verify` passes from the base, a point before it is refused by name, and the hub
//! restarts on the cut streams.

use std::path::PathBuf;

use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::support::{HubProcess, fixture, run_ok, stderr, stdout};
use serde_json::{Value, json};

const START: &str = "2026-03-01T00:00:00Z";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// Inputs per step: each step's checkpoint is kept for seeking as the first in its eighth of
/// the window, though all of them fall in one span of 50,000 inputs.
const NATS_STEP_INPUTS: usize = 5_000;
/// The test clock's step: an hour, against a window of three. The stream's own clock sees
/// the test run for a minute, far inside its `max_age` (twice the window).
const NATS_STEP_SECS: i64 = 3_600;

/// `count` heartbeats of the three members.
fn many_heartbeats(count: usize) -> Value {
    let beats = (0..count).map(|n| {
        let cluster = format!("member{}", n % 3 + 1);
        json!({"schemaVersion": 1, "type": "heartbeat", "cluster": cluster})
    });
    Value::Array(beats.collect())
}

#[test]
fn a_hub_on_nats_cuts_its_streams_at_its_checkpoints_and_restarts() -> Result<(), String> {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let url = nats.url();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    let args = [
        "--nats",
        url.as_str(),
        "--test-clock",
        START,
        "--retain",
        "3h",
        "--checkpoint-every",
        "5000",
    ];
    let hub = HubProcess::start(&binary(), &data, &args)?;
    let printed = hub.printed.join("\n");
    assert!(
        printed.contains("log: NATS JetStream, keeping the last 3h of inputs"),
        "the hub names its window: {printed}"
    );
    let applied = hub.cli(&["apply", "-f", &fixture("staged-fleet.yaml")])?;
    assert!(applied.status.success(), "{}", stderr(&applied));
    for step in 1..=14 {
        hub.set_clock(START, step * NATS_STEP_SECS)?;
        hub.post_events(&many_heartbeats(NATS_STEP_INPUTS))?;
    }
    let seq = hub.status()?["seq"].as_u64().ok_or("no seq")?;
    hub.stop()?;

    let replay =
        |args: &[&str]| run_ok(&binary(), &[&["replay", "--nats", &url][..], args].concat());
    let info: Value =
        serde_json::from_str(&replay(&["info", "-o", "json"])?).map_err(|e| e.to_string())?;
    let base = info["baseSeq"].as_u64().ok_or("no base")?;
    let first = info["first"]["seq"].as_u64().ok_or("no first input")?;
    assert!(base > 0 && first == base + 1, "{info:#}");
    assert_eq!(info["last"]["seq"].as_u64(), Some(seq), "{info:#}");
    let time = |at: &str| {
        let text = info[at]["time"].as_str().unwrap_or_default();
        chrono::DateTime::parse_from_rfc3339(text).map_err(|e| format!("{at}: {e}"))
    };
    // The base is the newest checkpoint kept for seeking at least the window (3 h) older than
    // the last input. The hub checkpoints once per eighth of the window or per 5,000 inputs,
    // whichever comes first, but never while the last is being stored: here about once a step
    // (an hour), so the first kept input comes at most a step after the window, and after the
    // base, which is at least the window old.
    let window = (time("last")? - time("first")?).num_seconds();
    assert!(
        (2 * NATS_STEP_SECS..=4 * NATS_STEP_SECS).contains(&window),
        "a window of {window} s: {info:#}"
    );
    assert_eq!(
        info["streams"][0]["messages"].as_u64(),
        Some(seq - base),
        "{info:#}"
    );
    assert_eq!(
        info["streams"][0]["maxAgeSecs"].as_u64(),
        Some(6 * 3_600),
        "{info:#}"
    );
    let text = replay(&["info"])?;
    assert!(
        text.contains(&format!("base         checkpoint #{base}")),
        "{text}"
    );

    let verified = replay(&["verify"])?;
    let from_base = format!("verified inputs {first}..={seq}");
    assert!(verified.contains(&from_base), "{verified}");
    let last = seq.to_string();
    let state = replay(&["state", "--at", &last, "membercluster", "member1"])?;
    assert!(state.contains("member1"), "{state}");
    let before = replay(&["state", "--at", "1", "membercluster", "member1"]);
    let refused = before.err().unwrap_or_default();
    assert!(
        refused.contains("before the log's retained inputs"),
        "{refused}"
    );

    let restarted = HubProcess::start(&binary(), &data, &args)?;
    assert_eq!(restarted.status()?["seq"].as_u64(), Some(seq));
    let member = restarted.cli(&["get", "membercluster", "member1", "-o", "json"])?;
    assert!(stdout(&member).contains("member1"), "{}", stderr(&member));
    restarted.stop()
}

//! The CLI in a pipeline: `flotilla events | head -1` — a reader that stops reading ends the
//! command quietly with status 141 (what a shell reports for SIGPIPE), not a panic.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use flotilla_tests::support::HubProcess;
use serde_json::json;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

#[test]
fn a_reader_that_stops_reading_ends_the_command_quietly() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    // Enough events that the output outgrows the pipe's buffer once the reader is gone.
    let beats: Vec<_> = (0..400)
        .map(|i| json!({"type": "heartbeat", "cluster": format!("member-{i}")}))
        .collect();
    hub.post_events(&json!(beats))?;
    let mut child = Command::new(binary())
        .args(["events"])
        .env("FLOTILLA_SERVER", &hub.url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .map_err(|e| e.to_string())?;
    assert!(first.starts_with("#1 "), "{first}");
    // The reader is dropped here, as `head -1` exits.
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    hub.stop()
}

//! The CLI in a pipeline: `flotilla events | head -1` — a reader that stops reading ends the
//! command quietly with status 141 (what a shell reports for SIGPIPE), not a panic; and the
//! filters that keep what is looked for (`--type`, `--cluster`, `--decided`, `--rejected`,
//! `--actor`, `--placement`).

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

/// `#N` of each event `flotilla events ARGS` prints.
fn listed(hub: &HubProcess, args: &[&str]) -> Result<Vec<String>, String> {
    let mut all = vec!["events"];
    all.extend(args);
    let output = hub.cli(&all)?;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        // Decision lines are indented under their event.
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next().filter(|w| w.starts_with('#')))
        .map(str::to_owned)
        .collect())
}

#[test]
fn events_are_filtered_by_type_cluster_and_whether_they_decided() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let member = "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n\
                  metadata: {name: member-1}\nspec: {heartbeatPeriodSeconds: 60}\n";
    let file = dir.path().join("member.yaml");
    std::fs::write(&file, member).map_err(|e| e.to_string())?;
    let applied = hub.cli(&["apply", "-f", &file.display().to_string()])?;
    assert!(applied.status.success());
    for cluster in ["member-1", "member-1", "member-1", "member-2"] {
        hub.post_events(&json!([{"type": "heartbeat", "cluster": cluster}]))?;
    }
    assert_eq!(listed(&hub, &[])?, ["#1", "#2", "#3", "#4", "#5"]);
    // The first heartbeat joins member-1; the next two change nothing; member-2 is unknown
    // (rejected, a decision too).
    assert_eq!(listed(&hub, &["--decided"])?, ["#1", "#2", "#5"]);
    assert_eq!(
        listed(&hub, &["--type", "heartbeat", "--cluster", "member-1"])?,
        ["#2", "#3", "#4"]
    );
    assert_eq!(listed(&hub, &["--type", "apply,report"])?, ["#1"]);
    assert_eq!(listed(&hub, &["--rejected"])?, ["#5"]);
    assert_eq!(listed(&hub, &["--actor", "cli"])?, ["#1"]);
    let placement = "apiVersion: placement.kubernetes-fleet.io/v1beta1\n\
                     kind: ClusterResourcePlacement\nmetadata: {name: web}\n\
                     spec: {resourceSelectors: [{group: '', version: v1, kind: Namespace, \
                     name: web}]}\n";
    let file = dir.path().join("placement.yaml");
    std::fs::write(&file, placement).map_err(|e| e.to_string())?;
    let applied = hub.cli(&["apply", "-f", &file.display().to_string()])?;
    assert!(applied.status.success());
    assert_eq!(listed(&hub, &["--placement", "web"])?, ["#6"]);
    assert_eq!(
        listed(&hub, &["--placement", "other"])?,
        Vec::<String>::new()
    );
    hub.stop()
}

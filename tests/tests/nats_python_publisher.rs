//! The external publisher example (`examples/nats-publisher/publish.py`, Python's `nats-py`
//! only) against a real hub on a real `nats-server`: its heartbeat is folded (the member joins
//! with the properties it sent), and its malformed event is recorded as rejected and announced
//! on the rejection subject, which the example prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::agents::{get_json, ok, wait_for};
use flotilla_tests::support::{HubProcess, stderr, stdout};
use serde_json::Value;

const MEMBER: &str = "apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-1}
spec: {heartbeatPeriodSeconds: 60}
";

#[test]
fn the_python_example_heartbeat_is_folded_and_its_malformed_event_rejected() -> Result<(), String> {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"));
    let url = nats.url();
    let hub = HubProcess::start(&binary, &scratch.path().join("hub"), &["--nats", &url])?;
    let member = scratch.path().join("member.yaml");
    std::fs::write(&member, MEMBER).map_err(|e| e.to_string())?;
    ok(&hub, &["apply", "-f", &member.display().to_string()])?;
    wait_for("the hub to write", || {
        Ok((hub.status()?["following"] == false).then_some(()))
    })?;

    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/nats-publisher/publish.py");
    let output = Command::new("python3")
        .arg(&example)
        .args(["--nats", &url, "--cluster", "member-1", "--wait", "15"])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).map_err(|e| format!("{e}: {line}")))
        .collect::<Result<_, _>>()?;
    let [good, bad, rejected] = lines.as_slice() else {
        return Err(format!("three lines expected: {lines:?}"));
    };
    let rejected = &rejected["rejected"];
    assert_eq!(rejected["seq"], bad["published"]["seq"]);
    assert_eq!(rejected["subject"], "flotilla.in.heartbeat.member-1");
    assert_eq!(rejected["code"], "Undecodable", "{rejected}");
    let reason = rejected["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("not the JSON form") && reason.contains("expected a map"),
        "the reason says what is wrong: {rejected}"
    );

    // The good heartbeat was folded: the member joined with the properties it sent.
    let folded_at = good["published"]["seq"].as_u64().ok_or("no seq")?;
    wait_for("the heartbeat to be folded", || {
        Ok((hub.status()?["seq"].as_u64() >= Some(folded_at)).then_some(()))
    })?;
    let cluster = get_json(&hub, &["membercluster", "member-1"])?;
    let joined = cluster["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Joined" && c["status"] == "True");
    assert!(joined, "{cluster}");
    assert_eq!(
        cluster["status"]["properties"]["kubernetes-fleet.io/node-count"]["value"],
        "4"
    );
    hub.stop()
}

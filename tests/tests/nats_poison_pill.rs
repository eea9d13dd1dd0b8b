//! One bad message on the input stream does not stop the hub. Against
//! `flotilla serve --nats` on a real server, a plain JetStream client (nats-py) publishes the
//! documented JSON heartbeat and garbage onto `flotilla.in.heartbeat.member-2`: the heartbeat is
//! folded, the garbage is recorded as rejected (sequence, subject, reason) and listed by
//! `flotilla events`, and the hub restarts over them. Then a marked frame of a newer flotilla
//! arrives from a publisher: it is rejected too, and the hub goes on writing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_core::wire::encode_envelope;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::support::{HubProcess, stderr, stdout};
use serde_json::Value;
use uuid::Uuid;

type TestResult = Result<(), String>;

const SUBJECT: &str = "flotilla.in.heartbeat.member-2";
/// The heartbeat of `docs/events.md`, as an external system publishes it.
const DOCUMENTED_HEARTBEAT: &str = r#"{"id": "0190b3d2-0000-7000-8000-000000000001", "time": "2030-01-01T00:00:00Z", "source": "agent/member-2", "schemaVersion": 1, "type": "heartbeat", "cluster": "member-2", "properties": {"kubernetes-fleet.io/node-count": "3"}}"#;

fn publisher() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../eventstore/tests/publish_raw.py")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Publishes raw payloads with nats-py (a plain JetStream publish, no flotilla client).
fn publish(url: &str, payloads: &[Vec<u8>]) -> TestResult {
    let body: Vec<Value> = payloads
        .iter()
        .map(|p| serde_json::json!({"subject": SUBJECT, "payload_hex": hex(p)}))
        .collect();
    let mut child = Command::new("python3")
        .arg(publisher())
        .arg(url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(Value::Array(body).to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "nats-py publisher failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// Waits (bounded) until the hub has folded everything in the log, or says why it cannot.
fn settled(hub: &HubProcess) -> Result<Value, String> {
    let started = Instant::now();
    loop {
        let status = hub.status()?;
        if status["seq"] == status["logSeq"] || !status["declined"].is_null() {
            return Ok(status);
        }
        if started.elapsed() > Duration::from_secs(20) {
            return Err(format!("the hub stopped folding: {status}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn start(nats: &NatsTestServer, data: &Path) -> Result<HubProcess, String> {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"));
    HubProcess::start(&binary, data, &["--nats", &nats.url()])
}

/// A marked frame of a flotilla far ahead of this one.
fn newer_frame() -> Result<Vec<u8>, String> {
    let beat = Envelope::new(
        Uuid::now_v7(),
        chrono::Utc::now(),
        "agent/member-2",
        Input::Heartbeat(Heartbeat {
            cluster: "member-2".into(),
            ..Heartbeat::default()
        }),
    );
    let mut frame = encode_envelope(&beat).map_err(|e| e.to_string())?;
    frame[5] = 0xFF; // the version's low byte
    Ok(frame)
}

#[test]
fn bad_records_and_a_publishers_newer_frame_are_rejected() -> TestResult {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start(&nats, data.path())?;
    let file = data.path().join("member.yaml");
    std::fs::write(
        &file,
        "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {name: member-2}\nspec: {}\n",
    )
    .map_err(|e| e.to_string())?;
    let applied = hub.cli(&["apply", "-f", &file.display().to_string()])?;
    assert!(applied.status.success(), "{}", stderr(&applied));

    publish(
        &nats.url(),
        &[
            DOCUMENTED_HEARTBEAT.as_bytes().to_vec(),
            b"\x00\xffnot an event".to_vec(),
        ],
    )?;
    let status = settled(&hub)?;
    assert_eq!(status["logSeq"], 3, "{status}");
    assert!(status["declined"].is_null(), "{status}");
    let listed = hub.cli(&["events", "-o", "json"])?;
    let lines: Vec<Value> = stdout(&listed)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let joined = lines
        .iter()
        .any(|l| l.to_string().contains("ClusterJoined"));
    assert!(joined, "the JSON heartbeat was folded: {lines:?}");
    let rejected = lines
        .iter()
        .find(|l| l["seq"] == 3)
        .ok_or_else(|| format!("record 3 is not listed: {lines:?}"))?
        .to_string();
    assert!(
        rejected.contains(SUBJECT) && rejected.contains("Undecodable"),
        "{rejected}"
    );

    // A restart goes over the rejected record as the first writer decided it.
    hub.stop()?;
    let hub = start(&nats, data.path())?;
    let status = settled(&hub)?;
    assert_eq!(status["seq"], 3, "{status}");

    // A frame that claims a newer flotilla, from a publisher: no hub of a newer build
    // announced itself, so it is rejected like any other record, and the hub goes on writing
    // (`adversary_frames.rs` shows a newer hub's announcement handing the role over).
    publish(&nats.url(), &[newer_frame()?])?;
    let status = settled(&hub)?;
    assert!(status["declined"].is_null(), "{status}");
    assert_eq!(status["seq"], 4, "the newer record was decided: {status}");
    let listed = hub.cli(&["events", "-o", "json"])?;
    let newer = stdout(&listed)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["seq"] == 4)
        .ok_or("record 4 is not listed")?
        .to_string();
    assert!(
        newer.contains("Undecodable") && newer.contains("newer than this build"),
        "{newer}"
    );
    hub.stop()
}

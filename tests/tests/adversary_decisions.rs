//! Garbage on `flotilla.decisions`, published with a hub's real credentials (a bug of one
//! build, a disk error, a stray tool), against a writer, a standby and a read follower on a
//! real `nats-server`: every hub steps over the records that are not decision batches, the
//! writer keeps deciding after them, the follower keeps following, a restarted hub starts, and
//! when the writer dies the standby takes over and writes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_nats::jetstream;
use flotilla_tests::adversary::{SecuredNats, apply_yaml, folded_through, settled};
use flotilla_tests::agents::wait_for;
use flotilla_tests::support::HubProcess;
use serde_json::Value;

type TestResult = Result<(), String>;

const SETTLE: Duration = Duration::from_secs(30);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn start(nats: &SecuredNats, data: &Path, extra: &[&str]) -> Result<HubProcess, String> {
    let mut args = nats.hub_args();
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    HubProcess::start(&binary(), data, &args)
}

fn writing(hub: &HubProcess) -> bool {
    hub.status().is_ok_and(|s| s["following"] == false)
}

fn apply_namespace(hub: &HubProcess, dir: &Path, name: &str) -> Result<(), String> {
    let yaml = format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n");
    apply_yaml(hub, dir, name, &yaml)
}

/// Publishes records that are not decision batches on the decisions stream.
async fn publish_garbage(client: &async_nats::Client) -> Result<(), String> {
    let js = jetstream::new(client.clone());
    let garbage: [&[u8]; 3] = [
        b"\x00\xffnot a decision batch",
        b"\xf7FLOD\x01\x00damaged body",
        b"{\"firstInputSeq\": 1}",
    ];
    for record in garbage {
        js.publish("flotilla.decisions", record.to_vec().into())
            .await
            .map_err(|e| e.to_string())?
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn healthy(status: &Value) -> bool {
    status["fenced"].is_null() && status["declined"].is_null()
}

#[test]
fn garbage_on_the_decisions_stream_leaves_the_fleet_a_writer() -> TestResult {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let nats = SecuredNats::start(&binary(), scratch.path(), &[])?;
    let writer = start(&nats, &scratch.path().join("writer"), &[])?;
    wait_for("the first hub to write", || {
        Ok(writing(&writer).then_some(()))
    })?;
    let standby = start(&nats, &scratch.path().join("standby"), &[])?;
    let follower = start(&nats, &scratch.path().join("follower"), &["--read-only"])?;
    apply_namespace(&writer, scratch.path(), "before")?;
    settled(&writer, SETTLE)?;

    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let client = runtime.block_on(nats.hub_client())?;
    runtime.block_on(publish_garbage(&client))?;

    // The writer decides after the garbage; the standby and the follower follow it.
    apply_namespace(&writer, scratch.path(), "after")?;
    let status = settled(&writer, SETTLE)?;
    assert!(healthy(&status), "{status}");
    let seq = status["seq"].as_u64().ok_or("no seq")?;
    for hub in [&standby, &follower] {
        let status = folded_through(hub, seq, SETTLE)?;
        assert!(healthy(&status), "{status}");
        assert_eq!(status["stateHash"], settled(&writer, SETTLE)?["stateHash"]);
    }

    // More garbage at the tail, then a restart of the follower: it starts and catches up.
    runtime.block_on(publish_garbage(&client))?;
    follower.stop()?;
    let follower = start(&nats, &scratch.path().join("follower"), &["--read-only"])?;
    folded_through(&follower, seq, SETTLE)?;

    // The writer dies with garbage at the tail: the standby takes over and writes.
    writer.kill_hard();
    wait_for("the standby to take the writer role", || {
        Ok(writing(&standby).then_some(()))
    })?;
    apply_namespace(&standby, scratch.path(), "taken-over")?;
    let status = settled(&standby, SETTLE)?;
    assert!(healthy(&status), "{status}");
    assert!(
        status["seq"].as_u64().is_some_and(|now| now > seq),
        "{status}"
    );
    let status = folded_through(&follower, status["seq"].as_u64().unwrap_or(seq), SETTLE)?;
    assert!(healthy(&status), "{status}");
    standby.stop()?;
    follower.stop()
}

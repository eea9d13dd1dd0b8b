//! A hostile publisher holding one agent's real credentials (`flotilla agent-creds member-1`,
//! enforced by a real `nats-server`) against a `flotilla serve --nats` process.
//!
//! - The 7 bytes of a marked event frame of version 32767, published on member-1's own
//!   heartbeat subject, are rejected, recorded and announced on the rejection subject; the
//!   writer keeps folding, and a restarted hub folds past them. Only when a hub of a newer
//!   build has announced itself (in the builds bucket, which only hub credentials may write)
//!   does the same frame hand the writer role over.
//! - Heartbeats carrying ids of the form the log gives id-less records, aimed at the sequences
//!   of records another publisher will send without ids, are rejected, and those records are
//!   folded, not judged duplicates.

use std::path::PathBuf;
use std::time::Duration;

use async_nats::jetstream;
use flotilla_core::wire::json::stream_record_id;
use flotilla_tests::adversary::{SecuredNats, apply_yaml, event_at, folded_through, settled};
use flotilla_tests::support::HubProcess;
use futures::StreamExt;
use serde_json::Value;

type TestResult = Result<(), String>;

/// A marked event frame (`F7 'F' 'L' 'O' 'E'`) of version 32767 with no body.
const NEWER_FRAME: [u8; 7] = [0xF7, 0x46, 0x4C, 0x4F, 0x45, 0xFF, 0x7F];
const SUBJECT: &str = "flotilla.in.heartbeat.member-1";
const SETTLE: Duration = Duration::from_secs(30);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn start_hub(nats: &SecuredNats, data: &std::path::Path) -> Result<HubProcess, String> {
    let args = nats.hub_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let hub = HubProcess::start(&binary(), data, &args)?;
    flotilla_tests::agents::wait_for("the hub to take the writer role", || {
        Ok(hub
            .status()
            .ok()
            .filter(|s| s["following"] == false)
            .map(|_| ()))
    })?;
    Ok(hub)
}

/// Publishes `payload` on `subject` with `client` and returns its stream sequence.
async fn publish(
    client: &async_nats::Client,
    subject: &str,
    payload: Vec<u8>,
) -> Result<u64, String> {
    let js = jetstream::new(client.clone());
    let ack = js
        .publish(subject.to_owned(), payload.into())
        .await
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| format!("{subject}: {e}"))?;
    Ok(ack.sequence)
}

/// Waits for the rejection notice of record `seq`.
async fn notice_of(notices: &mut async_nats::Subscriber, seq: u64) -> Result<Value, String> {
    tokio::time::timeout(SETTLE, async {
        while let Some(notice) = notices.next().await {
            let body: Value = serde_json::from_slice(&notice.payload).unwrap_or_default();
            if body["seq"] == seq {
                return Ok(body);
            }
        }
        Err("the notice subscription ended".to_owned())
    })
    .await
    .map_err(|_| format!("no rejection notice for record {seq}"))?
}

fn heartbeat(id: Option<String>) -> Vec<u8> {
    let mut body = serde_json::json!({"type": "heartbeat", "cluster": "member-1"});
    if let Some(id) = id {
        body["id"] = Value::from(id);
    }
    body.to_string().into_bytes()
}

fn apply_member(hub: &HubProcess, dir: &std::path::Path) -> TestResult {
    let yaml = "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {name: member-1}\nspec: {}\n";
    apply_yaml(hub, dir, "member", yaml)
}

#[test]
fn an_agents_newer_frame_is_rejected_and_only_a_hubs_signal_hands_over() -> TestResult {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let nats = SecuredNats::start(&binary(), scratch.path(), &["member-1"])?;
    let data = scratch.path().join("hub");
    let hub = start_hub(&nats, &data)?;
    apply_member(&hub, scratch.path())?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let member = runtime.block_on(nats.member_client("member-1"))?;
    let mut notices = runtime
        .block_on(member.subscribe("flotilla.rejected.*.member-1"))
        .map_err(|e| e.to_string())?;

    let frame_seq = runtime.block_on(publish(&member, SUBJECT, NEWER_FRAME.to_vec()))?;
    let notice = runtime.block_on(notice_of(&mut notices, frame_seq))?;
    assert_eq!(notice["code"], "Undecodable", "{notice}");
    assert_eq!(notice["subject"], SUBJECT, "{notice}");
    let reason = notice["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("version 32767"), "{notice}");
    // The writer keeps folding: member-1's next heartbeat joins it.
    let beat = runtime.block_on(publish(&member, SUBJECT, heartbeat(None)))?;
    let status = folded_through(&hub, beat, SETTLE)?;
    assert!(status["declined"].is_null(), "{status}");
    assert!(event_at(&hub, beat)?.contains("ClusterJoined"));

    // A restart folds past the rejected frame, as the first writer decided it.
    hub.stop()?;
    let hub = start_hub(&nats, &data)?;
    let status = settled(&hub, SETTLE)?;
    assert!(status["declined"].is_null(), "{status}");
    assert!(event_at(&hub, frame_seq)?.contains("Undecodable"));

    // A hub of a newer build announces itself (only hub credentials can), and the same frame
    // now hands the writer role over.
    let hub_client = runtime.block_on(nats.hub_client())?;
    runtime.block_on(announce_newer_build(&hub_client))?;
    let denied = runtime.block_on(announce_newer_build(&member));
    assert!(denied.is_err(), "an agent wrote the builds bucket");
    let second = runtime.block_on(publish(&member, SUBJECT, NEWER_FRAME.to_vec()))?;
    let status = settled(&hub, SETTLE)?;
    let declined = status["declined"].as_str().unwrap_or_default();
    assert!(declined.contains("declining the writer role"), "{status}");
    assert!(declined.contains("newer build"), "{status}");
    assert_eq!(status["seq"], second - 1, "the newer record was not folded");
    hub.stop()
}

/// Writes a newer build into the builds bucket, as a newer hub does at start.
async fn announce_newer_build(client: &async_nats::Client) -> Result<(), String> {
    let js = jetstream::ContextBuilder::new()
        .timeout(Duration::from_secs(3))
        .build(client.clone());
    let store = js
        .get_key_value("FLOTILLA_BUILDS")
        .await
        .map_err(|e| e.to_string())?;
    let newer =
        serde_json::json!({"schema": 999, "decisions": 999, "checkpoint": 999, "by": "next"});
    store
        .put("newest", newer.to_string().into())
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn ids_aimed_at_id_less_records_suppress_nothing() -> TestResult {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let nats = SecuredNats::start(&binary(), scratch.path(), &["member-1"])?;
    let hub = start_hub(&nats, &scratch.path().join("hub"))?;
    apply_member(&hub, scratch.path())?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let member = runtime.block_on(nats.member_client("member-1"))?;
    let external = runtime.block_on(nats.hub_client())?;
    let start = folded_through(&hub, 1, SETTLE)?["logSeq"]
        .as_u64()
        .ok_or("no logSeq")?;
    // member-1 aims heartbeats at the next twenty sequences, then the external publisher
    // sends ten id-less applies.
    let mut aimed = Vec::new();
    for offset in 1..=20 {
        let id = stream_record_id(start + 20 + offset).to_string();
        aimed.push(runtime.block_on(publish(&member, SUBJECT, heartbeat(Some(id))))?);
    }
    let mut applies = Vec::new();
    for n in 0..10 {
        let manifest = format!(
            r#"{{"type": "apply", "manifest": {{"apiVersion": "v1", "kind": "Namespace", "metadata": {{"name": "team-{n}"}}}}}}"#
        );
        applies.push(runtime.block_on(publish(
            &external,
            "flotilla.in.apply",
            manifest.into_bytes(),
        ))?);
    }
    let last = applies.last().copied().ok_or("nothing published")?;
    folded_through(&hub, last, SETTLE)?;
    for seq in aimed {
        let line = event_at(&hub, seq)?;
        assert!(line.contains("form the log gives"), "{line}");
    }
    for seq in applies {
        let line = event_at(&hub, seq)?;
        assert!(!line.contains("DuplicateEvent"), "{line}");
        assert!(line.contains("ObjectStored"), "{line}");
    }
    hub.stop()
}

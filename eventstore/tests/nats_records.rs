//! Proves the JetStream backend on a real `nats-server` reads whatever external systems publish
//! onto the input stream — with nats-py, a plain JetStream publish, no flotilla client — without
//! ever failing a read: the documented JSON form is an event (the stream's time, the publisher's
//! time kept as a claim, an id derived from the sequence), garbage and a body that contradicts
//! its subject are rejected with their bytes, and a marked frame of a newer build is told apart.
//! Also: times as given are refused; an unreadable checkpoint is skipped; and a duplicate
//! published after the stream's duplicate window is stored again but recognised by the event id
//! index.

use std::error::Error;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use chrono::{DateTime, Utc};
use flotilla_core::wire::RecordKind;
use flotilla_core::wire::encode_envelope;
use flotilla_core::wire::json::stream_record_id;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_eventstore::{AppendTime, EventLog, LogError, LogReader, LogRecord};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Bound on every await: no test can hang on a stuck server.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);
/// The script that publishes like an external system.
const PUBLISHER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/publish_raw.py");
/// The heartbeat of `docs/events.md`, for the cluster the subject names.
const DOCUMENTED_HEARTBEAT: &str = r#"{"id": "0190b3d2-0000-7000-8000-000000000001", "time": "2030-01-01T00:00:00Z", "source": "agent/member-2",
 "schemaVersion": 1, "type": "heartbeat", "cluster": "member-2",
 "properties": {"kubernetes-fleet.io/node-count": "3"},
 "resourceUsage": {"capacity": {"cpu": "40"}, "allocatable": {"cpu": "32"}, "available": {"cpu": "2"}}}"#;

async fn within<T>(future: impl Future<Output = T>) -> Result<T, Box<dyn Error>> {
    Ok(tokio::time::timeout(STEP_TIMEOUT, future).await?)
}

async fn connect(server: &NatsTestServer, window: Duration) -> Result<NatsLog, Box<dyn Error>> {
    let options = NatsOptions {
        duplicate_window: window,
        ..NatsOptions::default()
    };
    Ok(within(NatsLog::connect(&server.url(), options)).await??)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Publishes `(subject, payload)` pairs with nats-py; returns the acknowledged sequences.
fn publish_with_python(url: &str, records: &[(&str, Vec<u8>)]) -> Result<Vec<u64>, Box<dyn Error>> {
    let body: Vec<serde_json::Value> = records
        .iter()
        .map(|(subject, payload)| serde_json::json!({"subject": subject, "payload_hex": hex(payload)}))
        .collect();
    let mut child = Command::new("python3")
        .arg(PUBLISHER)
        .arg(url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or("stdin")?
        .write_all(serde_json::to_string(&body)?.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("nats-py publisher failed (pip install nats-py): {stderr}").into());
    }
    let stdout = String::from_utf8(output.stdout)?;
    Ok(stdout.lines().map(str::parse).collect::<Result<_, _>>()?)
}

fn heartbeat(n: u128, cluster: &str) -> Envelope {
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400, 0).unwrap_or_default();
    let beat = Heartbeat {
        cluster: cluster.into(),
        ..Heartbeat::default()
    };
    Envelope::new(Uuid::from_u128(n), time, "test", Input::Heartbeat(beat))
}

#[tokio::test]
async fn records_published_by_anyone_read_back_as_event_rejected_or_newer() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server, Duration::from_secs(120)).await?;
    let mut newer = encode_envelope(&heartbeat(7, "member-2"))?;
    newer[5] = 0xFF; // the version's low byte: a marked frame of a build far ahead
    let garbage = b"\x00\xffnot flotilla".to_vec();
    let other_cluster = br#"{"type":"heartbeat","cluster":"member-3"}"#.to_vec();
    let subject = "flotilla.in.heartbeat.member-2";
    let before = Utc::now() - chrono::Duration::seconds(60);
    let seqs = publish_with_python(
        &server.url(),
        &[
            (subject, DOCUMENTED_HEARTBEAT.as_bytes().to_vec()),
            (subject, garbage.clone()),
            (subject, newer),
            (subject, other_cluster),
            ("flotilla.in.tick", br#"{"type":"tick"}"#.to_vec()),
        ],
    )?;
    assert_eq!(seqs, vec![1, 2, 3, 4, 5]);

    let read = within(log.read(1, 10)).await??;
    assert_eq!(
        read,
        within(log.read(1, 10)).await??,
        "reading twice gives the same records"
    );
    let records: Vec<&LogRecord> = read.iter().map(|stored| &stored.record).collect();
    let LogRecord::Event(beat) = records[0] else {
        panic!(
            "the documented JSON heartbeat is an event: {:?}",
            records[0]
        )
    };
    assert!(matches!(&beat.payload, Input::Heartbeat(h) if h.cluster == "member-2"));
    assert!(
        beat.time > before && beat.time <= Utc::now(),
        "the stream's time: {}",
        beat.time
    );
    assert_eq!(
        beat.claimed_time.map(|t| t.timestamp()),
        Some(1_893_456_000),
        "a claim"
    );
    assert_eq!(
        beat.id,
        Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0001)
    );
    assert!(
        matches!(records[1], LogRecord::Rejected { subject: s, bytes, .. } if s == subject && *bytes == garbage),
        "{:?}",
        records[1]
    );
    assert!(
        matches!(
            records[2],
            LogRecord::Newer {
                kind: RecordKind::Event,
                version: 0xFF,
                ..
            }
        ),
        "{:?}",
        records[2]
    );
    assert!(
        matches!(records[3], LogRecord::Rejected { reason, .. } if reason.contains("member-3")),
        "a body that contradicts its subject: {:?}",
        records[3]
    );
    let LogRecord::Event(tick) = records[4] else {
        panic!("a JSON tick is an event: {:?}", records[4])
    };
    assert_eq!(
        tick.id,
        stream_record_id(5),
        "no id: derived from the sequence"
    );
    Ok(())
}

#[tokio::test]
async fn times_as_given_are_refused() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server, Duration::from_secs(120)).await?;
    let refused = within(log.append(vec![heartbeat(1, "m1")], AppendTime::AsGiven)).await?;
    assert!(matches!(refused, Err(LogError::Refused(_))), "{refused:?}");
    assert_eq!(within(log.last_seq()).await??, 0, "nothing written");
    Ok(())
}

#[tokio::test]
async fn an_unreadable_checkpoint_is_skipped() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server, Duration::from_secs(120)).await?;
    let client = within(async_nats::connect(server.url())).await??;
    let context = async_nats::jetstream::new(client);
    let store = within(context.get_object_store("FLOTILLA_CHECKPOINTS")).await??;
    let mut damaged: &[u8] = b"\xf7FLOC\x09\x00written by a far newer build";
    within(store.put("newest", &mut damaged)).await??;
    assert_eq!(within(log.load_checkpoint()).await??, None);
    Ok(())
}

#[tokio::test]
async fn a_duplicate_after_the_window_is_found_in_the_event_id_index() -> TestResult {
    let server = NatsTestServer::start()?;
    let window = Duration::from_secs(1);
    let log = connect(&server, window).await?;
    let first = within(log.append(vec![heartbeat(1, "m1")], AppendTime::Assigned)).await??;
    let again = within(log.append(vec![heartbeat(1, "m1")], AppendTime::Assigned)).await??;
    assert!(
        again[0].duplicate && again[0].seq == first[0].seq,
        "within the window"
    );
    within(log.record_folded(&[(Uuid::from_u128(1), 1)])).await??;

    tokio::time::sleep(window + Duration::from_millis(1_500)).await;
    let late = within(log.append(vec![heartbeat(1, "m1")], AppendTime::Assigned)).await??;
    assert_eq!(
        (late[0].seq, late[0].duplicate),
        (2, false),
        "stored again after the window"
    );
    let ids: Vec<Uuid> = within(log.read(1, 10))
        .await??
        .iter()
        .filter_map(|stored| stored.event().map(|event| event.id))
        .collect();
    assert_eq!(ids, vec![Uuid::from_u128(1); 2], "the log holds it twice");

    // The writer asks before folding sequence 2: the id was first folded at 1.
    let ids = [Uuid::from_u128(1), Uuid::from_u128(2)];
    let known = within(log.first_seq_of(&ids)).await??;
    assert_eq!(
        known.into_iter().collect::<Vec<_>>(),
        vec![(Uuid::from_u128(1), 1)]
    );
    // Recording is idempotent: the first sequence stays, also across a reconnect.
    within(log.record_folded(&[(Uuid::from_u128(1), 2), (Uuid::from_u128(1), 1)])).await??;
    let reconnected = connect(&server, window).await?;
    let known = within(reconnected.first_seq_of(&ids[..1])).await??;
    assert_eq!(known.get(&Uuid::from_u128(1)), Some(&1));
    Ok(())
}

//! An append of many events to the JetStream log is stored as atomic batches (one write and
//! sync per batch), each event still its own message at its own sequence; a batch holding an
//! event the stream already has is refused whole and published one by one instead, so the
//! duplicate answers its original sequence. Real `nats-server` on loopback.

use std::error::Error;
use std::future::Future;
use std::time::Duration;

use async_nats::jetstream;
use chrono::DateTime;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::nats_log::{ATOMIC_BATCH_MAX, NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_eventstore::{AppendTime, Appended, EventLog, LogReader};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Bound on every await: no test can hang on a stuck server.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

async fn within<T>(future: impl Future<Output = T>) -> Result<T, Box<dyn Error>> {
    Ok(tokio::time::timeout(STEP_TIMEOUT, future).await?)
}

fn heartbeat(n: u128) -> Envelope {
    let input = Input::Heartbeat(Heartbeat {
        cluster: format!("member{}", n % 7),
        ..Heartbeat::default()
    });
    Envelope::new(Uuid::from_u128(n), DateTime::UNIX_EPOCH, "gateway", input)
}

/// The `Nats-Batch-Id` header each stored message of the input stream carries, if any, in
/// sequence order.
async fn batch_ids(
    server: &NatsTestServer,
    last: u64,
) -> Result<Vec<Option<String>>, Box<dyn Error>> {
    stream_batch_ids(server, "FLOTILLA_INPUT", last).await
}

/// The same for any stream.
async fn stream_batch_ids(
    server: &NatsTestServer,
    stream: &str,
    last: u64,
) -> Result<Vec<Option<String>>, Box<dyn Error>> {
    let client = within(async_nats::connect(server.url())).await??;
    let stream = within(jetstream::new(client).get_stream(stream)).await??;
    let mut ids = Vec::new();
    for seq in 1..=last {
        let message = within(stream.get_raw_message(seq)).await??;
        let batch = message
            .headers
            .get("Nats-Batch-Id")
            .map(|value| value.as_str().to_owned());
        ids.push(batch);
    }
    Ok(ids)
}

#[tokio::test]
async fn many_events_are_stored_as_atomic_batches_at_dense_sequences() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = within(NatsLog::connect(&server.url(), NatsOptions::default())).await??;
    let count = ATOMIC_BATCH_MAX as u128 + 10;
    let events: Vec<Envelope> = (1..=count).map(heartbeat).collect();
    let appended = within(log.append(events, AppendTime::Assigned)).await??;
    let expected: Vec<Appended> = (1..=count as u64)
        .map(|seq| Appended {
            seq,
            duplicate: false,
        })
        .collect();
    assert_eq!(appended, expected);

    let ids = batch_ids(&server, count as u64).await?;
    let first = ids[0].clone().ok_or("the first chunk was not a batch")?;
    let second = ids[ATOMIC_BATCH_MAX]
        .clone()
        .ok_or("the second chunk was not a batch")?;
    assert_ne!(first, second, "one batch per chunk");
    assert!(
        ids[..ATOMIC_BATCH_MAX]
            .iter()
            .all(|id| id.as_deref() == Some(first.as_str()))
    );
    assert!(
        ids[ATOMIC_BATCH_MAX..]
            .iter()
            .all(|id| id.as_deref() == Some(second.as_str()))
    );

    let read = within(log.read(1, 2000)).await??;
    let read_ids: Vec<Uuid> = read
        .iter()
        .filter_map(|stored| stored.event().map(|event| event.id))
        .collect();
    assert_eq!(
        read_ids,
        (1..=count).map(Uuid::from_u128).collect::<Vec<_>>()
    );
    Ok(())
}

#[tokio::test]
async fn a_batch_holding_a_stored_event_is_published_one_by_one() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = within(NatsLog::connect(&server.url(), NatsOptions::default())).await??;
    within(log.append((1..=3).map(heartbeat).collect(), AppendTime::Assigned)).await??;

    // Event 2 again, between new ones: the batch is refused for it, and the retry one by one
    // stores 4 and 5 once and answers 2 with its first sequence.
    let again = vec![heartbeat(4), heartbeat(2), heartbeat(5)];
    let appended = within(log.append(again, AppendTime::Assigned)).await??;
    let at = |seq, duplicate| Appended { seq, duplicate };
    assert_eq!(appended, vec![at(4, false), at(2, true), at(5, false)]);
    assert_eq!(within(log.last_seq()).await??, 5);

    let ids = batch_ids(&server, 5).await?;
    assert!(
        ids[..3].iter().all(Option::is_some),
        "the first append was a batch"
    );
    assert!(
        ids[3..].iter().all(Option::is_none),
        "the retry was one by one"
    );
    Ok(())
}

#[tokio::test]
async fn folded_ids_are_created_as_a_batch_and_a_recorded_id_keeps_its_sequence() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = within(NatsLog::connect(&server.url(), NatsOptions::default())).await??;
    let first: Vec<(Uuid, u64)> = (1..=50).map(|n| (Uuid::from_u128(n), n as u64)).collect();
    within(log.record_folded(&first)).await??;
    let ids = stream_batch_ids(&server, "KV_FLOTILLA_EVENT_IDS", 50).await?;
    assert!(
        ids.iter().all(Option::is_some),
        "the creates went as one batch"
    );

    // A re-fold records 40..=50 again (at other sequences, as a stale copy would) with new ids:
    // the batch is refused for the recorded ones, and one by one they keep their first sequence.
    let again: Vec<(Uuid, u64)> = (40..=60)
        .map(|n| (Uuid::from_u128(n), 1000 + n as u64))
        .collect();
    within(log.record_folded(&again)).await??;
    let asked: Vec<Uuid> = (1..=60).map(Uuid::from_u128).collect();
    let found = within(log.first_seq_of(&asked)).await??;
    for n in 1..=60_u128 {
        let expected = if n <= 50 { n as u64 } else { 1000 + n as u64 };
        assert_eq!(found.get(&Uuid::from_u128(n)), Some(&expected), "id {n}");
    }
    Ok(())
}

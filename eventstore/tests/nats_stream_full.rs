//! The NATS log's input stream at its limits, on a real `nats-server`: with `max_bytes` set on
//! the stream, an append that does not fit is refused with `LogError::StreamFull` — a batch
//! whole — and the log reports the condition; reads go on, and once the limit is raised the
//! same log appends again: nothing acknowledged lost, nothing refused stored.

use std::collections::BTreeSet;
use std::error::Error;
use std::future::Future;
use std::time::Duration;

use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_eventstore::{AppendTime, EventLog, LogError, LogReader};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Bound on every await: no test can hang on a stuck server.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);
/// Room the input stream is given beyond what it holds.
const ROOM_BYTES: u64 = 4096;
/// Most appends before one is refused (the room holds a few dozen heartbeats).
const APPENDS_TO_FILL_MAX: u128 = 1_000;

async fn within<T>(future: impl Future<Output = T>) -> Result<T, Box<dyn Error>> {
    Ok(tokio::time::timeout(STEP_TIMEOUT, future).await?)
}

fn event(n: u128) -> Envelope {
    let heartbeat = Heartbeat {
        cluster: "member1".into(),
        ..Heartbeat::default()
    };
    Envelope::new(
        Uuid::from_u128(n),
        chrono::Utc::now(),
        "test",
        Input::Heartbeat(heartbeat),
    )
}

/// Every input id of the log, in sequence order.
async fn logged_ids(log: &NatsLog) -> Result<Vec<Uuid>, Box<dyn Error>> {
    let mut ids = Vec::new();
    for _ in 0..1_000 {
        let from = u64::try_from(ids.len())? + 1;
        let page = within(log.read(from, 1_000)).await??;
        if page.is_empty() {
            return Ok(ids);
        }
        for stored in page {
            ids.push(stored.event().ok_or("an input that does not decode")?.id);
        }
    }
    Err("more than a million inputs".into())
}

/// Sets the input stream's `max_bytes`: what it holds and [`ROOM_BYTES`] more, or no limit.
async fn limit_input(log: &NatsLog, limited: bool) -> TestResult {
    let name = format!("{}_INPUT", log.options().stream_prefix);
    let mut stream = within(log.jetstream().get_stream(&name)).await??;
    let info = within(stream.info()).await??.clone();
    let mut config = info.config;
    config.max_bytes = if limited {
        i64::try_from(info.state.bytes + ROOM_BYTES)?
    } else {
        -1
    };
    within(log.jetstream().update_stream(&config)).await??;
    Ok(())
}

#[tokio::test]
async fn a_full_input_stream_refuses_appends_whole_and_takes_them_again_when_raised() -> TestResult
{
    let server = NatsTestServer::start()?;
    let log = within(NatsLog::connect(&server.url(), NatsOptions::default())).await??;
    let mut acked = Vec::new();
    for n in 1..=3 {
        within(log.append(vec![event(n)], AppendTime::Assigned)).await??;
        acked.push(event(n).id);
    }

    limit_input(&log, true).await?;
    let mut refused = None;
    for n in 100..100 + APPENDS_TO_FILL_MAX {
        match within(log.append(vec![event(n)], AppendTime::Assigned)).await? {
            Ok(_) => acked.push(event(n).id),
            Err(error) => {
                refused = Some(error);
                break;
            }
        }
    }
    let refused = refused.ok_or("the stream never filled up")?;
    assert!(
        matches!(&refused, LogError::StreamFull { stream, .. } if stream.ends_with("_INPUT")),
        "{refused}"
    );
    assert!(log.storage_full());
    let last_seq = within(log.last_seq()).await??;
    let batch = vec![event(90_001), event(90_002), event(90_003)];
    let refused = within(log.append(batch, AppendTime::Assigned)).await?;
    assert!(
        matches!(refused, Err(LogError::StreamFull { .. })),
        "{refused:?}"
    );
    assert_eq!(
        within(log.last_seq()).await??,
        last_seq,
        "a refused batch stored a part"
    );
    assert_eq!(logged_ids(&log).await?, acked, "reads while full");

    limit_input(&log, false).await?;
    within(log.append(vec![event(90_004)], AppendTime::Assigned)).await??;
    acked.push(event(90_004).id);
    assert!(!log.storage_full());
    let ids = logged_ids(&log).await?;
    assert_eq!(ids, acked);
    let unique: BTreeSet<_> = ids.iter().collect();
    for refused in [90_001, 90_002, 90_003] {
        assert!(
            !unique.contains(&event(refused).id),
            "a refused event was stored"
        );
    }
    Ok(())
}

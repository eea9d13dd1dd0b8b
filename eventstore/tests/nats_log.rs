//! Proves the JetStream backend keeps the `EventLog` contract on a real `nats-server` started
//! per test on loopback: dense sequences, server-side deduplication by event id, fenced
//! decisions between two writers, checkpoints (also over several object chunks), `wait_for`,
//! refusal of a stream with unsafe settings, and acknowledged events surviving a `kill -9`.

use std::error::Error;
use std::future::{Future, IntoFuture};
use std::time::Duration;

use async_nats::jetstream;
use chrono::{DateTime, Utc};
use flotilla_core::model::ObjectKey;
use flotilla_core::wire::DECISION_VERSION;
use flotilla_core::wire::decisions::encode_batch;
use flotilla_core::{Decision, Envelope, Heartbeat, Input, State, step};
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_eventstore::{
    AppendTime, Appended, Checkpoint, DecisionBatch, EventLog, LogError, LogReader,
};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Bound on every await: no test can hang on a stuck server.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

async fn within<T>(future: impl Future<Output = T>) -> Result<T, Box<dyn Error>> {
    Ok(tokio::time::timeout(STEP_TIMEOUT, future).await?)
}

fn event(n: u128, cluster: &str) -> Envelope {
    let seconds = i64::try_from(n).unwrap_or(0);
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + seconds, 0).unwrap_or_default();
    let heartbeat = Heartbeat {
        cluster: cluster.into(),
        ..Heartbeat::default()
    };
    Envelope::new(
        Uuid::from_u128(n),
        time,
        "test",
        Input::Heartbeat(heartbeat),
    )
}

fn events(ids: std::ops::RangeInclusive<u128>) -> Vec<Envelope> {
    ids.map(|n| event(n, "member1")).collect()
}

fn batch(first_input_seq: u64, last_input_seq: u64, writer: &str) -> DecisionBatch {
    let decision = Decision::ClusterJoined {
        cluster: format!("{writer}-{last_input_seq}"),
    };
    DecisionBatch {
        version: DECISION_VERSION,
        first_input_seq,
        last_input_seq,
        decisions: vec![(last_input_seq, vec![decision])],
    }
}

fn new(seq: u64) -> Appended {
    Appended {
        seq,
        duplicate: false,
    }
}

async fn connect(server: &NatsTestServer) -> Result<NatsLog, Box<dyn Error>> {
    let options = NatsOptions {
        monitoring_url: Some(server.monitoring_url()),
        ..NatsOptions::default()
    };
    Ok(within(NatsLog::connect(&server.url(), options)).await??)
}

#[tokio::test]
async fn append_then_read_back_in_order() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    assert_eq!(within(log.last_seq()).await??, 0);
    assert!(within(log.read(1, 10)).await??.is_empty());

    let appended = within(log.append(events(1..=600), AppendTime::Assigned)).await??;
    assert_eq!(appended, (1..=600).map(new).collect::<Vec<_>>());
    assert_eq!(within(log.last_seq()).await??, 600);

    let before = chrono::Utc::now() - chrono::Duration::seconds(60);
    let read = within(log.read(1, 1000)).await??;
    assert_eq!(read.len(), 600);
    for (stored, mut expected) in read.iter().zip(events(1..=600)) {
        let event = stored.event().expect("an event");
        // The time is the stream's, never the publisher's.
        assert!(
            event.time > before,
            "{} is the JetStream timestamp",
            event.time
        );
        expected.time = event.time;
        // A heartbeat's subject names its cluster, which bounds who it can come from.
        expected.principal = event.principal.clone();
        assert!(
            matches!(&event.principal, flotilla_core::Principal::Agent { cluster } if cluster == "member1"),
            "{:?}",
            event.principal
        );
        assert_eq!(event, &expected);
    }
    assert_eq!(
        read.iter().map(|stored| stored.seq).collect::<Vec<_>>(),
        (1..=600).collect::<Vec<_>>()
    );

    let page = within(log.read(598, 10)).await??;
    assert_eq!(
        page.iter().map(|stored| stored.seq).collect::<Vec<_>>(),
        vec![598, 599, 600]
    );
    assert_eq!(within(log.read(0, 2)).await??.len(), 2);
    assert!(within(log.read(601, 10)).await??.is_empty());
    assert!(within(log.read(1, 0)).await??.is_empty());
    Ok(())
}

#[tokio::test]
async fn events_land_on_their_documented_subjects() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    let tick = Envelope::new(
        Uuid::from_u128(3),
        DateTime::UNIX_EPOCH,
        "clock",
        Input::Tick,
    );
    within(log.append(
        vec![event(1, "member1"), event(2, "eu.member-2"), tick],
        AppendTime::Assigned,
    ))
    .await??;

    let client = within(async_nats::connect(server.url())).await??;
    let stream = within(jetstream::new(client).get_stream("FLOTILLA_INPUT")).await??;
    let mut subjects = Vec::new();
    for seq in 1..=3 {
        subjects.push(
            within(stream.get_raw_message(seq))
                .await??
                .subject
                .to_string(),
        );
    }
    let expected = [
        "flotilla.in.heartbeat.member1",
        "flotilla.in.heartbeat.eu%2Emember-2",
        "flotilla.in.tick",
    ];
    assert_eq!(subjects, expected);
    Ok(())
}

#[tokio::test]
async fn a_duplicate_id_is_stored_once_and_answers_the_original_sequence() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    assert_eq!(
        within(log.append(events(1..=3), AppendTime::Assigned)).await??,
        vec![new(1), new(2), new(3)]
    );

    // Again, and a repeat inside one call: the server answers with the original sequences.
    let again = within(log.append(
        vec![
            event(2, "member1"),
            event(4, "member1"),
            event(4, "member1"),
        ],
        AppendTime::Assigned,
    ))
    .await??;
    let duplicate = |seq| Appended {
        seq,
        duplicate: true,
    };
    assert_eq!(again, vec![duplicate(2), new(4), duplicate(4)]);

    // A second connection (another publisher) is deduplicated by the same server state.
    let other = connect(&server).await?;
    assert_eq!(
        within(other.append(events(3..=3), AppendTime::Assigned)).await??,
        vec![duplicate(3)]
    );

    assert_eq!(within(log.last_seq()).await??, 4);
    let ids: Vec<Uuid> = within(log.read(1, 10))
        .await??
        .into_iter()
        .map(|stored| stored.event().expect("an event").id)
        .collect();
    assert_eq!(ids, (1..=4).map(Uuid::from_u128).collect::<Vec<_>>());
    Ok(())
}

#[tokio::test]
async fn a_second_writer_is_fenced_and_writes_nothing() -> TestResult {
    let server = NatsTestServer::start()?;
    let writer_a = connect(&server).await?;
    // B learns the (empty) decisions stream before A appends.
    let writer_b = connect(&server).await?;
    within(writer_a.append(events(1..=20), AppendTime::Assigned)).await??;

    within(writer_a.append_decisions(&batch(1, 10, "a"))).await??;
    let refused = within(writer_b.append_decisions(&batch(1, 10, "b"))).await?;
    assert!(
        matches!(
            refused,
            Err(LogError::Fenced {
                expected: 0,
                actual: 10
            })
        ),
        "B must be fenced, got {refused:?}"
    );
    // B stays fenced, even for the range that follows A's.
    let refused = within(writer_b.append_decisions(&batch(11, 20, "b"))).await?;
    assert!(
        matches!(refused, Err(LogError::Fenced { actual: 10, .. })),
        "{refused:?}"
    );

    // Only A's batch is in the log, and A carries on.
    let decided = within(writer_b.read_decisions(1, 10)).await??;
    assert_eq!(decided, vec![batch(1, 10, "a")]);
    within(writer_a.append_decisions(&batch(11, 20, "a"))).await??;
    assert_eq!(within(writer_b.last_decided_seq()).await??, 20);

    // A new writer that connects now learns the position and may continue.
    let writer_c = connect(&server).await?;
    within(writer_a.append(events(21..=25), AppendTime::Assigned)).await??;
    within(writer_c.append_decisions(&batch(21, 25, "c"))).await??;
    let refused = within(writer_a.append_decisions(&batch(21, 25, "a"))).await?;
    assert!(
        matches!(
            refused,
            Err(LogError::Fenced {
                expected: 20,
                actual: 25
            })
        ),
        "{refused:?}"
    );
    Ok(())
}

/// Publishes `batch` as `writer` would, without telling it: its ack is "lost".
async fn publish_behind_its_back(
    server: &NatsTestServer,
    writer: &NatsLog,
    batch: &DecisionBatch,
    expected_last_seq: u64,
) -> TestResult {
    let client = within(async_nats::connect(server.url())).await??;
    let mut headers = async_nats::HeaderMap::new();
    let msg_id = format!(
        "{}:{}-{}",
        writer.writer_id(),
        batch.first_input_seq,
        batch.last_input_seq
    );
    headers.insert("Nats-Msg-Id", msg_id.as_str());
    headers.insert(
        "Nats-Expected-Last-Sequence",
        expected_last_seq.to_string().as_str(),
    );
    let record = encode_batch(
        batch.first_input_seq,
        batch.last_input_seq,
        &batch.decisions,
    )?;
    // Keep the context (and its connection) alive until the ack is in.
    let context = jetstream::new(client);
    let ack = within(context.publish_with_headers("flotilla.decisions", headers, record.into()))
        .await??;
    within(ack.into_future()).await??;
    Ok(())
}

#[tokio::test]
async fn retrying_a_batch_whose_ack_was_lost_succeeds_but_only_for_its_writer() -> TestResult {
    let server = NatsTestServer::start()?;
    let writer_a = connect(&server).await?;
    let writer_b = connect(&server).await?;
    within(writer_a.append(events(1..=20), AppendTime::Assigned)).await??;

    // A's batch reached the stream but A never saw the ack; A retries it.
    publish_behind_its_back(&server, &writer_a, &batch(1, 10, "a"), 0).await?;
    within(writer_a.append_decisions(&batch(1, 10, "a"))).await??;
    within(writer_a.append_decisions(&batch(11, 20, "a"))).await??;
    assert_eq!(within(writer_a.read_decisions(1, 10)).await??.len(), 2);

    // B, which knew the empty stream, gains nothing from A's batches.
    let refused = within(writer_b.append_decisions(&batch(1, 10, "a"))).await?;
    assert!(
        matches!(
            refused,
            Err(LogError::Fenced {
                expected: 0,
                actual: 20
            })
        ),
        "{refused:?}"
    );
    Ok(())
}

#[tokio::test]
async fn racing_writers_cannot_both_decide_a_range() -> TestResult {
    let server = NatsTestServer::start()?;
    let mut writers = Vec::new();
    for _ in 0..4 {
        writers.push(connect(&server).await?);
    }
    within(writers[0].append(events(1..=10), AppendTime::Assigned)).await??;

    let any = batch(1, 10, "any");
    let race = writers.iter().map(|writer| writer.append_decisions(&any));
    let outcomes = within(futures::future::join_all(race)).await?;
    let won = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    let fenced = outcomes
        .iter()
        .filter(|outcome| {
            matches!(
                outcome,
                Err(LogError::Fenced {
                    expected: 0,
                    actual: 10
                })
            )
        })
        .count();
    assert_eq!((won, fenced), (1, 3), "{outcomes:?}");
    assert_eq!(within(writers[0].read_decisions(1, 10)).await??.len(), 1);
    Ok(())
}

#[tokio::test]
async fn decision_batches_must_follow_the_last_decided_input() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    within(log.append(events(1..=5), AppendTime::Assigned)).await??;

    let gap = within(log.append_decisions(&batch(2, 3, "a"))).await?;
    assert!(
        matches!(
            gap,
            Err(LogError::Fenced {
                expected: 1,
                actual: 0
            })
        ),
        "{gap:?}"
    );
    let reversed = within(log.append_decisions(&batch(3, 2, "a"))).await?;
    assert!(
        matches!(reversed, Err(LogError::Storage(_))),
        "{reversed:?}"
    );
    // Past the end as the stream's leader counts it: refused as a disagreement the writer
    // tries again (reads may run ahead of the leader's count for a moment), never a stop.
    let past_the_end = within(log.append_decisions(&batch(1, 6, "a"))).await?;
    assert!(
        matches!(&past_the_end, Err(LogError::Nats(m)) if m.contains("leader reports its end at 5")),
        "{past_the_end:?}"
    );

    within(log.append_decisions(&batch(1, 5, "a"))).await??;
    assert_eq!(within(log.last_decided_seq()).await??, 5);
    Ok(())
}

#[tokio::test]
async fn read_decisions_finds_the_batch_covering_an_input() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    within(log.append(events(1..=100), AppendTime::Assigned)).await??;
    assert!(within(log.read_decisions(1, 10)).await??.is_empty());
    let batches: Vec<DecisionBatch> = (0..10)
        .map(|i| batch(i * 10 + 1, i * 10 + 10, "a"))
        .collect();
    for decided in &batches {
        within(log.append_decisions(decided)).await??;
    }

    assert_eq!(within(log.read_decisions(0, 100)).await??, batches);
    assert_eq!(
        within(log.read_decisions(35, 2)).await??,
        batches[3..5].to_vec()
    );
    assert_eq!(
        within(log.read_decisions(40, 100)).await??,
        batches[3..].to_vec()
    );
    assert_eq!(
        within(log.read_decisions(41, 1)).await??,
        batches[4..5].to_vec()
    );
    assert_eq!(
        within(log.read_decisions(100, 5)).await??,
        batches[9..].to_vec()
    );
    assert!(within(log.read_decisions(101, 5)).await??.is_empty());
    Ok(())
}

fn checkpoint_at(seq: u64, clusters: usize) -> Result<Checkpoint, Box<dyn Error>> {
    // A state of `clusters` joined member clusters, folded as the hub would.
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400, 0).unwrap_or_default();
    let names: Vec<String> = (0..clusters)
        .map(|i| format!("member-{i:06}-in-a-long-region-name"))
        .collect();
    let applies = names.iter().map(|name| Input::Apply {
        manifest: format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}"}},"spec":{{"heartbeatPeriodSeconds":60}}}}"#
        ),
    });
    let beats = names.iter().map(|name| {
        Input::Heartbeat(Heartbeat {
            cluster: name.clone(),
            ..Heartbeat::default()
        })
    });
    let mut state = State::default();
    for (n, input) in (1..).zip(applies.chain(beats)) {
        step(
            &mut state,
            &Envelope::new(Uuid::from_u128(n), time, "test", input),
        );
    }
    assert_eq!(state.heartbeat_deadlines().len(), clusters);
    Ok(Checkpoint {
        seq,
        hash: state.hash()?,
        state,
    })
}

#[tokio::test]
async fn checkpoints_round_trip_and_the_newest_survives() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    assert!(within(log.load_checkpoint()).await??.is_none());

    let small = checkpoint_at(7, 3)?;
    within(log.save_checkpoint(&small)).await??;
    assert_eq!(within(log.load_checkpoint()).await??, Some(small.clone()));

    // ~1 MB: several object chunks.
    let large = checkpoint_at(9, 3_000)?;
    within(log.save_checkpoint(&large)).await??;
    assert_eq!(within(log.load_checkpoint()).await??, Some(large.clone()));

    // An older checkpoint (a late former writer) does not replace the newer one.
    within(log.save_checkpoint(&small)).await??;
    let reopened = connect(&server).await?;
    assert_eq!(within(reopened.load_checkpoint()).await??, Some(large));
    Ok(())
}

#[tokio::test]
async fn older_checkpoints_are_kept_for_seeking_one_per_span() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    // Spans of 50,000 inputs: 10 and 60,000 start one each, 70,000 does not.
    for seq in [10, 60_000, 70_000, 120_000] {
        within(log.save_checkpoint(&checkpoint_at(seq, 3)?)).await??;
    }
    let before = |seq| {
        let log = &log;
        async move {
            let found = within(log.load_checkpoint_before(seq)).await??;
            Ok::<_, Box<dyn Error>>(found.map(|checkpoint| checkpoint.seq))
        }
    };
    assert_eq!(before(u64::MAX).await?, Some(120_000));
    assert_eq!(before(119_999).await?, Some(60_000));
    assert_eq!(before(60_000).await?, Some(60_000));
    assert_eq!(before(59_999).await?, Some(10));
    assert_eq!(before(9).await?, None);
    Ok(())
}

#[tokio::test]
async fn wait_for_wakes_on_an_append_and_otherwise_times_out() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;

    let started = tokio::time::Instant::now();
    assert_eq!(
        within(log.wait_for(0, Duration::from_millis(200))).await??,
        0
    );
    assert!(started.elapsed() >= Duration::from_millis(200));

    let publisher = connect(&server).await?;
    let waiting = log.wait_for(0, Duration::from_secs(10));
    let appending = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        publisher.append(events(1..=2), AppendTime::Assigned).await
    };
    let started = tokio::time::Instant::now();
    let (seen, appended) = within(async { tokio::join!(waiting, appending) }).await?;
    appended?;
    assert!(seen? >= 1);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "woke late: {:?}",
        started.elapsed()
    );

    // Already past `after`: returns at once.
    assert_eq!(within(log.wait_for(1, Duration::from_secs(10))).await??, 2);
    Ok(())
}

#[tokio::test]
async fn the_server_sync_policy_is_read_from_varz() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    assert_eq!(within(log.server_syncs_always()).await?, Some(true));

    let unknown = within(NatsLog::connect(&server.url(), NatsOptions::default())).await??;
    assert_eq!(within(unknown.server_syncs_always()).await?, None);
    Ok(())
}

#[tokio::test]
async fn a_stream_without_the_log_guarantees_is_refused() -> TestResult {
    let server = NatsTestServer::start()?;
    let client = within(async_nats::connect(server.url())).await??;
    let config = jetstream::stream::Config {
        name: "FLOTILLA_INPUT".into(),
        subjects: vec!["flotilla.in.>".into()],
        max_age: Duration::from_secs(3600),
        ..Default::default()
    };
    within(jetstream::new(client).create_stream(config)).await??;

    let refused = within(NatsLog::connect(&server.url(), NatsOptions::default())).await?;
    let Err(LogError::Nats(message)) = refused else {
        return Err(format!("expected a refusal, got {refused:?}").into());
    };
    // The input stream's max_age is the writer's retention window, not a guarantee.
    assert!(
        message.contains("deny_delete") && !message.contains("max_age"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn acknowledged_events_survive_a_server_kill() -> TestResult {
    let mut server = NatsTestServer::start()?;
    {
        let log = connect(&server).await?;
        within(log.append(events(1..=50), AppendTime::Assigned)).await??;
        within(log.append_decisions(&batch(1, 50, "a"))).await??;
    }
    // SIGKILL, then a restart on the same store (blocking calls, off the runtime's thread).
    let restart = tokio::task::spawn_blocking(move || server.kill_and_restart().map(|()| server));
    let server = within(restart).await???;

    let log = connect(&server).await?;
    assert_eq!(within(log.last_seq()).await??, 50);
    assert_eq!(within(log.read(1, 100)).await??.len(), 50);
    assert_eq!(within(log.last_decided_seq()).await??, 50);
    // Ids are still remembered for deduplication within the window.
    let again = within(log.append(events(50..=50), AppendTime::Assigned)).await??;
    assert_eq!(
        again,
        vec![Appended {
            seq: 50,
            duplicate: true
        }]
    );
    Ok(())
}

#[tokio::test]
async fn a_connected_log_carries_on_after_a_server_restart() -> TestResult {
    let mut server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    within(log.append(events(1..=5), AppendTime::Assigned)).await??;
    within(log.append_decisions(&batch(1, 5, "a"))).await??;

    let restart = tokio::task::spawn_blocking(move || server.kill_and_restart().map(|()| server));
    let _server = within(restart).await???;

    // The client reconnects by itself; give it a bounded number of tries.
    let mut last = Err(LogError::Closed);
    for _ in 0..100 {
        last = within(log.last_seq()).await?;
        if last.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last?, 5);
    assert_eq!(
        within(log.append(events(6..=7), AppendTime::Assigned)).await??,
        vec![new(6), new(7)]
    );
    // The writer's fence survived too: it continues where it was.
    within(log.append_decisions(&batch(6, 7, "a"))).await??;
    assert_eq!(within(log.read(1, 10)).await??.len(), 7);
    Ok(())
}

#[tokio::test]
async fn an_existing_stream_with_other_tunables_is_bound_as_is() -> TestResult {
    let server = NatsTestServer::start()?;
    let first = connect(&server).await?;
    within(first.append(events(1..=2), AppendTime::Assigned)).await??;

    let options = NatsOptions {
        duplicate_window: Duration::from_secs(30),
        ..NatsOptions::default()
    };
    let second = within(NatsLog::connect(&server.url(), options)).await??;
    assert_eq!(within(second.last_seq()).await??, 2);

    let client = within(async_nats::connect(server.url())).await??;
    let mut stream = within(jetstream::new(client).get_stream("FLOTILLA_INPUT")).await??;
    let info = within(stream.info()).await??;
    assert_eq!(info.config.duplicate_window, Duration::from_secs(120));
    Ok(())
}

/// One input can decide more than the server's `max_payload` (a PickAll placement over tens of
/// thousands of clusters): that batch goes into the batch object store, the stream keeps a
/// fenced pointer, and reads, the fence and lookups see the whole batch.
#[tokio::test]
async fn a_decision_batch_over_max_payload_is_stored_as_an_object_and_read_back() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server).await?;
    within(log.append(events(1..=3), AppendTime::Assigned)).await??;
    within(log.append_decisions(&batch(1, 1, "small"))).await??;
    // ~3 MB of decisions for input 2, three times the default 1 MiB max_payload.
    let scheduled: Vec<Decision> = (0..40_000)
        .map(|i| Decision::ClusterScheduled {
            placement: ObjectKey::cluster_scoped(
                "placement.kubernetes-fleet.io",
                "ClusterResourcePlacement",
                "everywhere",
            ),
            cluster: format!("member-cluster-with-a-long-name-{i:06}"),
        })
        .collect();
    let large = DecisionBatch {
        version: DECISION_VERSION,
        first_input_seq: 2,
        last_input_seq: 2,
        decisions: vec![(2, scheduled)],
    };
    within(log.append_decisions(&large)).await??;
    within(log.append_decisions(&batch(3, 3, "small"))).await??;
    assert_eq!(within(log.last_decided_seq()).await??, 3);
    let read = within(log.read_decisions(1, 10)).await??;
    assert_eq!(read.len(), 3);
    assert_eq!(read[1], large, "the large batch reads back whole");
    assert_eq!(read[2], batch(3, 3, "small"));
    let from_two = within(log.read_decisions(2, 1)).await??;
    assert_eq!(from_two, vec![large]);
    // Another process bound to the same log reads it too.
    let other = connect(&server).await?;
    assert_eq!(
        within(other.read_decisions(2, 1)).await??[0].decisions[0]
            .1
            .len(),
        40_000
    );
    Ok(())
}

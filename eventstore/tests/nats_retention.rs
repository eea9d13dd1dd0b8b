//! A retention window on the NATS log, on a real `nats-server`: the writer's checkpoints move
//! the log's base, the inputs, decision batches and seek checkpoints before it leave the
//! streams, a replay from the base gives the state the same inputs give folded from the
//! first with no window, an old event id the log may have forgotten is refused, and the input
//! stream's `max_age` follows the window. When `max_age` removed more than the writer cut,
//! readers start from the oldest checkpoint at or after the input before the first kept one;
//! and while the writer runs, deciding or idle, the inputs after its newest checkpoint never
//! age out.

use std::error::Error;
use std::future::IntoFuture;
use std::time::Duration;

use chrono::{DateTime, Utc};
use flotilla_core::{Envelope, Input, StateHash};
use flotilla_eventstore::fold::Folder;
use flotilla_eventstore::memory_log::MemoryLog;
use flotilla_eventstore::nats_log::retention::{BASE_OBJECT, max_age_for};
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_eventstore::{AppendTime, DecisionBatch, EventLog, LogError, LogReader, StoredEvent};
use futures::StreamExt;
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Bound on every await: no test can hang on a stuck server.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);
/// The log's time of input 0, in Unix seconds.
const EPOCH_SECS: u64 = 1_741_820_400;
/// Inputs per round of the writer, one a second: each round's checkpoint is the first in its
/// eighth of the window, so it is kept for seeking, as long as the window needs it (all of
/// them fall in the first span of 50,000 inputs, where thinning alone keeps only the first).
const ROUND: u64 = 100;

async fn within<T>(future: impl Future<Output = T>) -> Result<T, Box<dyn Error>> {
    Ok(tokio::time::timeout(STEP_TIMEOUT, future).await?)
}

/// A log keeping `window`, whose inputs keep the times their appender gives.
async fn connect(server: &NatsTestServer, window: Duration) -> Result<NatsLog, Box<dyn Error>> {
    let options = NatsOptions {
        retain: Some(window),
        test_given_times: true,
        ..NatsOptions::default()
    };
    Ok(within(NatsLog::connect(&server.url(), options)).await??)
}

/// A UUIDv7 id from `seconds` into the log, told apart by `n`.
fn id_at(seconds: u64, n: u64) -> Uuid {
    let millis = (EPOCH_SECS + seconds) * 1_000;
    let mut rest = [0; 10];
    rest[2..].copy_from_slice(&n.to_be_bytes());
    uuid::Builder::from_unix_timestamp_millis(millis, &rest).into_uuid()
}

/// Input `n`: `n` seconds into the log, an apply of one of five ConfigMaps with `n` in it,
/// under an id from its own time.
fn input(n: u64) -> Envelope {
    let seconds = i64::try_from(EPOCH_SECS + n).unwrap_or(0);
    let time = DateTime::<Utc>::from_timestamp(seconds, 0).unwrap_or_default();
    let manifest = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{}","namespace":"default"}},"data":{{"n":"{n}"}}}}"#,
        n % 5
    );
    Envelope::new(id_at(n, n), time, "test", Input::Apply { manifest })
}

/// What the hub's writer does in a round: appends inputs `from..=to`, folds them, records
/// their ids and decisions, and stores a checkpoint. Keeps the inputs as read in `read`.
async fn round(
    log: &NatsLog,
    folder: &mut Folder,
    (from, to): (u64, u64),
    read: &mut Vec<StoredEvent>,
) -> TestResult {
    let events = (from..=to).map(input).collect();
    within(log.append(events, AppendTime::AsGiven)).await??;
    read.extend(decide(log, folder, to).await?);
    let encoded = folder.encoded_checkpoint()?;
    within(log.save_encoded_checkpoint(encoded)).await??;
    Ok(())
}

/// Folds up to `to`, then records the ids folded and the decisions, as the writer does;
/// the inputs it folded, as read.
async fn decide(
    log: &NatsLog,
    folder: &mut Folder,
    to: u64,
) -> Result<Vec<StoredEvent>, Box<dyn Error>> {
    let from = folder.seq + 1;
    let decided = within(folder.catch_up(log, to)).await??;
    let read = within(log.read(from, 1_000)).await??;
    let ids: Vec<(Uuid, u64)> = read
        .iter()
        .filter_map(|stored| stored.event().map(|event| (event.id, stored.seq)))
        .collect();
    within(log.record_folded(&ids)).await??;
    let batch = DecisionBatch {
        version: flotilla_core::wire::DECISION_VERSION,
        first_input_seq: from,
        last_input_seq: to,
        decisions: decided.into_iter().filter(|(_, d)| !d.is_empty()).collect(),
    };
    within(log.append_decisions(&batch)).await??;
    Ok(read)
}

/// The state hash of `inputs` folded from the first with no window, in memory.
async fn hash_kept_whole(inputs: &[StoredEvent]) -> Result<StateHash, Box<dyn Error>> {
    let memory = MemoryLog::new();
    for stored in inputs {
        memory.push_record(stored.record.clone());
    }
    let mut folder = Folder::default();
    folder.catch_up(&memory, memory.last_seq().await?).await?;
    assert_eq!(folder.seq, u64::try_from(inputs.len())?);
    Ok(folder.state.hash()?)
}

/// A replay from the log's base, as `flotilla_replay::start` does it, to its last input.
async fn replay_from_base(log: &NatsLog) -> Result<Folder, Box<dyn Error>> {
    let base = within(log.base_seq()).await??;
    let checkpoint = within(log.load_checkpoint_before(base)).await??;
    let checkpoint = checkpoint.filter(|checkpoint| checkpoint.seq == base);
    let mut folder = Folder::from_checkpoint(checkpoint.ok_or("the base checkpoint is missing")?);
    let last = within(log.last_seq()).await??;
    within(folder.catch_up(log, last)).await??;
    Ok(folder)
}

/// The names of the checkpoint bucket's objects.
async fn checkpoint_objects(log: &NatsLog) -> Result<Vec<String>, Box<dyn Error>> {
    let store = within(log.jetstream().get_object_store("FLOTILLA_CHECKPOINTS")).await??;
    let mut listing = within(store.list()).await??;
    let mut names = Vec::new();
    while let Some(info) = within(listing.next()).await? {
        let info = info?;
        if !info.deleted {
            names.push(info.name);
        }
    }
    names.sort();
    Ok(names)
}

/// A stream's first sequence and `max_age`.
async fn stream_state(log: &NatsLog, name: &str) -> Result<(u64, Duration), Box<dyn Error>> {
    let mut stream = within(log.jetstream().get_stream(name)).await??;
    let info = within(stream.info()).await??;
    Ok((info.state.first_sequence, info.config.max_age))
}

#[tokio::test]
async fn a_checkpoint_cuts_what_the_window_lets_go_and_a_replay_from_the_base_agrees() -> TestResult
{
    let server = NatsTestServer::start()?;
    let window = Duration::from_secs(250);
    let log = connect(&server, window).await?;
    let mut folder = Folder::default();
    let mut read = Vec::new();
    for end in (ROUND..=10 * ROUND).step_by(100) {
        round(&log, &mut folder, (end - ROUND + 1, end), &mut read).await?;
    }
    // Input 1,000 is the newest: inputs of 750 s and older may go, and 700 is the newest
    // checkpoint at or before that.
    assert_eq!(within(log.base_seq()).await??, 700);
    assert_eq!(stream_state(&log, "FLOTILLA_INPUT").await?.0, 701);
    let first = within(log.read(1, 5)).await??;
    assert_eq!(first.first().map(|input| input.seq), Some(701));
    let batches = within(log.read_decisions(1, 100)).await??;
    assert_eq!(batches.first().map(|b| b.first_input_seq), Some(701));
    let kept: Vec<String> = (7..=10)
        .map(|n| format!("seek-{:020}", n * ROUND))
        .collect();
    let mut expected = vec![BASE_OBJECT.to_owned(), "newest".to_owned()];
    expected.extend(kept);
    expected.sort();
    assert_eq!(checkpoint_objects(&log).await?, expected);

    // The input stream's max_age follows the window; the ids expire with their inputs.
    let max_age = max_age_for(window);
    assert_eq!(stream_state(&log, "FLOTILLA_INPUT").await?.1, max_age);
    assert_eq!(
        stream_state(&log, "KV_FLOTILLA_EVENT_IDS").await?.1,
        max_age
    );
    assert_eq!(
        stream_state(&log, "FLOTILLA_DECISIONS").await?.1,
        Duration::ZERO
    );

    // A replay from the base gives the writer's state, and the state of the same inputs
    // folded from the first with no window.
    let replayed = replay_from_base(&log).await?;
    assert_eq!(replayed.seq, 1_000);
    let hash = replayed.state.hash()?;
    assert_eq!(hash, folder.state.hash()?);
    assert_eq!(hash, hash_kept_whole(&read).await?);

    let info = within(log.info()).await??;
    assert_eq!(info.base_seq, 700);
    assert_eq!(info.first.as_ref().map(|point| point.seq), Some(701));
    assert_eq!(info.window().map(|window| window.num_seconds()), Some(299));
    assert!(
        info.checkpoints
            .iter()
            .all(|object| object.name != BASE_OBJECT)
    );

    forgotten_ids_are_refused(&log).await?;

    // Another process reading the log (`flotilla replay`) sees the same base.
    let reader = within(NatsLog::connect(&server.url(), NatsOptions::default())).await??;
    assert_eq!(within(reader.base_seq()).await??, 700);
    let first = within(reader.read(1, 5)).await??;
    assert_eq!(first.first().map(|input| input.seq), Some(701));
    Ok(())
}

/// An id older than the base that the index does not hold may repeat an input the window
/// removed: the append is refused whole. A repeat of a kept input is stored as before (the fold
/// knows it), and a fresh id is stored.
async fn forgotten_ids_are_refused(log: &NatsLog) -> TestResult {
    let last = within(log.last_seq()).await??;
    let mut fresh = input(1_001);
    fresh.id = id_at(1_001, 1_001);
    let mut old = input(1_001);
    old.id = id_at(600, 5_000);
    let refused = within(log.append(vec![fresh.clone(), old], AppendTime::AsGiven)).await?;
    let Err(LogError::Refused(reason)) = refused else {
        return Err(format!("expected a refusal, got {refused:?}").into());
    };
    assert!(reason.contains("older than the oldest input"), "{reason}");
    assert_eq!(within(log.last_seq()).await??, last, "nothing was stored");
    // Input 650 left with the cut, but its id is still indexed: not refused.
    let again = within(log.append(vec![input(650)], AppendTime::AsGiven)).await??;
    assert_eq!(again.len(), 1);
    let ids = within(log.first_seq_of(&[input(650).id])).await??;
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), [(input(650).id, 650)]);
    let stored = within(log.append(vec![fresh], AppendTime::AsGiven)).await??;
    assert!(
        stored.iter().all(|appended| !appended.duplicate),
        "{stored:?}"
    );
    Ok(())
}

#[tokio::test]
async fn when_max_age_removed_more_readers_start_at_the_oldest_checkpoint_after_it() -> TestResult {
    let server = NatsTestServer::start()?;
    let log = connect(&server, Duration::from_secs(250)).await?;
    let mut folder = Folder::default();
    for end in (ROUND..=10 * ROUND).step_by(100) {
        round(&log, &mut folder, (end - ROUND + 1, end), &mut Vec::new()).await?;
    }
    assert_eq!(within(log.base_seq()).await??, 700);
    // What max_age does while no writer cuts: the inputs up to 850 leave the stream.
    let stream = within(log.jetstream().get_stream("FLOTILLA_INPUT")).await??;
    within(stream.purge().sequence(851).into_future()).await??;
    // 900 is the oldest checkpoint whose successors are all kept.
    assert_eq!(within(log.base_seq()).await??, 900);
    let replayed = replay_from_base(&log).await?;
    assert_eq!(replayed.seq, 1_000);
    assert_eq!(replayed.state.hash()?, folder.state.hash()?);
    // The newest checkpoint, when no seek checkpoint is late enough.
    within(stream.purge().sequence(951).into_future()).await??;
    assert_eq!(within(log.base_seq()).await??, 1_000);
    // None: the log lost inputs no checkpoint covers, and says where it starts.
    let more = (1_001..=1_010).map(input).collect();
    within(log.append(more, AppendTime::AsGiven)).await??;
    within(stream.purge().sequence(1_006).into_future()).await??;
    assert_eq!(within(log.base_seq()).await??, 1_005);
    assert_eq!(
        within(log.load_checkpoint_before(1_005))
            .await??
            .map(|c| c.seq),
        Some(1_000)
    );
    Ok(())
}

#[tokio::test]
async fn the_inputs_after_the_newest_checkpoint_never_age_out_while_a_writer_runs() -> TestResult {
    let server = NatsTestServer::start()?;
    // On the stream's own clock: inputs leave by max_age after four seconds.
    let window = Duration::from_secs(2);
    let options = NatsOptions {
        retain: Some(window),
        duplicate_window: Duration::from_secs(1),
        ..NatsOptions::default()
    };
    let log = within(NatsLog::connect(&server.url(), options)).await??;
    assert_eq!(
        stream_state(&log, "FLOTILLA_INPUT").await?.1,
        max_age_for(window)
    );
    let mut folder = Folder::default();
    let assigned = |n: u64| {
        let mut event = input(n);
        event.id = Uuid::now_v7();
        event
    };
    within(log.append((1..=10).map(assigned).collect(), AppendTime::Assigned)).await??;
    decide(&log, &mut folder, 10).await?;
    within(log.save_encoded_checkpoint(folder.encoded_checkpoint()?)).await??;
    // The writer folds on without a checkpoint for longer than max_age.
    let mut raised = Duration::ZERO;
    for n in 11..=40 {
        within(log.append(vec![assigned(n)], AppendTime::Assigned)).await??;
        decide(&log, &mut folder, n).await?;
        raised = raised.max(stream_state(&log, "FLOTILLA_INPUT").await?.1);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        raised > max_age_for(window),
        "max_age was raised: {raised:?}"
    );
    let successor = within(log.read(11, 1)).await??;
    assert_eq!(
        successor.first().map(|input| input.seq),
        Some(11),
        "input 11 is kept"
    );
    assert_eq!(within(log.base_seq()).await??, 0, "nothing removed yet");
    // A checkpoint covers them: max_age is back to twice the window.
    within(log.save_encoded_checkpoint(folder.encoded_checkpoint()?)).await??;
    assert_eq!(
        stream_state(&log, "FLOTILLA_INPUT").await?.1,
        max_age_for(window)
    );
    assert_eq!(
        stream_state(&log, "KV_FLOTILLA_EVENT_IDS").await?.1,
        max_age_for(window)
    );

    // A fleet that falls silent: the writer decides nothing and only waits for inputs.
    within(log.append(vec![assigned(41)], AppendTime::Assigned)).await??;
    decide(&log, &mut folder, 41).await?;
    let silent = tokio::time::Instant::now();
    while silent.elapsed() < Duration::from_secs(6) {
        within(log.wait_for(41, Duration::from_millis(200))).await??;
    }
    let raised = stream_state(&log, "FLOTILLA_INPUT").await?.1;
    assert!(
        raised > max_age_for(window),
        "max_age was raised: {raised:?}"
    );
    let successor = within(log.read(41, 1)).await??;
    assert_eq!(
        successor.first().map(|input| input.seq),
        Some(41),
        "input 41 is kept"
    );
    Ok(())
}

#[tokio::test]
async fn on_streams_that_deny_purges_the_base_moves_and_max_age_removes_the_rest() -> TestResult {
    let server = NatsTestServer::start()?;
    let window = Duration::from_secs(250);
    let log = connect(&server, window).await?;
    // As a stream created before retention: JetStream never lifts this again.
    for name in ["FLOTILLA_INPUT", "FLOTILLA_DECISIONS"] {
        let mut stream = within(log.jetstream().get_stream(name)).await??;
        let mut config = within(stream.info()).await??.config.clone();
        config.deny_purge = true;
        within(log.jetstream().update_stream(&config)).await??;
    }
    let log = connect(&server, window).await?;
    let mut folder = Folder::default();
    for end in (ROUND..=10 * ROUND).step_by(100) {
        round(&log, &mut folder, (end - ROUND + 1, end), &mut Vec::new()).await?;
    }
    assert_eq!(within(log.base_seq()).await??, 700);
    assert_eq!(
        stream_state(&log, "FLOTILLA_INPUT").await?,
        (1, max_age_for(window))
    );
    let first = within(log.read(1, 5)).await??;
    assert_eq!(first.first().map(|input| input.seq), Some(701));
    let replayed = replay_from_base(&log).await?;
    assert_eq!(replayed.state.hash()?, folder.state.hash()?);
    Ok(())
}

//! Proves the redb backend keeps the `EventLog` contract on a real file with real fsync: dense
//! sequences, deduplication, durable and concurrent appends (group-committed), fenced decisions,
//! checkpoints that survive reopening, and `wait_for`.

use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use flotilla_core::wire::DECISION_VERSION;
use flotilla_core::{Decision, Envelope, Heartbeat, Input, State};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{
    AppendTime, Appended, Checkpoint, DecisionBatch, EventLog, LogError, LogReader, LogRecord,
};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

fn event(n: u128) -> Envelope {
    let seconds = i64::try_from(n).unwrap_or(0);
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + seconds, 0).unwrap_or_default();
    Envelope::new(
        Uuid::from_u128(n),
        time,
        "test",
        Input::Heartbeat(Heartbeat {
            cluster: "member1".into(),
            ..Default::default()
        }),
    )
}

fn fresh(label: &str) -> Result<(tempfile::TempDir, PathBuf), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join(format!("{label}.redb"));
    Ok((dir, path))
}

fn open(path: &Path) -> Result<RedbLog, LogError> {
    RedbLog::open(path, RedbOptions::default())
}

fn new(seq: u64) -> Appended {
    Appended {
        seq,
        duplicate: false,
    }
}

fn duplicate(seq: u64) -> Appended {
    Appended {
        seq,
        duplicate: true,
    }
}

fn batch(first_input_seq: u64, last_input_seq: u64) -> DecisionBatch {
    let decision = Decision::ClusterJoined {
        cluster: format!("member{last_input_seq}"),
    };
    DecisionBatch {
        version: DECISION_VERSION,
        first_input_seq,
        last_input_seq,
        decisions: vec![(last_input_seq, vec![decision])],
    }
}

#[tokio::test]
async fn append_then_read_back() -> TestResult {
    let (_dir, path) = fresh("append")?;
    let log = open(&path)?;
    let events = vec![event(1), event(2), event(3)];
    let appended = log.append(events.clone(), AppendTime::AsGiven).await?;
    assert_eq!(appended, vec![new(1), new(2), new(3)]);
    let stored = log.read(1, 10).await?;
    let seqs: Vec<u64> = stored.iter().map(|stored| stored.seq).collect();
    assert_eq!(seqs, vec![1, 2, 3]);
    let records: Vec<LogRecord> = stored.into_iter().map(|stored| stored.record).collect();
    let events: Vec<LogRecord> = events.into_iter().map(LogRecord::Event).collect();
    assert_eq!(records, events);
    assert_eq!(log.last_seq().await?, 3);
    assert!(log.read(4, 10).await?.is_empty(), "nothing past the end");
    assert!(log.read(1, 0).await?.is_empty(), "max 0 reads nothing");
    Ok(())
}

#[tokio::test]
async fn sequences_are_dense_from_one() -> TestResult {
    let (_dir, path) = fresh("dense")?;
    let log = open(&path)?;
    assert_eq!(log.last_seq().await?, 0, "an empty log is at 0");
    let mut n = 0;
    for size in [1, 5, 2, 10] {
        let events = (0..size).map(|_| {
            n += 1;
            event(n)
        });
        log.append(events.collect(), AppendTime::AsGiven).await?;
    }
    assert!(
        log.append(Vec::new(), AppendTime::AsGiven)
            .await?
            .is_empty(),
        "an empty append writes nothing"
    );
    let seqs: Vec<u64> = log
        .read(0, 100)
        .await?
        .iter()
        .map(|stored| stored.seq)
        .collect();
    assert_eq!(seqs, (1..=18).collect::<Vec<u64>>());
    let window: Vec<u64> = log
        .read(5, 3)
        .await?
        .iter()
        .map(|stored| stored.seq)
        .collect();
    assert_eq!(window, vec![5, 6, 7]);
    assert_eq!(log.last_seq().await?, 18);
    Ok(())
}

#[tokio::test]
async fn duplicate_id_in_one_batch_returns_the_original_seq() -> TestResult {
    let (_dir, path) = fresh("dedupe-batch")?;
    let log = open(&path)?;
    let appended = log
        .append(
            vec![event(1), event(2), event(1), event(2)],
            AppendTime::AsGiven,
        )
        .await?;
    assert_eq!(appended, vec![new(1), new(2), duplicate(1), duplicate(2)]);
    assert_eq!(log.last_seq().await?, 2);
    assert_eq!(log.read(1, 10).await?.len(), 2);
    Ok(())
}

#[tokio::test]
async fn duplicate_id_across_batches_writes_nothing() -> TestResult {
    let (_dir, path) = fresh("dedupe-across")?;
    let log = open(&path)?;
    log.append(vec![event(7), event(8)], AppendTime::AsGiven)
        .await?;
    let commits = log.commit_count();
    let again = log
        .append(vec![event(8), event(7)], AppendTime::AsGiven)
        .await?;
    assert_eq!(again, vec![duplicate(2), duplicate(1)]);
    assert_eq!(
        log.commit_count(),
        commits,
        "an all-duplicate append commits nothing"
    );
    let mixed = log
        .append(vec![event(9), event(7)], AppendTime::AsGiven)
        .await?;
    assert_eq!(mixed, vec![new(3), duplicate(1)]);
    drop(log);
    // The id index is durable too: a retry after a restart is still recognised.
    let log = open(&path)?;
    assert_eq!(
        log.append(vec![event(9)], AppendTime::AsGiven).await?,
        vec![duplicate(3)]
    );
    assert_eq!(log.last_seq().await?, 3);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_get_distinct_seqs_and_survive_reopen() -> TestResult {
    const TASKS: u128 = 50;
    const EVENTS_PER_TASK: u128 = 20;
    let (_dir, path) = fresh("concurrent")?;
    let log = Arc::new(open(&path)?);
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let log = Arc::clone(&log);
        let events: Vec<Envelope> = (0..EVENTS_PER_TASK)
            .map(|i| event(1 + task * EVENTS_PER_TASK + i))
            .collect();
        tasks.push(tokio::spawn(async move {
            log.append(events, AppendTime::AsGiven).await
        }));
    }
    let mut seqs = BTreeSet::new();
    for task in tasks {
        let appended = task.await??;
        // One call is one transaction, so its events are consecutive.
        let first = appended[0].seq;
        for (offset, outcome) in (0u64..).zip(&appended) {
            assert_eq!(*outcome, new(first + offset));
            assert!(
                seqs.insert(outcome.seq),
                "sequence {} handed out twice",
                outcome.seq
            );
        }
    }
    let total = u64::try_from(TASKS * EVENTS_PER_TASK)?;
    assert_eq!(seqs, (1..=total).collect::<BTreeSet<u64>>());
    drop(log);

    let log = open(&path)?;
    assert_eq!(log.last_seq().await?, total);
    let stored = log.read(1, usize::try_from(total)?).await?;
    assert_eq!(stored.len(), usize::try_from(total)?);
    let ids: BTreeSet<u128> = stored
        .iter()
        .map(|stored| stored.event().expect("an event").id.as_u128())
        .collect();
    assert_eq!(
        ids,
        (1..=TASKS * EVENTS_PER_TASK).collect::<BTreeSet<u128>>()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn group_commit_batches_concurrent_single_event_appends() -> TestResult {
    const PUBLISHERS: usize = 2_000;
    let (_dir, path) = fresh("group-commit")?;
    let log = Arc::new(open(&path)?);

    // Sequential appends cannot share a transaction: one commit each.
    for n in 1..=10 {
        log.append(vec![event(n)], AppendTime::AsGiven).await?;
    }
    assert_eq!(log.commit_count(), 10);

    // Released together, concurrent publishers queue behind the commit in flight and share
    // the next one.
    let start = Arc::new(tokio::sync::Barrier::new(PUBLISHERS));
    let mut tasks = Vec::with_capacity(PUBLISHERS);
    for publisher in 0..PUBLISHERS {
        let (log, start) = (Arc::clone(&log), Arc::clone(&start));
        let n = 1_000 + u128::try_from(publisher)?;
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            log.append(vec![event(n)], AppendTime::AsGiven).await
        }));
    }
    let mut seqs = BTreeSet::new();
    for task in tasks {
        let appended = task.await??;
        assert!(!appended[0].duplicate);
        seqs.insert(appended[0].seq);
    }
    let commits = log.commit_count() - 10;
    assert_eq!(
        seqs.len(),
        PUBLISHERS,
        "every publisher got its own sequence"
    );
    assert!(
        commits <= u64::try_from(PUBLISHERS / 10)?,
        "{PUBLISHERS} concurrent appends took {commits} transactions: not group-committed"
    );
    assert_eq!(log.last_seq().await?, 10 + u64::try_from(PUBLISHERS)?);
    eprintln!("{PUBLISHERS} concurrent single-event appends took {commits} transactions");
    Ok(())
}

#[tokio::test]
async fn decisions_are_fenced_and_a_fenced_batch_writes_nothing() -> TestResult {
    let (_dir, path) = fresh("fencing")?;
    let log = open(&path)?;
    log.append((1..=6).map(event).collect(), AppendTime::AsGiven)
        .await?;
    assert_eq!(log.last_decided_seq().await?, 0);

    log.append_decisions(&batch(1, 2)).await?;
    assert_eq!(log.last_decided_seq().await?, 2);

    // Another writer already decided 2: a batch starting at 2 overlaps, one at 4 skips 3.
    let overlap = log.append_decisions(&batch(2, 3)).await;
    assert!(
        matches!(
            overlap,
            Err(LogError::Fenced {
                expected: 1,
                actual: 2
            })
        ),
        "{overlap:?}"
    );
    let gap = log.append_decisions(&batch(4, 5)).await;
    assert!(
        matches!(
            gap,
            Err(LogError::Fenced {
                expected: 3,
                actual: 2
            })
        ),
        "{gap:?}"
    );
    assert_eq!(log.read_decisions(0, 10).await?, vec![batch(1, 2)]);
    assert_eq!(log.last_decided_seq().await?, 2);

    // Decisions for inputs that are not in the log, or an empty range, are refused.
    assert!(log.append_decisions(&batch(3, 7)).await.is_err());
    assert!(log.append_decisions(&batch(3, 2)).await.is_err());
    assert_eq!(log.last_decided_seq().await?, 2);

    log.append_decisions(&batch(3, 5)).await?;
    log.append_decisions(&batch(6, 6)).await?;
    assert_eq!(
        log.read_decisions(4, 10).await?,
        vec![batch(3, 5), batch(6, 6)]
    );
    assert_eq!(log.read_decisions(6, 10).await?, vec![batch(6, 6)]);
    assert_eq!(log.read_decisions(0, 1).await?, vec![batch(1, 2)]);
    drop(log);

    let log = open(&path)?;
    assert_eq!(
        log.last_decided_seq().await?,
        6,
        "the fence survives a restart"
    );
    let stale = log.append_decisions(&batch(6, 6)).await;
    assert!(
        matches!(
            stale,
            Err(LogError::Fenced {
                expected: 5,
                actual: 6
            })
        ),
        "{stale:?}"
    );
    Ok(())
}

fn checkpoint_at(seq: u64) -> Result<Checkpoint, Box<dyn Error>> {
    let mut state = State::default();
    for n in 1..=u128::from(seq) {
        flotilla_core::step(&mut state, &event(n));
    }
    let hash = state.hash()?;
    Ok(Checkpoint { seq, hash, state })
}

#[tokio::test]
async fn checkpoints_newest_wins_and_survive_reopen() -> TestResult {
    let (_dir, path) = fresh("checkpoints")?;
    let log = open(&path)?;
    assert_eq!(log.load_checkpoint().await?, None);
    log.append((1..=9).map(event).collect(), AppendTime::AsGiven)
        .await?;

    let newest = checkpoint_at(7)?;
    log.save_checkpoint(&checkpoint_at(3)?).await?;
    log.save_checkpoint(&newest).await?;
    // Saved later but older: the newest by sequence still wins.
    log.save_checkpoint(&checkpoint_at(5)?).await?;
    assert_eq!(log.load_checkpoint().await?.as_ref(), Some(&newest));
    drop(log);

    let log = open(&path)?;
    assert_eq!(log.load_checkpoint().await?.as_ref(), Some(&newest));
    // More than the kept count: older ones are pruned, the newest survives.
    for seq in [1, 2, 4, 6, 8] {
        log.save_checkpoint(&checkpoint_at(seq)?).await?;
    }
    let loaded = log.load_checkpoint().await?.ok_or("a checkpoint")?;
    assert_eq!(loaded, checkpoint_at(8)?);
    assert_eq!(loaded.hash, loaded.state.hash()?);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_wakes_on_append() -> TestResult {
    let (_dir, path) = fresh("wait-wakes")?;
    let log = Arc::new(open(&path)?);
    let waiter = {
        let log = Arc::clone(&log);
        tokio::spawn(async move { log.wait_for(0, Duration::from_secs(30)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    let started = Instant::now();
    log.append(vec![event(1)], AppendTime::AsGiven).await?;
    assert_eq!(waiter.await??, 1);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "woken by the append, not the timeout"
    );
    // Already past `after`: answers at once.
    assert_eq!(log.wait_for(0, Duration::from_secs(30)).await?, 1);
    Ok(())
}

#[tokio::test]
async fn wait_for_times_out_without_append() -> TestResult {
    let (_dir, path) = fresh("wait-times-out")?;
    let log = open(&path)?;
    log.append(vec![event(1), event(2)], AppendTime::AsGiven)
        .await?;
    let started = Instant::now();
    let seen = log.wait_for(2, Duration::from_millis(50)).await?;
    assert_eq!(seen, 2, "returns the highest sequence seen");
    assert!(started.elapsed() >= Duration::from_millis(50));
    Ok(())
}

#[tokio::test]
async fn a_second_writer_is_refused_and_close_releases_the_file() -> TestResult {
    let (_dir, path) = fresh("single-writer")?;
    let log = open(&path)?;
    log.append(vec![event(1)], AppendTime::AsGiven).await?;
    let second = open(&path);
    assert!(matches!(second, Err(LogError::Storage(_))), "{second:?}");
    log.close()?;
    let log = open(&path)?;
    assert_eq!(log.last_seq().await?, 1);
    Ok(())
}

#[test]
fn zero_limits_are_refused() -> TestResult {
    let (_dir, path) = fresh("options")?;
    let options = RedbOptions {
        events_per_commit_max: 0,
        ..RedbOptions::default()
    };
    assert!(matches!(
        RedbLog::open(&path, options),
        Err(LogError::Storage(_))
    ));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_commit_limit_bounds_groups_but_never_splits_an_append() -> TestResult {
    const PUBLISHERS: u64 = 100;
    let (_dir, path) = fresh("small-limit")?;
    let options = RedbOptions {
        events_per_commit_max: 2,
        ..RedbOptions::default()
    };
    let log = Arc::new(RedbLog::open(&path, options)?);
    // Larger than the limit: written whole, in one transaction.
    let appended = log
        .append((1..=5).map(event).collect(), AppendTime::AsGiven)
        .await?;
    assert_eq!(appended, (1..=5).map(new).collect::<Vec<_>>());
    assert_eq!(log.commit_count(), 1);

    let mut tasks = Vec::new();
    for n in 0..PUBLISHERS {
        let log = Arc::clone(&log);
        tasks.push(tokio::spawn(async move {
            log.append(vec![event(100 + u128::from(n))], AppendTime::AsGiven)
                .await
        }));
    }
    for task in tasks {
        task.await??;
    }
    let commits = log.commit_count() - 1;
    assert!(
        commits >= PUBLISHERS / 2,
        "{PUBLISHERS} events in {commits} groups of at most 2"
    );
    assert_eq!(log.read(1, 1_000).await?.len(), 105);
    Ok(())
}

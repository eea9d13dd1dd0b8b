//! The redb log shared with readers: `RedbReader` opens the file a hub writes (redb's
//! `SingleWriter` mode) and follows its commits; a second writer is still refused; older
//! checkpoints are kept one per seek span; records can be stored as they came (imports).

use std::error::Error;

use chrono::{DateTime, Utc};
use flotilla_core::{Envelope, Heartbeat, Input, State};
use flotilla_eventstore::redb_log::reader::RedbReader;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, Checkpoint, EventLog, LogError, LogReader};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

fn event(n: u128) -> Envelope {
    let seconds = i64::try_from(n).unwrap_or(0);
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + seconds, 0).unwrap_or_default();
    let beat = Input::Heartbeat(Heartbeat {
        cluster: "member1".into(),
        ..Default::default()
    });
    Envelope::new(Uuid::from_u128(n), time, "test", beat)
}

fn checkpoint_at(seq: u64) -> Result<Checkpoint, Box<dyn Error>> {
    let state = State::default();
    let hash = state.hash()?;
    Ok(Checkpoint { seq, hash, state })
}

#[tokio::test]
async fn a_reader_follows_a_writer_and_a_second_writer_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = RedbLog::open(&path, RedbOptions::default())?;
    log.append(vec![event(1), event(2)], AppendTime::AsGiven)
        .await?;
    assert!(matches!(
        RedbLog::open(&path, RedbOptions::default()),
        Err(LogError::Storage(_))
    ));
    let reader = RedbReader::open(&path)?;
    assert_eq!(reader.last_seq().await?, 2);
    log.append(vec![event(3)], AppendTime::AsGiven).await?;
    assert_eq!(
        reader
            .wait_for(2, std::time::Duration::from_secs(5))
            .await?,
        3
    );
    let read = reader.read(1, 10).await?;
    assert_eq!(read.len(), 3);
    assert_eq!(read[2].event().map(|e| e.id), Some(Uuid::from_u128(3)));
    // The reader cannot write: it implements `LogReader` only, so there is no append to try.
    Ok(())
}

#[tokio::test]
async fn older_checkpoints_are_kept_one_per_seek_span() -> TestResult {
    let dir = tempfile::tempdir()?;
    let options = RedbOptions {
        checkpoints_kept: 2,
        seek_spacing: 100,
        ..RedbOptions::default()
    };
    let log = RedbLog::open(&dir.path().join("log.redb"), options)?;
    let events: Vec<Envelope> = (1..=1_000).map(event).collect();
    log.append(events, AppendTime::AsGiven).await?;
    for seq in (50..=1_000).step_by(50) {
        log.save_checkpoint(&checkpoint_at(seq)?).await?;
    }
    let found = |seq| {
        let log = &log;
        async move {
            let checkpoint = log.load_checkpoint_before(seq).await?;
            Ok::<_, LogError>(checkpoint.map(|c| c.seq))
        }
    };
    // The newest two, and the first of each earlier span of 100.
    assert_eq!(found(1_000).await?, Some(1_000));
    assert_eq!(found(999).await?, Some(950));
    assert_eq!(found(949).await?, Some(900));
    assert_eq!(found(899).await?, Some(800));
    assert_eq!(found(149).await?, Some(100));
    assert_eq!(found(99).await?, Some(50));
    assert_eq!(found(49).await?, None);
    Ok(())
}

#[tokio::test]
async fn records_stored_as_they_came_read_back_as_rejected() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = RedbLog::open(&dir.path().join("log.redb"), RedbOptions::default())?;
    log.append(vec![event(1)], AppendTime::AsGiven).await?;
    let stored = log.append_as_is(vec![b"not a frame".to_vec()]).await?;
    assert_eq!(stored[0].seq, 2);
    let read = log.read(2, 1).await?;
    assert!(read[0].event().is_none(), "{:?}", read[0]);
    Ok(())
}

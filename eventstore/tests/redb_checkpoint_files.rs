//! Checkpoints in files of their own beside the redb log: stored without holding the log's write
//! transaction, indexed by the log, pruned with the in-table checkpoints of older files, swept
//! when the log does not index them, and skipped when torn.

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use flotilla_core::{Envelope, Heartbeat, Input, State};
use flotilla_eventstore::redb_log::reader::RedbReader;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, Checkpoint, EventLog, LogReader};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

fn event(n: u64) -> Envelope {
    let seconds = i64::try_from(n).unwrap_or(0);
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + seconds, 0).unwrap_or_default();
    Envelope::new(
        Uuid::from_u128(u128::from(n)),
        time,
        "test",
        Input::Heartbeat(Heartbeat {
            cluster: format!("member{}", n % 3),
            ..Default::default()
        }),
    )
}

fn checkpoint_at(seq: u64) -> Result<Checkpoint, Box<dyn Error>> {
    let mut state = State::default();
    for n in 1..=seq {
        flotilla_core::step(&mut state, &event(n));
    }
    let hash = state.hash()?;
    Ok(Checkpoint { seq, hash, state })
}

fn options() -> RedbOptions {
    RedbOptions {
        checkpoints_kept: 2,
        seek_spacing: 10,
        ..RedbOptions::default()
    }
}

/// The sequences of the checkpoint files in the log's directory, in order.
fn files_in(path: &Path) -> Result<Vec<u64>, Box<dyn Error>> {
    let dir = checkpoint_dir(path);
    let mut seqs = Vec::new();
    if !dir.exists() {
        return Ok(seqs);
    }
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let seq = name.strip_suffix(".checkpoint").ok_or(name.clone())?;
        seqs.push(seq.parse()?);
    }
    seqs.sort_unstable();
    Ok(seqs)
}

fn checkpoint_dir(path: &Path) -> PathBuf {
    path.with_file_name("log.redb.checkpoints")
}

async fn log_with_events(path: &Path, last: u64) -> Result<RedbLog, Box<dyn Error>> {
    let log = RedbLog::open(path, options())?;
    log.append((1..=last).map(event).collect(), AppendTime::AsGiven)
        .await?;
    Ok(log)
}

#[tokio::test]
async fn checkpoints_are_files_the_log_indexes_and_prunes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = log_with_events(&path, 30).await?;
    for seq in [3, 8, 12, 25, 27] {
        log.save_checkpoint(&checkpoint_at(seq)?).await?;
    }
    // The newest two, and of the older ones the first in each span of 10 inputs.
    assert_eq!(files_in(&path)?, vec![3, 12, 25, 27]);
    assert_eq!(log.load_checkpoint().await?, Some(checkpoint_at(27)?));
    assert_eq!(
        log.load_checkpoint_before(20).await?,
        Some(checkpoint_at(12)?)
    );
    drop(log);

    // A reader of the file (replay --data) finds the same checkpoints.
    let reader = RedbReader::open(&path)?;
    assert_eq!(reader.load_checkpoint().await?, Some(checkpoint_at(27)?));
    Ok(())
}

#[tokio::test]
async fn a_torn_checkpoint_file_is_skipped_for_the_one_before() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = log_with_events(&path, 9).await?;
    log.save_checkpoint(&checkpoint_at(4)?).await?;
    log.save_checkpoint(&checkpoint_at(9)?).await?;
    let newest = checkpoint_dir(&path).join("00000000000000000009.checkpoint");
    let bytes = fs::read(&newest)?;
    fs::write(&newest, &bytes[..bytes.len() / 2])?;
    assert_eq!(log.load_checkpoint().await?, Some(checkpoint_at(4)?));
    Ok(())
}

#[tokio::test]
async fn files_the_log_does_not_index_are_swept_at_open_and_never_loaded() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = log_with_events(&path, 9).await?;
    log.save_checkpoint(&checkpoint_at(4)?).await?;
    drop(log);
    // A checkpoint beyond the log (its tail lost with unhonoured fsyncs), and a partial write.
    let stray = checkpoint_dir(&path).join("00000000000000000009.checkpoint");
    fs::copy(
        checkpoint_dir(&path).join("00000000000000000004.checkpoint"),
        &stray,
    )?;
    fs::write(
        checkpoint_dir(&path).join("00000000000000000009.checkpoint.partial"),
        b"torn",
    )?;
    let log = RedbLog::open(&path, options())?;
    assert_eq!(files_in(&path)?, vec![4]);
    assert_eq!(log.load_checkpoint().await?, Some(checkpoint_at(4)?));
    Ok(())
}

#[tokio::test]
async fn a_checkpoint_past_the_end_of_the_log_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = log_with_events(&path, 3).await?;
    let refused = log.save_checkpoint(&checkpoint_at(5)?).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(log.load_checkpoint().await?, None);
    assert!(files_in(&path)?.is_empty());
    Ok(())
}

/// Writes checkpoint `seq` into the log's checkpoint directory as it is encoded, as the hub
/// does; returns the finished file, not yet indexed.
fn write_as_encoded(
    log: &RedbLog,
    seq: u64,
) -> Result<flotilla_eventstore::redb_log::WrittenCheckpoint, Box<dyn Error>> {
    let dir = log
        .checkpoint_dir()
        .ok_or("a redb log keeps checkpoint files")?;
    let mut file = dir.create(seq)?;
    let checkpoint = checkpoint_at(seq)?;
    let (hash, _) =
        flotilla_core::wire::checkpoint::encode_once_to(seq, &checkpoint.state, &mut file)?;
    assert_eq!(hash, checkpoint.hash);
    Ok(file.finish()?)
}

#[tokio::test]
async fn a_checkpoint_written_as_it_is_encoded_counts_once_the_log_indexes_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = log_with_events(&path, 9).await?;
    let written = write_as_encoded(&log, 6)?;
    assert_eq!(
        log.load_checkpoint().await?,
        None,
        "written but not indexed: not the log's yet"
    );
    let bytes = log.save_checkpoint_file(written).await?;
    assert_eq!(bytes, written.bytes);
    assert_eq!(log.load_checkpoint().await?, Some(checkpoint_at(6)?));

    // One the log never indexes (the hub stopped before it did) goes with the next save.
    write_as_encoded(&log, 8)?;
    assert_eq!(files_in(&path)?, vec![6, 8]);
    log.save_checkpoint_file(write_as_encoded(&log, 9)?).await?;
    assert_eq!(files_in(&path)?, vec![6, 9]);
    assert_eq!(log.load_checkpoint().await?, Some(checkpoint_at(9)?));
    Ok(())
}

#[tokio::test]
async fn a_checkpoint_file_past_the_end_of_the_log_is_refused_and_swept() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = log_with_events(&path, 3).await?;
    let written = write_as_encoded(&log, 5)?;
    let refused = log.save_checkpoint_file(written).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(log.load_checkpoint().await?, None);
    assert!(files_in(&path)?.is_empty());
    Ok(())
}

#[tokio::test]
async fn checkpoints_of_an_older_file_load_and_are_pruned_with_the_new_ones() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    {
        // A log written with its checkpoints in the table, as every release before files did.
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let backend = redb::backends::FileBackend::new(file)?;
        let log = RedbLog::open_with_backend(&path, backend, options())?;
        log.append((1..=30).map(event).collect(), AppendTime::AsGiven)
            .await?;
        for seq in [2, 5, 14] {
            log.save_checkpoint(&checkpoint_at(seq)?).await?;
        }
        log.close()?;
    }
    let log = RedbLog::open(&path, options())?;
    assert_eq!(log.load_checkpoint().await?, Some(checkpoint_at(14)?));
    for seq in [16, 23, 28] {
        log.save_checkpoint(&checkpoint_at(seq)?).await?;
    }
    assert_eq!(files_in(&path)?, vec![23, 28]);
    // 2 and 14 survive as the first of their spans; 5 and 16 are pruned.
    assert_eq!(
        log.load_checkpoint_before(4).await?,
        Some(checkpoint_at(2)?)
    );
    assert_eq!(
        log.load_checkpoint_before(13).await?,
        Some(checkpoint_at(2)?)
    );
    assert_eq!(
        log.load_checkpoint_before(22).await?,
        Some(checkpoint_at(14)?)
    );
    Ok(())
}

//! A retention window on the redb log: inputs older than the window leave it, the oldest kept
//! checkpoint becomes its base, and reads start after it.

use std::error::Error;

use chrono::{DateTime, Duration, Utc};
use flotilla_core::{Envelope, Heartbeat, Input, State};
use flotilla_eventstore::redb_log::reader::RedbReader;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, Checkpoint, DecisionBatch, EventLog, LogReader};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Input `n`, `n` seconds into the log.
fn beat(n: u64) -> Envelope {
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + i64::try_from(n).unwrap_or(0), 0)
        .unwrap_or_default();
    let payload = Input::Heartbeat(Heartbeat {
        cluster: "member1".into(),
        ..Default::default()
    });
    Envelope::new(Uuid::from_u128(u128::from(n)), time, "test", payload)
}

fn checkpoint_at(seq: u64) -> Result<Checkpoint, Box<dyn Error>> {
    let state = State::default();
    let hash = state.hash()?;
    Ok(Checkpoint { seq, hash, state })
}

/// Appends inputs `from..=to` (one a second) as one fold batch that decided nothing, then a
/// checkpoint at `to`.
async fn round(log: &RedbLog, from: u64, to: u64) -> TestResult {
    log.append((from..=to).map(beat).collect(), AppendTime::AsGiven)
        .await?;
    let batch = DecisionBatch {
        version: flotilla_core::wire::DECISION_VERSION,
        first_input_seq: from,
        last_input_seq: to,
        decisions: Vec::new(),
    };
    log.append_decisions(&batch).await?;
    log.save_checkpoint(&checkpoint_at(to)?).await?;
    Ok(())
}

#[tokio::test]
async fn inputs_older_than_the_window_leave_and_the_oldest_kept_checkpoint_is_the_base()
-> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let options = RedbOptions {
        checkpoints_kept: 2,
        seek_spacing: 100,
        retain: Some(Duration::seconds(250)),
        ..RedbOptions::default()
    };
    let log = RedbLog::open(&path, options)?;
    for end in (100..=1_000).step_by(100) {
        round(&log, end - 99, end).await?;
    }
    // Input 1,000 is the newest: inputs of 750 s and older may go, and 700 is the newest
    // checkpoint at or before that.
    assert_eq!(log.base_seq().await?, 700);
    let first = log.read(1, 5).await?;
    assert_eq!(first.first().map(|input| input.seq), Some(701));
    assert_eq!(
        log.load_checkpoint_before(750).await?.map(|c| c.seq),
        Some(700)
    );
    assert_eq!(log.load_checkpoint_before(650).await?, None);
    // The ids of the inputs that left are forgotten with them; the kept ones still count.
    let ids = [beat(5).id, beat(800).id];
    let found = log.first_seq_of(&ids).await?;
    assert_eq!(found.into_iter().collect::<Vec<_>>(), [(beat(800).id, 800)]);
    let batches = log.read_decisions(1, 100).await?;
    assert_eq!(batches.first().map(|b| b.first_input_seq), Some(701));
    forgotten_ids_are_refused(&log).await?;
    drop(log);

    let reader = RedbReader::open(&path)?;
    let info = reader.info().await?;
    assert_eq!(info.first.as_ref().map(|p| p.seq), Some(701));
    assert_eq!(info.base_seq, 700);
    let window = info.window().map(|w| w.num_seconds());
    // From input 701 to the fresh event appended last, at 1,001 s.
    assert_eq!(window, Some(300));
    let folded = read_from_base(&reader).await?;
    assert_eq!(folded, 1_001);
    Ok(())
}

/// Thinning keeps few old checkpoints (one per 10,000 inputs here), but a window keeps one per
/// eighth of itself across it, so the base is the newest checkpoint at the window's edge and
/// the log keeps little more than the window.
#[tokio::test]
async fn a_window_keeps_checkpoints_across_itself_so_the_base_follows_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let options = RedbOptions {
        checkpoints_kept: 2,
        seek_spacing: 10_000,
        retain: Some(Duration::seconds(800)),
        ..RedbOptions::default()
    };
    let log = RedbLog::open(&dir.path().join("log.redb"), options)?;
    for end in (50..=3_000).step_by(50) {
        round(&log, end - 49, end).await?;
    }
    // Input 3,000 is the newest: inputs of 2,200 s and older may go, and a checkpoint at
    // 2,200 was kept for it.
    assert_eq!(log.base_seq().await?, 2_200);
    Ok(())
}

/// Reads every input from the base on, as a replay does, and returns the last sequence read.
async fn read_from_base(reader: &RedbReader) -> Result<u64, Box<dyn Error>> {
    let mut next = reader.base_seq().await? + 1;
    let mut last = 0;
    for _ in 0..100 {
        let inputs = reader.read(next, 1_000).await?;
        let Some(end) = inputs.last() else { break };
        for (expected, input) in (next..).zip(&inputs) {
            assert_eq!(input.seq, expected, "no gap after the base");
        }
        last = end.seq;
        next = last + 1;
    }
    Ok(last)
}

/// An event with a UUIDv7 id from `seconds` into the log, at the log's end.
fn stamped(seconds: u64) -> Envelope {
    let clock = uuid::Timestamp::from_unix(uuid::NoContext, 1_741_820_400 + seconds, 0);
    let mut event = beat(1_001);
    event.id = Uuid::new_v7(clock);
    event
}

/// An id older than the base that the log does not hold may repeat an input the window
/// removed: the append is refused whole. A repeat of a kept input is still a duplicate, and a
/// fresh id is stored.
async fn forgotten_ids_are_refused(log: &RedbLog) -> TestResult {
    let last = log.last_seq().await?;
    let old = log
        .append(vec![stamped(1_002), stamped(600)], AppendTime::AsGiven)
        .await;
    let refused = old.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("older than the oldest input"), "{refused}");
    assert_eq!(
        log.last_seq().await?,
        last,
        "nothing of the request was stored"
    );
    let again = log.append(vec![beat(900)], AppendTime::AsGiven).await?;
    assert!(
        again.iter().all(|a| a.duplicate && a.seq == 900),
        "{again:?}"
    );
    let fresh = log
        .append(vec![stamped(1_003)], AppendTime::AsGiven)
        .await?;
    assert!(
        fresh.iter().all(|a| !a.duplicate && a.seq == last + 1),
        "{fresh:?}"
    );
    Ok(())
}

//! Proves the redb backend reads whatever its tables hold without ever failing a read: a
//! corrupt input record reads back as rejected (with its bytes), a record of release 19da42c
//! (unmarked) as the event it was, keeping its stored time; that the log assigns time (the
//! hub's clock, never earlier than the previous event's) unless the caller asks for times as
//! given; that an unreadable checkpoint is skipped for the next older one; that decision
//! batches carry the version they were recorded under; and that the event id index answers.

use std::error::Error;
use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use flotilla_core::codec::{encode_decisions, encode_record};
use flotilla_core::wire::encode_envelope;
use flotilla_core::wire::{self, RecordKind};
use flotilla_core::{Decision, Envelope, Input, State};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{
    AppendTime, Checkpoint, DecisionBatch, EventLog, LogError, LogReader, LogRecord,
};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// The stored layout's tables, as `redb_log::tables` defines them (frozen names).
const INPUTS: TableDefinition<u64, &[u8]> = TableDefinition::new("inputs");
const DECISIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("decisions");

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(seconds, 0).unwrap_or_default()
}

fn tick(n: u128, time: DateTime<Utc>) -> Envelope {
    Envelope::new(Uuid::from_u128(n), time, "test", Input::Tick)
}

fn open(path: &Path) -> Result<RedbLog, LogError> {
    RedbLog::open(path, RedbOptions::default())
}

/// Writes raw values into a table of a closed log file, as damage or an old build would.
fn write_raw(
    path: &Path,
    table: TableDefinition<u64, &[u8]>,
    rows: &[(u64, Vec<u8>)],
) -> TestResult {
    let db = Database::open(path)?;
    let txn = db.begin_write()?;
    {
        let mut table = txn.open_table(table)?;
        for (key, value) in rows {
            table.insert(*key, value.as_slice())?;
        }
    }
    txn.commit()?;
    Ok(())
}

#[tokio::test]
async fn corrupt_and_legacy_input_records_read_back_without_failing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = open(&path)?;
    log.append(vec![tick(1, at(1_000))], AppendTime::AsGiven)
        .await?;
    log.close()?;
    // 19da42c's unmarked frame: [02 00][bincode of the version 2 envelope].
    let old = wire::v2::Envelope {
        id: Uuid::from_u128(2),
        time: at(2_000),
        source: "old".into(),
        schema_version: 2,
        payload: wire::v2::Input::Tick,
    };
    let mut legacy = 2_u16.to_le_bytes().to_vec();
    legacy.extend_from_slice(&encode_record("event", &old)?);
    let garbage = b"\x7b\x22 not an event".to_vec();
    write_raw(&path, INPUTS, &[(2, legacy), (3, garbage.clone())])?;

    let log = open(&path)?;
    let records: Vec<LogRecord> = log
        .read(1, 10)
        .await?
        .into_iter()
        .map(|s| s.record)
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0], LogRecord::Event(tick(1, at(1_000))));
    let LogRecord::Event(upcast) = &records[1] else {
        panic!("the legacy frame is an event: {:?}", records[1])
    };
    assert_eq!(
        (upcast.time, upcast.claimed_time),
        (at(2_000), None),
        "its stored time"
    );
    let LogRecord::Rejected {
        subject,
        reason,
        bytes,
    } = &records[2]
    else {
        panic!("garbage is rejected: {:?}", records[2])
    };
    assert_eq!((subject.as_str(), bytes), ("redb", &garbage));
    assert!(!reason.is_empty());
    // Appending goes on after the bad record.
    let appended = log
        .append(vec![tick(4, at(3_000))], AppendTime::AsGiven)
        .await?;
    assert_eq!(appended[0].seq, 4);
    Ok(())
}

#[tokio::test]
async fn the_log_assigns_time_and_never_lowers_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = open(&dir.path().join("log.redb"))?;
    let before = Utc::now();
    // A publisher's claim of 2030 does not become the event's time.
    let mut claimed = tick(1, at(1_893_456_000));
    claimed.claimed_time = Some(claimed.time);
    log.append(vec![claimed], AppendTime::Assigned).await?;
    // A trusted caller may set a time ahead of the clock …
    let ahead = Utc::now() + Duration::days(365);
    log.append(vec![tick(2, ahead)], AppendTime::AsGiven)
        .await?;
    // … and assigned times never go below it afterwards.
    log.append(vec![tick(3, at(0))], AppendTime::Assigned)
        .await?;
    let read = log.read(1, 10).await?;
    let events: Vec<&Envelope> = read.iter().filter_map(|s| s.event()).collect();
    assert!(
        events[0].time >= before && events[0].time <= Utc::now(),
        "the hub's clock"
    );
    assert_eq!(
        events[0].claimed_time,
        Some(at(1_893_456_000)),
        "the claim is kept"
    );
    assert_eq!(events[1].time, ahead);
    assert_eq!(events[2].time, ahead, "raised to the previous event's time");
    Ok(())
}

#[tokio::test]
async fn an_unreadable_checkpoint_is_skipped_for_an_older_one() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = open(&path)?;
    log.append(vec![tick(1, at(1)), tick(2, at(2))], AppendTime::AsGiven)
        .await?;
    let state = State::default();
    for seq in [1, 2] {
        let hash = state.hash()?;
        log.save_checkpoint(&Checkpoint {
            seq,
            hash,
            state: state.clone(),
        })
        .await?;
    }
    log.close()?;
    // Checkpoints live in files beside the log (`log.redb.checkpoints/`), named by sequence.
    let file = |seq: u64| {
        dir.path()
            .join("log.redb.checkpoints")
            .join(format!("{seq:020}.checkpoint"))
    };
    let mut newer = wire::checkpoint::encode(2, &state.hash()?, &state)?;
    newer[5] = 200;
    std::fs::write(file(2), newer)?;
    let log = open(&path)?;
    assert_eq!(log.load_checkpoint().await?.map(|c| c.seq), Some(1));
    log.close()?;
    std::fs::write(file(1), b"damaged")?;
    let log = open(&path)?;
    assert_eq!(
        log.load_checkpoint().await?,
        None,
        "none readable: fold from the log"
    );
    Ok(())
}

#[tokio::test]
async fn decision_batches_carry_their_version() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = open(&path)?;
    let events = (1..=3).map(|n| tick(n, at(1))).collect();
    log.append(events, AppendTime::AsGiven).await?;
    let decisions = vec![(
        1,
        vec![Decision::ClusterJoined {
            cluster: "m1".into(),
        }],
    )];
    let batch = DecisionBatch {
        version: wire::DECISION_VERSION,
        first_input_seq: 1,
        last_input_seq: 1,
        decisions: decisions.clone(),
    };
    log.append_decisions(&batch).await?;
    log.close()?;
    // 19da42c's unmarked batch, and one from a newer build.
    let legacy = encode_decisions(&(2_u64, 2_u64, &decisions))?;
    let mut newer = wire::decisions::encode_batch(3, 3, &decisions)?;
    newer[5] = 9;
    write_raw(&path, DECISIONS, &[(2, legacy), (3, newer)])?;
    let log = open(&path)?;
    let read = log.read_decisions(1, 2).await?;
    assert_eq!(read[0], batch);
    assert_eq!(
        (read[1].version, read[1].first_input_seq),
        (1, 2),
        "unmarked is version 1"
    );
    assert_eq!(read[1].decisions, decisions);
    assert!(matches!(
        log.read_decisions(3, 1).await,
        Err(LogError::Newer {
            kind: RecordKind::DecisionBatch,
            version: 9,
            ..
        })
    ));
    Ok(())
}

#[tokio::test]
async fn the_event_id_index_names_the_first_sequence() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = open(&dir.path().join("log.redb"))?;
    log.append(vec![tick(1, at(1)), tick(2, at(2))], AppendTime::AsGiven)
        .await?;
    log.record_folded(&[(Uuid::from_u128(2), 2)]).await?;
    let ids = [Uuid::from_u128(2), Uuid::from_u128(1), Uuid::from_u128(9)];
    let found = log.first_seq_of(&ids).await?;
    let expected = [(Uuid::from_u128(1), 1), (Uuid::from_u128(2), 2)];
    assert_eq!(found, expected.into_iter().collect());
    Ok(())
}

/// The table of small facts about the file, and the key of its layout version (frozen names).
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const LAYOUT_VERSION_KEY: &str = "layout_version";
const INPUT_GROUPS: TableDefinition<u64, &[u8]> = TableDefinition::new("input_groups");

/// A log file as a layout 1 build left it: each input under its own key.
fn layout_1_file(path: &Path, inputs: &[Envelope]) -> TestResult {
    let db = Database::create(path)?;
    let txn = db.begin_write()?;
    txn.open_table(META)?.insert(LAYOUT_VERSION_KEY, 1)?;
    txn.commit()?;
    drop(db);
    let rows: Vec<(u64, Vec<u8>)> = (1..)
        .zip(inputs)
        .map(|(seq, input)| Ok((seq, encode_envelope(input)?)))
        .collect::<Result<_, flotilla_core::codec::CodecError>>()?;
    write_raw(path, INPUTS, &rows)
}

#[tokio::test]
async fn a_layout_1_file_is_raised_to_layout_3_and_reads_on_across_both() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    layout_1_file(&path, &[tick(1, at(1_000)), tick(2, at(2_000))])?;
    let log = open(&path)?;
    assert_eq!(log.last_seq().await?, 2);
    let appended = log
        .append(
            vec![tick(3, at(3_000)), tick(4, at(4_000))],
            AppendTime::AsGiven,
        )
        .await?;
    assert_eq!(appended.iter().map(|a| a.seq).collect::<Vec<_>>(), [3, 4]);
    let events: Vec<LogRecord> = (log.read(1, 10).await?.into_iter())
        .map(|s| s.record)
        .collect();
    let expected: Vec<LogRecord> = [(1, 1_000), (2, 2_000), (3, 3_000), (4, 4_000)]
        .into_iter()
        .map(|(n, seconds)| LogRecord::Event(tick(n, at(seconds))))
        .collect();
    assert_eq!(events, expected);
    // Reads starting inside either table, and past the end.
    for ((from, max), wanted) in [((2, 2), vec![2, 3]), ((4, 10), vec![4]), ((5, 10), vec![])] {
        let read: Vec<u64> = log.read(from, max).await?.iter().map(|s| s.seq).collect();
        assert_eq!(read, wanted, "reading {max} from {from}");
    }
    log.close()?;

    let db = Database::open(&path)?;
    let txn = db.begin_read()?;
    let layout = txn
        .open_table(META)?
        .get(LAYOUT_VERSION_KEY)?
        .map(|v| v.value());
    assert_eq!(
        layout,
        Some(3),
        "the file now says it holds compressed groups"
    );
    let groups = txn.open_table(INPUT_GROUPS)?;
    let keys: Vec<u64> = (groups.iter()?)
        .map(|entry| entry.map(|(key, _)| key.value()))
        .collect::<Result<_, _>>()?;
    assert_eq!(keys, [4], "one append, one group, under its last sequence");
    drop((groups, txn));
    // A layout this build does not know is refused, naming it.
    let txn = db.begin_write()?;
    txn.open_table(META)?.insert(LAYOUT_VERSION_KEY, 4)?;
    txn.commit()?;
    drop(db);
    let refused = open(&path).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("layout version 4"), "{refused}");
    Ok(())
}

/// A log file as a layout 2 build left it: inputs in plain groups (`[1][first][count]` then
/// each input with its length).
fn layout_2_file(path: &Path, inputs: &[Envelope]) -> TestResult {
    let db = Database::create(path)?;
    let txn = db.begin_write()?;
    txn.open_table(META)?.insert(LAYOUT_VERSION_KEY, 2)?;
    txn.commit()?;
    drop(db);
    let mut group = vec![1u8];
    group.extend_from_slice(&1u64.to_le_bytes());
    group.extend_from_slice(&u32::try_from(inputs.len())?.to_le_bytes());
    for input in inputs {
        let bytes = encode_envelope(input)?;
        group.extend_from_slice(&u32::try_from(bytes.len())?.to_le_bytes());
        group.extend_from_slice(&bytes);
    }
    write_raw(path, INPUT_GROUPS, &[(inputs.len() as u64, group)])
}

#[tokio::test]
async fn a_layout_2_file_is_raised_to_layout_3_and_reads_plain_and_compressed_groups() -> TestResult
{
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    layout_2_file(&path, &[tick(1, at(1_000)), tick(2, at(2_000))])?;
    let log = open(&path)?;
    assert_eq!(log.last_seq().await?, 2);
    log.append(vec![tick(3, at(3_000))], AppendTime::AsGiven)
        .await?;
    let seqs: Vec<(u64, Option<Uuid>)> = (log.read(1, 10).await?.into_iter())
        .map(|s| (s.seq, s.event().map(|e| e.id)))
        .collect();
    let id = |n: u128| Some(Uuid::from_u128(n));
    assert_eq!(seqs, [(1, id(1)), (2, id(2)), (3, id(3))]);
    log.close()?;
    let db = Database::open(&path)?;
    let txn = db.begin_read()?;
    let layout = txn
        .open_table(META)?
        .get(LAYOUT_VERSION_KEY)?
        .map(|v| v.value());
    assert_eq!(layout, Some(3));
    Ok(())
}

#[tokio::test]
async fn a_large_append_is_stored_in_groups_of_1024_and_reads_from_anywhere() -> TestResult {
    // A read decodes each group it touches whole: groups are bounded so that a burst appended
    // in one commit does not make every later read decode all of it.
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let log = open(&path)?;
    let burst: Vec<Envelope> = (1..=2_500).map(|n| tick(n, at(1_000))).collect();
    let appended = log.append(burst, AppendTime::AsGiven).await?;
    assert_eq!(appended.len(), 2_500);
    for (from, max) in [
        (1, 3_000),
        (1_000, 100),
        (1_024, 2),
        (2_047, 1_000),
        (2_500, 5),
    ] {
        let read: Vec<u64> = log.read(from, max).await?.iter().map(|s| s.seq).collect();
        let wanted: Vec<u64> = (from..=2_500).take(max).collect();
        assert_eq!(read, wanted, "reading {max} from {from}");
    }
    log.close()?;
    let db = Database::open(&path)?;
    let txn = db.begin_read()?;
    let groups = txn.open_table(INPUT_GROUPS)?;
    let keys: Vec<u64> = (groups.iter()?)
        .map(|entry| entry.map(|(key, _)| key.value()))
        .collect::<Result<_, _>>()?;
    assert_eq!(keys, [1_024, 2_048, 2_500], "full groups, then the rest");
    Ok(())
}

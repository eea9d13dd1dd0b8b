//! A full disk under the redb log, in process, through the fault-injecting backend
//! (`redb_log::faults`, `FaultPlan::fill_disk`): a write that finds no room is refused whole
//! with `LogError::StorageFull` naming the log's directory, reads go on while the disk stays
//! full, and once space is freed the same handle writes again — no reopen by the caller, nothing
//! acknowledged lost, nothing refused half-written.

use std::collections::BTreeSet;
use std::error::Error;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use flotilla_core::{Envelope, Input};
use flotilla_eventstore::redb_log::faults::FaultPlan;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, DecisionBatch, EventLog, LogError, LogReader};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Most appends made to fill the file's free pages before one finds no room.
const APPENDS_TO_FILL_MAX: u128 = 5_000;
/// Bytes of each filling event's payload.
const PAYLOAD_BYTES: usize = 16 * 1024;
/// How long the log may take to write again once space is freed.
const RESUME_WITHIN: Duration = Duration::from_secs(10);

fn options() -> RedbOptions {
    RedbOptions {
        space_probe_interval: Duration::from_millis(50),
        ..RedbOptions::default()
    }
}

/// An apply of a ConfigMap carrying `PAYLOAD_BYTES`, so the file fills in few appends.
fn event(n: u128) -> Envelope {
    let seconds = i64::try_from(n).unwrap_or(0);
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + seconds, 0).unwrap_or_default();
    let data = "x".repeat(PAYLOAD_BYTES);
    let manifest = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{n}","namespace":"default"}},"data":{{"d":"{data}"}}}}"#
    );
    Envelope::new(Uuid::from_u128(n), time, "test", Input::Apply { manifest })
}

fn open_faulty(plan: &FaultPlan, path: &Path) -> Result<RedbLog, LogError> {
    let plan = plan.clone();
    RedbLog::open_creating_with(path, move |at: &Path| plan.backend(at), options())
}

/// Every input id of the log, in sequence order, checking the sequences are dense from 1.
async fn logged_ids<L: LogReader>(log: &L) -> Result<Vec<Uuid>, Box<dyn Error>> {
    let mut ids = Vec::new();
    for _ in 0..1_000 {
        let page = log.read(ids.len() as u64 + 1, 1_000).await?;
        if page.is_empty() {
            return Ok(ids);
        }
        for stored in page {
            assert_eq!(stored.seq, ids.len() as u64 + 1, "a gap in the log");
            let event = stored.event().ok_or("an input that does not decode")?;
            ids.push(event.id);
        }
    }
    Err("more than a million inputs".into())
}

/// Appends one event after another until one finds no room; the acknowledged ids and the
/// refusal.
async fn fill(log: &RedbLog, acked: &mut Vec<Uuid>) -> Result<LogError, Box<dyn Error>> {
    for n in 1..=APPENDS_TO_FILL_MAX {
        let event = event(1_000 + n);
        let id = event.id;
        match log.append(vec![event], AppendTime::AsGiven).await {
            Ok(_) => acked.push(id),
            Err(error) => return Ok(error),
        }
    }
    Err("the disk never filled up".into())
}

/// Appends `n` until the log takes it, within [`RESUME_WITHIN`].
async fn append_when_room(log: &RedbLog, n: u128) -> Result<u64, Box<dyn Error>> {
    let began = Instant::now();
    loop {
        match log.append(vec![event(n)], AppendTime::AsGiven).await {
            Ok(appended) => return Ok(appended[0].seq),
            Err(LogError::StorageFull { .. }) if began.elapsed() < RESUME_WITHIN => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => return Err(error.into()),
        }
    }
}

#[tokio::test]
async fn a_full_disk_refuses_writes_whole_keeps_reads_and_resumes_without_a_reopen() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let plan = FaultPlan::default();
    let log = open_faulty(&plan, &path)?;
    let mut acked = Vec::new();
    for n in 1..=3 {
        log.append(vec![event(n)], AppendTime::AsGiven).await?;
        acked.push(event(n).id);
    }

    plan.fill_disk();
    let refused = fill(&log, &mut acked).await?;
    let LogError::StorageFull { dir: named, .. } = &refused else {
        return Err(format!("not a full storage: {refused}").into());
    };
    assert_eq!(named, dir.path(), "{refused}");
    assert!(refused.to_string().contains("free space in"), "{refused}");
    assert!(log.storage_full());
    let last_seq = log.last_seq().await?;
    assert_eq!(last_seq, acked.len() as u64);

    // While full: a batch is refused whole at once, decisions too, and reads go on.
    let batch = vec![event(90_001), event(90_002), event(90_003)];
    let refused = log.append(batch, AppendTime::AsGiven).await;
    assert!(
        matches!(refused, Err(LogError::StorageFull { .. })),
        "{refused:?}"
    );
    let decisions = DecisionBatch {
        version: flotilla_core::wire::DECISION_VERSION,
        first_input_seq: 1,
        last_input_seq: 1,
        decisions: Vec::new(),
    };
    // A small record may still fit in the file's own pages (as on a real file system with no
    // free blocks left); if it does not, it is refused as full, never anything else.
    let while_full = log.append_decisions(&decisions).await;
    assert!(
        matches!(while_full, Ok(()) | Err(LogError::StorageFull { .. })),
        "{while_full:?}"
    );
    assert_eq!(logged_ids(&log).await?, acked, "reads while full");

    plan.free_disk();
    let seq = append_when_room(&log, 90_004).await?;
    acked.push(event(90_004).id);
    assert_eq!(seq, last_seq + 1, "the refused writes left no gap");
    assert!(!log.storage_full());
    if while_full.is_err() {
        log.append_decisions(&decisions).await?;
    }
    assert_eq!(logged_ids(&log).await?, acked);
    log.close()?;

    // Reopened from the file alone: everything acknowledged once, nothing refused.
    let reopened = RedbLog::open(&path, options())?;
    let ids = logged_ids(&reopened).await?;
    assert_eq!(ids, acked);
    let unique: BTreeSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "an input stored twice");
    for refused in [90_001, 90_002, 90_003] {
        assert!(
            !unique.contains(&event(refused).id),
            "a refused event was stored"
        );
    }
    assert_eq!(reopened.last_decided_seq().await?, 1);
    Ok(())
}

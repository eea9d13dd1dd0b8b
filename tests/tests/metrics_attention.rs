//! The series an operator alerts on, against a served hub on a test clock: the build and the
//! writer role, the process's own, the checkpoint series from the start (and after a restart),
//! request counts by route template, a run waiting on its approval and how long the approval
//! has waited, a failed work report counted and its placement failing until it recovers, the
//! oldest heartbeat per health, and a placement on clusters gone unhealthy — whose `Available`
//! stays what the members last reported.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_tests::scrape::{Scrape, scrape, value};
use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};
use serde_json::{Value, json};

const START: &str = "2026-03-01T00:00:00Z";

/// A placement with the default rolling strategy beside the staged one, whose own conditions
/// follow its clusters' reports.
const PLAIN: &str = "apiVersion: v1
kind: Namespace
metadata: {name: plain-namespace}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: plain-placement}
spec:
  resourceSelectors:
    - {group: \"\", kind: Namespace, name: plain-namespace, version: v1}
  policy: {placementType: PickAll}
";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// The series of a family whose labels contain `part`.
fn matching<'s>(scrape: &'s Scrape, name: &str, part: &str) -> Vec<(&'s String, f64)> {
    let prefix = format!("{name}{{");
    scrape
        .iter()
        .filter(|(series, _)| series.starts_with(&prefix) && series.contains(part))
        .map(|(series, value)| (series, *value))
        .collect()
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<(), String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

fn heartbeats() -> Value {
    let beats = ["member1", "member2", "member3"]
        .map(|cluster| json!({"schemaVersion": 1, "type": "heartbeat", "cluster": cluster}));
    Value::Array(beats.to_vec())
}

fn report(cluster: &str, placement: &str, fine: bool) -> Value {
    json!({"schemaVersion": 1, "type": "report", "cluster": cluster, "placement": placement,
        "resourceIndex": 0, "applied": fine, "available": fine})
}

/// Scrapes until `ready` holds (at most 100 scrapes, 10 s).
fn scrape_until(hub: &HubProcess, ready: impl Fn(&Scrape) -> bool) -> Result<Scrape, String> {
    let mut last = Scrape::new();
    for _ in 0..100 {
        last = scrape(hub)?;
        if ready(&last) {
            return Ok(last);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("the scrape never got there: {last:#?}"))
}

fn start(data: &Path) -> Result<HubProcess, String> {
    HubProcess::start(&binary(), data, &["--test-clock", START])
}

#[test]
fn the_series_an_operator_alerts_on_follow_the_fleet() -> Result<(), String> {
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start(data.path())?;
    from_the_start(&hub)?;
    requests_by_route(&hub)?;

    ok(&hub, &["apply", "-f", &fixture("staged-fleet.yaml")])?;
    hub.post_events(&heartbeats())?;
    let plain = data.path().join("plain.yaml");
    std::fs::write(&plain, PLAIN).map_err(|e| e.to_string())?;
    ok(&hub, &["apply", "-f", &plain.display().to_string()])?;
    ok(&hub, &["apply", "-f", &fixture("staged-rollout.yaml")])?;
    ok(&hub, &["apply", "-f", &fixture("staged-run.yaml")])?;
    ok(&hub, &["run", "start", "example-run"])?;
    for cluster in ["member1", "member2", "member3"] {
        hub.post_events(&report(cluster, "plain-placement", true))?;
    }
    hub.post_events(&report("member1", "example-placement", true))?;

    waiting_on_approval(&hub)?;
    failed_report(&hub)?;
    ok(&hub, &["approve", "example-run-after-staging"])?;
    let approved = scrape(&hub)?;
    assert!(
        matching(&approved, "flotilla_approval_pending_seconds", "").is_empty(),
        "an approved request has no series: {approved:#?}"
    );
    let run = hub.cli(&["get", "csur", "example-run", "-o", "json"])?;
    assert!(
        matching(&approved, "flotilla_update_run_info", "Waiting").is_empty(),
        "the run goes on: {}",
        stdout(&run)
    );
    unhealthy_clusters(&hub)?;

    hub.stop()?;
    let restarted = start(data.path())?;
    let again = scrape(&restarted)?;
    assert_eq!(value(&again, "flotilla_checkpoint_bytes")?, 0.0);
    assert_eq!(value(&again, "flotilla_checkpoint_seconds_count")?, 0.0);
    restarted.stop()
}

/// What a hub shows before anything happened.
fn from_the_start(hub: &HubProcess) -> Result<(), String> {
    let empty = scrape(hub)?;
    assert_eq!(value(&empty, "flotilla_checkpoint_bytes")?, 0.0);
    assert_eq!(value(&empty, "flotilla_checkpoint_seconds_count")?, 0.0);
    assert_eq!(
        value(&empty, "flotilla_checkpoint_pause_seconds_count")?,
        0.0
    );
    assert_eq!(value(&empty, "flotilla_append_errors_total")?, 0.0);
    for condition in ["Applied", "Available"] {
        let series = format!("flotilla_work_reports_failed_total{{condition=\"{condition}\"}}");
        assert_eq!(value(&empty, &series)?, 0.0);
    }
    let version = format!("version=\"{}\"", env!("CARGO_PKG_VERSION"));
    let build = matching(&empty, "flotilla_build_info", &version);
    assert_eq!(build.len(), 1, "{empty:#?}");
    assert!(build.iter().all(|(_, v)| *v == 1.0));
    assert_eq!(value(&empty, "flotilla_writer{role=\"writer\"}")?, 1.0);
    assert_eq!(value(&empty, "flotilla_writer{role=\"standby\"}")?, 0.0);
    assert_eq!(value(&empty, "flotilla_writer{role=\"follower\"}")?, 0.0);
    assert!(value(&empty, "process_resident_memory_bytes")? > 0.0);
    assert!(value(&empty, "process_open_fds")? > 0.0);
    assert!(value(&empty, "process_start_time_seconds")? > 1.0e9);
    assert!(value(&empty, "process_cpu_seconds_total")? >= 0.0);
    assert!(matching(&empty, "flotilla_update_run_info", "").is_empty());
    assert_eq!(
        value(&empty, "flotilla_heartbeat_age_seconds{health=\"Healthy\"}")?,
        0.0
    );
    Ok(())
}

/// Requests are counted under their route's template, never their path.
fn requests_by_route(hub: &HubProcess) -> Result<(), String> {
    hub.get_text("/v1/objects/ClusterResourcePlacement")?;
    let missing = hub.get_text("/no/such/path/3f9a");
    assert!(missing.is_err(), "404");
    let seen = scrape(hub)?;
    let objects =
        "flotilla_http_requests_total{method=\"GET\",route=\"/v1/objects/{kind}\",code=\"200\"}";
    assert_eq!(value(&seen, objects)?, 1.0);
    let unmatched = "flotilla_http_requests_total{method=\"GET\",route=\"unmatched\",code=\"404\"}";
    assert_eq!(value(&seen, unmatched)?, 1.0);
    let scrapes = "flotilla_http_requests_total{method=\"GET\",route=\"/metrics\",code=\"200\"}";
    assert!(value(&seen, scrapes)? >= 1.0);
    assert!(
        matching(&seen, "flotilla_http_requests_total", "3f9a").is_empty(),
        "no raw path: {seen:#?}"
    );
    let timed =
        "flotilla_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/objects/{kind}\"}";
    assert_eq!(value(&seen, timed)?, 1.0);
    Ok(())
}

/// The staging stage is done and its after-stage approval waits; the clock moves 120 s.
fn waiting_on_approval(hub: &HubProcess) -> Result<(), String> {
    let run = "flotilla_update_run_info{run=\"example-run\",placement=\"example-placement\",state=\"Waiting\"}";
    let pending =
        "flotilla_approval_pending_seconds{run=\"example-run\",stage=\"staging\",task=\"after\"}";
    let waiting = scrape(hub)?;
    assert_eq!(value(&waiting, run)?, 1.0);
    assert_eq!(value(&waiting, pending)?, 0.0);
    hub.set_clock(START, 120)?;
    let later = scrape(hub)?;
    assert_eq!(value(&later, pending)?, 120.0);
    assert_eq!(
        value(&later, "flotilla_heartbeat_age_seconds{health=\"Healthy\"}")?,
        120.0
    );
    assert_eq!(
        value(
            &later,
            "flotilla_heartbeat_age_seconds{health=\"Unhealthy\"}"
        )?,
        0.0
    );
    Ok(())
}

/// A report that failed to apply is counted, and its placement fails until the next report
/// says it applied.
fn failed_report(hub: &HubProcess) -> Result<(), String> {
    hub.post_events(&report("member2", "plain-placement", false))?;
    let failed = scrape(hub)?;
    let applied = "flotilla_work_reports_failed_total{condition=\"Applied\"}";
    assert_eq!(value(&failed, applied)?, 1.0);
    let failing = matching(
        &failed,
        "flotilla_placement_failing",
        "placement=\"plain-placement\",condition=\"Applied\"",
    );
    assert_eq!(failing.len(), 1, "{failed:#?}");
    hub.post_events(&report("member2", "plain-placement", true))?;
    let recovered = scrape(hub)?;
    assert_eq!(
        value(&recovered, applied)?,
        1.0,
        "a good report is not counted"
    );
    let failing = matching(&recovered, "flotilla_placement_failing", "plain-placement");
    assert!(failing.is_empty(), "the series is gone: {failing:?}");
    Ok(())
}

/// Past five heartbeat periods every member is unhealthy: the placement's clusters show it,
/// while its `Available` stays what they last reported.
fn unhealthy_clusters(hub: &HubProcess) -> Result<(), String> {
    hub.set_clock(START, 400)?;
    let unhealthy = scrape_until(hub, |s| {
        s.get("flotilla_clusters{health=\"Unhealthy\"}") == Some(&3.0)
    })?;
    assert_eq!(
        value(
            &unhealthy,
            "flotilla_heartbeat_age_seconds{health=\"Unhealthy\"}"
        )?,
        400.0
    );
    assert_eq!(
        value(
            &unhealthy,
            "flotilla_heartbeat_age_seconds{health=\"Healthy\"}"
        )?,
        0.0
    );
    let on_unhealthy = "flotilla_placement_clusters_unhealthy{placement=\"plain-placement\"}";
    assert_eq!(value(&unhealthy, on_unhealthy)?, 3.0);
    let available = "flotilla_placements{condition=\"Available\",status=\"True\"}";
    assert_eq!(value(&unhealthy, available)?, 1.0, "the last reports");
    Ok(())
}

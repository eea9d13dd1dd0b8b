//! Issue 10's fold-side defects, each as it was reproduced on release 19da42c: a refused input
//! with a forged time moved the fold's clock and timed out the fleet; an old work report
//! overwrote a newer one; pruned snapshots left bindings with no Work; switching a placement's
//! strategy away from `External` left a stale update run.

use chrono::{DateTime, TimeZone, Utc};
use flotilla_core::{Decision, Envelope, Heartbeat, Input, RejectCode, State, WorkReport, step};
use flotilla_tests::scenario_files::{run_scenario_text, scenario_path};
use serde_json::Value;
use uuid::Uuid;

type TestResult = Result<(), String>;

fn at(hour: u32, minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, hour, minute, 0)
        .single()
        .unwrap_or_default()
}

fn event(n: u128, time: DateTime<Utc>, payload: Input) -> Envelope {
    Envelope::new(Uuid::from_u128(n), time, "test", payload)
}

fn member(name: &str) -> Input {
    Input::Apply {
        manifest: format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}"}},"spec":{{"heartbeatPeriodSeconds":60}}}}"#
        ),
    }
}

fn heartbeat(cluster: &str) -> Input {
    Input::Heartbeat(Heartbeat {
        cluster: cluster.into(),
        ..Heartbeat::default()
    })
}

fn timeouts(decisions: &[Decision]) -> usize {
    decisions
        .iter()
        .filter(|d| matches!(d, Decision::ClusterHealthChanged { healthy: false, .. }))
        .count()
}

#[test]
fn a_refused_input_with_a_forged_time_moves_no_clock() {
    let mut state = State::default();
    let inputs = [
        member("member-1"),
        member("member-2"),
        heartbeat("member-1"),
        heartbeat("member-2"),
    ];
    for (n, input) in inputs.into_iter().enumerate() {
        step(&mut state, &event(n as u128 + 1, at(23, 0), input));
    }
    let forged = Utc
        .with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default();
    let answer = step(&mut state, &event(10, forged, heartbeat("stranger")));
    assert!(
        matches!(
            answer.as_slice(),
            [Decision::Rejected {
                code: RejectCode::UnknownCluster,
                ..
            }]
        ),
        "{answer:?}"
    );
    assert_eq!(
        state.now(),
        Some(at(23, 0)),
        "the refused input moved the clock"
    );
    // The fleet times out when its own time says so: 5 missed periods after 23:00.
    let early = step(&mut state, &event(11, at(23, 4), Input::Tick));
    assert_eq!(timeouts(&early), 0, "{early:?}");
    let due = step(&mut state, &event(12, at(23, 5), Input::Tick));
    assert_eq!(timeouts(&due), 2, "{due:?}");
}

/// KubeFleet's safe-rollout example 1 (a bad image stalls the rollout at one cluster) followed by
/// `edits` more changes of the selected Deployment.
fn stalled_then_edited(edits: usize) -> Result<String, String> {
    let path = scenario_path("rollout/seed-001-example-1.yaml");
    let mut text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    for edit in 0..edits {
        text.push_str(&format!(
            "  - apply: |\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata: {{name: web, namespace: test-ns}}\n      spec:\n        replicas: 2\n        selector: {{matchLabels: {{app: web}}}}\n        template:\n          metadata: {{labels: {{app: web}}}}\n          spec: {{containers: [{{name: web, image: \"nginx:edit-{edit}\"}}]}}\n"
        ));
    }
    Ok(text)
}

fn objects_of<'a>(output: &'a Value, kind: &str) -> Vec<&'a Value> {
    output["objects"]
        .as_array()
        .map(|objects| objects.iter().filter(|o| o["kind"] == kind).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn snapshots_in_use_are_never_pruned() -> TestResult {
    let text = stalled_then_edited(12)?;
    let run = run_scenario_text("stalled-then-edited", &text, None).await?;
    let snapshots: Vec<&str> = objects_of(&run.output, "ClusterResourceSnapshot")
        .iter()
        .filter_map(|s| s["metadata"]["name"].as_str())
        .collect();
    let bindings = objects_of(&run.output, "ClusterResourceBinding");
    assert_eq!(bindings.len(), 3, "three clusters are picked");
    for binding in &bindings {
        let named = binding["spec"]["resourceSnapshotName"]
            .as_str()
            .ok_or_else(|| format!("binding without a snapshot: {binding}"))?;
        assert!(
            snapshots.contains(&named),
            "{named} was pruned; kept: {snapshots:?}"
        );
    }
    let works = objects_of(&run.output, "Work");
    assert_eq!(
        works.len(),
        3,
        "every picked cluster keeps its Work: {works:?}"
    );
    // The limit (10) still bounds the history: the newest 10 plus the ones in use.
    assert!(snapshots.len() <= 10 + 2, "{snapshots:?}");
    Ok(())
}

fn report(cluster: &str, resource_index: u64, available: bool) -> Input {
    Input::WorkReport(WorkReport {
        cluster: cluster.into(),
        placement: "crp-1".into(),
        namespace: None,
        resource_index,
        applied: Some(true),
        available: Some(available),
        trackable: true,
        message: String::new(),
        failed_manifests: Vec::new(),
        differences: Default::default(),
    })
}

#[tokio::test]
async fn a_report_about_an_index_the_binding_left_is_refused() -> TestResult {
    // After the stalled rollout cluster-2 carries index 1; the others still carry index 0.
    let text = stalled_then_edited(0)?;
    let run = run_scenario_text("stalled", &text, None).await?;
    let mut state = run.state;
    let late = Utc
        .with_ymd_and_hms(2025, 3, 13, 0, 0, 0)
        .single()
        .unwrap_or_default();
    let stale = step(&mut state, &event(900, late, report("cluster-2", 0, true)));
    assert!(
        matches!(
            stale.as_slice(),
            [Decision::Rejected { code, .. }] if code.as_str() == "StaleReport"
        ),
        "{stale:?}"
    );
    let current = step(&mut state, &event(901, late, report("cluster-2", 1, false)));
    assert!(
        !current.iter().any(Decision::is_rejection),
        "a report on the current target counts: {current:?}"
    );
    Ok(())
}

#[tokio::test]
async fn switching_a_placement_away_from_external_fails_its_unfinished_run() -> TestResult {
    let path = scenario_path("staged/seed-002-example-run.yaml");
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    // Stop right after the run starts and member1 reports, before the staging approval.
    let cut = text
        .find("  - approve:")
        .ok_or("the scenario has no approve step")?;
    let mut text = text[..cut].to_owned();
    text.push_str(
        "  - apply: |\n      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ClusterResourcePlacement\n      metadata: {name: example-placement}\n      spec:\n        resourceSelectors:\n          - {group: \"\", kind: Namespace, name: test-namespace, version: v1}\n        policy: {placementType: PickAll}\n        strategy: {type: Partitioned}\n",
    );
    let run = run_scenario_text("strategy-switch", &text, None).await?;
    let runs = objects_of(&run.output, "ClusterStagedUpdateRun");
    let conditions = runs
        .first()
        .and_then(|r| r["status"]["conditions"].as_array())
        .ok_or("no run status")?;
    let succeeded = conditions
        .iter()
        .find(|c| c["type"] == "Succeeded")
        .ok_or_else(|| format!("the run did not finish: {conditions:?}"))?;
    assert_eq!(succeeded["status"], "False");
    assert_eq!(succeeded["reason"], "UpdateRunFailed");
    let message = succeeded["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("External to Partitioned"),
        "the reason names the change: {message}"
    );
    Ok(())
}

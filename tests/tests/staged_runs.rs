//! KubeFleet's staged update run, start to finish, as a scenario: three stages with
//! approvals and timed waits, time advancing, members reporting; the run's `describe` status
//! matches KubeFleet's `kubectl describe csur` samples field for field — the completed one with
//! its times, the in-progress one (staging waiting for its approval) times aside.

use std::path::Path;

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use flotilla_tests::scenario_files::run_scenario;

type TestResult = Result<(), String>;

/// Runs the first `steps` steps of a scenario under `tests/scenarios/staged` and returns the
/// folded state and the scenario's JSON output.
async fn run(name: &str, steps: Option<usize>) -> Result<(State, serde_json::Value), String> {
    let run = run_scenario(&format!("staged/{name}"), steps).await?;
    Ok((run.state, run.output))
}

fn run_key() -> ObjectKey {
    ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        "example-run",
    )
}

/// The `Status:` section of `describe`, one `Key: value` per line without indentation or
/// alignment — the form the seed prints its samples in.
fn status_lines(state: &State) -> Result<Vec<String>, String> {
    let text = flotilla_projections::describe(state, &run_key()).ok_or("no such run")?;
    let lines: Vec<String> = text
        .lines()
        .skip_while(|line| *line != "Status:")
        .map(normalize)
        .collect();
    Ok(lines)
}

fn normalize(line: &str) -> String {
    let line = line.trim();
    match line.split_once(':') {
        Some((key, value))
            if !key.contains(' ') || key.chars().all(|c| c.is_alphanumeric() || c == ' ') =>
        {
            let value = value.trim();
            if value.is_empty() {
                format!("{key}:")
            } else {
                format!("{key}: {value}")
            }
        }
        _ => line.to_owned(),
    }
}

fn fixture(name: &str) -> Result<Vec<String>, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    Ok(text.lines().map(normalize).collect())
}

#[tokio::test]
async fn the_seeds_three_stage_run_completes_exactly_as_its_describe_sample() -> TestResult {
    let (state, output) = run("seed-002-example-run.yaml", None).await?;
    assert_eq!(output["rejections"], serde_json::json!([]));
    let expected = fixture("seed-002-csur-completed.txt")?;
    let actual = status_lines(&state)?;
    for (i, (want, got)) in expected.iter().zip(&actual).enumerate() {
        assert_eq!(
            want,
            got,
            "line {i} of the status differs\nours:\n{}",
            actual.join("\n")
        );
    }
    assert_eq!(expected.len(), actual.len(), "ours:\n{}", actual.join("\n"));
    assert_eq!(actual.len(), 214, "the whole sample, line for line");
    Ok(())
}

/// Replaces RFC 3339 timestamps with `<time>`.
fn without_times(line: &str) -> String {
    line.split(' ')
        .map(|word| {
            let looks_like_time =
                word.len() == 20 && word.ends_with('Z') && word.as_bytes().get(10) == Some(&b'T');
            if looks_like_time { "<time>" } else { word }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test]
async fn staging_waiting_for_its_approval_reads_like_the_in_progress_sample() -> TestResult {
    // Up to 23:22:54: member1 succeeded, staging's wait elapsed, its approval not given.
    let (state, _) = run("seed-002-example-run.yaml", Some(11)).await?;
    let actual: Vec<String> = status_lines(&state)?
        .iter()
        .map(|l| without_times(l))
        .collect();
    // The sample elides parts with `...` and starts with the run's name; every other line must
    // appear, in order.
    let expected: Vec<String> = fixture("seed-002-csur-in-progress.txt")?
        .iter()
        .filter(|l| *l != "...")
        .filter(|l| !l.starts_with("Name:"))
        .map(|l| without_times(l.split(" #").next().unwrap_or(l).trim_end()))
        .collect();
    let mut rest = actual.iter();
    for want in &expected {
        assert!(
            rest.any(|got| got == want),
            "{want:?} not found in order\nours:\n{}",
            actual.join("\n")
        );
    }
    let progressing = state
        .update_runs()
        .get(&run_key())
        .and_then(|r| r.status.stages.first())
        .and_then(|s| s.progressing.as_ref())
        .map(|c| c.reason.to_string());
    assert_eq!(progressing.as_deref(), Some("StageUpdatingWaiting"));
    Ok(())
}

#[tokio::test]
async fn approval_requests_carry_the_seeds_labels() -> TestResult {
    let (_, output) = run("seed-002-example-run.yaml", None).await?;
    let requests: Vec<&serde_json::Value> = output["objects"]
        .as_array()
        .ok_or("objects")?
        .iter()
        .filter(|o| o["kind"] == "ClusterApprovalRequest")
        .collect();
    assert!(!requests.is_empty(), "the run asked for approvals");
    let request = requests
        .iter()
        .find(|r| r["metadata"]["name"] == "example-run-after-canary")
        .ok_or("example-run-after-canary")?;
    // KubeFleet's staged-update sample: `kubernetes-fleet.io/targetupdaterun` is all lower case,
    // the other two are camel case. flotilla adds one more, `taskType`, which the sample does
    // not show.
    let mut labels = request["metadata"]["labels"]
        .as_object()
        .cloned()
        .ok_or("labels")?;
    assert!(labels.remove("kubernetes-fleet.io/taskType").is_some());
    assert_eq!(
        serde_json::Value::Object(labels),
        serde_json::json!({
            "kubernetes-fleet.io/targetupdaterun": "example-run",
            "kubernetes-fleet.io/targetUpdatingStage": "canary",
            "kubernetes-fleet.io/isLatestUpdateRunApproval": "true",
        })
    );
    assert_eq!(request["spec"]["parentStageRollout"], "example-run");
    assert_eq!(request["spec"]["targetStage"], "canary");
    Ok(())
}

#[tokio::test]
async fn the_clusters_rollout_started_condition_names_the_run() -> TestResult {
    let (_, output) = run("seed-002-example-run.yaml", None).await?;
    let placement = output["objects"]
        .as_array()
        .ok_or("objects")?
        .iter()
        .find(|o| {
            o["kind"] == "ClusterResourcePlacement" && o["metadata"]["name"] == "example-placement"
        })
        .ok_or("example-placement")?;
    let statuses = placement["status"]["placementStatuses"]
        .as_array()
        .ok_or("placementStatuses")?;
    assert_eq!(statuses.len(), 2);
    for status in statuses {
        let started = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "RolloutStarted")
            .ok_or("RolloutStarted")?;
        assert_eq!(started["status"], "True");
        assert_eq!(started["reason"], "RolloutStarted");
        // KubeFleet's staged-update sample, with this run's snapshot index.
        assert_eq!(
            started["message"],
            "Detected the new changes on the resources and started the rollout process, \
             resourceSnapshotIndex: 0, clusterStagedUpdateRun: example-run"
        );
    }
    Ok(())
}

//! Issue 17's Analysis stage task, as scenario files (`tests/scenarios/safety/analysis*.yaml`):
//! the `analysis` steps stand for the results the analysis adapter appends; the gate is decided
//! in the fold — passing after `count` measurements within `failureLimit`, failing the run with
//! `AnalysisFailed` after one failure too many. `tests/tests/analysis_prometheus.rs` runs the
//! same gate against a real Prometheus.

use flotilla_tests::scenario_files::{binding_indexes, run_scenario};
use serde_json::Value;

type TestResult = Result<(), String>;

async fn run(name: &str, steps: Option<usize>) -> Result<Value, String> {
    Ok(run_scenario(&format!("safety/{name}"), steps).await?.output)
}

fn the_run(output: &Value) -> Option<&Value> {
    output["objects"]
        .as_array()?
        .iter()
        .find(|o| o["kind"] == "ClusterStagedUpdateRun")
}

fn stage<'a>(output: &'a Value, name: &str) -> Option<&'a Value> {
    the_run(output)?["status"]["stagesStatus"]
        .as_array()?
        .iter()
        .find(|s| s["stageName"] == name)
}

/// `(status, reason, message)` of a condition of this type in `conditions`.
fn condition_in(conditions: &Value, kind: &str) -> Option<(String, String, String)> {
    let condition = conditions.as_array()?.iter().find(|c| c["type"] == kind)?;
    let text = |field: &str| condition[field].as_str().unwrap_or_default().to_owned();
    Some((text("status"), text("reason"), text("message")))
}

fn run_condition(output: &Value, kind: &str) -> Option<(String, String, String)> {
    condition_in(&the_run(output)?["status"]["conditions"], kind)
}

/// The status of the stage's task at `list[index]` (`afterStageTaskStatus`, …).
fn task<'a>(output: &'a Value, stage_name: &str, list: &str, index: usize) -> Option<&'a Value> {
    stage(output, stage_name)?[list].get(index)
}

fn counts(task: &Value) -> (u64, u64, u64) {
    let n = |field: &str| task["analysis"][field].as_u64().unwrap_or(u64::MAX);
    (n("successful"), n("failed"), n("error"))
}

#[tokio::test]
async fn an_analysis_gate_passes_after_count_measurements_within_the_failure_limit() -> TestResult {
    let waiting = run("analysis.yaml", Some(8)).await?;
    let canary = task(&waiting, "canary", "afterStageTaskStatus", 0).ok_or("no canary task")?;
    assert_eq!(canary["type"], "Analysis");
    let started = condition_in(&canary["conditions"], "AnalysisStarted");
    assert_eq!(
        started.map(|c| (c.0, c.1)),
        Some(("True".into(), "AfterStageTaskAnalysisStarted".into()))
    );
    assert_eq!(counts(canary), (0, 0, 0));

    let two = run("analysis.yaml", Some(12)).await?;
    let canary = task(&two, "canary", "afterStageTaskStatus", 0).ok_or("no canary task")?;
    assert_eq!(
        counts(canary),
        (1, 1, 0),
        "one successful, one failed (tolerated)"
    );
    assert_eq!(canary["analysis"]["lastValue"], "0.5");
    assert!(condition_in(&canary["conditions"], "AnalysisSucceeded").is_none());
    assert!(stage(&two, "canary").is_some_and(|s| {
        s["conditions"]
            .as_array()
            .is_some_and(|cs| cs.iter().all(|c| c["type"] != "Succeeded"))
    }));

    let passed = run("analysis.yaml", Some(13)).await?;
    let canary = task(&passed, "canary", "afterStageTaskStatus", 0).ok_or("no canary task")?;
    let (status, reason, message) =
        condition_in(&canary["conditions"], "AnalysisSucceeded").ok_or("not decided")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "AfterStageTaskAnalysisSucceeded")
    );
    assert!(
        message.contains("2 of 3 measurements successful"),
        "{message}"
    );
    let prod_gate = task(&passed, "prod", "beforeStageTaskStatus", 0).ok_or("no prod task")?;
    assert!(condition_in(&prod_gate["conditions"], "AnalysisStarted").is_some());

    let done = run("analysis.yaml", None).await?;
    let (status, reason, _) = run_condition(&done, "Succeeded").ok_or("run not finished")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "UpdateRunSucceeded")
    );
    Ok(())
}

#[tokio::test]
async fn a_result_for_a_gate_not_reached_is_rejected_and_changes_nothing() -> TestResult {
    let output = run("analysis.yaml", Some(10)).await?;
    let prod_gate = task(&output, "prod", "beforeStageTaskStatus", 0).ok_or("no prod task")?;
    assert_eq!(counts(prod_gate), (0, 0, 0));
    assert!(prod_gate["conditions"].is_null() || prod_gate["conditions"] == Value::Array(vec![]));
    Ok(())
}

#[tokio::test]
async fn one_failure_over_the_limit_fails_the_run_with_analysis_failed() -> TestResult {
    let tolerated = run("analysis-fails.yaml", Some(12)).await?;
    let canary = task(&tolerated, "canary", "afterStageTaskStatus", 0).ok_or("no task")?;
    assert_eq!(
        counts(canary),
        (0, 1, 1),
        "one failed, one error; the garbage rejected"
    );
    assert!(run_condition(&tolerated, "Succeeded").is_none());

    let failed = run("analysis-fails.yaml", None).await?;
    let (status, reason, message) = run_condition(&failed, "Succeeded").ok_or("not failed")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "AnalysisFailed")
    );
    for part in [
        "canary",
        "afterStageTasks[0]",
        "2 of 2 measurements failed",
        "0.7",
    ] {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
    let canary = task(&failed, "canary", "afterStageTaskStatus", 0).ok_or("no task")?;
    let decided = condition_in(&canary["conditions"], "AnalysisSucceeded");
    assert_eq!(
        decided.map(|c| (c.0, c.1)),
        Some(("False".into(), "AfterStageTaskAnalysisFailed".into()))
    );
    let prod = stage(&failed, "prod").ok_or("no prod stage")?;
    assert!(prod["startTime"].is_null(), "prod never starts: {prod}");
    Ok(())
}

#[tokio::test]
async fn a_failed_gate_with_on_failure_rollback_moves_the_run_back() -> TestResult {
    let before = run("analysis-rollback.yaml", Some(14)).await?;
    assert_eq!(
        binding_indexes(&before),
        ["member1@1", "member2@0", "member3@0", "member4@0"]
    );
    let tripped = run("analysis-rollback.yaml", Some(15)).await?;
    let (status, reason, message) =
        run_condition(&tripped, "Progressing").ok_or("no Progressing")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "AnalysisFailed")
    );
    assert!(message.contains("rolling back"), "{message}");
    assert!(message.contains("beforeStageTasks[0]"), "{message}");
    assert_eq!(
        binding_indexes(&tripped),
        ["member1@0", "member2@0", "member3@0", "member4@0"],
        "member1 goes back within prod's maxConcurrency"
    );
    let done = run("analysis-rollback.yaml", None).await?;
    let (status, reason, _) = run_condition(&done, "Succeeded").ok_or("not finished")?;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "RolledBack"));
    Ok(())
}

//! Issue 17's safety fields in a stage of a staged update strategy, as scenario files
//! (`tests/scenarios/safety/staged-*.yaml`): a failed cluster tolerated by `maxFailures`, the
//! next one failing the run with `FailureThresholdExceeded`, and `progressDeadlineSeconds` not
//! yet and then exceeded (`ProgressDeadlineExceeded`) — on the run's `Succeeded` condition;
//! `onFailure: Rollback` moving every cluster the run updated, in both stages, back within the
//! tripped stage's `maxConcurrency` (`RolledBack`), and a rollback that fails (`RollbackFailed`).

use flotilla_core::model::ObjectKey;
use flotilla_tests::scenario_files::{binding_indexes, run_scenario};
use serde_json::Value;

type TestResult = Result<(), String>;

async fn run(name: &str, steps: Option<usize>) -> Result<Value, String> {
    Ok(run_scenario(&format!("safety/{name}"), steps).await?.output)
}

/// The run under test, `example-run` (a scenario may run an earlier one first).
fn the_run(output: &Value) -> Option<&Value> {
    output["objects"]
        .as_array()?
        .iter()
        .find(|o| o["kind"] == "ClusterStagedUpdateRun" && o["metadata"]["name"] == "example-run")
}

/// `(status, reason, message)` of the run's condition of this type.
fn condition(output: &Value, kind: &str) -> Option<(String, String, String)> {
    let condition = the_run(output)?["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?;
    let text = |field: &str| condition[field].as_str().unwrap_or_default().to_owned();
    Some((text("status"), text("reason"), text("message")))
}

/// `cluster=reason` of every cluster of the first stage, in update order (`-` not started).
fn clusters(output: &Value) -> Vec<String> {
    let Some(stage) = the_run(output).and_then(|r| r["status"]["stagesStatus"].get(0)) else {
        return Vec::new();
    };
    stage["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let reason = c["conditions"]
                .as_array()
                .and_then(|cs| cs.last())
                .and_then(|c| c["reason"].as_str())
                .unwrap_or("-");
            format!("{}={reason}", c["clusterName"].as_str().unwrap_or_default())
        })
        .collect()
}

#[tokio::test]
async fn a_tolerated_failure_goes_on_and_the_deadline_fails_the_run() -> TestResult {
    let tolerated = run("staged-deadline.yaml", Some(9)).await?;
    assert_eq!(
        clusters(&tolerated),
        [
            "member1=ClusterUpdatingFailed",
            "member2=ClusterUpdatingStarted",
            "member3=-",
            "member4=-"
        ]
    );
    assert_eq!(condition(&tolerated, "Succeeded"), None, "the run goes on");
    let waiting = run("staged-deadline.yaml", Some(11)).await?;
    assert_eq!(
        condition(&waiting, "Succeeded"),
        None,
        "600 s have not passed"
    );
    let exceeded = run("staged-deadline.yaml", None).await?;
    let (status, reason, message) = condition(&exceeded, "Succeeded").ok_or("no Succeeded")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ProgressDeadlineExceeded")
    );
    assert!(message.contains("member3"), "{message}");
    assert!(message.contains("progressDeadlineSeconds"), "{message}");
    Ok(())
}

#[tokio::test]
async fn one_failure_more_than_tolerated_fails_the_run() -> TestResult {
    let output = run("staged-failures.yaml", None).await?;
    let (status, reason, message) = condition(&output, "Succeeded").ok_or("no Succeeded")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "FailureThresholdExceeded")
    );
    assert!(message.contains("member1, member2"), "{message}");
    assert!(message.contains("maxFailures"), "{message}");
    assert_eq!(
        clusters(&output)[2..],
        ["member3=-".to_owned(), "member4=-".to_owned()]
    );
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        "example-run",
    );
    let state = run_scenario("safety/staged-failures.yaml", None)
        .await?
        .state;
    let described = flotilla_projections::describe(&state, &key).ok_or("no describe")?;
    assert!(
        described.contains("FailureThresholdExceeded"),
        "{described}"
    );
    Ok(())
}

/// `cluster=reason` of every cluster of stage `index`.
fn stage_clusters(output: &Value, index: usize) -> Vec<String> {
    let Some(stage) = the_run(output).and_then(|r| r["status"]["stagesStatus"].get(index)) else {
        return Vec::new();
    };
    stage["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let reason = c["conditions"]
                .as_array()
                .and_then(|cs| cs.last())
                .and_then(|c| c["reason"].as_str())
                .unwrap_or("-");
            format!("{}={reason}", c["clusterName"].as_str().unwrap_or_default())
        })
        .collect()
}

#[tokio::test]
async fn an_adapt_run_takes_a_joining_cluster_in_and_drops_a_leaving_one() -> TestResult {
    let joined = run("adapt.yaml", Some(10)).await?;
    assert_eq!(
        condition(&joined, "Succeeded"),
        None,
        "the run did not fail"
    );
    assert_eq!(
        stage_clusters(&joined, 1),
        ["member2=ClusterUpdatingStarted", "member3=-", "member4=-"]
    );
    let deferred = run("adapt.yaml", Some(12)).await?;
    assert_eq!(
        stage_clusters(&deferred, 0),
        ["member1=ClusterUpdatingSucceeded"]
    );
    let left = run("adapt.yaml", Some(13)).await?;
    assert_eq!(condition(&left, "Succeeded"), None, "the run did not fail");
    assert_eq!(
        stage_clusters(&left, 1),
        [
            "member2=ClusterUpdatingStarted",
            "member3=ClusterLeftPlacement",
            "member4=-"
        ]
    );
    let done = run("adapt.yaml", None).await?;
    let (status, reason, _) = condition(&done, "Succeeded").ok_or("no Succeeded")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "UpdateRunSucceeded")
    );
    assert_eq!(
        stage_clusters(&done, 1),
        [
            "member2=ClusterUpdatingSucceeded",
            "member3=ClusterLeftPlacement",
            "member4=ClusterUpdatingSucceeded"
        ]
    );
    let state = run_scenario("safety/adapt.yaml", None).await?.state;
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        "example-run",
    );
    let deferred: Vec<&str> = state.update_runs()[&key]
        .status
        .deferred
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(deferred, ["member5"]);
    Ok(())
}

#[tokio::test]
async fn a_stage_rollback_moves_both_stages_back_within_max_concurrency() -> TestResult {
    let before = run("staged-rollback.yaml", Some(14)).await?;
    assert_eq!(
        binding_indexes(&before),
        ["member1@1", "member2@1", "member3@1", "member4@0"]
    );
    let tripped = run("staged-rollback.yaml", Some(15)).await?;
    assert_eq!(
        binding_indexes(&tripped),
        ["member1@1", "member2@1", "member3@0", "member4@0"],
        "the failed cluster goes back at once; the ready ones wait for maxConcurrency 1"
    );
    let (status, reason, message) = condition(&tripped, "Progressing").ok_or("no Progressing")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "FailureThresholdExceeded")
    );
    assert!(message.contains("maxFailures"), "{message}");
    assert!(message.contains("member3"), "{message}");
    assert!(
        message.contains("onFailure: Rollback; rolling back"),
        "{message}"
    );
    assert_eq!(condition(&tripped, "Succeeded"), None, "still rolling back");
    let one_back = run("staged-rollback.yaml", Some(16)).await?;
    assert_eq!(
        binding_indexes(&one_back),
        ["member1@0", "member2@1", "member3@0", "member4@0"]
    );
    let two_back = run("staged-rollback.yaml", Some(17)).await?;
    assert_eq!(
        binding_indexes(&two_back),
        ["member1@0", "member2@0", "member3@0", "member4@0"]
    );
    assert_eq!(
        condition(&two_back, "Succeeded"),
        None,
        "member2 not ready yet"
    );
    let done = run("staged-rollback.yaml", None).await?;
    assert_eq!(
        binding_indexes(&done),
        ["member1@0", "member2@0", "member3@0", "member4@0"]
    );
    let (status, reason, message) = condition(&done, "Succeeded").ok_or("no Succeeded")?;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "RolledBack"));
    assert!(message.contains("member1, member2, member3"), "{message}");
    assert!(message.contains("maxFailures"), "names the rule: {message}");
    Ok(())
}

#[tokio::test]
async fn a_stage_rollback_that_fails_moves_nothing_more() -> TestResult {
    let failed = run("staged-rollback-fails.yaml", Some(16)).await?;
    assert_eq!(
        binding_indexes(&failed),
        ["member1@1", "member2@1", "member3@0", "member4@0"]
    );
    let (status, reason, message) = condition(&failed, "Succeeded").ok_or("no Succeeded")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "RollbackFailed")
    );
    assert!(message.contains("member3"), "{message}");
    let after = run("staged-rollback-fails.yaml", None).await?;
    assert_eq!(
        binding_indexes(&after),
        ["member1@1", "member2@1", "member3@0", "member4@0"]
    );
    assert_eq!(
        condition(&after, "Succeeded"),
        condition(&failed, "Succeeded")
    );
    Ok(())
}

//! Issue 17's rolling-update safety as scenario files (`tests/scenarios/safety/`): a progress
//! deadline not yet and then exceeded, failures tolerated and then halting (also when the target
//! shrinks under a percent `maxFailures`), a rollback under
//! maxUnavailable, and a rollback that itself fails — each read from the placement's status
//! the way a user sees it (bindings, the `…RolloutStarted` condition, `describe`).

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use flotilla_tests::scenario_files::{binding_indexes, run_scenario};
use serde_json::Value;

type TestResult = Result<(), String>;

/// The folded state and JSON output of the first `steps` steps (all when `None`).
async fn run(name: &str, steps: Option<usize>) -> Result<(State, Value), String> {
    let run = run_scenario(&format!("safety/{name}"), steps).await?;
    Ok((run.state, run.output))
}

fn crp() -> ObjectKey {
    ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterResourcePlacement",
        "crp-1",
    )
}

/// `(status, reason, message)` of crp-1's `ClusterResourcePlacementRolloutStarted`.
fn rollout_started(output: &Value) -> Option<(String, String, String)> {
    let placement = output["objects"]
        .as_array()?
        .iter()
        .find(|o| o["kind"] == "ClusterResourcePlacement" && o["metadata"]["name"] == "crp-1")?;
    let condition = placement["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "ClusterResourcePlacementRolloutStarted")?;
    let text = |field: &str| condition[field].as_str().unwrap_or_default().to_owned();
    Some((text("status"), text("reason"), text("message")))
}

fn reason_of(output: &Value) -> String {
    rollout_started(output)
        .map(|(_, reason, _)| reason)
        .unwrap_or_default()
}

#[tokio::test]
async fn a_deadline_not_yet_exceeded_waits_and_an_exceeded_one_halts() -> TestResult {
    let (_, waiting) = run("deadline.yaml", Some(10)).await?;
    assert_eq!(
        binding_indexes(&waiting),
        ["cluster-1@1", "cluster-2@0", "cluster-3@0"]
    );
    assert_ne!(reason_of(&waiting), "ProgressDeadlineExceeded");

    let (state, exceeded) = run("deadline.yaml", Some(11)).await?;
    assert_eq!(
        binding_indexes(&exceeded),
        ["cluster-1@1", "cluster-2@0", "cluster-3@0"]
    );
    let (status, reason, message) = rollout_started(&exceeded).ok_or("no condition")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ProgressDeadlineExceeded")
    );
    assert!(message.contains("progressDeadlineSeconds"), "{message}");
    assert!(message.contains("cluster-1"), "{message}");
    assert!(!message.contains("cluster-2"), "{message}");
    let described = flotilla_projections::describe(&state, &crp()).ok_or("no describe")?;
    assert!(
        described.contains("ProgressDeadlineExceeded"),
        "{described}"
    );

    let (_, resumed) = run("deadline.yaml", None).await?;
    assert_eq!(
        binding_indexes(&resumed),
        ["cluster-1@2", "cluster-2@2", "cluster-3@2"]
    );
    assert_eq!(
        rollout_started(&resumed).map(|c| c.0),
        Some("True".to_owned())
    );
    Ok(())
}

#[tokio::test]
async fn one_failure_is_tolerated_and_the_next_halts_the_rollout() -> TestResult {
    let (state, tolerated) = run("failures.yaml", Some(10)).await?;
    let guard = state.placements()[&crp()].guard.clone().ok_or("no guard")?;
    assert_eq!(guard.failed.iter().collect::<Vec<_>>(), ["cluster-1"]);
    assert!(guard.tripped.is_none());
    assert_ne!(reason_of(&tolerated), "FailureThresholdExceeded");
    let (_, going_on) = run("failures.yaml", Some(11)).await?;
    assert_eq!(
        binding_indexes(&going_on),
        ["cluster-1@1", "cluster-2@1", "cluster-3@1", "cluster-4@0"],
        "a tolerated failure does not stop the rollout"
    );
    assert_ne!(reason_of(&going_on), "FailureThresholdExceeded");

    let (_, halted) = run("failures.yaml", None).await?;
    assert_eq!(
        binding_indexes(&halted),
        ["cluster-1@1", "cluster-2@1", "cluster-3@1", "cluster-4@0"]
    );
    let (status, reason, message) = rollout_started(&halted).ok_or("no condition")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "FailureThresholdExceeded")
    );
    assert!(message.contains("cluster-1, cluster-3"), "{message}");
    assert!(message.contains("maxFailures"), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_percent_max_failures_follows_the_target_as_it_shrinks() -> TestResult {
    let (state, tolerated) = run("failures-shrink.yaml", Some(10)).await?;
    let guard = state.placements()[&crp()].guard.clone().ok_or("no guard")?;
    assert_eq!(guard.failed.iter().collect::<Vec<_>>(), ["cluster-1"]);
    assert_ne!(reason_of(&tolerated), "FailureThresholdExceeded");

    let (_, halted) = run("failures-shrink.yaml", None).await?;
    assert_eq!(
        binding_indexes(&halted),
        ["cluster-1@1", "cluster-2@0", "cluster-3@0"],
        "cluster-4's binding went with it"
    );
    let (status, reason, message) = rollout_started(&halted).ok_or("no condition")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "FailureThresholdExceeded"),
        "one failure is more than 25 % of three tolerates"
    );
    assert!(message.contains("cluster-1"), "{message}");
    assert!(message.contains("(0)"), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_rollback_moves_clusters_back_within_max_unavailable() -> TestResult {
    let (_, tripped) = run("rollback.yaml", Some(12)).await?;
    assert_eq!(
        binding_indexes(&tripped),
        ["cluster-1@1", "cluster-2@1", "cluster-3@0", "cluster-4@0"],
        "the failed cluster goes back at once, the ready ones wait for the budget"
    );
    assert_eq!(reason_of(&tripped), "FailureThresholdExceeded");
    let (_, one_back) = run("rollback.yaml", Some(13)).await?;
    assert_eq!(
        binding_indexes(&one_back),
        ["cluster-1@0", "cluster-2@1", "cluster-3@0", "cluster-4@0"]
    );
    let (_, two_back) = run("rollback.yaml", Some(14)).await?;
    assert_eq!(
        binding_indexes(&two_back),
        ["cluster-1@0", "cluster-2@0", "cluster-3@0", "cluster-4@0"]
    );
    assert_eq!(
        reason_of(&two_back),
        "FailureThresholdExceeded",
        "still rolling back"
    );
    let (state, done) = run("rollback.yaml", None).await?;
    assert_eq!(
        binding_indexes(&done),
        ["cluster-1@0", "cluster-2@0", "cluster-3@0", "cluster-4@0"]
    );
    let (status, reason, message) = rollout_started(&done).ok_or("no condition")?;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "RolledBack"));
    assert!(message.contains("maxFailures"), "names the rule: {message}");
    let described = flotilla_projections::describe(&state, &crp()).ok_or("no describe")?;
    assert!(described.contains("RolledBack"), "{described}");
    Ok(())
}

#[tokio::test]
async fn a_rollback_that_fails_is_reported_and_a_newer_snapshot_resumes() -> TestResult {
    let (_, failed) = run("rollback-fails.yaml", Some(13)).await?;
    assert_eq!(
        binding_indexes(&failed),
        ["cluster-1@1", "cluster-2@1", "cluster-3@0", "cluster-4@0"]
    );
    let (status, reason, message) = rollout_started(&failed).ok_or("no condition")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "RollbackFailed")
    );
    assert!(message.contains("cluster-3"), "{message}");
    let (_, resumed) = run("rollback-fails.yaml", None).await?;
    assert!(
        binding_indexes(&resumed).contains(&"cluster-3@2".to_owned()),
        "{:?}",
        binding_indexes(&resumed)
    );
    assert_ne!(reason_of(&resumed), "RollbackFailed");
    Ok(())
}

#[tokio::test]
async fn out_of_range_safety_fields_are_refused_with_their_path() -> TestResult {
    let text = r#"
start: 2025-03-12T23:00:00Z
steps:
  - apply: |
      apiVersion: placement.kubernetes-fleet.io/v1
      kind: ClusterResourcePlacement
      metadata: {name: crp-1}
      spec:
        resourceSelectors:
          - {group: "", kind: Namespace, version: v1, name: test-ns}
        strategy:
          rollingUpdate: {progressDeadlineSeconds: 0}
  - expectRejection: {code: InvalidObject}
  - apply: |
      apiVersion: placement.kubernetes-fleet.io/v1
      kind: ClusterResourcePlacement
      metadata: {name: crp-2}
      spec:
        resourceSelectors:
          - {group: "", kind: Namespace, version: v1, name: test-ns}
        strategy:
          rollingUpdate: {maxFailures: -1, onFailure: Rollback}
  - expectRejection: {code: InvalidObject}
  - apply: |
      apiVersion: placement.kubernetes-fleet.io/v1
      kind: ClusterResourcePlacement
      metadata: {name: crp-3}
      spec:
        resourceSelectors:
          - {group: "", kind: Namespace, version: v1, name: test-ns}
        strategy:
          rollingUpdate: {onFailure: Retry}
  - expectRejection: {code: InvalidObject}
"#;
    let run = flotilla_tests::scenario_files::run_scenario_text("invalid", text, None).await?;
    let messages: Vec<String> = run.output["rejections"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].contains("spec.strategy.rollingUpdate.progressDeadlineSeconds"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("spec.strategy.rollingUpdate.maxFailures"),
        "{messages:?}"
    );
    assert!(messages[2].contains("Retry"), "{messages:?}");
    Ok(())
}

#[tokio::test]
async fn a_partitions_own_max_failures_halts_a_partitioned_rollout() -> TestResult {
    let (state, tolerated) = run("partitioned.yaml", Some(10)).await?;
    assert_ne!(reason_of(&tolerated), "FailureThresholdExceeded");
    let guard = state.placements()[&crp()].guard.clone().ok_or("no guard")?;
    assert_eq!(guard.failed.iter().collect::<Vec<_>>(), ["cluster-1"]);
    let (_, halted) = run("partitioned.yaml", None).await?;
    assert_eq!(
        binding_indexes(&halted),
        ["cluster-1@1", "cluster-2@1", "cluster-3@0", "cluster-4@0"]
    );
    let (status, reason, message) = rollout_started(&halted).ok_or("no condition")?;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "FailureThresholdExceeded")
    );
    assert!(message.contains("partitions[0].maxFailures"), "{message}");
    assert!(message.contains("cluster-1, cluster-2"), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_partitioned_rollout_rolls_back() -> TestResult {
    let (_, tripped) = run("partitioned-rollback.yaml", Some(11)).await?;
    assert_eq!(
        binding_indexes(&tripped),
        ["cluster-1@0", "cluster-2@0", "cluster-3@0", "cluster-4@0"]
    );
    assert_eq!(reason_of(&tripped), "FailureThresholdExceeded");
    let (_, done) = run("partitioned-rollback.yaml", None).await?;
    assert_eq!(reason_of(&done), "RolledBack");
    Ok(())
}

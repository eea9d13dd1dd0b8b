//! The scenario runner's members run the agent's own reconcile code (`agents: auto`): outcomes
//! that only the real agent gives — availability judged per object, a cluster evicted and
//! picked again reporting once more on content it holds already.

use flotilla_tests::scenario_files::run_scenario;
use serde_json::Value;

type TestResult = Result<(), String>;

fn placement<'a>(output: &'a Value, name: &str) -> Result<&'a Value, String> {
    output["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["kind"] == "ClusterResourcePlacement" && o["metadata"]["name"] == name)
        .ok_or_else(|| format!("no placement {name}"))
}

/// `type=status/reason` of a condition list's entry of `kind`.
fn condition(conditions: &Value, kind: &str) -> String {
    conditions
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .map(|c| {
            format!(
                "{}={}/{}",
                kind,
                c["status"].as_str().unwrap_or("?"),
                c["reason"].as_str().unwrap_or("?")
            )
        })
        .unwrap_or_else(|| format!("{kind} absent"))
}

#[tokio::test]
async fn availability_is_judged_per_object_as_the_agent_judges_it() -> TestResult {
    let output = run_scenario("agents/judge-availability.yaml", None)
        .await?
        .output;
    let bad = placement(&output, "crp-1")?;
    assert_eq!(
        condition(
            &bad["status"]["conditions"],
            "ClusterResourcePlacementAvailable"
        ),
        "ClusterResourcePlacementAvailable=False/ResourceNotAvailableYet"
    );
    let member = &bad["status"]["placementStatuses"][0];
    assert_eq!(
        condition(&member["conditions"], "Applied"),
        "Applied=True/AllWorkHaveBeenApplied"
    );
    let failed: Vec<&str> = member["failedPlacements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert_eq!(
        failed,
        ["Deployment"],
        "the Namespace is available, the bad image is not"
    );

    let untracked = placement(&output, "crp-2")?;
    let member = &untracked["status"]["placementStatuses"][0];
    assert_eq!(
        condition(&member["conditions"], "Available"),
        "Available=True/WorkNotTrackable"
    );
    Ok(())
}

#[tokio::test]
async fn a_cluster_evicted_and_picked_again_reports_on_what_it_holds() -> TestResult {
    let output = run_scenario("eviction/pick-all-repicked-unless-tainted.yaml", Some(7))
        .await?
        .output;
    let crp = placement(&output, "crp-1")?;
    assert_eq!(
        condition(
            &crp["status"]["conditions"],
            "ClusterResourcePlacementAvailable"
        ),
        "ClusterResourcePlacementAvailable=True/ResourceAvailable"
    );
    Ok(())
}

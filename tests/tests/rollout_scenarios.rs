//! KubeFleet's two safe-rollout examples (`spec.strategy.rollingUpdate`) as scenario files, with
//! the outcomes the docs state: an in-place update with a bad image stalls after one cluster
//! (maxUnavailable 1) and never surges; a move from west to east adds both new clusters before
//! removing the old ones, one at a time.

use flotilla_tests::scenario_files::run_scenario;
use serde_json::Value;

type TestResult = Result<(), String>;

/// Runs the first `steps` steps of a scenario (all when `None`) and returns its JSON output.
async fn run(name: &str, steps: Option<usize>) -> Result<Value, String> {
    Ok(run_scenario(&format!("rollout/{name}"), steps)
        .await?
        .output)
}

/// `cluster=state@resource snapshot` for every ClusterResourceBinding of `crp-1`, by cluster.
fn bindings(output: &Value) -> Vec<String> {
    let mut out: Vec<String> = output["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["kind"] == "ClusterResourceBinding")
        .map(|b| {
            format!(
                "{}={}@{}",
                b["spec"]["targetCluster"].as_str().unwrap_or_default(),
                b["spec"]["state"].as_str().unwrap_or_default(),
                b["spec"]["resourceSnapshotName"]
                    .as_str()
                    .unwrap_or_default()
            )
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn example_1_a_bad_image_stalls_the_in_place_rollout_after_one_cluster() -> TestResult {
    let placed = run("seed-001-example-1.yaml", Some(8)).await?;
    assert_eq!(
        bindings(&placed),
        [
            "cluster-2=Bound@crp-1-0-snapshot",
            "cluster-3=Bound@crp-1-0-snapshot",
            "cluster-4=Bound@crp-1-0-snapshot"
        ]
    );
    let stalled = run("seed-001-example-1.yaml", None).await?;
    assert_eq!(
        bindings(&stalled),
        [
            "cluster-2=Bound@crp-1-1-snapshot",
            "cluster-3=Bound@crp-1-0-snapshot",
            "cluster-4=Bound@crp-1-0-snapshot"
        ],
        "one cluster took the bad image; the others wait for it, surge unused"
    );
    Ok(())
}

#[tokio::test]
async fn example_2_the_move_adds_both_new_clusters_then_removes_the_old_one_at_a_time() -> TestResult
{
    let west = run("seed-001-example-2.yaml", Some(9)).await?;
    assert_eq!(
        bindings(&west),
        [
            "cluster-1=Bound@crp-1-0-snapshot",
            "cluster-2=Bound@crp-1-0-snapshot"
        ]
    );
    let moved = run("seed-001-example-2.yaml", Some(10)).await?;
    assert_eq!(
        bindings(&moved),
        [
            "cluster-2=Unscheduled@crp-1-0-snapshot",
            "cluster-3=Bound@crp-1-0-snapshot",
            "cluster-4=Bound@crp-1-0-snapshot"
        ],
        "both east clusters added, one west cluster removed, one kept available"
    );
    let one_ready = run("seed-001-example-2.yaml", Some(11)).await?;
    assert_eq!(
        bindings(&one_ready),
        [
            "cluster-3=Bound@crp-1-0-snapshot",
            "cluster-4=Bound@crp-1-0-snapshot"
        ]
    );
    Ok(())
}

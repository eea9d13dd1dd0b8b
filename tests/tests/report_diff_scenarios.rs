//! A `ReportDiff` placement as a scenario file (`tests/scenarios/placement/report-diff.yaml`),
//! run in-process: diffs read as KubeFleet shows them, with the scenario clock's times, and the
//! placement's conditions end with `…DiffReported` — incomplete while one cluster's diff is,
//! completed once every cluster's is.

use flotilla_tests::scenario_files::{run_scenario, run_scenario_text, scenario_path};
use serde_json::{Value, json};

const SCENARIO: &str = "placement/report-diff.yaml";

fn placement(output: &Value) -> Result<&Value, String> {
    let objects = output["objects"].as_array().ok_or("no objects")?;
    objects
        .iter()
        .find(|o| o["kind"] == "ClusterResourcePlacement")
        .ok_or_else(|| "no placement".to_owned())
}

fn last_condition(conditions: &Value) -> Value {
    let list = conditions.as_array().cloned().unwrap_or_default();
    list.last().cloned().unwrap_or_default()
}

fn cluster<'a>(placement: &'a Value, name: &str) -> Result<&'a Value, String> {
    let statuses = placement["status"]["placementStatuses"]
        .as_array()
        .ok_or("no placementStatuses")?;
    statuses
        .iter()
        .find(|s| s["clusterName"] == name)
        .ok_or_else(|| format!("no status of {name}"))
}

#[tokio::test]
async fn diffs_are_shown_and_the_placement_waits_for_every_diff() -> Result<(), String> {
    let output = run_scenario(SCENARIO, None).await?.output;
    let rejections = output["rejections"].as_array().ok_or("no rejections")?;
    assert!(rejections.is_empty(), "{rejections:?}");
    let crp = placement(&output)?;
    let condition = last_condition(&crp["status"]["conditions"]);
    assert_eq!(condition["type"], "ClusterResourcePlacementDiffReported");
    assert_eq!(condition["reason"], "DiffReportingIncompleteOrFailed");
    let first = cluster(crp, "cluster-1")?;
    assert_eq!(
        first["diffedPlacements"],
        json!([{
            "version": "v1", "kind": "Namespace", "name": "app",
            "observationTime": "2025-03-12T23:02:00Z",
            "targetClusterObservedGeneration": 2,
            "firstDiffedObservedTime": "2025-03-12T23:01:00Z",
            "observedDiffs": [
                {"path": "/metadata/labels/team", "valueInMember": "db", "valueInHub": "web"},
                {"path": "/metadata/labels/tier", "valueInMember": "backend"}
            ]
        }])
    );
    let second = cluster(crp, "cluster-2")?;
    assert_eq!(last_condition(&second["conditions"])["status"], "False");
    assert!(second.get("diffedPlacements").is_none(), "{second}");
    Ok(())
}

#[tokio::test]
async fn the_placement_completes_once_every_cluster_reported_its_diff() -> Result<(), String> {
    let path = scenario_path(SCENARIO);
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let completed =
        format!("{text}  - report: {{cluster: cluster-2, placement: crp-1, diffReported: true}}\n");
    let output = run_scenario_text(SCENARIO, &completed, None).await?.output;
    let crp = placement(&output)?;
    let types: Vec<&str> = crp["status"]["conditions"]
        .as_array()
        .ok_or("no conditions")?
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert!(
        !types
            .iter()
            .any(|t| t.ends_with("Applied") || t.ends_with("Available")),
        "{types:?}"
    );
    let condition = last_condition(&crp["status"]["conditions"]);
    assert_eq!(
        (condition["status"].clone(), condition["reason"].clone()),
        (json!("True"), json!("DiffReportingCompleted"))
    );
    Ok(())
}

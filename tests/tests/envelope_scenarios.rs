//! KubeFleet's "Envelope Object" as a scenario file (`tests/scenarios/placement/envelopes.yaml`),
//! run in-process: the member's Work carries the objects the envelopes hold, never the wrappers.

use flotilla_tests::scenario_files::run_scenario;
use serde_json::Value;

#[tokio::test]
async fn envelopes_reach_the_work_unwrapped() -> Result<(), String> {
    let out = run_scenario("placement/envelopes.yaml", None).await?.output;
    let rejections = out["rejections"].as_array().ok_or("no rejections list")?;
    assert!(rejections.is_empty(), "{rejections:?}");
    let objects = out["objects"].as_array().ok_or("no objects")?;
    let work = objects
        .iter()
        .find(|o| o["kind"] == "Work" && o["metadata"]["name"] == "crp-1-work")
        .ok_or("no work crp-1-work")?;
    assert_eq!(work["metadata"]["namespace"], "fleet-member-cluster-1");
    let placed: Vec<(String, String)> = work["spec"]["workload"]["manifests"]
        .as_array()
        .ok_or("no manifests")?
        .iter()
        .map(|m| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (text(&m["kind"]), text(&m["metadata"]["name"]))
        })
        .collect();
    let expected = [
        ("Namespace", "app"),
        ("ClusterRole", "pod-reader"),
        ("ResourceQuota", "mem-cpu-demo"),
        ("NetworkPolicy", "deny-all"),
    ];
    let mut sorted_placed = placed.clone();
    sorted_placed.sort();
    let mut sorted_expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, n)| ((*k).to_owned(), (*n).to_owned()))
        .collect();
    sorted_expected.sort();
    assert_eq!(sorted_placed, sorted_expected, "placed: {placed:?}");
    let snapshot = objects
        .iter()
        .find(|o| o["kind"] == "ClusterResourceSnapshot")
        .ok_or("no snapshot")?;
    assert_eq!(
        snapshot["metadata"]["annotations"]["kubernetes-fleet.io/number-of-enveloped-object"],
        "3"
    );
    Ok(())
}

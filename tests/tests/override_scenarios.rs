//! Overrides changed after a rollout, as scenario files (`tests/scenarios/overrides/`): an
//! override change is a new rollout the strategy holds back like a resource change, and the
//! placement says so for every cluster still waiting.

use flotilla_tests::scenario_files::run_scenario;
use serde_json::Value;

/// `(type, status, reason)` of each condition in a list.
fn conditions(list: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (list.as_array().into_iter().flatten())
        .map(|c| (text(&c["type"]), text(&c["status"]), text(&c["reason"])))
        .collect()
}

#[tokio::test]
async fn clusters_waiting_for_an_override_change_show_the_rollout_blocked() -> Result<(), String> {
    let output = run_scenario("overrides/change-held-back.yaml", None)
        .await?
        .output;
    let crp = (output["objects"].as_array().into_iter().flatten())
        .find(|o| o["kind"] == "ClusterResourcePlacement")
        .ok_or("no placement")?;
    let placement = conditions(&crp["status"]["conditions"]);
    assert!(
        placement.contains(&(
            "ClusterResourcePlacementRolloutStarted".into(),
            "False".into(),
            "RolloutNotStartedYet".into()
        )),
        "{placement:?}"
    );
    let mut rolled = Vec::new();
    for cluster in crp["status"]["placementStatuses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = cluster["clusterName"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let started = conditions(&cluster["conditions"])
            .into_iter()
            .find(|(kind, ..)| kind == "RolloutStarted")
            .map(|(_, status, reason)| format!("{status}/{reason}"));
        if started.as_deref() == Some("True/RolloutStarted") {
            assert_eq!(cluster["applicableClusterResourceOverrides"][0], "cro-1-0");
            rolled.push(name);
        } else {
            assert_eq!(
                started.as_deref(),
                Some("False/RolloutNotStartedYet"),
                "{name}"
            );
            assert!(
                cluster.get("applicableClusterResourceOverrides").is_none(),
                "{name}"
            );
        }
    }
    assert_eq!(
        rolled.len(),
        1,
        "maxUnavailable 1 rolls one cluster: {rolled:?}"
    );
    Ok(())
}

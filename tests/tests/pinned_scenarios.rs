//! KubeFleet behaviour that worked without a test holding it, as scenario files: the
//! NamespaceAccessible status scope (exactly one namespace selector, immutable with the scope
//! itself) and the override snapshots each cluster's placement status lists as applicable.

use flotilla_tests::scenario_files::run_scenario;
use serde_json::{Value, json};

type TestResult = Result<(), String>;

fn objects<'a>(output: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> {
    output["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |o| o["kind"] == kind)
}

#[tokio::test]
async fn namespace_accessible_allows_one_namespace_selector_and_freezes_it() -> TestResult {
    let output = run_scenario("placement/namespace-accessible.yaml", None)
        .await?
        .output;
    let rejections: Vec<(u64, &str, &str)> = output["rejections"]
        .as_array()
        .ok_or("rejections")?
        .iter()
        .map(|r| {
            (
                r["step"].as_u64().unwrap_or(0),
                r["code"].as_str().unwrap_or_default(),
                r["message"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rejections,
        [
            (
                2,
                "InvalidObject",
                "spec.resourceSelectors: statusReportingScope NamespaceAccessible allows exactly one Namespace selector"
            ),
            (
                5,
                "ImmutableField",
                "spec.resourceSelectors: the namespace selector is immutable when statusReportingScope is NamespaceAccessible"
            ),
            (
                7,
                "ImmutableField",
                "spec.statusReportingScope: statusReportingScope is immutable once set"
            ),
        ]
    );
    let crp = objects(&output, "ClusterResourcePlacement")
        .next()
        .ok_or("crp-1")?;
    assert_eq!(crp["spec"]["statusReportingScope"], "NamespaceAccessible");
    assert_eq!(
        crp["spec"]["resourceSelectors"],
        json!([
            {"group": "", "kind": "Namespace", "version": "v1", "name": "app-a"},
            {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "version": "v1", "name": "reader"}
        ]),
        "a cluster-scoped selector may be added beside the namespace"
    );
    let mirrored: Vec<(&Value, &Value)> = objects(&output, "ClusterResourcePlacementStatus")
        .map(|o| (&o["metadata"]["namespace"], &o["metadata"]["name"]))
        .collect();
    assert_eq!(mirrored, [(&json!("app-a"), &json!("crp-1"))]);
    Ok(())
}

#[tokio::test]
async fn every_cluster_lists_the_override_snapshots_applied_to_it() -> TestResult {
    let output = run_scenario("overrides/seed-002-applicable-overrides.yaml", None)
        .await?
        .output;
    assert_eq!(output["rejections"], json!([]));
    let crp = objects(&output, "ClusterResourcePlacement")
        .next()
        .ok_or("crp-example")?;
    let statuses = crp["status"]["placementStatuses"]
        .as_array()
        .ok_or("placementStatuses")?;
    assert_eq!(statuses.len(), 3);
    for status in statuses {
        assert_eq!(
            status["applicableClusterResourceOverrides"],
            json!(["cro-1-0"])
        );
        assert_eq!(
            status["applicableResourceOverrides"],
            json!([{"name": "ro-1-0", "namespace": "application-1"}])
        );
        let overridden = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Overridden")
            .ok_or("Overridden")?;
        assert_eq!(overridden["reason"], "OverriddenSucceeded");
    }
    Ok(())
}

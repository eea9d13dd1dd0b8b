//! KubeFleet's eviction and disruption budgets end to end, as scenario files
//! (`tests/scenarios/eviction/*.yaml`, each opening with what it encodes and the outcome): an
//! executed eviction lets the PickAll scheduler pick the cluster again unless it is tainted; a
//! PickN budget blocks, an eviction is reconciled once and its spec is immutable; and an eviction
//! unblocks a rollout held by maxUnavailable. Outcomes are read from the printed JSON, as `flotilla
//! get -o json` shows them.

use flotilla_tests::scenario_files::run_scenario;
use serde_json::Value;

type TestResult = Result<(), String>;

/// Runs `tests/scenarios/eviction/<name>`, all of it or only its first `steps` steps.
async fn run(name: &str, steps: Option<usize>) -> Result<Value, String> {
    Ok(run_scenario(&format!("eviction/{name}"), steps)
        .await?
        .output)
}

fn objects<'a>(output: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> {
    output["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |o| o["kind"] == kind)
}

/// `cluster=state@resource snapshot` for every ClusterResourceBinding, by cluster.
fn bindings(output: &Value) -> Vec<String> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut out: Vec<String> = objects(output, "ClusterResourceBinding")
        .map(|b| {
            format!(
                "{}={}@{}",
                text(&b["spec"]["targetCluster"]),
                text(&b["spec"]["state"]),
                text(&b["spec"]["resourceSnapshotName"])
            )
        })
        .collect();
    out.sort();
    out
}

/// The clusters that have a `Work` (in their `fleet-member-<cluster>` namespace).
fn work_clusters(output: &Value) -> Vec<String> {
    let mut out: Vec<String> = objects(output, "Work")
        .filter_map(|w| w["metadata"]["namespace"].as_str())
        .map(|ns| ns.trim_start_matches("fleet-member-").to_owned())
        .collect();
    out.sort();
    out
}

/// An eviction's conditions as `type=status: message`.
fn eviction_status(output: &Value, name: &str) -> Vec<String> {
    objects(output, "ClusterResourcePlacementEviction")
        .filter(|e| e["metadata"]["name"] == name)
        .flat_map(|e| {
            e["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|c| {
            format!(
                "{}={}: {}",
                c["type"].as_str().unwrap_or_default(),
                c["status"].as_str().unwrap_or_default(),
                c["message"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

const VALID: &str = "Valid=True: Eviction is valid";
const NO_BUDGET: &str =
    "Executed=True: Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified";

#[tokio::test]
async fn pick_all_picks_an_evicted_cluster_again_unless_it_is_tainted() -> TestResult {
    let repicked = run("pick-all-repicked-unless-tainted.yaml", Some(7)).await?;
    assert_eq!(
        eviction_status(&repicked, "evict-member-2"),
        [VALID, NO_BUDGET]
    );
    assert_eq!(
        bindings(&repicked),
        [
            "member-1=Bound@crp-1-0-snapshot",
            "member-2=Bound@crp-1-0-snapshot",
            "member-3=Bound@crp-1-0-snapshot"
        ],
        "member-2 was evicted and picked again"
    );
    let tainted = run("pick-all-repicked-unless-tainted.yaml", None).await?;
    assert_eq!(
        eviction_status(&tainted, "evict-member-3"),
        [VALID, NO_BUDGET]
    );
    assert_eq!(
        bindings(&tainted),
        [
            "member-1=Bound@crp-1-0-snapshot",
            "member-2=Bound@crp-1-0-snapshot"
        ],
        "the taint keeps member-3 out"
    );
    assert_eq!(work_clusters(&tainted), ["member-1", "member-2"]);
    assert_eq!(tainted["rejections"], Value::Array(Vec::new()));
    Ok(())
}

#[tokio::test]
async fn a_pick_n_budget_blocks_and_an_eviction_is_reconciled_once() -> TestResult {
    let output = run("pick-n-budget.yaml", None).await?;
    assert_eq!(
        eviction_status(&output, "evict-member-3"),
        [
            VALID,
            "Executed=False: Eviction is blocked by specified \
             ClusterResourcePlacementDisruptionBudget, availablePlacements: 3, totalPlacements: 3"
        ],
        "still blocked after the budget was relaxed"
    );
    assert_eq!(
        eviction_status(&output, "evict-member-3-again"),
        [
            VALID,
            "Executed=True: Eviction is allowed by specified \
             ClusterResourcePlacementDisruptionBudget, availablePlacements: 3, totalPlacements: 3"
        ]
    );
    let rejections = output["rejections"].as_array().ok_or("no rejections")?;
    assert_eq!(rejections.len(), 1, "{rejections:?}");
    assert_eq!(rejections[0]["step"], 9);
    assert_eq!(rejections[0]["code"], "ImmutableField");
    let budget = objects(&output, "ClusterResourcePlacementDisruptionBudget")
        .next()
        .ok_or("no budget")?;
    assert_eq!(budget["spec"], serde_json::json!({"minAvailable": "50%"}));
    assert_eq!(
        bindings(&output),
        [
            "member-1=Bound@crp-1-0-snapshot",
            "member-2=Bound@crp-1-0-snapshot",
            "member-3=Bound@crp-1-0-snapshot"
        ],
        "the only cluster left is picked again"
    );
    Ok(())
}

#[tokio::test]
async fn an_eviction_unblocks_a_rollout_held_by_max_unavailable() -> TestResult {
    let blocked = run("rollout-unblocked.yaml", Some(9)).await?;
    assert_eq!(
        bindings(&blocked),
        [
            "member-1=Bound@crp-1-1-snapshot",
            "member-2=Bound@crp-1-0-snapshot",
            "member-3=Bound@crp-1-0-snapshot"
        ],
        "member-1 never becomes available on snapshot 1: the others wait"
    );
    let unblocked = run("rollout-unblocked.yaml", None).await?;
    assert_eq!(
        eviction_status(&unblocked, "evict-member-1"),
        [VALID, NO_BUDGET]
    );
    assert_eq!(
        bindings(&unblocked),
        [
            "member-2=Bound@crp-1-1-snapshot",
            "member-3=Bound@crp-1-1-snapshot"
        ]
    );
    assert_eq!(work_clusters(&unblocked), ["member-2", "member-3"]);
    Ok(())
}

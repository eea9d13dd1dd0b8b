//! KubeFleet's documented scheduling examples and statements as scenario files
//! (`tests/scenarios/scheduling/*.yaml`, each opening with the seed passage it encodes and the
//! expected outcome), run in-process like `tests/scenarios.rs` does, with the exact outcome
//! asserted on the printed JSON: which clusters hold a binding in which state, the policy
//! snapshots and their `is-latest-snapshot` labels, the placement's `Scheduled` condition, its
//! per-cluster statuses, the not-selected decisions, the selected resources and the observed
//! resource index.
//!
//! A test may stop a scenario after its first N steps to check an intermediate state; the
//! scenario files name the step numbers they describe.

use flotilla_tests::scenario_files::run_scenario;
use serde_json::{Value, json};

type TestResult = Result<(), String>;

const CRP: &str = "ClusterResourcePlacement";
const CRB: &str = "ClusterResourceBinding";
const CSPS: &str = "ClusterSchedulingPolicySnapshot";
const CRS: &str = "ClusterResourceSnapshot";
const CRP_SCHEDULED: &str = "ClusterResourcePlacementScheduled";
const IS_LATEST: &str = "kubernetes-fleet.io/is-latest-snapshot";
const PARENT: &str = "kubernetes-fleet.io/parent-CRP";
const PREVIOUS_STATE: &str = "kubernetes-fleet.io/previous-binding-state";
const FULFILLED: &str = "found all the clusters needed as specified by the scheduling policy";
const PICKED: &str = "picked by scheduling policy";
const NOT_PICKED: &str = "cluster does not score high enough";
const AFFINITY_UNMATCHED: &str = "ClusterUnschedulable, none of the nonempty required cluster \
                                  affinity term (total number: 1) is matched";
/// `policyHash` of `{"placementType":"PickN"}`: the KubeFleet sample's value.
const PICK_N_HASH: &str =
    "NDc5ZjQwNWViNzgwOGNmYzU4MzY2YjI2NDg2ODBhM2E4MTVlZjkxNGZlNjc1NmFlOGRmMGQ2Zjc0ODg1NDE2YQ==";
/// `policyHash` of `{"placementType":"PickAll"}`.
const PICK_ALL_HASH: &str =
    "OGNjNTdkZWU1OTY4NGZmODg3NjZlMjY5MzZjOGZiMTI1ZjRiZGUyMzRhMmJlYjVjNTRhZGVkNDU2OWRiMGQ1YQ==";

/// Runs `tests/scenarios/scheduling/<name>`, all of it or only its first `steps` steps.
async fn run(name: &str, steps: Option<usize>) -> Result<Value, String> {
    Ok(run_scenario(&format!("scheduling/{name}"), steps)
        .await?
        .output)
}

/// A scalar as text (strings unquoted, a missing value as "").
fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every object of a kind, in output order.
fn objects<'a>(output: &'a Value, kind: &str) -> Vec<&'a Value> {
    output["objects"]
        .as_array()
        .map(|all| all.iter().filter(|o| o["kind"] == kind).collect())
        .unwrap_or_default()
}

/// The object of a kind with a name.
fn object<'a>(output: &'a Value, kind: &str, name: &str) -> Result<&'a Value, String> {
    objects(output, kind)
        .into_iter()
        .find(|o| o["metadata"]["name"] == name)
        .ok_or_else(|| format!("no {kind} {name}"))
}

/// The objects of a kind that belong to a placement (label `parent-CRP`).
fn owned<'a>(output: &'a Value, kind: &str, placement: &str) -> Vec<&'a Value> {
    objects(output, kind)
        .into_iter()
        .filter(|o| o["metadata"]["labels"][PARENT] == placement)
        .collect()
}

/// A placement's bindings as `cluster=State`, by cluster name.
fn bindings(output: &Value, kind: &str, placement: &str) -> Vec<String> {
    let mut all: Vec<String> = owned(output, kind, placement)
        .into_iter()
        .map(|b| {
            format!(
                "{}={}",
                text(&b["spec"]["targetCluster"]),
                text(&b["spec"]["state"])
            )
        })
        .collect();
    all.sort();
    all
}

/// A placement's binding for one cluster.
fn binding<'a>(
    output: &'a Value,
    kind: &str,
    placement: &str,
    cluster: &str,
) -> Result<&'a Value, String> {
    owned(output, kind, placement)
        .into_iter()
        .find(|b| b["spec"]["targetCluster"] == cluster)
        .ok_or_else(|| format!("no {kind} of {placement} for {cluster}"))
}

/// A placement's policy (or resource) snapshots as `name=<is-latest-snapshot>`, by name.
fn snapshots(output: &Value, kind: &str, placement: &str) -> Vec<String> {
    let mut all: Vec<String> = owned(output, kind, placement)
        .into_iter()
        .map(|s| {
            format!(
                "{}={}",
                text(&s["metadata"]["name"]),
                text(&s["metadata"]["labels"][IS_LATEST])
            )
        })
        .collect();
    all.sort();
    all
}

/// A condition's `[status, reason, message]`.
fn condition(object: &Value, kind: &str) -> Result<[String; 3], String> {
    let found = object["status"]["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"] == kind))
        .ok_or_else(|| format!("no {kind} condition on {}", object["metadata"]["name"]))?;
    Ok([
        text(&found["status"]),
        text(&found["reason"]),
        text(&found["message"]),
    ])
}

/// `placementStatuses[]` as `[clusterName, status, reason, message]` of their `Scheduled`
/// condition, in order.
fn placement_statuses(placement: &Value) -> Vec<[String; 4]> {
    placement["status"]["placementStatuses"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|entry| {
                    let scheduled = entry["conditions"]
                        .as_array()
                        .and_then(|c| c.iter().find(|c| c["type"] == "Scheduled"))
                        .cloned()
                        .unwrap_or_default();
                    [
                        text(&entry["clusterName"]),
                        text(&scheduled["status"]),
                        text(&scheduled["reason"]),
                        text(&scheduled["message"]),
                    ]
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The seed-era message of a picked cluster's `Scheduled` condition.
fn picked_message(cluster: &str, affinity: i64, spread: i64) -> String {
    format!(
        "Successfully scheduled resources for placement in {cluster} (affinity score: {affinity}, \
         topology spread score: {spread}): {PICKED}"
    )
}

/// A selected cluster's placement status entry.
fn picked(cluster: &str, affinity: i64, spread: i64) -> [String; 4] {
    [
        cluster.into(),
        "True".into(),
        "Scheduled".into(),
        picked_message(cluster, affinity, spread),
    ]
}

/// A PickFixed cluster's placement status entry (no scores).
fn picked_fixed(cluster: &str) -> [String; 4] {
    [
        cluster.into(),
        "True".into(),
        "Scheduled".into(),
        format!("Successfully scheduled resources for placement in {cluster}: {PICKED}"),
    ]
}

/// An unfilled slot's placement status entry (no cluster name).
fn failed(reason: &str) -> [String; 4] {
    [
        String::new(),
        "False".into(),
        "ScheduleFailed".into(),
        reason.into(),
    ]
}

/// `status.targetClusters[]` as `[clusterName, selected, reason, "affinity/priority" or ""]`.
fn target_clusters(snapshot: &Value) -> Vec<[String; 4]> {
    snapshot["status"]["targetClusters"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|d| {
                    let score = &d["clusterScore"];
                    let score = if score.is_null() {
                        String::new()
                    } else {
                        format!(
                            "{}/{}",
                            text(&score["affinityScore"]),
                            text(&score["priorityScore"])
                        )
                    };
                    [
                        text(&d["clusterName"]),
                        text(&d["selected"]),
                        text(&d["reason"]),
                        score,
                    ]
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A decision as `target_clusters` prints it.
fn decision(cluster: &str, selected: bool, reason: &str, score: &str) -> [String; 4] {
    [
        cluster.into(),
        selected.to_string(),
        reason.into(),
        score.into(),
    ]
}

fn fulfilled() -> [String; 3] {
    [
        "True".into(),
        "SchedulingPolicyFulfilled".into(),
        FULFILLED.into(),
    ]
}

fn unfulfilled(found: usize) -> [String; 3] {
    [
        "False".into(),
        "SchedulingPolicyUnfulfilled".into(),
        format!(
            "could not find all clusters needed as specified by the scheduling policy, found \
             {found} cluster(s) instead"
        ),
    ]
}

/// The names of a placement's bindings, by cluster.
fn binding_names(output: &Value, kind: &str, placement: &str) -> Vec<String> {
    let mut all: Vec<(String, String)> = owned(output, kind, placement)
        .into_iter()
        .map(|b| {
            (
                text(&b["spec"]["targetCluster"]),
                text(&b["metadata"]["name"]),
            )
        })
        .collect();
    all.sort();
    all.into_iter().map(|(_, name)| name).collect()
}

fn no_rejections(output: &Value) -> TestResult {
    assert_eq!(output["rejections"], json!([]), "unexpected rejections");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// KubeFleet's safe-rollout examples 1 and 2
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn pick_n_affinity_picks_three_of_four_equal_clusters_larger_names_first() -> TestResult {
    let out = run("pick-n-affinity.yaml", None).await?;
    no_rejections(&out)?;
    assert_eq!(
        bindings(&out, CRB, "crp-1"),
        ["cluster-2=Bound", "cluster-3=Bound", "cluster-4=Bound"]
    );
    for cluster in ["cluster-2", "cluster-3", "cluster-4"] {
        let b = binding(&out, CRB, "crp-1", cluster)?;
        assert_eq!(b["spec"]["schedulingPolicySnapshotName"], "crp-1-0");
        let name = text(&b["metadata"]["name"]);
        let suffix = name
            .strip_prefix(&format!("crp-1-{cluster}-"))
            .ok_or_else(|| format!("binding name {name}"))?;
        assert!(
            suffix.len() == 8 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
            "binding name {name} is not <placement>-<cluster>-<8 hex>"
        );
    }
    assert_eq!(snapshots(&out, CSPS, "crp-1"), ["crp-1-0=true"]);
    let policy = object(&out, CSPS, "crp-1-0")?;
    assert_eq!(
        policy["metadata"]["annotations"]["kubernetes-fleet.io/number-of-clusters"],
        "3"
    );
    assert_eq!(condition(policy, "Scheduled")?, fulfilled());
    assert_eq!(
        target_clusters(policy),
        [
            decision("cluster-2", true, PICKED, "0/0"),
            decision("cluster-3", true, PICKED, "0/0"),
            decision("cluster-4", true, PICKED, "0/0"),
            decision("cluster-1", false, NOT_PICKED, "0/0"),
        ]
    );
    let crp = object(&out, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [
            picked("cluster-2", 0, 0),
            picked("cluster-3", 0, 0),
            picked("cluster-4", 0, 0)
        ]
    );
    assert_eq!(
        crp["status"]["selectedResources"],
        json!([
            {"kind": "Namespace", "name": "test-ns", "version": "v1"},
            {"group": "apps", "kind": "Deployment", "name": "web", "namespace": "test-ns",
             "version": "v1"}
        ])
    );
    assert_eq!(crp["status"]["observedResourceIndex"], "0");
    assert_eq!(snapshots(&out, CRS, "crp-1"), ["crp-1-0-snapshot=true"]);
    Ok(())
}

#[tokio::test]
async fn pick_n_policy_change_west_to_east_reschedules_and_unschedules_the_old() -> TestResult {
    // Steps 1-8: loc: west.
    let west = run("pick-n-west-to-east.yaml", Some(8)).await?;
    no_rejections(&west)?;
    assert_eq!(
        bindings(&west, CRB, "crp-1"),
        ["cluster-1=Bound", "cluster-2=Bound"]
    );
    assert_eq!(snapshots(&west, CSPS, "crp-1"), ["crp-1-0=true"]);
    let crp = object(&west, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [picked("cluster-1", 0, 0), picked("cluster-2", 0, 0)]
    );
    assert_eq!(
        target_clusters(object(&west, CSPS, "crp-1-0")?),
        [
            decision("cluster-1", true, PICKED, "0/0"),
            decision("cluster-2", true, PICKED, "0/0"),
            decision("cluster-3", false, AFFINITY_UNMATCHED, ""),
            decision("cluster-4", false, AFFINITY_UNMATCHED, ""),
        ]
    );
    let west_names = binding_names(&west, CRB, "crp-1");

    // Step 9: loc: east — a new policy snapshot.
    let east = run("pick-n-west-to-east.yaml", Some(9)).await?;
    no_rejections(&east)?;
    assert_eq!(
        bindings(&east, CRB, "crp-1"),
        [
            "cluster-1=Unscheduled",
            "cluster-2=Unscheduled",
            "cluster-3=Bound",
            "cluster-4=Bound"
        ]
    );
    assert_eq!(
        snapshots(&east, CSPS, "crp-1"),
        ["crp-1-0=false", "crp-1-1=true"]
    );
    for cluster in ["cluster-1", "cluster-2"] {
        let b = binding(&east, CRB, "crp-1", cluster)?;
        assert_eq!(b["metadata"]["annotations"][PREVIOUS_STATE], "Bound");
        assert_eq!(b["spec"]["schedulingPolicySnapshotName"], "crp-1-0");
    }
    for cluster in ["cluster-3", "cluster-4"] {
        let b = binding(&east, CRB, "crp-1", cluster)?;
        assert_eq!(b["spec"]["schedulingPolicySnapshotName"], "crp-1-1");
    }
    let crp = object(&east, CRP, "crp-1")?;
    assert_eq!(crp["metadata"]["generation"], 2);
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [picked("cluster-3", 0, 0), picked("cluster-4", 0, 0)]
    );
    assert_eq!(
        target_clusters(object(&east, CSPS, "crp-1-1")?),
        [
            decision("cluster-3", true, PICKED, "0/0"),
            decision("cluster-4", true, PICKED, "0/0"),
            decision("cluster-1", false, AFFINITY_UNMATCHED, ""),
            decision("cluster-2", false, AFFINITY_UNMATCHED, ""),
        ]
    );
    assert_eq!(crp["status"]["observedResourceIndex"], "0");
    assert_eq!(snapshots(&east, CRS, "crp-1"), ["crp-1-0-snapshot=true"]);

    // Steps 10-11: back to loc: west — the Unscheduled bindings are re-picked in place.
    let back = run("pick-n-west-to-east.yaml", None).await?;
    no_rejections(&back)?;
    assert_eq!(
        bindings(&back, CRB, "crp-1"),
        [
            "cluster-1=Bound",
            "cluster-2=Bound",
            "cluster-3=Unscheduled",
            "cluster-4=Unscheduled"
        ]
    );
    assert_eq!(
        snapshots(&back, CSPS, "crp-1"),
        ["crp-1-0=false", "crp-1-1=false", "crp-1-2=true"]
    );
    let back_names = binding_names(&back, CRB, "crp-1");
    assert_eq!(back_names[..2], west_names[..], "the same binding objects");
    for cluster in ["cluster-1", "cluster-2"] {
        let b = binding(&back, CRB, "crp-1", cluster)?;
        assert_eq!(b["spec"]["schedulingPolicySnapshotName"], "crp-1-2");
        assert!(b["metadata"]["annotations"][PREVIOUS_STATE].is_null());
    }
    for cluster in ["cluster-3", "cluster-4"] {
        let b = binding(&back, CRB, "crp-1", cluster)?;
        assert_eq!(b["metadata"]["annotations"][PREVIOUS_STATE], "Bound");
    }
    let crp = object(&back, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [picked("cluster-1", 0, 0), picked("cluster-2", 0, 0)]
    );
    Ok(())
}

#[tokio::test]
async fn a_superseded_policy_snapshot_keeps_its_decisions() -> TestResult {
    let east = run("pick-n-west-to-east.yaml", Some(9)).await?;
    let mut decisions = target_clusters(object(&east, CSPS, "crp-1-0")?);
    decisions.sort();
    assert_eq!(
        decisions,
        [
            decision("cluster-1", true, PICKED, "0/0"),
            decision("cluster-2", true, PICKED, "0/0"),
            decision("cluster-3", false, AFFINITY_UNMATCHED, ""),
            decision("cluster-4", false, AFFINITY_UNMATCHED, ""),
        ]
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// KubeFleet's scheduling: taints, tolerations, PickFixed
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn taints_repel_new_placements_unless_tolerated_and_never_evict() -> TestResult {
    let out = run("taints-and-tolerations.yaml", None).await?;
    let gpu_taint = "ClusterUnschedulable, taint &{Key:gpu-workload Value:true \
                     Effect:NoSchedule} cannot be tolerated";
    let maintenance_taint = "ClusterUnschedulable, taint &{Key:maintenance Value: Effect:NoSchedule} cannot be tolerated";

    // Untolerated: member-1 is filtered out; the later taint on member-2 does not evict.
    assert_eq!(bindings(&out, CRB, "plain"), ["member-2=Bound"]);
    let plain = object(&out, CRP, "plain")?;
    assert_eq!(condition(plain, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(placement_statuses(plain), [picked("member-2", 0, 0)]);
    assert_eq!(
        target_clusters(object(&out, CSPS, "plain-0")?),
        [
            decision("member-2", true, PICKED, "0/0"),
            decision("member-1", false, gpu_taint, ""),
        ]
    );

    // Exists tolerates the taint whatever its value.
    assert_eq!(
        bindings(&out, CRB, "tolerant"),
        ["member-1=Bound", "member-2=Bound"]
    );
    let tolerant = object(&out, CRP, "tolerant")?;
    assert_eq!(
        placement_statuses(tolerant),
        [picked("member-1", 0, 0), picked("member-2", 0, 0)]
    );

    // Equal needs the same value.
    assert_eq!(bindings(&out, CRB, "equal"), ["member-2=Bound"]);
    assert_eq!(
        target_clusters(object(&out, CSPS, "equal-0")?),
        [
            decision("member-2", true, PICKED, "0/0"),
            decision("member-1", false, gpu_taint, ""),
        ]
    );

    // PickN created after both clusters are tainted finds nothing.
    assert_eq!(bindings(&out, CRB, "late"), Vec::<String>::new());
    let late = object(&out, CRP, "late")?;
    assert_eq!(condition(late, CRP_SCHEDULED)?, unfulfilled(0));
    assert_eq!(placement_statuses(late), [failed(gpu_taint)]);
    assert_eq!(
        target_clusters(object(&out, CSPS, "late-0")?),
        [
            decision("member-1", false, gpu_taint, ""),
            decision("member-2", false, maintenance_taint, ""),
        ]
    );

    // Removing a toleration is refused; the placement is unchanged.
    assert_eq!(
        out["rejections"],
        json!([{"step": 7, "code": "ImmutableField",
                "message": "spec.policy.tolerations: tolerations cannot be updated or removed, only added"}])
    );
    assert_eq!(tolerant["metadata"]["generation"], 1);
    assert_eq!(
        tolerant["spec"]["policy"]["tolerations"],
        json!([{"key": "gpu-workload", "operator": "Exists"}])
    );
    for placement in ["plain", "tolerant", "equal", "late"] {
        assert_eq!(
            snapshots(&out, CSPS, placement),
            [format!("{placement}-0=true")]
        );
    }
    Ok(())
}

#[tokio::test]
async fn pick_fixed_ignores_taints_reports_missing_names_and_fills_up_later() -> TestResult {
    let before = run("pick-fixed.yaml", Some(4)).await?;
    no_rejections(&before)?;
    assert_eq!(bindings(&before, CRB, "fixed"), ["prod-cluster-1=Bound"]);
    let crp = object(&before, CRP, "fixed")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, unfulfilled(1));
    assert_eq!(
        placement_statuses(crp),
        [
            picked_fixed("prod-cluster-1"),
            failed("specified cluster is not found")
        ]
    );
    let policy = object(&before, CSPS, "fixed-0")?;
    assert_eq!(condition(policy, "Scheduled")?, unfulfilled(1));
    assert_eq!(
        target_clusters(policy),
        [
            decision("prod-cluster-1", true, PICKED, ""),
            decision(
                "prod-cluster-2",
                false,
                "specified cluster is not found",
                ""
            ),
        ]
    );
    assert!(
        binding(&before, CRB, "fixed", "prod-cluster-1")?["spec"]["clusterDecision"]
            ["clusterScore"]
            .is_null(),
        "PickFixed decisions carry no score"
    );
    let first = binding_names(&before, CRB, "fixed");

    let after = run("pick-fixed.yaml", None).await?;
    no_rejections(&after)?;
    assert_eq!(
        bindings(&after, CRB, "fixed"),
        ["prod-cluster-1=Bound", "prod-cluster-2=Bound"]
    );
    assert_eq!(binding_names(&after, CRB, "fixed")[..1], first[..]);
    assert_eq!(snapshots(&after, CSPS, "fixed"), ["fixed-0=true"]);
    let crp = object(&after, CRP, "fixed")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [
            picked_fixed("prod-cluster-1"),
            picked_fixed("prod-cluster-2")
        ]
    );
    assert_eq!(
        target_clusters(object(&after, CSPS, "fixed-0")?),
        [
            decision("prod-cluster-1", true, PICKED, ""),
            decision("prod-cluster-2", true, PICKED, ""),
        ]
    );
    assert_eq!(crp["status"]["observedResourceIndex"], "0");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// KubeFleet's scheduler: what triggers scheduling, IgnoredDuringExecution
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn pick_n_scale_out_and_in_keep_the_policy_snapshot_and_existing_bindings() -> TestResult {
    // Steps 1-8: PickN 2.
    let two = run("pick-n-scale-out.yaml", Some(8)).await?;
    no_rejections(&two)?;
    assert_eq!(
        bindings(&two, CRB, "crp-1"),
        ["cluster-3=Bound", "cluster-4=Bound"]
    );
    assert_eq!(snapshots(&two, CSPS, "crp-1"), ["crp-1-0=true"]);
    let policy = object(&two, CSPS, "crp-1-0")?;
    assert_eq!(policy["spec"]["policyHash"], PICK_N_HASH);
    assert_eq!(
        policy["metadata"]["annotations"],
        json!({"kubernetes-fleet.io/CRP-generation": "1",
               "kubernetes-fleet.io/number-of-clusters": "2"})
    );
    assert_eq!(
        target_clusters(policy),
        [
            decision("cluster-3", true, PICKED, "0/0"),
            decision("cluster-4", true, PICKED, "0/0"),
            decision("cluster-2", false, NOT_PICKED, "0/0"),
            decision("cluster-1", false, NOT_PICKED, "0/0"),
        ]
    );
    let kept = binding_names(&two, CRB, "crp-1");

    // Steps 9-10: PickN 3 — the same snapshot, one more binding.
    let three = run("pick-n-scale-out.yaml", Some(10)).await?;
    no_rejections(&three)?;
    assert_eq!(
        bindings(&three, CRB, "crp-1"),
        ["cluster-2=Bound", "cluster-3=Bound", "cluster-4=Bound"]
    );
    assert_eq!(binding_names(&three, CRB, "crp-1")[1..], kept[..]);
    assert_eq!(snapshots(&three, CSPS, "crp-1"), ["crp-1-0=true"]);
    let policy = object(&three, CSPS, "crp-1-0")?;
    assert_eq!(policy["spec"]["policyHash"], PICK_N_HASH);
    assert_eq!(
        policy["metadata"]["annotations"],
        json!({"kubernetes-fleet.io/CRP-generation": "2",
               "kubernetes-fleet.io/number-of-clusters": "3"})
    );
    for cluster in ["cluster-2", "cluster-3", "cluster-4"] {
        assert_eq!(
            binding(&three, CRB, "crp-1", cluster)?["spec"]["schedulingPolicySnapshotName"],
            "crp-1-0"
        );
    }
    let crp = object(&three, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [
            picked("cluster-2", 0, 0),
            picked("cluster-3", 0, 0),
            picked("cluster-4", 0, 0)
        ]
    );
    assert_eq!(
        target_clusters(policy),
        [
            decision("cluster-2", true, PICKED, "0/0"),
            decision("cluster-3", true, PICKED, "0/0"),
            decision("cluster-4", true, PICKED, "0/0"),
            decision("cluster-1", false, NOT_PICKED, "0/0"),
        ]
    );

    // Steps 11-12: PickN 1 — scale in, lowest-ranked Scheduled bindings first.
    let one = run("pick-n-scale-out.yaml", None).await?;
    no_rejections(&one)?;
    assert_eq!(
        bindings(&one, CRB, "crp-1"),
        [
            "cluster-2=Unscheduled",
            "cluster-3=Unscheduled",
            "cluster-4=Bound"
        ]
    );
    assert_eq!(snapshots(&one, CSPS, "crp-1"), ["crp-1-0=true"]);
    let policy = object(&one, CSPS, "crp-1-0")?;
    assert_eq!(
        policy["metadata"]["annotations"]["kubernetes-fleet.io/number-of-clusters"],
        "1"
    );
    assert_eq!(
        target_clusters(policy),
        [decision("cluster-4", true, PICKED, "0/0")]
    );
    let crp = object(&one, CRP, "crp-1")?;
    assert_eq!(crp["metadata"]["generation"], 3);
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(placement_statuses(crp), [picked("cluster-4", 0, 0)]);
    for cluster in ["cluster-2", "cluster-3"] {
        let b = binding(&one, CRB, "crp-1", cluster)?;
        assert_eq!(b["metadata"]["annotations"][PREVIOUS_STATE], "Bound");
    }
    Ok(())
}

#[tokio::test]
async fn pick_n_without_enough_clusters_says_how_many_it_found_and_fills_up_later() -> TestResult {
    let short = run("pick-n-not-enough.yaml", Some(4)).await?;
    no_rejections(&short)?;
    assert_eq!(
        bindings(&short, CRB, "crp-1"),
        ["cluster-1=Bound", "cluster-2=Bound"]
    );
    let crp = object(&short, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, unfulfilled(2));
    assert_eq!(
        placement_statuses(crp),
        [picked("cluster-1", 0, 0), picked("cluster-2", 0, 0)],
        "no empty-name entry without an unselected decision"
    );
    let policy = object(&short, CSPS, "crp-1-0")?;
    assert_eq!(condition(policy, "Scheduled")?, unfulfilled(2));
    assert_eq!(
        target_clusters(policy),
        [
            decision("cluster-1", true, PICKED, "0/0"),
            decision("cluster-2", true, PICKED, "0/0"),
        ]
    );
    let first = binding_names(&short, CRB, "crp-1");

    let full = run("pick-n-not-enough.yaml", None).await?;
    no_rejections(&full)?;
    assert_eq!(
        bindings(&full, CRB, "crp-1"),
        ["cluster-1=Bound", "cluster-2=Bound", "cluster-3=Bound"]
    );
    assert_eq!(binding_names(&full, CRB, "crp-1")[..2], first[..]);
    assert_eq!(snapshots(&full, CSPS, "crp-1"), ["crp-1-0=true"]);
    let crp = object(&full, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [
            picked("cluster-1", 0, 0),
            picked("cluster-2", 0, 0),
            picked("cluster-3", 0, 0)
        ]
    );
    Ok(())
}

#[tokio::test]
async fn pick_all_picks_up_clusters_that_become_eligible_and_keeps_the_rest() -> TestResult {
    // Steps 1-3: member-2 is registered but has never reported.
    let first = run("pick-all-new-cluster.yaml", Some(3)).await?;
    no_rejections(&first)?;
    assert_eq!(bindings(&first, CRB, "all"), ["member-1=Bound"]);
    let crp = object(&first, CRP, "all")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(placement_statuses(crp), [picked("member-1", 0, 0)]);
    let decisions = target_clusters(object(&first, CSPS, "all-0")?);
    assert_eq!(decisions.len(), 2);
    assert_eq!(decisions[0], decision("member-1", true, PICKED, "0/0"));
    assert_eq!(
        decisions[1][..2],
        ["member-2".to_owned(), "false".to_owned()]
    );
    let member_1 = binding_names(&first, CRB, "all");

    // Steps 4-6: member-2 joins; steps 7-9: member-3 joins with env: dev.
    let joined = run("pick-all-new-cluster.yaml", Some(9)).await?;
    no_rejections(&joined)?;
    assert_eq!(
        bindings(&joined, CRB, "all"),
        ["member-1=Bound", "member-2=Bound"]
    );
    assert_eq!(binding_names(&joined, CRB, "all")[..1], member_1[..]);
    assert_eq!(
        target_clusters(object(&joined, CSPS, "all-0")?),
        [
            decision("member-1", true, PICKED, "0/0"),
            decision("member-2", true, PICKED, "0/0"),
            decision("member-3", false, AFFINITY_UNMATCHED, ""),
        ]
    );

    // Step 10: member-3 relabelled env: prod; step 11: member-1 relabelled env: dev.
    let out = run("pick-all-new-cluster.yaml", None).await?;
    no_rejections(&out)?;
    assert_eq!(
        bindings(&out, CRB, "all"),
        ["member-1=Bound", "member-2=Bound", "member-3=Bound"]
    );
    assert_eq!(
        binding_names(&out, CRB, "all")[..2],
        binding_names(&joined, CRB, "all")[..]
    );
    assert_eq!(snapshots(&out, CSPS, "all"), ["all-0=true"]);
    for cluster in ["member-1", "member-2", "member-3"] {
        assert_eq!(
            binding(&out, CRB, "all", cluster)?["spec"]["schedulingPolicySnapshotName"],
            "all-0"
        );
    }
    let crp = object(&out, CRP, "all")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [
            picked("member-1", 0, 0),
            picked("member-2", 0, 0),
            picked("member-3", 0, 0)
        ]
    );
    assert_eq!(
        target_clusters(object(&out, CSPS, "all-0")?),
        [
            decision("member-1", true, PICKED, "0/0"),
            decision("member-2", true, PICKED, "0/0"),
            decision("member-3", true, PICKED, "0/0"),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_member_that_never_reported_is_not_online_yet() -> TestResult {
    let out = run("pick-all-new-cluster.yaml", Some(3)).await?;
    assert_eq!(
        target_clusters(object(&out, CSPS, "all-0")?),
        [
            decision("member-1", true, PICKED, "0/0"),
            decision(
                "member-2",
                false,
                "ClusterUnschedulable, cluster is not connected to the fleet: member agent not \
                 online yet",
                ""
            ),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_silent_cluster_is_not_picked_but_keeps_what_it_has_and_returns() -> TestResult {
    // Steps 1-3: only member-1 has reported.
    let first = run("heartbeat-stops.yaml", Some(3)).await?;
    no_rejections(&first)?;
    assert_eq!(bindings(&first, CRB, "before"), ["member-1=Bound"]);

    // Steps 4-5: member-2 joins and "before" picks it.
    let both = run("heartbeat-stops.yaml", Some(5)).await?;
    assert_eq!(
        bindings(&both, CRB, "before"),
        ["member-1=Bound", "member-2=Bound"]
    );
    let before_names = binding_names(&both, CRB, "before");

    // Steps 6-9: member-1 silent for 310 s; "after" is created.
    let silent = run("heartbeat-stops.yaml", Some(9)).await?;
    no_rejections(&silent)?;
    let member_1 = object(&silent, "MemberCluster", "member-1")?;
    let healthy = condition(member_1, "Healthy")?;
    assert_eq!(healthy[0], "False");
    assert_eq!(
        condition(object(&silent, "MemberCluster", "member-2")?, "Healthy")?[0],
        "True"
    );
    assert_eq!(bindings(&silent, CRB, "after"), ["member-2=Bound"]);
    let after = object(&silent, CRP, "after")?;
    assert_eq!(condition(after, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(placement_statuses(after), [picked("member-2", 0, 0)]);
    let decisions = target_clusters(object(&silent, CSPS, "after-0")?);
    assert_eq!(decisions.len(), 2);
    assert_eq!(decisions[0], decision("member-2", true, PICKED, "0/0"));
    assert_eq!(
        decisions[1][..2],
        ["member-1".to_owned(), "false".to_owned()]
    );
    // IgnoredDuringExecution: the earlier placement keeps member-1, binding for binding.
    assert_eq!(
        bindings(&silent, CRB, "before"),
        ["member-1=Bound", "member-2=Bound"]
    );
    assert_eq!(binding_names(&silent, CRB, "before"), before_names);
    assert_eq!(
        placement_statuses(object(&silent, CRP, "before")?),
        [picked("member-1", 0, 0), picked("member-2", 0, 0)]
    );

    // Step 10: member-1 is back; "after" picks it up too.
    let back = run("heartbeat-stops.yaml", None).await?;
    no_rejections(&back)?;
    assert_eq!(
        bindings(&back, CRB, "after"),
        ["member-1=Bound", "member-2=Bound"]
    );
    assert_eq!(
        binding_names(&back, CRB, "after")[1..],
        binding_names(&silent, CRB, "after")[..]
    );
    assert_eq!(snapshots(&back, CSPS, "after"), ["after-0=true"]);
    assert_eq!(
        placement_statuses(object(&back, CRP, "after")?),
        [picked("member-1", 0, 0), picked("member-2", 0, 0)]
    );
    assert_eq!(binding_names(&back, CRB, "before"), before_names);
    Ok(())
}

#[tokio::test]
async fn the_heartbeat_timeout_reason_rounds_minutes_like_go() -> TestResult {
    let out = run("heartbeat-stops.yaml", Some(9)).await?;
    assert_eq!(
        target_clusters(object(&out, CSPS, "after-0")?),
        [
            decision("member-2", true, PICKED, "0/0"),
            decision(
                "member-1",
                false,
                "ClusterUnschedulable, cluster is not connected to the fleet: no recent \
                 heartbeat signals (last received 5.17 minutes ago)",
                ""
            ),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_cluster_leaving_loses_its_binding_at_once_and_pick_n_refills() -> TestResult {
    let first = run("cluster-leaves.yaml", Some(7)).await?;
    no_rejections(&first)?;
    assert_eq!(
        bindings(&first, CRB, "crp-1"),
        ["cluster-3=Bound", "cluster-4=Bound"]
    );
    let names = binding_names(&first, CRB, "crp-1");

    let out = run("cluster-leaves.yaml", None).await?;
    no_rejections(&out)?;
    // Its agent had joined: the member stays, leaving, until the agent confirms.
    let leaving = object(&out, "MemberCluster", "cluster-4")?;
    assert!(leaving["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        bindings(&out, CRB, "crp-1"),
        ["cluster-2=Bound", "cluster-3=Bound"]
    );
    assert_eq!(binding_names(&out, CRB, "crp-1")[1..], names[..1]);
    assert_eq!(snapshots(&out, CSPS, "crp-1"), ["crp-1-0=true"]);
    for cluster in ["cluster-2", "cluster-3"] {
        assert_eq!(
            binding(&out, CRB, "crp-1", cluster)?["spec"]["schedulingPolicySnapshotName"],
            "crp-1-0"
        );
    }
    let crp = object(&out, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [picked("cluster-2", 0, 0), picked("cluster-3", 0, 0)]
    );
    assert_eq!(
        target_clusters(object(&out, CSPS, "crp-1-0")?),
        [
            decision("cluster-2", true, PICKED, "0/0"),
            decision("cluster-3", true, PICKED, "0/0"),
            decision("cluster-1", false, NOT_PICKED, "0/0"),
            // KubeFleet's eligibility filter: a deleted cluster "has left the fleet".
            decision(
                "cluster-4",
                false,
                "ClusterUnschedulable, cluster has left the fleet",
                ""
            ),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn resource_only_changes_take_snapshots_but_never_reschedule() -> TestResult {
    // Steps 1-6: cluster-2 is picked.
    let first = run("resource-change-no-reschedule.yaml", Some(6)).await?;
    no_rejections(&first)?;
    assert_eq!(bindings(&first, CRB, "crp-1"), ["cluster-2=Bound"]);
    let names = binding_names(&first, CRB, "crp-1");
    assert_eq!(snapshots(&first, CRS, "crp-1"), ["crp-1-0-snapshot=true"]);
    let crp = object(&first, CRP, "crp-1")?;
    assert_eq!(crp["status"]["observedResourceIndex"], "0");
    assert_eq!(
        target_clusters(object(&first, CSPS, "crp-1-0")?),
        [
            decision("cluster-2", true, PICKED, "0/0"),
            decision("cluster-1", false, NOT_PICKED, "0/0"),
        ]
    );

    // Steps 7-8: cluster-2 no longer matches; the deployment changes.
    let changed = run("resource-change-no-reschedule.yaml", Some(8)).await?;
    no_rejections(&changed)?;
    assert_eq!(bindings(&changed, CRB, "crp-1"), ["cluster-2=Bound"]);
    assert_eq!(binding_names(&changed, CRB, "crp-1"), names);
    assert_eq!(snapshots(&changed, CSPS, "crp-1"), ["crp-1-0=true"]);
    assert_eq!(
        snapshots(&changed, CRS, "crp-1"),
        ["crp-1-0-snapshot=false", "crp-1-1-snapshot=true"]
    );
    let image = &object(&changed, CRS, "crp-1-1-snapshot")?["spec"]["selectedResources"][1]["spec"]
        ["template"]["spec"]["containers"][0]["image"];
    assert_eq!(image, "nginx:1.28");
    let crp = object(&changed, CRP, "crp-1")?;
    assert_eq!(crp["status"]["observedResourceIndex"], "1");
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(placement_statuses(crp), [picked("cluster-2", 0, 0)]);

    // Steps 9-10: the resource selectors change.
    let out = run("resource-change-no-reschedule.yaml", None).await?;
    no_rejections(&out)?;
    assert_eq!(bindings(&out, CRB, "crp-1"), ["cluster-2=Bound"]);
    assert_eq!(binding_names(&out, CRB, "crp-1"), names);
    assert_eq!(
        binding(&out, CRB, "crp-1", "cluster-2")?["spec"]["schedulingPolicySnapshotName"],
        "crp-1-0"
    );
    assert_eq!(snapshots(&out, CSPS, "crp-1"), ["crp-1-0=true"]);
    let policy = object(&out, CSPS, "crp-1-0")?;
    assert_eq!(
        policy["metadata"]["annotations"]["kubernetes-fleet.io/CRP-generation"],
        "2"
    );
    assert_eq!(policy["status"]["observedCRPGeneration"], 2);
    assert_eq!(
        snapshots(&out, CRS, "crp-1"),
        [
            "crp-1-0-snapshot=false",
            "crp-1-1-snapshot=false",
            "crp-1-2-snapshot=true"
        ]
    );
    let crp = object(&out, CRP, "crp-1")?;
    assert_eq!(crp["metadata"]["generation"], 2);
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(placement_statuses(crp), [picked("cluster-2", 0, 0)]);
    assert_eq!(crp["status"]["observedResourceIndex"], "2");
    assert_eq!(
        crp["status"]["selectedResources"],
        json!([
            {"kind": "Namespace", "name": "test-ns", "version": "v1"},
            {"kind": "Namespace", "name": "test-ns-2", "version": "v1"},
            {"group": "apps", "kind": "Deployment", "name": "web", "namespace": "test-ns",
             "version": "v1"}
        ])
    );
    Ok(())
}

#[tokio::test]
async fn a_pick_n_cycle_with_nothing_to_do_records_only_the_selected_clusters() -> TestResult {
    let out = run("resource-change-no-reschedule.yaml", None).await?;
    assert_eq!(
        target_clusters(object(&out, CSPS, "crp-1-0")?),
        [decision("cluster-2", true, PICKED, "0/0")]
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// KubeFleet's scheduling: topology spread, properties
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn topology_spread_picks_one_cluster_per_env_domain() -> TestResult {
    let out = run("topology-spread.yaml", None).await?;
    no_rejections(&out)?;
    assert_eq!(
        bindings(&out, CRB, "crp-1"),
        ["cluster-2=Bound", "cluster-4=Bound"]
    );
    assert_eq!(snapshots(&out, CSPS, "crp-1"), ["crp-1-0=true"]);
    let policy = object(&out, CSPS, "crp-1-0")?;
    assert_eq!(condition(policy, "Scheduled")?, fulfilled());
    assert_eq!(
        target_clusters(policy),
        [
            decision("cluster-2", true, PICKED, "0/1"),
            decision("cluster-4", true, PICKED, "0/-1"),
            decision("cluster-1", false, NOT_PICKED, "0/1"),
            decision(
                "cluster-3",
                false,
                "ClusterUnschedulable, violated topology spread constraint \"env\" (max skew 1)",
                ""
            ),
        ]
    );
    let crp = object(&out, CRP, "crp-1")?;
    assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(crp),
        [picked("cluster-2", 0, 1), picked("cluster-4", 0, -1)]
    );
    assert_eq!(
        crp["status"]["selectedResources"],
        json!([{"kind": "Namespace", "name": "test-deployment", "version": "v1"}])
    );
    assert_eq!(crp["status"]["observedResourceIndex"], "0");
    assert_eq!(crp["spec"]["revisionHistoryLimit"], 100);
    Ok(())
}

#[tokio::test]
async fn required_property_selectors_filter_by_reported_quantities() -> TestResult {
    let first = run("property-selector.yaml", Some(8)).await?;
    no_rejections(&first)?;
    assert_eq!(
        bindings(&first, CRB, "many-nodes"),
        ["large=Bound", "medium=Bound"]
    );
    assert_eq!(
        target_clusters(object(&first, CSPS, "many-nodes-0")?),
        [
            decision("large", true, PICKED, "0/0"),
            decision("medium", true, PICKED, "0/0"),
            decision("silent", false, AFFINITY_UNMATCHED, ""),
            decision("small", false, AFFINITY_UNMATCHED, ""),
        ]
    );
    assert_eq!(bindings(&first, CRB, "free-cpu"), ["medium=Bound"]);
    assert_eq!(
        target_clusters(object(&first, CSPS, "free-cpu-0")?),
        [
            decision("medium", true, PICKED, "0/0"),
            decision("large", false, AFFINITY_UNMATCHED, ""),
            decision("silent", false, AFFINITY_UNMATCHED, ""),
            decision("small", false, AFFINITY_UNMATCHED, ""),
        ]
    );
    let names = binding_names(&first, CRB, "many-nodes");

    let out = run("property-selector.yaml", None).await?;
    no_rejections(&out)?;
    let small = object(&out, "MemberCluster", "small")?;
    assert_eq!(
        small["status"]["properties"]["kubernetes-fleet.io/node-count"]["value"],
        "12"
    );
    assert_eq!(
        bindings(&out, CRB, "many-nodes"),
        ["large=Bound", "medium=Bound", "small=Bound"]
    );
    assert_eq!(binding_names(&out, CRB, "many-nodes")[..2], names[..]);
    assert_eq!(bindings(&out, CRB, "free-cpu"), ["medium=Bound"]);
    for placement in ["many-nodes", "free-cpu"] {
        assert_eq!(
            snapshots(&out, CSPS, placement),
            [format!("{placement}-0=true")]
        );
        assert_eq!(
            condition(object(&out, CRP, placement)?, CRP_SCHEDULED)?,
            fulfilled()
        );
    }
    assert_eq!(
        placement_statuses(object(&out, CRP, "many-nodes")?),
        [
            picked("large", 0, 0),
            picked("medium", 0, 0),
            picked("small", 0, 0)
        ]
    );
    assert_eq!(
        placement_statuses(object(&out, CRP, "free-cpu")?),
        [picked("medium", 0, 0)]
    );
    Ok(())
}

#[tokio::test]
async fn a_property_sorter_scores_by_node_count_in_either_order() -> TestResult {
    let out = run("property-sorter.yaml", None).await?;
    no_rejections(&out)?;
    assert_eq!(
        bindings(&out, CRB, "most-nodes"),
        ["large=Bound", "medium=Bound"]
    );
    assert_eq!(
        target_clusters(object(&out, CSPS, "most-nodes-0")?),
        [
            decision("large", true, PICKED, "20/0"),
            decision("medium", true, PICKED, "10/0"),
            decision("small", false, NOT_PICKED, "0/0"),
        ]
    );
    let most = object(&out, CRP, "most-nodes")?;
    assert_eq!(condition(most, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(most),
        [picked("large", 20, 0), picked("medium", 10, 0)]
    );

    assert_eq!(
        bindings(&out, CRB, "fewest-nodes"),
        ["medium=Bound", "small=Bound"]
    );
    assert_eq!(
        target_clusters(object(&out, CSPS, "fewest-nodes-0")?),
        [
            decision("medium", true, PICKED, "10/0"),
            decision("small", true, PICKED, "20/0"),
            decision("large", false, NOT_PICKED, "0/0"),
        ]
    );
    let fewest = object(&out, CRP, "fewest-nodes")?;
    assert_eq!(condition(fewest, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(
        placement_statuses(fewest),
        [picked("medium", 10, 0), picked("small", 20, 0)]
    );
    assert_eq!(
        binding(&out, CRB, "most-nodes", "large")?["spec"]["clusterDecision"]["clusterScore"],
        json!({"affinityScore": 20, "priorityScore": 0})
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// KubeFleet's placements: resource selection, ResourcePlacement, reserved namespaces
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn namespace_only_selects_the_namespace_without_its_contents() -> TestResult {
    let out = run("namespace-only.yaml", None).await?;
    no_rejections(&out)?;
    let all = [
        "dev-cluster-1=Bound",
        "prod-cluster-1=Bound",
        "prod-cluster-2=Bound",
    ];
    let statuses = [
        picked("dev-cluster-1", 0, 0),
        picked("prod-cluster-1", 0, 0),
        picked("prod-cluster-2", 0, 0),
    ];
    for placement in ["app-namespace-crp", "whole-namespace-crp"] {
        assert_eq!(bindings(&out, CRB, placement), all);
        let crp = object(&out, CRP, placement)?;
        assert_eq!(condition(crp, CRP_SCHEDULED)?, fulfilled());
        assert_eq!(placement_statuses(crp), statuses);
        assert_eq!(crp["status"]["observedResourceIndex"], "0");
        assert_eq!(
            snapshots(&out, CSPS, placement),
            [format!("{placement}-0=true")]
        );
        assert_eq!(
            object(&out, CSPS, &format!("{placement}-0"))?["spec"]["policyHash"],
            PICK_ALL_HASH
        );
    }
    let only = object(&out, CRP, "app-namespace-crp")?;
    assert_eq!(
        only["status"]["selectedResources"],
        json!([{"kind": "Namespace", "name": "my-app", "version": "v1"}])
    );
    let snapshot = object(&out, CRS, "app-namespace-crp-0-snapshot")?;
    assert_eq!(
        snapshot["spec"]["selectedResources"],
        json!([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "my-app"}}])
    );
    let whole = object(&out, CRP, "whole-namespace-crp")?;
    assert_eq!(
        whole["status"]["selectedResources"],
        json!([
            {"kind": "Namespace", "name": "my-app", "version": "v1"},
            {"kind": "ConfigMap", "name": "app-config", "namespace": "my-app", "version": "v1"},
            {"kind": "ConfigMap", "name": "app-flags", "namespace": "my-app", "version": "v1"},
            {"kind": "ConfigMap", "name": "other-team-config", "namespace": "my-app",
             "version": "v1"}
        ])
    );
    Ok(())
}

#[tokio::test]
async fn a_resource_placement_places_labelled_configmaps_on_fixed_clusters() -> TestResult {
    let out = run("resource-placement.yaml", None).await?;
    no_rejections(&out)?;
    // The fleet admin's CRP: the namespace only, everywhere.
    assert_eq!(
        bindings(&out, CRB, "app-namespace-crp"),
        [
            "dev-cluster-1=Bound",
            "prod-cluster-1=Bound",
            "prod-cluster-2=Bound"
        ]
    );
    assert_eq!(
        object(&out, CRP, "app-namespace-crp")?["status"]["selectedResources"],
        json!([{"kind": "Namespace", "name": "my-app", "version": "v1"}])
    );
    // The application team's RP: namespaced objects in my-app.
    assert_eq!(
        bindings(&out, "ResourceBinding", "app-configs-rp"),
        ["prod-cluster-1=Bound", "prod-cluster-2=Bound"]
    );
    for b in owned(&out, "ResourceBinding", "app-configs-rp") {
        assert_eq!(b["metadata"]["namespace"], "my-app");
        assert_eq!(
            b["spec"]["schedulingPolicySnapshotName"],
            "app-configs-rp-0"
        );
    }
    assert!(
        owned(&out, CRB, "app-configs-rp").is_empty(),
        "an RP has no cluster-scoped bindings"
    );
    assert_eq!(
        snapshots(&out, "SchedulingPolicySnapshot", "app-configs-rp"),
        ["app-configs-rp-0=true"]
    );
    let policy = object(&out, "SchedulingPolicySnapshot", "app-configs-rp-0")?;
    assert_eq!(policy["metadata"]["namespace"], "my-app");
    assert_eq!(condition(policy, "Scheduled")?, fulfilled());
    assert_eq!(
        target_clusters(policy),
        [
            decision("prod-cluster-1", true, PICKED, ""),
            decision("prod-cluster-2", true, PICKED, ""),
        ]
    );
    assert_eq!(
        snapshots(&out, "ResourceSnapshot", "app-configs-rp"),
        ["app-configs-rp-0-snapshot=true"]
    );
    let resources = object(&out, "ResourceSnapshot", "app-configs-rp-0-snapshot")?;
    assert_eq!(resources["metadata"]["namespace"], "my-app");
    let names: Vec<String> = resources["spec"]["selectedResources"]
        .as_array()
        .map(|all| all.iter().map(|r| text(&r["metadata"]["name"])).collect())
        .unwrap_or_default();
    assert_eq!(names, ["app-config", "app-flags"]);
    let rp = object(&out, "ResourcePlacement", "app-configs-rp")?;
    assert_eq!(rp["metadata"]["namespace"], "my-app");
    assert_eq!(condition(rp, "ResourcePlacementScheduled")?, fulfilled());
    assert_eq!(
        placement_statuses(rp),
        [
            picked_fixed("prod-cluster-1"),
            picked_fixed("prod-cluster-2")
        ]
    );
    assert_eq!(
        rp["status"]["selectedResources"],
        json!([
            {"kind": "ConfigMap", "name": "app-config", "namespace": "my-app", "version": "v1"},
            {"kind": "ConfigMap", "name": "app-flags", "namespace": "my-app", "version": "v1"}
        ])
    );
    assert_eq!(rp["status"]["observedResourceIndex"], "0");
    Ok(())
}

#[tokio::test]
async fn selecting_a_reserved_namespace_is_invalid_until_fixed() -> TestResult {
    let invalid = |placement: &str, namespace: &str| -> [String; 3] {
        [
            "False".into(),
            "InvalidResourceSelectors".into(),
            format!(
                "The resource selectors are invalid: failed to process the request due to a \
                 client error: invalid clusterRresourcePlacement {placement}: namespace \
                 {namespace} is not allowed to propagate"
            ),
        ]
    };
    let first = run("reserved-namespace.yaml", Some(3)).await?;
    no_rejections(&first)?;
    for (placement, namespace) in [
        ("kube-system-crp", "kube-system"),
        ("fleet-crp", "fleet-member-cluster-1"),
        ("default-crp", "default"),
    ] {
        let crp = object(&first, CRP, placement)?;
        assert_eq!(
            condition(crp, CRP_SCHEDULED)?,
            invalid(placement, namespace)
        );
        assert_eq!(placement_statuses(crp), Vec::<[String; 4]>::new());
        assert!(crp["status"]["selectedResources"].is_null());
        assert!(crp["status"]["observedResourceIndex"].is_null());
    }
    assert!(objects(&first, CSPS).is_empty());
    assert!(objects(&first, CRS).is_empty());
    assert!(objects(&first, CRB).is_empty());

    let out = run("reserved-namespace.yaml", None).await?;
    no_rejections(&out)?;
    let fixed = object(&out, CRP, "kube-system-crp")?;
    assert_eq!(condition(fixed, CRP_SCHEDULED)?, fulfilled());
    assert_eq!(placement_statuses(fixed), [picked("cluster-1", 0, 0)]);
    assert_eq!(
        fixed["status"]["selectedResources"],
        json!([{"kind": "Namespace", "name": "test-ns", "version": "v1"}])
    );
    assert_eq!(fixed["status"]["observedResourceIndex"], "0");
    assert_eq!(bindings(&out, CRB, "kube-system-crp"), ["cluster-1=Bound"]);
    assert_eq!(
        snapshots(&out, CSPS, "kube-system-crp"),
        ["kube-system-crp-0=true"]
    );
    assert_eq!(
        snapshots(&out, CRS, "kube-system-crp"),
        ["kube-system-crp-0-snapshot=true"]
    );
    for (placement, namespace) in [
        ("fleet-crp", "fleet-member-cluster-1"),
        ("default-crp", "default"),
    ] {
        let crp = object(&out, CRP, placement)?;
        assert_eq!(
            condition(crp, CRP_SCHEDULED)?,
            invalid(placement, namespace)
        );
        assert!(owned(&out, CSPS, placement).is_empty());
        assert!(owned(&out, CRB, placement).is_empty());
    }
    Ok(())
}

#[tokio::test]
async fn pick_all_status_matches_the_seed_sample() -> TestResult {
    let out = run("pick-all-status-sample.yaml", None).await?;
    no_rejections(&out)?;
    let clusters = ["kind-cluster-1", "kind-cluster-2", "kind-cluster-3"];
    assert_eq!(
        bindings(&out, CRB, "crp-1"),
        [
            "kind-cluster-1=Bound",
            "kind-cluster-2=Bound",
            "kind-cluster-3=Bound"
        ]
    );
    let crp = object(&out, CRP, "crp-1")?;
    let scheduled = crp["status"]["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"] == CRP_SCHEDULED))
        .ok_or("no Scheduled condition")?;
    assert_eq!(
        *scheduled,
        json!({"lastTransitionTime": "2024-04-29T09:58:20Z", "message": FULFILLED,
               "observedGeneration": 1, "reason": "SchedulingPolicyFulfilled",
               "status": "True", "type": CRP_SCHEDULED})
    );
    assert_eq!(crp["status"]["observedResourceIndex"], "0");
    assert_eq!(placement_statuses(crp), clusters.map(|c| picked(c, 0, 0)));
    assert_eq!(
        crp["status"]["selectedResources"],
        json!([
            {"kind": "Namespace", "name": "application-1", "version": "v1"},
            {"kind": "ConfigMap", "name": "app-config-1", "namespace": "application-1",
             "version": "v1"}
        ])
    );
    // The policy snapshot sample's shape.
    let policy = object(&out, CSPS, "crp-1-0")?;
    assert_eq!(
        policy["metadata"]["labels"],
        json!({"kubernetes-fleet.io/is-latest-snapshot": "true",
               "kubernetes-fleet.io/parent-CRP": "crp-1",
               "kubernetes-fleet.io/policy-index": "0"})
    );
    assert_eq!(
        policy["metadata"]["annotations"],
        json!({"kubernetes-fleet.io/CRP-generation": "1"})
    );
    assert_eq!(policy["spec"]["policyHash"], PICK_ALL_HASH);
    assert_eq!(policy["status"]["observedCRPGeneration"], 1);
    assert_eq!(
        target_clusters(policy),
        clusters.map(|c| decision(c, true, PICKED, "0/0"))
    );
    // The resource snapshot sample's shape.
    let resources = object(&out, CRS, "crp-1-0-snapshot")?;
    assert_eq!(
        resources["metadata"]["labels"],
        json!({"kubernetes-fleet.io/is-latest-snapshot": "true",
               "kubernetes-fleet.io/parent-CRP": "crp-1",
               "kubernetes-fleet.io/resource-index": "0"})
    );
    let annotations = &resources["metadata"]["annotations"];
    assert_eq!(
        annotations["kubernetes-fleet.io/number-of-enveloped-object"],
        "0"
    );
    assert_eq!(
        annotations["kubernetes-fleet.io/number-of-resource-snapshots"],
        "1"
    );
    let hash = text(&annotations["kubernetes-fleet.io/resource-hash"]);
    assert!(
        hash.len() == 64 && hash.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
        "resource-hash {hash}"
    );
    // The binding sample's shape.
    for cluster in clusters {
        let b = binding(&out, CRB, "crp-1", cluster)?;
        assert_eq!(
            b["metadata"]["labels"],
            json!({"kubernetes-fleet.io/parent-CRP": "crp-1"})
        );
        assert_eq!(
            b["spec"]["clusterDecision"],
            json!({"clusterName": cluster, "clusterScore": {"affinityScore": 0, "priorityScore": 0},
                   "reason": PICKED, "selected": true})
        );
        assert_eq!(b["spec"]["schedulingPolicySnapshotName"], "crp-1-0");
        assert_eq!(b["spec"]["state"], "Bound");
    }
    Ok(())
}

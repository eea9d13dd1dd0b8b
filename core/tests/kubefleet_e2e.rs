//! Behaviours KubeFleet's own test suites pin (`test/e2e/` and the controllers' integration
//! tests in kubefleet-dev/kubefleet), each replayed through the fold with the scenario of the
//! KubeFleet test it names; where flotilla differs on purpose the test pins flotilla's side and
//! says why. `docs/kubefleet-behaviours.md` maps each test to its KubeFleet counterpart.

mod common;
mod eviction_support;

use common::{Hub, namespace};
use eviction_support::{clusters_in, conditions, evict, executed, place};
use flotilla_core::decision::Decision;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::availability::{Availability, judge};
use flotilla_core::query::placement::BindingState;
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_core::{Differences, Input, WorkReport};
use serde_json::{Value, json};

// ---- the e2e fleet: member-2 is the canary, member-1 and member-3 are prod ----

/// `app-config` in `test-ns`, with `data` as given (KubeFleet's `appConfigMap`).
fn config_map(data: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app-config", "namespace": "test-ns"}, "data": {"data": data}})
}

/// A placement `crp` of `test-ns` with this policy and strategy.
fn placement(policy: &Value, strategy: &Value) -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "crp"},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                 "policy": policy, "strategy": strategy}})
}

/// KubeFleet's e2e fleet and `createClusterStagedUpdateStrategySucceed`: stage `canary`
/// (member-2) with an after-stage Approval and a 5 s TimedWait, stage `prod` (member-1,
/// member-3) behind a before-stage Approval; and the placement.
fn fleet(policy: &Value, strategy: &Value) -> Hub {
    let mut hub = Hub::new();
    for (name, env) in [
        ("member-1", "prod"),
        ("member-2", "canary"),
        ("member-3", "prod"),
    ] {
        hub.join(name, json!({"env": env}), json!([]));
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&config_map("test"));
    hub.apply(
        &json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy", "metadata": {"name": "strategy"},
        "spec": {"stages": [
            {"name": "canary", "labelSelector": {"matchLabels": {"env": "canary"}},
             "afterStageTasks": [{"type": "Approval"}, {"type": "TimedWait", "waitTime": "5s"}]},
            {"name": "prod", "labelSelector": {"matchLabels": {"env": "prod"}},
             "beforeStageTasks": [{"type": "Approval"}]}]}}),
    );
    hub.apply(&placement(policy, strategy));
    hub
}

fn external() -> Value {
    json!({"type": "External"})
}

fn pick_all() -> Value {
    json!({"placementType": "PickAll"})
}

/// A run of `crp` with the strategy above; `index` is `resourceSnapshotIndex` (latest if None).
fn start_run(hub: &mut Hub, name: &str, index: Option<&str>) -> Vec<Decision> {
    let mut run = json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun", "metadata": {"name": name},
        "spec": {"placementName": "crp", "stagedRolloutStrategyName": "strategy", "state": "Run"}});
    if let Some(index) = index {
        run["spec"]["resourceSnapshotIndex"] = json!(index);
    }
    hub.apply(&run)
}

fn the_run<'a>(hub: &'a Hub, name: &str) -> &'a UpdateRun {
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        name,
    );
    &hub.state.update_runs()[&key]
}

/// A run condition as `(status, reason)`; empty when it is not set.
fn run_condition(hub: &Hub, name: &str, which: &str) -> (String, String) {
    let status = &the_run(hub, name).status;
    let condition = match which {
        "Progressing" => &status.progressing,
        _ => &status.succeeded,
    };
    condition.as_ref().map_or_else(Default::default, |c| {
        (c.status.as_str().to_owned(), c.reason.to_string())
    })
}

/// `cluster@index` for every binding of `crp` (`-` for a binding that carries no work yet).
fn placed(hub: &Hub) -> Vec<String> {
    hub.placement("crp")
        .bindings
        .iter()
        .map(|(cluster, b)| match b.resource_index {
            Some(index) => format!("{cluster}@{index}"),
            None => format!("{cluster}@-"),
        })
        .collect()
}

/// The clusters of run `name` that are updating.
fn updating(hub: &Hub, name: &str) -> Vec<String> {
    the_run(hub, name)
        .status
        .stages
        .iter()
        .flat_map(|s| s.clusters.iter().filter(|c| c.is_updating()))
        .map(|c| c.cluster.to_string())
        .collect()
}

/// Every cluster the run updates reports its work applied and available, until none is
/// updating (a stage updates one cluster at a time: `maxConcurrency` defaults to 1).
fn report_updating(hub: &mut Hub, name: &str) {
    for _ in 0..3 {
        for cluster in updating(hub, name) {
            hub.report("crp", &cluster, true, true);
        }
    }
    assert!(updating(hub, name).is_empty(), "{:?}", updating(hub, name));
}

fn approval_key(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterApprovalRequest",
        name,
    )
}

/// KubeFleet's `validateAndApproveClusterApprovalRequests`: the request exists, then approve it.
fn approve(hub: &mut Hub, request: &str) {
    let exists = hub.state.approvals().contains_key(&approval_key(request));
    assert!(exists, "{request} exists");
    hub.approve(request, None);
}

/// Drives run `name` as the e2e tests do: the canary reports, its after-stage approval and
/// wait pass, prod's before-stage approval is given, prod reports; the run has succeeded.
/// `between` sees the hub once the canary finished and prod waits for its approval.
fn drive_run(hub: &mut Hub, name: &str, between: impl FnOnce(&Hub)) {
    report_updating(hub, name);
    approve(hub, &format!("{name}-after-canary"));
    hub.advance(5);
    between(hub);
    approve(hub, &format!("{name}-before-prod"));
    report_updating(hub, name);
    assert_eq!(
        run_condition(hub, name, "Succeeded"),
        ("True".into(), "UpdateRunSucceeded".into())
    );
}

// ---- 1. External: no snapshot until a run needs one (flotilla differs) ----

/// `cluster_staged_updaterun_test.go`, "Test resource rollout with staged update run with
/// auto-created resource snapshot when not specified": KubeFleet takes no resource snapshot for
/// an External placement until a run without `resourceSnapshotIndex` needs one. flotilla keeps
/// KubeFleet's placement controller, which snapshots every change of the selected resources (and
/// KubeFleet's staged-update examples start runs at `resourceSnapshotIndex: "0"` with no run
/// before), so the snapshot exists at once; what members see is the same: nothing before a run, and
/// a run without an index takes the latest resources.
#[test]
fn external_snapshots_at_once_but_places_nothing_until_a_run_takes_the_latest() {
    let mut hub = fleet(&pick_all(), &external());
    assert_eq!(hub.snapshot_indexes("crp"), [0], "flotilla: taken at once");
    assert_eq!(placed(&hub), ["member-1@-", "member-2@-", "member-3@-"]);
    start_run(&mut hub, "run-0", None);
    drive_run(&mut hub, "run-0", |_| {});
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
    // The hub's ConfigMap changes: members keep what they have until a run.
    hub.apply(&config_map("new"));
    assert_eq!(
        hub.snapshot_indexes("crp"),
        [0, 1],
        "flotilla: taken at once"
    );
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
    start_run(&mut hub, "run-1", None);
    assert_eq!(
        the_run(&hub, "run-1").status.resource_snapshot_index_used,
        Some(1),
        "the latest"
    );
    drive_run(&mut hub, "run-1", |hub| {
        assert_eq!(placed(hub), ["member-1@0", "member-2@1", "member-3@0"]);
    });
    assert_eq!(placed(&hub), ["member-1@1", "member-2@1", "member-3@1"]);
}

// ---- 2. A rollback is a run pointed at an older snapshot ----

/// `cluster_staged_updaterun_test.go`, "Test resource rollout and rollback with staged update
/// run": a third run with `resourceSnapshotIndex: "0"` takes every cluster back, stage by
/// stage, behind the same approvals.
#[test]
fn a_rollback_is_a_new_run_pointed_at_an_older_resource_snapshot() {
    let mut hub = fleet(&pick_all(), &external());
    start_run(&mut hub, "run-0", None);
    drive_run(&mut hub, "run-0", |_| {});
    hub.apply(&config_map("new"));
    start_run(&mut hub, "run-1", None);
    drive_run(&mut hub, "run-1", |_| {});
    assert_eq!(placed(&hub), ["member-1@1", "member-2@1", "member-3@1"]);
    start_run(&mut hub, "run-2", Some("0"));
    assert_eq!(
        the_run(&hub, "run-2").status.resource_snapshot_index_used,
        Some(0)
    );
    drive_run(&mut hub, "run-2", |hub| {
        assert_eq!(
            placed(hub),
            ["member-1@1", "member-2@0", "member-3@1"],
            "prod waits for its approval"
        );
    });
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
    assert_eq!(hub.snapshot_indexes("crp"), [0, 1], "no new snapshot");
}

// ---- 3. Removed clusters keep their work until the delete stage ----

/// `cluster_staged_updaterun_test.go`, "Test cluster scale out and shrink using pickN policy
/// with staged update run": after `numberOfClusters` 3 → 2, member-1's binding is Unscheduled
/// but keeps its work through the canary stage and prod's approval wait ("Should not remove
/// resources from member-cluster-1 until approved"); the delete stage, after prod, removes it.
#[test]
fn clusters_a_run_removes_keep_their_work_until_its_delete_stage() {
    let pick_n = |count: u32| json!({"placementType": "PickN", "numberOfClusters": count});
    let mut hub = fleet(&pick_n(3), &external());
    start_run(&mut hub, "run-0", None);
    drive_run(&mut hub, "run-0", |_| {});
    hub.apply(&placement(&pick_n(2), &external()));
    assert_eq!(hub.unscheduled("crp"), ["member-1"]);
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
    start_run(&mut hub, "run-1", Some("0"));
    let deletion = the_run(&hub, "run-1").status.deletion.clone();
    let to_delete: Vec<String> = deletion
        .iter()
        .flat_map(|stage| stage.clusters.iter().map(|c| c.cluster.to_string()))
        .collect();
    assert_eq!(to_delete, ["member-1"]);
    drive_run(&mut hub, "run-1", |hub| {
        assert_eq!(
            placed(hub),
            ["member-1@0", "member-2@0", "member-3@0"],
            "member-1 keeps its work while prod waits for its approval"
        );
    });
    assert_eq!(placed(&hub), ["member-2@0", "member-3@0"]);
}

// ---- 4. RollingUpdate → External changes nothing but the observed generation ----

/// `cluster_staged_updaterun_test.go`, "Test CRP rollout strategy transition from
/// rollingUpdate to external": the status changes only in its observed generation, and a
/// later resource change reaches no member until a run takes it.
#[test]
fn switching_rolling_update_to_external_changes_only_the_observed_generation() {
    let rolling = json!({"type": "RollingUpdate"});
    let mut hub = fleet(&pick_all(), &rolling);
    for cluster in ["member-1", "member-2", "member-3"] {
        hub.report("crp", cluster, true, true);
    }
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
    let before = hub.placement("crp").clone();
    let decisions = hub.apply(&placement(&pick_all(), &external()));
    let after = hub.placement("crp").clone();
    assert!(
        matches!(decisions.as_slice(), [Decision::ObjectStored { .. }]),
        "only the spec is stored: {decisions:?}"
    );
    assert_eq!(after.meta.generation, before.meta.generation + 1);
    let observed = |p: &flotilla_core::query::placement::Placement| {
        p.scheduled.as_ref().map(|c| c.observed_generation)
    };
    assert_eq!(observed(&after), Some(after.meta.generation));
    assert_eq!(after.bindings, before.bindings, "no binding changed");
    assert_eq!(after.resource_snapshots, before.resource_snapshots);
    assert_eq!(after.policy_snapshots.len(), before.policy_snapshots.len());
    hub.apply(&config_map("new"));
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
    start_run(&mut hub, "run-0", None);
    drive_run(&mut hub, "run-0", |_| {});
    assert_eq!(placed(&hub), ["member-1@1", "member-2@1", "member-3@1"]);
}

// ---- 5. Availability: a LoadBalancer needs an address; a Job is judged by its pods ----

/// `rollout_test.go`, "block rollout based on service availability" and "don't block rollout
/// based on job availability" (KubeFleet's `availability_tracker.go`). Both appliers judge with
/// `availability::judge`. A LoadBalancer Service without an ingress IP or hostname is not yet
/// available, and the rollout holds at `maxUnavailable: 1`. A Job differs: KubeFleet treats it
/// as not trackable, so it never blocks; flotilla follows KubeFleet's availability rules
/// ("available when it has at least one succeeded pod or one ready pod"), so a Job that never ran a
/// pod blocks.
#[test]
fn a_load_balancer_waits_for_an_address_and_a_job_for_a_pod() {
    let service = |status: Value| {
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "test-service", "namespace": "test-ns"},
            "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.10"}, "status": status})
    };
    assert_eq!(judge(&service(json!({}))), Availability::NotYetAvailable);
    let lb = |ingress: Value| service(json!({"loadBalancer": {"ingress": ingress}}));
    assert_eq!(judge(&lb(json!([{}]))), Availability::NotYetAvailable);
    assert_eq!(
        judge(&lb(json!([{"ip": "192.0.2.10"}]))),
        Availability::Available
    );
    assert_eq!(
        judge(&lb(json!([{"hostname": "lb.example"}]))),
        Availability::Available
    );
    let job = |status: Value| {
        json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "test-job", "namespace": "test-ns"},
            "spec": {"suspend": true}, "status": status})
    };
    assert_eq!(
        judge(&job(json!({}))),
        Availability::NotYetAvailable,
        "KubeFleet: NotTrackable"
    );
    assert_eq!(
        judge(&job(json!({"succeeded": 1}))),
        Availability::Available
    );
    // Work that is not yet available (as an agent reports a LoadBalancer without an address)
    // holds the rollout: the first cluster on the new resources, the other two stay.
    let mut hub = fleet(
        &pick_all(),
        &json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}),
    );
    for cluster in ["member-1", "member-2", "member-3"] {
        hub.report("crp", cluster, true, true);
    }
    hub.apply(&config_map("new"));
    let first = placed(&hub);
    let moved: Vec<&String> = first.iter().filter(|p| p.ends_with("@1")).collect();
    assert_eq!(moved.len(), 1, "{first:?}");
    let cluster = moved[0].trim_end_matches("@1").to_owned();
    hub.report("crp", &cluster, true, false);
    hub.advance(120);
    assert_eq!(placed(&hub), first, "blocked by the unavailable cluster");
}

// ---- 6. An eviction without a taint: the scheduler may pick the cluster again ----

/// `placement_eviction_test.go`, "ClusterResourcePlacement eviction of bound binding, no taint
/// specified, evicted cluster is picked again by scheduler - No PDB specified".
#[test]
fn an_eviction_without_a_taint_lets_the_scheduler_pick_the_cluster_again() {
    let mut hub = eviction_support::fleet(&["member-1", "member-2", "member-3"]);
    place(&mut hub, &pick_all(), &Value::Null);
    let decisions = evict(&mut hub, "evict", "member-1");
    assert_eq!(
        conditions(&hub, "evict"),
        executed("Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified")
    );
    let removed = decisions.iter().position(
        |d| matches!(d, Decision::BindingRemoved { cluster, .. } if cluster == "member-1"),
    );
    let picked = decisions.iter().position(
        |d| matches!(d, Decision::ClusterScheduled { cluster, .. } if cluster == "member-1"),
    );
    assert!(
        removed < picked,
        "removed, then picked again: {decisions:?}"
    );
    assert_eq!(
        clusters_in(&hub, BindingState::Bound),
        ["member-1", "member-2", "member-3"]
    );
    hub.report("crp", "member-1", true, true);
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
}

// ---- 7. A cluster leaving (flotilla differs) ----

/// `cluster_staged_updaterun_test.go`, "Test member cluster join and leave flow with
/// updateRun" / "UpdateRun should delete the binding of a left cluster but resources are
/// kept": in KubeFleet the left cluster's binding turns Unscheduled, the next run lists it in
/// its delete stage and deletes it, and the resources stay on the member. flotilla removes the
/// binding the moment the member starts leaving (`member::delete`), so the next run has nothing
/// to delete; and its agent removes what it placed before it confirms the leave
/// (`docs/agents.md`, "Leaves"), so the resources do not stay. A run underway when the cluster
/// leaves fails in both, since its stage lost a cluster.
#[test]
fn a_leaving_cluster_loses_its_binding_at_once_and_a_run_underway_fails() {
    let mut hub = fleet(&pick_all(), &external());
    start_run(&mut hub, "run-0", None);
    drive_run(&mut hub, "run-0", |_| {});
    hub.delete("MemberCluster", "member-1");
    assert_eq!(
        placed(&hub),
        ["member-2@0", "member-3@0"],
        "KubeFleet: Unscheduled"
    );
    start_run(&mut hub, "run-1", Some("0"));
    let deletion = the_run(&hub, "run-1").status.deletion.clone();
    assert!(
        deletion.is_none_or(|stage| stage.clusters.is_empty()),
        "KubeFleet: member-1 in the delete stage"
    );
    drive_run(&mut hub, "run-1", |_| {});
    // Mid-run: member-3 leaves while the canary updates.
    hub.apply(&config_map("new"));
    start_run(&mut hub, "run-2", None);
    assert_eq!(updating(&hub, "run-2"), ["member-2"]);
    hub.delete("MemberCluster", "member-3");
    assert_eq!(
        run_condition(&hub, "run-2", "Succeeded"),
        ("False".into(), "UpdateRunFailed".into())
    );
    let failed = the_run(&hub, "run-2").status.succeeded.clone();
    let message = failed.map(|c| c.message).unwrap_or_default();
    assert!(
        message.ends_with("initialized with 2 cluster(s), now 1"),
        "{message}"
    );
    assert_eq!(placed(&hub), ["member-2@1"]);
}

// ---- 8. A deleted approval request is made again ----

/// Deletes the request; `true` when the run made it again in the same step.
fn delete_request(hub: &mut Hub, name: &str) -> bool {
    let decisions = hub.delete("ClusterApprovalRequest", name);
    assert_eq!(
        decisions[0],
        Decision::ObjectDeleted {
            object: approval_key(name)
        }
    );
    let again = hub.state.approvals().contains_key(&approval_key(name));
    let requested = decisions
        .iter()
        .any(|d| matches!(d, Decision::ApprovalRequested { request, .. } if request.name == name));
    assert_eq!(again, requested, "{decisions:?}");
    again
}

/// `execution_integration_test.go`, "Cluster staged update run should recreate deleted
/// approvalRequest": a request deleted while its task waits is made again at once, unapproved;
/// once the run accepted the approval, a deleted request stays gone and the run goes on.
#[test]
fn a_deleted_approval_request_is_made_again_until_the_run_accepted_it() {
    let mut hub = fleet(&pick_all(), &external());
    start_run(&mut hub, "run-0", None);
    report_updating(&mut hub, "run-0");
    assert!(delete_request(&mut hub, "run-0-after-canary"), "made again");
    let request = &hub.state.approvals()[&approval_key("run-0-after-canary")];
    assert!(request.approved.is_none(), "made again unapproved");
    approve(&mut hub, "run-0-after-canary");
    assert!(
        !delete_request(&mut hub, "run-0-after-canary"),
        "accepted: gone"
    );
    hub.advance(5);
    assert!(delete_request(&mut hub, "run-0-before-prod"), "made again");
    assert!(updating(&hub, "run-0").is_empty(), "prod still waits");
    approve(&mut hub, "run-0-before-prod");
    assert!(
        !delete_request(&mut hub, "run-0-before-prod"),
        "accepted: gone"
    );
    report_updating(&mut hub, "run-0");
    assert_eq!(
        run_condition(&hub, "run-0", "Succeeded"),
        ("True".into(), "UpdateRunSucceeded".into())
    );
    assert!(hub.state.approvals().is_empty(), "neither came back");
    assert_eq!(placed(&hub), ["member-1@0", "member-2@0", "member-3@0"]);
}

// ---- 9. A failed diff report: stuck, not failed ----

/// `execution_integration_test.go`, "Cluster staged update run should be stuck in execution
/// encountering diff reporting failure" / "Should become stuck if the binding diff reporting
/// fails": in ReportDiff mode a cluster whose diff could not be computed keeps updating, and
/// after five minutes the run is `UpdateRunStuck`, not failed.
#[test]
fn a_run_whose_diff_reporting_fails_is_stuck_not_failed() {
    let report_diff = json!({"type": "External", "applyStrategy": {"type": "ReportDiff"}});
    let mut hub = fleet(&pick_all(), &report_diff);
    start_run(&mut hub, "run-0", None);
    assert_eq!(updating(&hub, "run-0"), ["member-2"]);
    let diff_report = |complete: bool| {
        let failed = (!complete).then(|| flotilla_core::ManifestFailure {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: "test-ns".into(),
            name: "app-config".into(),
            condition: flotilla_core::ManifestCondition::Applied,
            message: "failed to compare the manifest with the object on the member".into(),
            reason: None,
        });
        Input::WorkReport(WorkReport {
            applied: None,
            available: None,
            message: if complete {
                ""
            } else {
                "1 of 2 manifests could not be compared"
            }
            .into(),
            failed_manifests: failed.into_iter().collect(),
            differences: Differences {
                diff_reported: Some(complete),
                ..Differences::default()
            },
            ..WorkReport::available("member-2", "crp", 0)
        })
    };
    hub.send(diff_report(false));
    for _ in 0..5 {
        hub.beat("member-2");
        hub.advance(60);
    }
    assert_eq!(
        run_condition(&hub, "run-0", "Progressing"),
        ("False".into(), "UpdateRunStuck".into())
    );
    assert_eq!(
        run_condition(&hub, "run-0", "Succeeded"),
        Default::default()
    );
    hub.send(diff_report(true));
    assert!(updating(&hub, "run-0").is_empty(), "the canary succeeded");
    assert!(
        the_run(&hub, "run-0").status.stages[0].clusters[0]
            .succeeded
            .is_some()
    );
}

// ---- 10. An eviction unblocks a stuck rollout ----

/// `pkg/controllers/rollout/controller_integration_test.go`, "Rollout should be blocked, then
/// unblocked by eviction - evict unscheduled binding": with `maxSurge: 0` a newly picked
/// cluster waits while the cluster it replaces is still counted; evicting that Unscheduled
/// binding lets the new one be bound. (`eviction.rs` covers the in-place update held by
/// `maxUnavailable`.)
#[test]
fn evicting_an_unscheduled_binding_unblocks_a_rollout_held_by_max_surge() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({"x": "1"}), json!([]));
    hub.join("member-2", json!({"x": "1", "y": "1"}), json!([]));
    hub.join("member-3", json!({"y": "1"}), json!([]));
    hub.apply(&namespace("test-ns"));
    let pick_two = |label: &str| {
        json!({"placementType": "PickN", "numberOfClusters": 2, "affinity": {"clusterAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                {"labelSelector": {"matchLabels": {label: "1"}}}]}}}})
    };
    let no_surge = json!({"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}});
    place(&mut hub, &pick_two("x"), &no_surge);
    // member-1 is ready; member-2 can still become ready but is not.
    hub.report("crp", "member-2", true, false);
    hub.apply(&placement(&pick_two("y"), &no_surge));
    assert_eq!(hub.unscheduled("crp"), ["member-1"]);
    assert_eq!(clusters_in(&hub, BindingState::Scheduled), ["member-3"]);
    hub.advance(120);
    assert_eq!(
        clusters_in(&hub, BindingState::Scheduled),
        ["member-3"],
        "blocked by maxSurge"
    );
    evict(&mut hub, "evict", "member-1");
    assert_eq!(
        conditions(&hub, "evict"),
        executed("Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified")
    );
    assert_eq!(
        clusters_in(&hub, BindingState::Bound),
        ["member-2", "member-3"],
        "unblocked by the eviction"
    );
}

//! Staged update runs in the fold: every validation rule and state transition with its message,
//! KubeFleet's `maxConcurrency` examples, initialization failures, approvals gating stages,
//! stop/resume, failure when the placement goes away — and a property test that no moment has
//! more clusters updating in a stage than allowed, and no stage starts before its approval.

mod common;
mod staged_support;

use common::{Hub, namespace};
use flotilla_core::decision::{Decision, RejectCode};
use flotilla_core::model::ObjectKey;
use flotilla_core::{Input, WorkReport};
use proptest::prelude::*;
use serde_json::{Value, json};
use staged_support::{
    approve, external_crp, fleet, init_message, rejection, report, run, strategy, the_run, updating,
};

#[test]
fn strategy_validation_names_the_rule() {
    let mut hub = Hub::new();
    let stage = |name: &str| json!({"name": name, "labelSelector": {}});
    let cases: Vec<(Value, &str)> = vec![
        (
            Value::Array((0..32).map(|i| stage(&format!("s{i}"))).collect()),
            "spec.stages: has 32 stages, at most 31 are allowed",
        ),
        (
            json!([stage("a"), stage("a")]),
            "spec.stages[1].name: stage name \"a\" is used by more than one stage",
        ),
        (
            json!([{"name": "a", "maxConcurrency": 0}]),
            "spec.stages[0].maxConcurrency: 0 is invalid: an integer maxConcurrency must be at least 1",
        ),
        (
            json!([{"name": "a", "maxConcurrency": "0%"}]),
            "spec.stages[0].maxConcurrency: \"0%\" is invalid: a percentage maxConcurrency must be between 1% and 100%",
        ),
        (
            json!([{"name": "a", "beforeStageTasks": [{"type": "Approval"}, {"type": "Approval"}]}]),
            "spec.stages[0].beforeStageTasks: has 2 tasks, at most 1 is allowed",
        ),
        (
            json!([{"name": "a", "beforeStageTasks": [{"type": "TimedWait", "waitTime": "1h"}]}]),
            "spec.stages[0].beforeStageTasks[0].type: TimedWait is not allowed before a stage: only Approval",
        ),
        (
            json!([{"name": "a", "afterStageTasks": [{"type": "Approval"}, {"type": "TimedWait", "waitTime": "1h"}, {"type": "Approval"}]}]),
            "spec.stages[0].afterStageTasks: has 3 tasks, at most 2 are allowed",
        ),
        (
            json!([{"name": "a", "afterStageTasks": [{"type": "Approval"}, {"type": "Approval"}]}]),
            "spec.stages[0].afterStageTasks: afterStageTasks cannot have two tasks of the same type: Approval",
        ),
        (
            json!([{"name": "a", "afterStageTasks": [{"type": "TimedWait"}]}]),
            "spec.stages[0].afterStageTasks[0].waitTime: is required for a TimedWait task",
        ),
        (
            json!([{"name": "a", "afterStageTasks": [{"type": "TimedWait", "waitTime": "0s"}]}]),
            "spec.stages[0].afterStageTasks[0].waitTime: must be greater than 0 for a TimedWait task",
        ),
        (
            json!([{"name": "a", "afterStageTasks": [{"type": "Approval", "waitTime": "1h"}]}]),
            "spec.stages[0].afterStageTasks[0].waitTime: must not be set for an Approval task",
        ),
    ];
    for (stages, message) in cases {
        let decisions = hub.apply(&strategy(stages));
        assert!(
            rejection(&decisions).ends_with(message),
            "{:?} should end with {message:?}",
            rejection(&decisions)
        );
    }
    assert!(
        hub.state.strategies().is_empty(),
        "nothing invalid was stored"
    );
    let valid = json!([{"name": "a", "maxConcurrency": "100%", "beforeStageTasks": [{"type": "Approval"}],
        "afterStageTasks": [{"type": "TimedWait", "waitTime": "1h"}, {"type": "Approval"}]}]);
    assert_eq!(rejection(&hub.apply(&strategy(valid))), "");
    assert_eq!(hub.state.strategies().len(), 1);
}

#[test]
fn run_fields_are_immutable_and_only_valid_state_transitions_pass() {
    let mut hub = fleet(&[("member1", "staging")]);
    hub.apply(&strategy(json!([{"name": "all", "labelSelector": {}}])));
    hub.apply(&run("r", "Initialize"));
    let mut changed = run("r", "Initialize");
    changed["spec"]["placementName"] = json!("other");
    assert!(rejection(&hub.apply(&changed)).ends_with("spec.placementName: is immutable"));
    let mut changed = run("r", "Initialize");
    changed["spec"]["resourceSnapshotIndex"] = json!("1");
    assert!(rejection(&hub.apply(&changed)).ends_with("spec.resourceSnapshotIndex: is immutable"));
    let mut changed = run("r", "Initialize");
    changed["spec"]["stagedRolloutStrategyName"] = json!("other");
    assert!(
        rejection(&hub.apply(&changed)).ends_with("spec.stagedRolloutStrategyName: is immutable")
    );
    let refused = rejection(&hub.apply(&run("r", "Stop")));
    assert!(
        refused.contains(
            "invalid state transition from Initialize to Stop: cannot stop before starting"
        ),
        "{refused}"
    );
    assert_eq!(
        rejection(&hub.apply(&run("r", "Run"))),
        "",
        "Initialize → Run"
    );
    let refused = rejection(&hub.apply(&run("r", "Initialize")));
    assert!(
        refused.contains(
            "invalid state transition from Run to Initialize: cannot reinitialize after starting"
        ),
        "{refused}"
    );
    assert_eq!(rejection(&hub.apply(&run("r", "Stop"))), "", "Run → Stop");
    let refused = rejection(&hub.apply(&run("r", "Initialize")));
    assert!(
        refused.contains(
            "invalid state transition from Stop to Initialize: cannot reinitialize after stopping"
        ),
        "{refused}"
    );
    assert_eq!(rejection(&hub.apply(&run("r", "Run"))), "", "Stop → Run");
}

/// Of several clusters that cannot be placed, the run names the one a walk stage by stage
/// meets first (KubeFleet walks the stages, each over the clusters in name order), not the
/// first cluster by name.
#[test]
fn initialization_reports_the_error_of_the_earliest_stage() {
    let mut hub = fleet(&[
        ("member1", "staging"),
        ("member2", "prod"),
        ("member3", "prod"),
    ]);
    hub.apply(&strategy(json!([
        {"name": "a", "labelSelector": {"matchLabels": {"env": "prod"}}, "sortingLabelKey": "env"},
        {"name": "b", "labelSelector": {}},
        {"name": "c", "labelSelector": {"matchLabels": {"env": "staging"}}}
    ])));
    hub.apply(&run("r", "Initialize"));
    let message = init_message(&hub, "r");
    assert!(
        message.ends_with(
            "the sorting label `env:prod` on cluster `member2` is not valid: strconv.Atoi: parsing \"prod\": invalid syntax"
        ),
        "{message}"
    );
}

#[test]
fn initialization_failures_carry_kubefleets_messages() {
    let mut hub = fleet(&[
        ("member1", "staging"),
        ("member2", "prod"),
        ("member3", "prod"),
    ]);
    hub.apply(&strategy(
        json!([{"name": "staging", "labelSelector": {"matchLabels": {"env": "staging"}}}]),
    ));
    hub.apply(&run("missing", "Initialize"));
    assert_eq!(
        init_message(&hub, "missing"),
        "UpdateRunInitializedFailed cannot continue the updateRun: failed to initialize the updateRun: failed to process the request due to a client error: some clusters are not placed in any stage, total 2, showing up to 10: member2, member3"
    );
    let mut both = strategy(
        json!([{"name": "a", "labelSelector": {}}, {"name": "b", "labelSelector": {"matchLabels": {"env": "prod"}}}]),
    );
    both["metadata"]["name"] = json!("both");
    hub.apply(&both);
    let mut twice = run("twice", "Initialize");
    twice["spec"]["stagedRolloutStrategyName"] = json!("both");
    hub.apply(&twice);
    assert!(
        init_message(&hub, "twice").ends_with("cluster `member2` appears in more than one stages")
    );
    let mut sorted =
        strategy(json!([{"name": "a", "labelSelector": {}, "sortingLabelKey": "env"}]));
    sorted["metadata"]["name"] = json!("sorted");
    hub.apply(&sorted);
    let mut bad_sort = run("bad-sort", "Initialize");
    bad_sort["spec"]["stagedRolloutStrategyName"] = json!("sorted");
    hub.apply(&bad_sort);
    assert!(init_message(&hub, "bad-sort").ends_with("the sorting label `env:staging` on cluster `member1` is not valid: strconv.Atoi: parsing \"staging\": invalid syntax"));
    let mut no_strategy = run("no-strategy", "Initialize");
    no_strategy["spec"]["stagedRolloutStrategyName"] = json!("nope");
    hub.apply(&no_strategy);
    assert!(
        init_message(&hub, "no-strategy")
            .ends_with("referenced clusterStagedUpdateStrategy not found: nope")
    );
    let mut no_index = run("no-index", "Initialize");
    no_index["spec"]["resourceSnapshotIndex"] = json!("7");
    no_index["spec"]["stagedRolloutStrategyName"] = json!("sorted-none");
    let mut all = strategy(json!([{"name": "all", "labelSelector": {}}]));
    all["metadata"]["name"] = json!("sorted-none");
    hub.apply(&all);
    hub.apply(&no_index);
    assert!(init_message(&hub, "no-index").ends_with(
        "no clusterResourceSnapshots with index `7` found for clusterResourcePlacement `crp`"
    ));
    let mut rolling = external_crp();
    rolling["metadata"]["name"] = json!("rolling");
    rolling["spec"]["strategy"] = json!({"type": "RollingUpdate"});
    hub.apply(&rolling);
    let mut wrong = run("wrong-type", "Initialize");
    wrong["spec"]["placementName"] = json!("rolling");
    hub.apply(&wrong);
    assert!(init_message(&hub, "wrong-type").ends_with("parent placement does not have an external rollout strategy, current strategy: RollingUpdate"));
    let mut absent = run("absent", "Initialize");
    absent["spec"]["placementName"] = json!("absent");
    hub.apply(&absent);
    assert!(init_message(&hub, "absent").ends_with("parent placement not found"));
}

/// KubeFleet's `spec.stages[].maxConcurrency`: 2, 75% (of 4 → 3), 50% of 3 → 1 (rounded down),
/// default 1.
#[test]
fn max_concurrency_follows_the_seeds_examples() {
    for (value, clusters, expected) in [
        (json!(2), 4, 2),
        (json!("75%"), 4, 3),
        (json!("50%"), 3, 1),
        (Value::Null, 4, 1),
        (json!(15), 4, 4),
    ] {
        let names: Vec<String> = (1..=clusters).map(|i| format!("member{i}")).collect();
        let fleet_spec: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "prod")).collect();
        let mut hub = fleet(&fleet_spec);
        let mut stage = json!({"name": "prod", "labelSelector": {}});
        if !value.is_null() {
            stage["maxConcurrency"] = value.clone();
        }
        hub.apply(&strategy(json!([stage])));
        hub.apply(&run("r", "Run"));
        assert_eq!(
            updating(&hub, "r", 0).len(),
            expected,
            "maxConcurrency {value} of {clusters}"
        );
        let first = updating(&hub, "r", 0);
        report(&mut hub, &first[0]);
        assert_eq!(
            updating(&hub, "r", 0).len(),
            expected.min(clusters - 1),
            "a finished cluster frees a slot"
        );
    }
}

#[test]
fn a_before_stage_approval_gates_the_start_and_is_accepted_once_given() {
    let mut hub = fleet(&[("member1", "prod")]);
    hub.apply(&strategy(
        json!([{"name": "prod", "labelSelector": {}, "beforeStageTasks": [{"type": "Approval"}]}]),
    ));
    hub.apply(&run("r", "Run"));
    assert!(
        updating(&hub, "r", 0).is_empty(),
        "nothing starts before the approval"
    );
    let request = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterApprovalRequest",
        "r-before-prod",
    );
    assert!(hub.state.approvals().contains_key(&request));
    let early = hub.send(approve("r-before-nope", None, None, None));
    assert!(matches!(
        &early[0],
        Decision::Rejected {
            code: RejectCode::ApprovalRequestNotFound,
            ..
        }
    ));
    let unreasonable = hub.send(approve("r-before-prod", None, Some("looks good"), None));
    assert!(
        rejection(&unreasonable).contains("reason \"looks good\" must start with a letter"),
        "a reason metav1.Condition refuses: {unreasonable:?}"
    );
    assert!(hub.state.approvals()[&request].approved.is_none());
    hub.send(approve(
        "r-before-prod",
        None,
        Some("Soaked"),
        Some("lgtm: canary ok"),
    ));
    let approved = hub.state.approvals()[&request].approved.clone();
    let words = approved.map(|c| (c.reason.to_string(), c.message));
    assert_eq!(
        words,
        Some(("Soaked".into(), "lgtm: canary ok".into())),
        "the approver's own words"
    );
    assert_eq!(updating(&hub, "r", 0), ["member1"]);
    assert!(
        hub.state.approvals()[&request].accepted.is_some(),
        "ApprovalAccepted"
    );
    report(&mut hub, "member1");
    assert_eq!(
        the_run(&hub, "r")
            .status
            .succeeded
            .as_ref()
            .map(|c| c.reason.as_str()),
        Some("UpdateRunSucceeded")
    );
}

#[test]
fn stop_lets_updating_clusters_finish_and_run_resumes() {
    let mut hub = fleet(&[("member1", "prod"), ("member2", "prod")]);
    hub.apply(&strategy(json!([{"name": "prod", "labelSelector": {}}])));
    hub.apply(&run("r", "Run"));
    assert_eq!(updating(&hub, "r", 0), ["member1"]);
    hub.apply(&run("r", "Stop"));
    let reason = |hub: &Hub| {
        the_run(hub, "r")
            .status
            .progressing
            .as_ref()
            .map(|c| c.reason.to_string())
            .unwrap_or_default()
    };
    assert_eq!(reason(&hub), "UpdateRunStopping");
    report(&mut hub, "member1");
    assert_eq!(reason(&hub), "UpdateRunStopped");
    assert!(
        updating(&hub, "r", 0).is_empty(),
        "no new cluster starts while stopped"
    );
    hub.apply(&run("r", "Run"));
    assert_eq!(reason(&hub), "UpdateRunStarted");
    assert_eq!(updating(&hub, "r", 0), ["member2"]);
}

#[test]
fn the_run_fails_when_its_placement_is_deleted() {
    let mut hub = fleet(&[("member1", "prod")]);
    hub.apply(&strategy(json!([{"name": "prod", "labelSelector": {}}])));
    hub.apply(&run("r", "Run"));
    hub.delete("ClusterResourcePlacement", "crp");
    let succeeded = the_run(&hub, "r").status.succeeded.clone();
    assert_eq!(
        succeeded.as_ref().map(|c| c.reason.as_str()),
        Some("UpdateRunFailed")
    );
    assert!(
        succeeded
            .map(|c| c.message)
            .unwrap_or_default()
            .contains("parent placement not found")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// At no step are more clusters of a stage updating than its maxConcurrency allows; no
    /// stage starts before the previous one succeeded and its own approval was given.
    #[test]
    fn concurrency_and_approvals_hold_at_every_step(
        sizes in proptest::collection::vec(1_usize..5, 1..4),
        concurrency in proptest::collection::vec(1_i64..4, 3),
        gated in proptest::collection::vec(any::<bool>(), 3),
        order in proptest::collection::vec(0_usize..20, 60),
    ) {
        let mut clusters = Vec::new();
        for (stage, size) in sizes.iter().enumerate() {
            for i in 0..*size {
                clusters.push((format!("member-{stage}-{i}"), format!("s{stage}")));
            }
        }
        let spec: Vec<(&str, &str)> = clusters.iter().map(|(n, e)| (n.as_str(), e.as_str())).collect();
        let mut hub = fleet(&spec);
        let stages: Vec<Value> = (0..sizes.len()).map(|s| {
            let mut stage = json!({"name": format!("s{s}"), "labelSelector": {"matchLabels": {"env": format!("s{s}")}}, "maxConcurrency": concurrency[s]});
            if gated[s] { stage["beforeStageTasks"] = json!([{"type": "Approval"}]); }
            stage
        }).collect();
        hub.apply(&strategy(Value::Array(stages)));
        hub.apply(&run("r", "Run"));
        for pick in order {
            // Either a cluster reports or an approval is given.
            let run = the_run(&hub, "r").clone();
            let updating_now: Vec<String> = run.status.stages.iter().flat_map(|s| s.clusters.iter().filter(|c| c.is_updating()).map(|c| c.cluster.to_string())).collect();
            if pick % 3 == 0 || updating_now.is_empty() {
                let pending: Vec<String> = hub.state.approvals().iter().filter(|(_, a)| a.approved.is_none()).map(|(k, _)| k.name.to_string()).collect();
                if let Some(name) = pending.first() {
                    hub.send(approve(name, None, None, None));
                }
            } else {
                let cluster = updating_now[pick % updating_now.len()].clone();
                report(&mut hub, &cluster);
            }
            let run = the_run(&hub, "r");
            for (s, stage) in run.status.stages.iter().enumerate() {
                let limit = usize::try_from(concurrency[s]).unwrap_or(1);
                let updating = stage.clusters.iter().filter(|c| c.is_updating()).count();
                prop_assert!(updating <= limit, "stage {s}: {updating} updating, limit {limit}");
                let started = stage.clusters.iter().any(|c| c.started.is_some());
                if started {
                    prop_assert!(s == 0 || run.status.stages[s - 1].succeeded.is_some(), "stage {s} started before {} succeeded", s - 1);
                    if gated[s] {
                        let key = ObjectKey::cluster_scoped("placement.kubernetes-fleet.io", "ClusterApprovalRequest", &format!("r-before-s{s}"));
                        prop_assert!(hub.state.approvals().get(&key).is_some_and(|a| a.approved.is_some()), "stage {s} started without its approval");
                    }
                }
            }
        }
    }
}

/// A `StagedUpdateRun` sees only its own namespace: its ResourcePlacement, its
/// `StagedUpdateStrategy`, and `ApprovalRequest`s created there.
#[test]
fn a_namespaced_run_never_reaches_outside_its_namespace() {
    let mut hub = Hub::new();
    hub.join("member1", json!({"env": "prod"}), json!([]));
    hub.apply(&namespace("app"));
    hub.apply(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "config", "namespace": "app"}, "data": {"a": "b"}
    }));
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ResourcePlacement",
        "metadata": {"name": "rp", "namespace": "app"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "ConfigMap", "version": "v1", "name": "config"}],
            "policy": {"placementType": "PickAll"},
            "strategy": {"type": "External"}
        }
    }));
    let strategy_in = |ns: &str| {
        json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "StagedUpdateStrategy",
            "metadata": {"name": "strategy", "namespace": ns},
            "spec": {"stages": [{"name": "prod", "labelSelector": {}, "afterStageTasks": [{"type": "Approval"}]}]}
        })
    };
    let run_in = |ns: &str, name: &str| {
        json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "StagedUpdateRun",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"placementName": "rp", "stagedRolloutStrategyName": "strategy", "state": "Run"}
        })
    };
    // The strategy exists only in another namespace: the run cannot see it.
    hub.apply(&strategy_in("other"));
    hub.apply(&run_in("app", "blind"));
    let key = |name: &str| ObjectKey {
        group: "placement.kubernetes-fleet.io".into(),
        kind: "StagedUpdateRun".into(),
        namespace: "app".into(),
        name: name.into(),
    };
    let message = hub.state.update_runs()[&key("blind")]
        .status
        .initialized
        .as_ref()
        .map(|c| c.message.clone())
        .unwrap_or_default();
    assert!(
        message.ends_with("referenced stagedUpdateStrategy not found: strategy"),
        "{message}"
    );
    // A run in another namespace cannot see the ResourcePlacement.
    hub.apply(&run_in("other", "elsewhere"));
    let elsewhere = ObjectKey {
        namespace: "other".into(),
        ..key("elsewhere")
    };
    let message = hub.state.update_runs()[&elsewhere]
        .status
        .initialized
        .as_ref()
        .map(|c| c.message.clone())
        .unwrap_or_default();
    assert!(message.ends_with("parent placement not found"), "{message}");
    // In its own namespace it runs, and its approval request lives there.
    hub.apply(&strategy_in("app"));
    hub.apply(&run_in("app", "good"));
    // The member has the namespace (its agent says so): the RP's work can apply there.
    hub.beat_with("member1", &[("namespaces.kubernetes-fleet.io/app", "1")]);
    hub.send(Input::WorkReport(WorkReport {
        namespace: Some("app".into()),
        ..WorkReport::available("member1", "rp", 0)
    }));
    let cluster_scoped = hub.send(approve("good-after-prod", None, None, None));
    assert!(
        matches!(&cluster_scoped[0], Decision::Rejected { .. }),
        "not a ClusterApprovalRequest"
    );
    hub.send(approve("good-after-prod", Some("app"), None, None));
    let run = &hub.state.update_runs()[&key("good")];
    assert_eq!(
        run.status.succeeded.as_ref().map(|c| c.reason.as_str()),
        Some("UpdateRunSucceeded")
    );
    assert_eq!(
        run.status.initialized.as_ref().map(|c| c.message.as_str()),
        Some("StagedUpdateRun initialized successfully")
    );
}

/// KubeFleet's staged update run: "member cluster changes triggering new scheduling" fail an
/// executing run.
#[test]
fn the_run_fails_when_new_scheduling_changes_its_clusters() {
    let mut hub = fleet(&[("member1", "prod"), ("member2", "prod")]);
    hub.apply(&strategy(json!([{"name": "prod", "labelSelector": {}}])));
    hub.apply(&run("r", "Run"));
    assert_eq!(updating(&hub, "r", 0), ["member1"]);
    // A third cluster joins: the PickAll placement schedules it, the run's plan is stale.
    hub.join("member3", json!({"env": "prod"}), json!([]));
    report(&mut hub, "member1");
    let succeeded = the_run(&hub, "r").status.succeeded.clone();
    assert_eq!(
        succeeded.as_ref().map(|c| c.reason.as_str()),
        Some("UpdateRunFailed")
    );
    let message = succeeded.map(|c| c.message).unwrap_or_default();
    assert!(
        message.starts_with("cannot continue the updateRun: failed to validate the updateRun"),
        "{message}"
    );
    assert!(
        message.contains("initialized with 2 cluster(s), now 3"),
        "{message}"
    );
}

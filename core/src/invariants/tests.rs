//! Each invariant, broken by hand on a state the fold built, is caught; the states the fold
//! builds pass.

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Violation, check, check_step};
use crate::event::{Envelope, Heartbeat, Input, WorkReport};
use crate::fold::step;
use crate::model::ObjectKey;
use crate::placement::Placement;
use crate::state::State;
use crate::work_status::ReportDetails;

mod staged;

struct Fold {
    state: State,
    now: DateTime<Utc>,
    issued: u128,
}

impl Fold {
    fn new() -> Self {
        let now = Utc
            .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
            .single()
            .unwrap_or_default();
        Self {
            state: State::default(),
            now,
            issued: 0,
        }
    }

    fn event(&mut self, payload: Input) -> Envelope {
        self.issued += 1;
        Envelope::new(Uuid::from_u128(self.issued), self.now, "test", payload)
    }

    fn send(&mut self, payload: Input) {
        let event = self.event(payload);
        let before = self.state.clone();
        step(&mut self.state, &event);
        assert_eq!(
            check_step(&before, &event, &self.state),
            Ok(()),
            "after {event:?}"
        );
    }

    fn apply(&mut self, manifest: &Value) {
        self.send(Input::Apply {
            manifest: manifest.to_string(),
        });
    }

    fn report(&mut self, cluster: &str, placement: &str) {
        let index = (self.placement(placement).bindings.get(cluster))
            .and_then(|b| b.resource_index)
            .unwrap_or(0);
        self.send(Input::WorkReport(WorkReport {
            cluster: cluster.into(),
            placement: placement.into(),
            namespace: None,
            resource_index: index,
            applied: Some(true),
            available: Some(true),
            trackable: true,
            message: String::new(),
            failed_manifests: Vec::new(),
            differences: crate::event::Differences::default(),
        }));
    }

    fn placement(&self, name: &str) -> &Placement {
        &self.state.placements[&crp_key(name)]
    }

    fn placement_mut(&mut self, name: &str) -> &mut Placement {
        self.state
            .placements
            .get_mut(&crp_key(name))
            .expect("placement")
    }
}

fn crp_key(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(
        crate::model::PLACEMENT_GROUP,
        "ClusterResourcePlacement",
        name,
    )
}

fn crp(name: &str, policy: &Value, strategy: &Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "app"}],
            "policy": policy,
            "strategy": strategy
        }
    })
}

/// Three joined clusters, namespace `app`, and PickAll placement `crp` reported ready.
fn fleet(strategy: &Value) -> Fold {
    let mut fold = Fold::new();
    for (i, name) in ["c1", "c2", "c3"].into_iter().enumerate() {
        fold.apply(&json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": name, "labels": {"env": format!("s{}", i.min(1))}},
            "spec": {"heartbeatPeriodSeconds": 60}
        }));
        fold.send(Input::Heartbeat(Heartbeat {
            cluster: name.into(),
            ..Heartbeat::default()
        }));
    }
    fold.apply(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}));
    fold.apply(&crp("crp", &json!({"placementType": "PickAll"}), strategy));
    for cluster in ["c1", "c2", "c3"] {
        if (fold.placement("crp").bindings.get(cluster)).is_some_and(|b| b.resource_index.is_some())
        {
            fold.report(cluster, "crp");
        }
    }
    fold
}

fn rolling() -> Fold {
    fleet(&json!({"type": "RollingUpdate"}))
}

#[test]
fn a_binding_keyed_by_another_cluster_is_caught() {
    let mut fold = rolling();
    fold.placement_mut("crp")
        .bindings
        .update("c1", |b| b.cluster = "c2".into())
        .expect("c1");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::BindingKeyMismatch { .. })
    ));
}

#[test]
fn two_bindings_with_one_name_are_caught() {
    let mut fold = rolling();
    // A binding's name keeps the first 27 characters of its cluster's: these two share them.
    let [first, second] = [
        "cluster-with-a-long-shared-prefix-1",
        "cluster-with-a-long-shared-prefix-2",
    ];
    for name in [first, second] {
        fold.apply(&json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": name},
            "spec": {"heartbeatPeriodSeconds": 60}
        }));
        fold.send(Input::Heartbeat(Heartbeat {
            cluster: name.into(),
            ..Heartbeat::default()
        }));
    }
    assert!(check(&fold.state).is_ok());
    let suffix = (fold.placement("crp").bindings.get(first))
        .expect("the first is bound")
        .name_suffix;
    fold.placement_mut("crp")
        .bindings
        .update(second, |b| b.name_suffix = suffix)
        .expect("the second is bound");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::DuplicateBindingName { .. })
    ));
}

#[test]
fn a_live_binding_to_a_cluster_that_left_is_caught() {
    let mut fold = rolling();
    fold.state.members.remove("c3");
    fold.state.heartbeat_deadlines.retain(|(_, c)| c != "c3");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::LiveBindingWithoutMember { .. })
    ));
}

#[test]
fn a_binding_to_a_leaving_member_is_caught() {
    let mut fold = rolling();
    if let Some(member) = fold
        .state
        .members
        .get_mut("c3")
        .map(std::sync::Arc::make_mut)
    {
        member.leaving_since = Some(fold.now);
    }
    assert!(matches!(
        check(&fold.state),
        Err(Violation::BindingToLeavingMember { .. })
    ));
}

#[test]
fn a_report_over_its_limits_or_seen_after_it_was_made_is_caught() {
    use crate::event::ManifestDifference;
    use crate::work_status::{DIFFERENCES_MAX, ObservedDifference};
    let mut fold = rolling();
    let observed = ObservedDifference {
        manifest: ManifestDifference {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
            namespace: String::new(),
            name: "app".into(),
            observed_generation: Some(1),
            details: Vec::new(),
        },
        first_observed: fold.now + Duration::seconds(1),
    };
    let drifted = observed.clone();
    fold.placement_mut("crp")
        .bindings
        .update("c1", |b| {
            let report = b.report.as_mut().expect("reported");
            report.set_details(ReportDetails {
                drifted: thin_vec::thin_vec![drifted],
                ..report.details().clone()
            });
        })
        .expect("c1");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::WorkReport { detail, .. }) if detail.contains("first seen")
    ));
    fold.placement_mut("crp")
        .bindings
        .update("c1", |b| {
            let report = b.report.as_mut().expect("reported");
            report.set_details(ReportDetails {
                drifted: thin_vec::ThinVec::new(),
                diffed: std::iter::repeat_n(observed, DIFFERENCES_MAX + 1).collect(),
                ..report.details().clone()
            });
        })
        .expect("c1");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::WorkReport { detail, .. }) if detail.contains("over the limit")
    ));
}

#[test]
fn a_binding_on_a_pruned_resource_snapshot_is_caught() {
    let mut fold = rolling();
    fold.placement_mut("crp")
        .bindings
        .update("c1", |b| b.resource_index = Some(7))
        .expect("c1");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::MissingResourceSnapshot { index: 7, .. })
    ));
}

#[test]
fn a_binding_on_a_pruned_policy_snapshot_is_caught() {
    let mut fold = rolling();
    fold.placement_mut("crp").policy_snapshots.clear();
    assert!(matches!(
        check(&fold.state),
        Err(Violation::MissingPolicySnapshot { .. })
    ));
}

#[test]
fn snapshot_indexes_out_of_order_are_caught() {
    let mut fold = rolling();
    let placement = fold.placement_mut("crp");
    let copy = placement.resource_snapshots[0].clone();
    placement.resource_snapshots.push(copy);
    assert!(matches!(
        check(&fold.state),
        Err(Violation::SnapshotOrder {
            kind: "resource",
            ..
        })
    ));
}

#[test]
fn a_pick_fixed_binding_to_an_unnamed_cluster_is_caught() {
    let mut fold = rolling();
    fold.apply(&crp(
        "fixed",
        &json!({"placementType": "PickFixed", "clusterNames": ["c1"]}),
        &json!({}),
    ));
    assert_eq!(check(&fold.state), Ok(()));
    let placement = fold.placement_mut("fixed");
    let latest = placement
        .policy_snapshots
        .last_mut()
        .expect("a policy snapshot");
    latest.policy.cluster_names = vec!["c2".into()];
    assert!(matches!(
        check(&fold.state),
        Err(Violation::UnnamedFixedCluster { .. })
    ));
}

#[test]
fn a_rollout_that_updates_past_its_budget_is_caught() {
    // Three ready clusters, maxUnavailable 25% of 3 → 1: a new snapshot updates one cluster.
    let mut fold = rolling();
    fold.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "app"}, "data": {"k": "v"}}));
    let updated = fold
        .placement("crp")
        .bindings
        .values()
        .filter(|b| b.resource_index == Some(1))
        .count();
    assert_eq!(updated, 1);
    // The same step, had it updated a second available binding, would leave one ready of three.
    let before = fold.state.clone();
    let event = fold.event(Input::Tick);
    let mut after = before.clone();
    let now = after.now;
    let placement = after.placements.get_mut(&crp_key("crp")).expect("crp");
    let old = (placement.bindings.values())
        .find(|b| b.resource_index == Some(0))
        .expect("an old binding");
    placement.bindings.update(&old.cluster, |binding| {
        binding.resource_index = Some(1);
        binding.report = None;
        binding.rollout_started_at = now;
    });
    assert!(matches!(
        check_step(&before, &event, &after),
        Err(Violation::RolloutOverBudget {
            ready: 1,
            target: 3,
            max_unavailable: 1,
            ..
        })
    ));
}

#[test]
fn heartbeat_deadlines_that_disagree_with_members_are_caught() {
    let mut fold = rolling();
    let first = fold
        .state
        .heartbeat_deadlines
        .pop_first()
        .expect("a deadline");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::HeartbeatDeadline { .. })
    ));
    fold.state.heartbeat_deadlines.insert(first.clone());
    fold.state
        .heartbeat_deadlines
        .insert((first.0, "gone".into()));
    assert!(matches!(
        check(&fold.state),
        Err(Violation::HeartbeatDeadline { .. })
    ));
    fold.state
        .heartbeat_deadlines
        .remove(&(first.0, "gone".into()));
    fold.state
        .heartbeat_deadlines
        .insert((first.0 + Duration::seconds(1), first.1));
    assert!(matches!(
        check(&fold.state),
        Err(Violation::HeartbeatDeadline { .. })
    ));
}

#[test]
fn a_heartbeat_from_the_future_is_caught() {
    let mut fold = rolling();
    let agent = fold
        .state
        .members
        .get_mut("c1")
        .map(std::sync::Arc::make_mut)
        .and_then(|m| m.agent.as_mut())
        .expect("joined");
    agent.last_heartbeat += Duration::seconds(5);
    assert!(matches!(
        check(&fold.state),
        Err(Violation::Clock { .. }) | Err(Violation::HeartbeatDeadline { .. })
    ));
}

#[test]
fn deadlines_naming_missing_objects_are_caught() {
    let mut fold = rolling();
    let at = fold.now + Duration::seconds(30);
    fold.state.rollout_deadlines.insert((at, crp_key("gone")));
    assert!(matches!(
        check(&fold.state),
        Err(Violation::DeadlineWithoutObject {
            kind: "rollout",
            ..
        })
    ));
    fold.state.rollout_deadlines.clear();
    let run = ObjectKey::cluster_scoped(
        crate::model::PLACEMENT_GROUP,
        "ClusterStagedUpdateRun",
        "gone",
    );
    fold.state.run_deadlines.insert((at, run));
    assert!(matches!(
        check(&fold.state),
        Err(Violation::DeadlineWithoutObject { kind: "run", .. })
    ));
}

#[test]
fn a_partitioned_plan_for_a_missing_or_rolling_placement_is_caught() {
    let mut fold = rolling();
    fold.state
        .partitioned_rollouts
        .insert(crp_key("crp"), crate::rollout::partitioned::Plan::default());
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StrayPartitionedPlan {
            detail: "is not partitioned",
            ..
        })
    ));
    fold.state.partitioned_rollouts.clear();
    fold.state.partitioned_rollouts.insert(
        crp_key("gone"),
        crate::rollout::partitioned::Plan::default(),
    );
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StrayPartitionedPlan {
            detail: "does not exist",
            ..
        })
    ));
}

#[test]
fn a_partitioned_plan_whose_targets_are_not_the_live_bindings_is_caught() {
    let mut fold = fleet(&json!({"type": "Partitioned"}));
    assert_eq!(check(&fold.state), Ok(()));
    let plan = fold
        .state
        .partitioned_rollouts
        .get_mut(&crp_key("crp"))
        .expect("a plan");
    plan.targets.remove("c2");
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StrayPartitionedPlan {
            detail: "has a plan whose targets are not its live bindings",
            ..
        })
    ));
}

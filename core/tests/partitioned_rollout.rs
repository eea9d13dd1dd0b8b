//! The partitioned rollout folded directly, given/when/then: batches of 50, the NotReady
//! threshold, partition order, and that the plan kept step by step equals one built from
//! scratch.

mod common;

use common::{Hub, member, namespace};
use flotilla_core::query::placement::BindingState;
use flotilla_core::query::rollout::partitioned;
use flotilla_core::{Input, WorkReport};
use serde_json::{Value, json};

fn partitioned_crp(rollout: &Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
            "strategy": {"type": "Partitioned", "rolloutStrategy": rollout}
        }
    })
}

fn fleet(hub: &mut Hub, size: usize) {
    hub.apply(&namespace("test-ns"));
    for i in 0..size {
        let name = format!("cluster-{i:03}");
        hub.apply(&member(&name, json!({}), json!([])));
        hub.beat(&name);
    }
}

/// Bound clusters at the latest index that have not reported, reporting `available` except
/// for those in `sick`.
fn settle(hub: &mut Hub, sick: &[&str]) {
    loop {
        let owed: Vec<(String, u64)> = hub
            .placement("crp")
            .bindings
            .values()
            .filter(|b| b.state == BindingState::Bound)
            .filter(|b| b.report.as_ref().map(|r| r.resource_index) != b.resource_index)
            .filter_map(|b| b.resource_index.map(|i| (b.cluster.to_string(), i)))
            .collect();
        if owed.is_empty() {
            return;
        }
        for (cluster, resource_index) in owed {
            let available = !sick.contains(&cluster.as_str());
            hub.send(Input::WorkReport(WorkReport {
                cluster,
                placement: "crp".into(),
                namespace: None,
                resource_index,
                applied: Some(true),
                available: Some(available),
                trackable: true,
                message: String::new(),
                failed_manifests: Vec::new(),
                differences: Default::default(),
            }));
            check_plan(hub);
        }
    }
}

fn check_plan(hub: &Hub) {
    let (key, _) = hub.state.placements().iter().next().expect("a placement");
    let kept = hub.state.partitioned_rollouts().get(key).cloned();
    let fresh = partitioned::fresh_plan(&hub.state, key, hub.now);
    if let (Some(mut kept), Some(mut fresh)) = (kept, fresh) {
        kept.outcome = partitioned::Outcome::default();
        fresh.outcome = partitioned::Outcome::default();
        assert_eq!(kept, fresh, "the plan kept step by step equals a fresh one");
    }
}

fn bound(hub: &Hub) -> usize {
    hub.placement("crp")
        .bindings
        .values()
        .filter(|b| b.state == BindingState::Bound)
        .count()
}

#[test]
fn a_hundred_clusters_deploy_fifty_then_wait_while_more_than_ten_are_not_ready() {
    let mut hub = Hub::new();
    fleet(&mut hub, 100);
    hub.apply(&partitioned_crp(&json!({"maxUnavailable": "10%"})));
    assert_eq!(bound(&hub), 50, "the first batch of 50");
    let sick: Vec<String> = (0..11).map(|i| format!("cluster-{i:03}")).collect();
    let sick: Vec<&str> = sick.iter().map(String::as_str).collect();
    settle(&mut hub, &sick);
    assert_eq!(bound(&hub), 50, "11 NotReady > 10: paused");
    let plan = hub
        .state
        .partitioned_rollouts()
        .values()
        .next()
        .expect("plan");
    assert_eq!(
        plan.outcome.paused.as_deref(),
        Some("partition All: 11 of 100 clusters NotReady, maxUnavailable 10")
    );
    settle(&mut hub, &sick[..10]);
    // A sick cluster recovers: reports again available.
    hub.send(Input::WorkReport(WorkReport::available(
        "cluster-010",
        "crp",
        0,
    )));
    check_plan(&hub);
    assert_eq!(
        bound(&hub),
        100,
        "10 NotReady is not more than 10: the rest go out"
    );
}

#[test]
fn an_executed_eviction_leaves_a_plan_that_equals_a_fresh_one() {
    let mut hub = Hub::new();
    fleet(&mut hub, 3);
    hub.apply(&partitioned_crp(&json!({"maxUnavailable": 1})));
    settle(&mut hub, &["cluster-001"]);
    assert_eq!(bound(&hub), 3);
    // A taint keeps the scheduler from picking cluster-001 again once evicted (it does not
    // evict by itself). The eviction removes the binding outright; no scheduling change says
    // so, and a plan kept from before would still count it, NotReady, against its partition.
    hub.apply(&member(
        "cluster-001",
        json!({}),
        json!([{"key": "drain", "value": "yes", "effect": "NoSchedule"}]),
    ));
    assert_eq!(bound(&hub), 3, "a NoSchedule taint evicts nothing");
    hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementEviction",
        "metadata": {"name": "evict"},
        "spec": {"placementName": "crp", "clusterName": "cluster-001"}
    }));
    assert!(
        !hub.placement("crp").bindings.contains_key("cluster-001"),
        "the evicted cluster's binding is gone"
    );
    check_plan(&hub);
}

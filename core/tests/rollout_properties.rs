//! RollingUpdate invariants over random fleets, budgets and availability reports: the rollout
//! never makes more target clusters unavailable than `maxUnavailable` allows (a cluster it moved
//! to a new resource index counts as unavailable until it reports available there), and once
//! every cluster reports its work available, every cluster ends on the latest resource index
//! (whenever the placement's target can be met).

mod common;

use common::{Hub, member, namespace};
use flotilla_core::query::placement::BindingState;
use flotilla_core::query::rollout::{budgets, target};
use flotilla_core::{Input, WorkReport};
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Op {
    ChangeResources(u8),
    Report { cluster: usize, available: bool },
    Advance,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..50u8).prop_map(Op::ChangeResources),
        (0..6usize, prop::bool::weighted(0.8))
            .prop_map(|(cluster, available)| Op::Report { cluster, available }),
        Just(Op::Advance),
    ]
}

fn placement(pick_n: Option<i64>, max_unavailable: &Value, max_surge: &Value) -> Value {
    let policy = match pick_n {
        Some(n) => json!({"placementType": "PickN", "numberOfClusters": n}),
        None => json!({"placementType": "PickAll"}),
    };
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
            "policy": policy,
            "strategy": {"rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": max_surge,
                "unavailablePeriodSeconds": 0}}
        }
    })
}

fn config(version: u8) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "test-ns"}, "data": {"version": version.to_string()}})
}

fn report(hub: &mut Hub, cluster: &str, available: bool) {
    let index = hub
        .placement("crp")
        .bindings
        .get(cluster)
        .and_then(|b| b.resource_index);
    let Some(resource_index) = index else { return };
    hub.send(Input::WorkReport(WorkReport {
        cluster: cluster.into(),
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
}

/// Clusters the rollout moved off a version they had reported available, and that have not
/// reported available on the new one yet.
fn made_unavailable(hub: &Hub) -> usize {
    let placement = hub.placement("crp");
    placement
        .bindings
        .values()
        .filter(|b| b.state == BindingState::Bound)
        .filter(|b| {
            b.report.as_ref().is_some_and(|r| {
                r.available == Some(true) && Some(r.resource_index) != b.resource_index
            })
        })
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn never_more_unavailable_than_allowed_and_everyone_converges(
        clusters in 1usize..6,
        pick_n in prop::option::of(1i64..6),
        unavailable in prop_oneof![(1i64..4).prop_map(|n| json!(n)), (1u32..100).prop_map(|p| json!(format!("{p}%")))],
        surge in prop_oneof![(0i64..3).prop_map(|n| json!(n)), (0u32..100).prop_map(|p| json!(format!("{p}%")))],
        ops in prop::collection::vec(op(), 0..40),
    ) {
        let mut hub = Hub::new();
        let names: Vec<String> = (0..clusters).map(|i| format!("member-{i}")).collect();
        for name in &names {
            hub.apply(&member(name, json!({}), json!([])));
            hub.beat(name);
        }
        hub.apply(&namespace("test-ns"));
        hub.apply(&config(0));
        hub.apply(&placement(pick_n, &unavailable, &surge));
        for op in &ops {
            match op {
                Op::ChangeResources(version) => { hub.apply(&config(*version)); }
                Op::Report { cluster, available } => {
                    if let Some(name) = names.get(*cluster) {
                        let name = name.clone();
                        report(&mut hub, &name, *available);
                    }
                }
                Op::Advance => {
                    hub.advance(30);
                    for name in &names { hub.beat(name); }
                }
            }
            let placement = hub.placement("crp");
            let (max_unavailable, _) = budgets(placement, target(placement));
            let moved = i64::try_from(made_unavailable(&hub)).unwrap_or(i64::MAX);
            prop_assert!(moved <= max_unavailable, "{moved} made unavailable, budget {max_unavailable}");
        }
        // Everyone reports available on whatever they hold, until nothing changes. A PickN with
        // fewer clusters than N keeps N as its target (KubeFleet's rule), so its budget can
        // leave in-place updates blocked; convergence is only promised when N can be met.
        if pick_n.is_some_and(|n| usize::try_from(n).unwrap_or(0) > clusters) {
            return Ok(());
        }
        for _ in 0..(4 * clusters + 4) {
            for name in &names {
                report(&mut hub, name, true);
            }
        }
        let placement = hub.placement("crp");
        let latest = placement.latest_resources().map(|s| s.index);
        for binding in placement.bindings.values() {
            prop_assert_eq!(binding.state, BindingState::Bound, "{} not bound", binding.cluster);
            prop_assert_eq!(binding.resource_index, latest, "{} not on the latest", binding.cluster);
        }
        let expected = pick_n.map_or(clusters, |n| usize::try_from(n).unwrap_or(0));
        prop_assert_eq!(placement.bindings.len(), expected);
    }
}

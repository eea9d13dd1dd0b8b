//! Scheduler invariants over random fleets and timelines: PickN never selects more than N; a
//! cluster is only ever picked while it is eligible and (except for PickFixed) tolerates its
//! taints and matches the required affinity; and the outcome does not depend on the order in
//! which the member clusters joined.

mod common;

use common::{Hub, crp, member, namespace};
use flotilla_core::decision::Decision;
use flotilla_core::query::scheduler::filter;
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct Cluster {
    env: u8,
    zone: u8,
    tainted: bool,
}

fn cluster() -> impl Strategy<Value = Cluster> {
    (0..3u8, 0..3u8, prop::bool::weighted(0.25)).prop_map(|(env, zone, tainted)| Cluster {
        env,
        zone,
        tainted,
    })
}

fn manifest(name: &str, c: &Cluster) -> Value {
    let taints = if c.tainted {
        json!([{"key": "gpu", "effect": "NoSchedule"}])
    } else {
        json!([])
    };
    member(
        name,
        json!({"env": format!("e{}", c.env), "zone": format!("z{}", c.zone)}),
        taints,
    )
}

fn policies(n: i64) -> Vec<(&'static str, Value)> {
    vec![
        (
            "all",
            json!({"placementType": "PickAll",
            "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "e0"}}}]}}}}),
        ),
        (
            "n",
            json!({"placementType": "PickN", "numberOfClusters": n,
            "affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"labelSelector": {"matchLabels": {"env": "e1"}}}}]}}}),
        ),
        (
            "spread",
            json!({"placementType": "PickN", "numberOfClusters": n,
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone"}],
            "tolerations": [{"key": "gpu", "operator": "Exists"}]}),
        ),
        (
            "fixed",
            json!({"placementType": "PickFixed", "clusterNames": ["c0", "c3", "c9"]}),
        ),
    ]
}

/// Checks every pick in `decisions` against the cluster's state at that moment.
fn check_picks(hub: &Hub, decisions: &[Decision]) {
    for decision in decisions {
        let Decision::ClusterScheduled { placement, cluster } = decision else {
            continue;
        };
        let name = placement.name.as_str();
        let member = &hub.state.members()[cluster.as_str()];
        assert!(
            filter::ineligible(member, hub.now).is_none(),
            "{name} picked ineligible {cluster}"
        );
        if name != "fixed" {
            let policy = hub.placement(name).policy();
            assert!(
                filter::filter(member, &policy, hub.now).is_none(),
                "{name} picked {cluster}"
            );
        }
    }
}

fn run(
    clusters: &[(String, Cluster)],
    order: &[usize],
    n: i64,
    silent: &[usize],
) -> Vec<(String, Vec<String>)> {
    let mut hub = Hub::new();
    hub.apply(&namespace("test-ns"));
    for (name, policy) in policies(n) {
        let decisions = hub.apply(&crp(name, policy));
        check_picks(&hub, &decisions);
    }
    for &i in order {
        let (name, c) = &clusters[i];
        hub.apply(&manifest(name, c));
        let decisions = hub.beat(name);
        check_picks(&hub, &decisions);
    }
    // Some clusters go silent and time out; the others keep beating.
    for _ in 0..6 {
        hub.advance(60);
        for (i, (name, _)) in clusters.iter().enumerate() {
            if !silent.contains(&i) {
                let decisions = hub.beat(name);
                check_picks(&hub, &decisions);
            }
        }
    }
    let decisions = hub.apply(&crp(
        "late",
        json!({"placementType": "PickN", "numberOfClusters": n}),
    ));
    check_picks(&hub, &decisions);
    ["all", "n", "spread", "fixed", "late"]
        .iter()
        .map(|p| {
            let selected = hub.selected(p);
            let limit = usize::try_from(n).unwrap_or(0);
            if *p != "all" && *p != "fixed" {
                assert!(
                    selected.len() <= limit,
                    "{p} selected {} > {n}",
                    selected.len()
                );
            }
            ((*p).to_owned(), selected)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pick_n_never_exceeds_n_and_picks_are_valid_whatever_the_join_order(
        fleet in prop::collection::vec(cluster(), 1..10),
        n in 0i64..6,
        seed in any::<u64>(),
        silent in prop::collection::vec(0usize..10, 0..3),
    ) {
        let clusters: Vec<(String, Cluster)> =
            fleet.iter().enumerate().map(|(i, c)| (format!("c{i}"), c.clone())).collect();
        let forward: Vec<usize> = (0..clusters.len()).collect();
        // A deterministic shuffle from the seed.
        let mut shuffled = forward.clone();
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let j = usize::try_from(state % (i as u64 + 1)).unwrap_or(0);
            shuffled.swap(i, j);
        }
        let first = run(&clusters, &forward, n, &silent);
        let second = run(&clusters, &shuffled, n, &silent);
        // PickAll, PickFixed and a placement created after the fleet settled do not depend on
        // join order.
        for (a, b) in first.iter().zip(&second) {
            if a.0 == "all" || a.0 == "fixed" || a.0 == "late" {
                prop_assert_eq!(a, b);
            }
        }
    }
}

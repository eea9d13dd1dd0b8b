//! KubeFleet's eviction and disruption-budget table, cell by cell: for each placement type and each
//! kind of disruption budget (minAvailable / maxUnavailable, integer / percentage), an eviction
//! either executes when the budget allows it and is refused when it does not (✅), or is never
//! executed (❌): invalid for a PickFixed placement, misconfigured for a PickAll one.
//!
//! Every fleet has three clusters whose work is available; the eviction targets `member-2`.

mod common;
mod eviction_support;

use common::Hub;
use eviction_support::{
    MISCONFIGURED, PICK_FIXED, allowed, blocked, budget, conditions, evict, executed, fleet,
    invalid, not_executed, place, removed, report,
};
use serde_json::{Value, json};

const CLUSTERS: [&str; 3] = ["member-1", "member-2", "member-3"];

#[derive(Debug, Clone, Copy)]
enum Placement {
    PickFixed,
    PickAll,
    PickN,
}

fn placed(placement: Placement) -> Hub {
    let mut hub = fleet(&CLUSTERS);
    let policy = match placement {
        Placement::PickFixed => json!({"placementType": "PickFixed", "clusterNames": CLUSTERS}),
        Placement::PickAll => json!({"placementType": "PickAll"}),
        Placement::PickN => json!({"placementType": "PickN", "numberOfClusters": 3}),
    };
    place(&mut hub, &policy, &Value::Null);
    assert_eq!(hub.placement("crp").bindings.len(), 3, "all three placed");
    hub
}

/// Evicts `member-2` under a budget with `spec`, and checks the eviction's conditions and
/// whether the binding went.
fn check(placement: Placement, spec: &Value, want: &[(String, String, String, String)]) {
    let mut hub = placed(placement);
    let stored = budget(&mut hub, spec);
    assert!(!stored.iter().any(|d| d.is_rejection()), "{stored:?}");
    let decisions = evict(&mut hub, "evict-member-2", "member-2");
    assert_eq!(
        conditions(&hub, "evict-member-2"),
        want,
        "{placement:?} with {spec}"
    );
    let executed = want
        .last()
        .is_some_and(|c| c.0 == "Executed" && c.1 == "True");
    assert_eq!(
        removed(&decisions, "member-2"),
        executed,
        "{placement:?} with {spec}: binding removed only when executed"
    );
}

#[test]
fn pick_fixed_min_available_integer_is_refused() {
    check(
        Placement::PickFixed,
        &json!({"minAvailable": 0}),
        &invalid(PICK_FIXED),
    );
    check(
        Placement::PickFixed,
        &json!({"minAvailable": 3}),
        &invalid(PICK_FIXED),
    );
}

#[test]
fn pick_fixed_min_available_percentage_is_refused() {
    check(
        Placement::PickFixed,
        &json!({"minAvailable": "0%"}),
        &invalid(PICK_FIXED),
    );
    check(
        Placement::PickFixed,
        &json!({"minAvailable": "100%"}),
        &invalid(PICK_FIXED),
    );
}

#[test]
fn pick_fixed_max_unavailable_integer_is_refused() {
    check(
        Placement::PickFixed,
        &json!({"maxUnavailable": 3}),
        &invalid(PICK_FIXED),
    );
    check(
        Placement::PickFixed,
        &json!({"maxUnavailable": 0}),
        &invalid(PICK_FIXED),
    );
}

#[test]
fn pick_fixed_max_unavailable_percentage_is_refused() {
    check(
        Placement::PickFixed,
        &json!({"maxUnavailable": "100%"}),
        &invalid(PICK_FIXED),
    );
    check(
        Placement::PickFixed,
        &json!({"maxUnavailable": "0%"}),
        &invalid(PICK_FIXED),
    );
}

#[test]
fn pick_all_min_available_integer_allows_and_refuses() {
    // 3 available − minAvailable 2 = 1 disruption allowed.
    check(
        Placement::PickAll,
        &json!({"minAvailable": 2}),
        &executed(&allowed(3, 3)),
    );
    // 3 available − minAvailable 3 = 0.
    check(
        Placement::PickAll,
        &json!({"minAvailable": 3}),
        &not_executed(&blocked(3, 3)),
    );
}

#[test]
fn pick_all_min_available_percentage_is_misconfigured() {
    check(
        Placement::PickAll,
        &json!({"minAvailable": "0%"}),
        &not_executed(MISCONFIGURED),
    );
    check(
        Placement::PickAll,
        &json!({"minAvailable": "50%"}),
        &not_executed(MISCONFIGURED),
    );
}

#[test]
fn pick_all_max_unavailable_integer_is_misconfigured() {
    check(
        Placement::PickAll,
        &json!({"maxUnavailable": 3}),
        &not_executed(MISCONFIGURED),
    );
    check(
        Placement::PickAll,
        &json!({"maxUnavailable": 0}),
        &not_executed(MISCONFIGURED),
    );
}

#[test]
fn pick_all_max_unavailable_percentage_is_misconfigured() {
    check(
        Placement::PickAll,
        &json!({"maxUnavailable": "100%"}),
        &not_executed(MISCONFIGURED),
    );
    check(
        Placement::PickAll,
        &json!({"maxUnavailable": "25%"}),
        &not_executed(MISCONFIGURED),
    );
}

#[test]
fn pick_n_min_available_integer_allows_and_refuses() {
    check(
        Placement::PickN,
        &json!({"minAvailable": 2}),
        &executed(&allowed(3, 3)),
    );
    check(
        Placement::PickN,
        &json!({"minAvailable": 3}),
        &not_executed(&blocked(3, 3)),
    );
}

#[test]
fn pick_n_min_available_percentage_allows_and_refuses() {
    // 50% of numberOfClusters 3 rounds up to 2: 3 − 2 = 1 allowed.
    check(
        Placement::PickN,
        &json!({"minAvailable": "50%"}),
        &executed(&allowed(3, 3)),
    );
    // 70% of 3 rounds up to 3: 3 − 3 = 0.
    check(
        Placement::PickN,
        &json!({"minAvailable": "70%"}),
        &not_executed(&blocked(3, 3)),
    );
}

#[test]
fn pick_n_max_unavailable_integer_allows_and_refuses() {
    // maxUnavailable 1 − (3 total − 3 available) = 1 allowed.
    check(
        Placement::PickN,
        &json!({"maxUnavailable": 1}),
        &executed(&allowed(3, 3)),
    );
    check(
        Placement::PickN,
        &json!({"maxUnavailable": 0}),
        &not_executed(&blocked(3, 3)),
    );
}

#[test]
fn pick_n_max_unavailable_percentage_allows_and_refuses() {
    // 10% of 3 rounds up to 1: 1 − 0 = 1 allowed.
    check(
        Placement::PickN,
        &json!({"maxUnavailable": "10%"}),
        &executed(&allowed(3, 3)),
    );
    check(
        Placement::PickN,
        &json!({"maxUnavailable": "0%"}),
        &not_executed(&blocked(3, 3)),
    );
}

/// Ten member clusters, a PickN placement of four (all available), and a budget: a percentage
/// is taken of the placement's four, as KubeFleet's code does, not of the fleet's ten as
/// KubeFleet's docs' "total number of clusters in the fleet" would read (see `docs/eviction.md`).
fn pick_four_of_ten(spec: &Value, sick: bool) -> (Hub, Vec<flotilla_core::decision::Decision>) {
    let fleet_of_ten: Vec<String> = (1..=10).map(|i| format!("member-{i:02}")).collect();
    let names: Vec<&str> = fleet_of_ten.iter().map(String::as_str).collect();
    let mut hub = fleet(&names);
    place(
        &mut hub,
        &json!({"placementType": "PickN", "numberOfClusters": 4}),
        &Value::Null,
    );
    let bound: Vec<String> = hub
        .placement("crp")
        .bindings
        .keys()
        .map(|cluster| cluster.to_string())
        .collect();
    assert_eq!(bound.len(), 4, "four of the ten placed");
    // The first of the four reports its work applied but not available.
    if let Some(first) = bound.first().filter(|_| sick) {
        report(&mut hub, first, true, false);
    }
    let stored = budget(&mut hub, spec);
    assert!(!stored.iter().any(|d| d.is_rejection()), "{stored:?}");
    let target = bound.last().cloned().unwrap_or_default();
    let decisions = evict(&mut hub, "evict-one", &target);
    (hub, decisions)
}

#[test]
fn a_percentage_is_of_the_placements_target_count_not_of_the_fleet() {
    // minAvailable 50%: of 4 → 2, and 4 are available, so 2 may go; of the fleet's 10 → 5,
    // more than the 4 available, and the eviction would be blocked.
    let (hub, decisions) = pick_four_of_ten(&json!({"minAvailable": "50%"}), false);
    assert_eq!(conditions(&hub, "evict-one"), executed(&allowed(4, 4)));
    assert!(
        decisions
            .iter()
            .any(|d| matches!(d, flotilla_core::decision::Decision::BindingRemoved { .. }))
    );
    // maxUnavailable 25% with one cluster not available: of 4 → 1, already used up, so
    // blocked; of the fleet's 10 → 3 (rounded up), and it would be allowed.
    let (hub, decisions) = pick_four_of_ten(&json!({"maxUnavailable": "25%"}), true);
    assert_eq!(conditions(&hub, "evict-one"), not_executed(&blocked(3, 4)));
    assert!(
        !decisions
            .iter()
            .any(|d| matches!(d, flotilla_core::decision::Decision::BindingRemoved { .. }))
    );
}

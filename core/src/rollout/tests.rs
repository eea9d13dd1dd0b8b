//! Unit tests of the rolling update pass (`rollout/mod.rs`).

use super::*;

use crate::placement::Bindings;
use crate::state::State;
use readiness::Readiness;

fn binding(
    cluster: &str,
    state: BindingState,
    readiness: Readiness,
    out_of_date: bool,
) -> (&str, Class) {
    let class = Class {
        state,
        readiness,
        out_of_date,
        reports_diff: false,
        on_latest: !out_of_date,
    };
    (cluster, class)
}

/// The pass's plan for bindings of these classes: their index, and rows tagged with them.
fn plan_of(bindings: &[(&str, Class)], target: i64, budgets: (i64, i64), progress: bool) -> Plan {
    let mut classes: Vec<(ClusterName, Class)> = (bindings.iter())
        .map(|(cluster, class)| ((*cluster).into(), *class))
        .collect();
    classes.sort_by(|a, b| a.0.cmp(&b.0));
    let mut rows: Bindings = (classes.iter())
        .map(|(cluster, _)| {
            let decision = crate::placement::ClusterDecision {
                cluster: cluster.clone(),
                selected: true,
                score: None,
                reason: "picked".into(),
            };
            crate::placement::Binding::scheduled([0; 4], decision, 0, DateTime::UNIX_EPOCH)
        })
        .collect();
    rows.set_tags(classes.iter().map(|(_, class)| class.tag()));
    let (max_unavailable, max_surge) = budgets;
    let budgets = Budgets {
        target,
        max_unavailable,
        max_surge,
    };
    plan(
        &BindingIndex::of_all(1, &classes),
        &rows,
        &budgets,
        progress,
    )
}

#[test]
fn an_in_place_update_goes_one_cluster_at_a_time_and_never_surges() {
    // Three ready bound clusters, a new resource index, maxUnavailable 1, maxSurge 1, one
    // scheduled-but-unused fourth cluster absent (PickN 3).
    let all = [
        binding("cluster-2", BindingState::Bound, Readiness::Ready, true),
        binding("cluster-3", BindingState::Bound, Readiness::Ready, true),
        binding("cluster-4", BindingState::Bound, Readiness::Ready, true),
    ];
    let first = plan_of(&all, 3, (1, 1), true);
    assert_eq!(first.update, ["cluster-2"]);
    // A tripped rollout (no progress) plans no update.
    assert_eq!(plan_of(&all, 3, (1, 1), false), Plan::default());
    // cluster-2 took the bad image and never becomes available: the rollout stalls.
    let stalled = [
        binding("cluster-2", BindingState::Bound, Readiness::NotReady, false),
        binding("cluster-3", BindingState::Bound, Readiness::Ready, true),
        binding("cluster-4", BindingState::Bound, Readiness::Ready, true),
    ];
    assert_eq!(plan_of(&stalled, 3, (1, 1), true), Plan::default());
}

#[test]
fn a_move_adds_the_new_clusters_before_removing_the_old_one_at_a_time() {
    // West → east with maxSurge 2, maxUnavailable 25% of 2 → 1.
    let moving = [
        binding(
            "cluster-1",
            BindingState::Unscheduled,
            Readiness::Ready,
            true,
        ),
        binding(
            "cluster-2",
            BindingState::Unscheduled,
            Readiness::Ready,
            true,
        ),
        binding(
            "cluster-3",
            BindingState::Scheduled,
            Readiness::NotReady,
            true,
        ),
        binding(
            "cluster-4",
            BindingState::Scheduled,
            Readiness::NotReady,
            true,
        ),
    ];
    let first = plan_of(&moving, 2, (1, 2), true);
    assert_eq!(first.bind, ["cluster-3", "cluster-4"]);
    assert_eq!(first.remove, ["cluster-1"]);
    let later = [
        binding(
            "cluster-2",
            BindingState::Unscheduled,
            Readiness::Ready,
            true,
        ),
        binding("cluster-3", BindingState::Bound, Readiness::NotReady, false),
        binding("cluster-4", BindingState::Bound, Readiness::NotReady, false),
    ];
    assert_eq!(
        plan_of(&later, 2, (1, 2), true),
        Plan::default(),
        "one must stay available"
    );
    let done = [
        binding(
            "cluster-2",
            BindingState::Unscheduled,
            Readiness::Ready,
            true,
        ),
        binding("cluster-3", BindingState::Bound, Readiness::Ready, false),
        binding("cluster-4", BindingState::Bound, Readiness::NotReady, false),
    ];
    assert_eq!(plan_of(&done, 2, (1, 2), true).remove, ["cluster-2"]);
}

#[test]
fn a_custom_kind_named_member_cluster_is_not_a_member_cluster() {
    use crate::model::{CLUSTER_GROUP, MEMBER_CLUSTER, PLACEMENT_GROUP};
    let placement = ObjectKey::cluster_scoped(
        PLACEMENT_GROUP,
        crate::model::CLUSTER_RESOURCE_PLACEMENT,
        "p",
    );
    let mut state = State::default();
    state
        .rollout_index
        .0
        .insert(placement.clone(), BindingIndex::new(0));
    let custom = ObjectKey::cluster_scoped("example.com", MEMBER_CLUSTER, "member-1");
    note_changes(
        &mut state.rollout_store(),
        &[Change::ObjectStored(custom.clone())],
    );
    let due = |state: &mut State| {
        state
            .rollout_index
            .0
            .get_mut(&placement)
            .map(|index| index.take_due(DateTime::UNIX_EPOCH))
            .unwrap_or_default()
    };
    assert!(
        due(&mut state).is_empty(),
        "example.com/v1 MemberCluster marked a cluster"
    );
    assert_eq!(
        Touched::of(&[Change::ObjectStored(custom)]),
        Touched::default()
    );
    let real = ObjectKey::cluster_scoped(CLUSTER_GROUP, MEMBER_CLUSTER, "member-1");
    note_changes(&mut state.rollout_store(), &[Change::ObjectStored(real)]);
    assert_eq!(
        due(&mut state).into_iter().collect::<Vec<_>>(),
        ["member-1"]
    );
    // Likewise a custom kind named like a placement or an override touches nothing.
    let fake_placement = ObjectKey::cluster_scoped("example.com", "ClusterResourcePlacement", "p");
    let fake_override = ObjectKey::cluster_scoped("example.com", "ClusterResourceOverride", "o");
    let changes = [
        Change::ObjectStored(fake_placement),
        Change::ObjectDeleted(fake_override),
    ];
    assert_eq!(Touched::of(&changes), Touched::default());
}

#[test]
fn failed_bindings_are_always_updated() {
    let failing = [binding("c", BindingState::Bound, Readiness::Failed, true)];
    assert_eq!(plan_of(&failing, 1, (1, 0), true).update, ["c"]);
}

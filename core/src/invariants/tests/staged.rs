//! The staged update run's invariants, each broken on purpose.

use serde_json::json;

use super::{Fold, check, fleet};
use crate::event::Input;
use crate::invariants::Violation;
use crate::model::ObjectKey;
use crate::state::State;

/// An External placement with a two-stage run: stage `s0` (c1) then `s1` (c2, c3) behind an
/// approval; c1 is updating.
fn staged() -> Fold {
    let mut fold = fleet(&json!({"type": "External"}));
    fold.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "strategy"},
        "spec": {"stages": [
            {"name": "s0", "labelSelector": {"matchLabels": {"env": "s0"}}},
            {"name": "s1", "labelSelector": {"matchLabels": {"env": "s1"}}, "maxConcurrency": 2,
             "beforeStageTasks": [{"type": "Approval"}]}
        ]}
    }));
    fold.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": "run"},
        "spec": {"placementName": "crp", "stagedRolloutStrategyName": "strategy", "state": "Run"}
    }));
    fold
}

fn the_run(fold: &mut Fold) -> &mut crate::staged::run::UpdateRun {
    let key = ObjectKey::cluster_scoped(
        crate::model::PLACEMENT_GROUP,
        "ClusterStagedUpdateRun",
        "run",
    );
    fold.state.update_runs.get_mut(&key).expect("the run")
}

#[test]
fn a_stage_started_before_the_previous_one_succeeded_is_caught() {
    let mut fold = staged();
    let now = fold.now;
    let run = the_run(&mut fold);
    assert_eq!(
        run.status.stages[0].updating.len(),
        1,
        "{:?}",
        run.status.stages[0]
    );
    run.status.stages[1].start_time = Some(now);
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageStartedEarly { .. })
    ));
}

#[test]
fn a_stage_started_before_its_approval_was_accepted_is_caught() {
    let mut fold = staged();
    fold.report("c1", "crp");
    let name = "run-before-s1".to_owned();
    fold.send(Input::Approve {
        name: name.clone(),
        namespace: None,
        reason: None,
        message: None,
    });
    assert!(
        the_run(&mut fold).status.stages[1].start_time.is_some(),
        "the approved stage starts"
    );
    let key = ObjectKey::cluster_scoped(
        crate::model::PLACEMENT_GROUP,
        "ClusterApprovalRequest",
        &name,
    );
    fold.state
        .approvals
        .get_mut(&key)
        .expect("request")
        .accepted = None;
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageStartedEarly { .. })
    ));
}

#[test]
fn stage_cursors_that_disagree_with_clusters_are_caught() {
    let mut fold = staged();
    the_run(&mut fold).status.stages[0].updating.clear();
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageBookkeeping { .. })
    ));
    let mut fold = staged();
    the_run(&mut fold).status.stages[0].next_unstarted = 0;
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageBookkeeping { .. })
    ));
    let mut fold = staged();
    the_run(&mut fold).status.positions.clear();
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageBookkeeping { .. })
    ));
    // The kept latest success, once known, must be the clusters' own.
    let mut fold = staged();
    let stage = &mut the_run(&mut fold).status.stages[0];
    let known = stage.latest_success.get(&stage.clusters);
    assert_eq!(check(&fold.state), Ok(()), "a scan agrees: {known:?}");
    let stage = &mut the_run(&mut fold).status.stages[0];
    stage
        .latest_success
        .record(chrono::DateTime::<chrono::Utc>::MAX_UTC);
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageBookkeeping { .. })
    ));
    // So must the kept failure count.
    let mut fold = staged();
    let stage = &mut the_run(&mut fold).status.stages[0];
    assert_eq!(stage.failures.get(&stage.clusters), 0);
    assert_eq!(check(&fold.state), Ok(()));
    the_run(&mut fold).status.stages[0].failures.record();
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageBookkeeping { .. })
    ));
}

#[test]
fn a_stage_updating_past_its_concurrency_is_caught() {
    let mut fold = staged();
    fold.report("c1", "crp");
    fold.send(Input::Approve {
        name: "run-before-s1".into(),
        namespace: None,
        reason: None,
        message: None,
    });
    let run = the_run(&mut fold);
    assert_eq!(run.status.stages[1].updating.len(), 2);
    run.status
        .strategy_snapshot
        .as_mut()
        .expect("snapshot")
        .stages[1]
        .max_concurrency = None;
    assert!(matches!(
        check(&fold.state),
        Err(Violation::StageBookkeeping { .. })
    ));
}

#[test]
fn states_the_fold_builds_pass() {
    let mut fold = staged();
    fold.report("c1", "crp");
    fold.send(Input::Approve {
        name: "run-before-s1".into(),
        namespace: None,
        reason: None,
        message: None,
    });
    fold.report("c2", "crp");
    fold.report("c3", "crp");
    assert_eq!(check(&fold.state), Ok(()));
}

#[test]
fn a_rollback_outside_a_failed_stage_or_of_an_unmoved_cluster_is_caught() {
    let mut fold = staged();
    let now = fold.now;
    let run = the_run(&mut fold);
    run.status.rollback = Some(crate::staged::run::RunRollback {
        stage: 0,
        reason: "FailureThresholdExceeded".into(),
        message: String::new(),
        moved: std::iter::once("c1".to_owned()).collect(),
        ready: std::collections::BTreeSet::new(),
        last_progress: now,
        watch: Default::default(),
    });
    let bookkeeping =
        |state: &State| matches!(check(state), Err(Violation::StageBookkeeping { .. }));
    assert!(bookkeeping(&fold.state), "stage s0 has not failed");
    let failed = crate::condition::Condition::new(
        "Succeeded",
        crate::condition::ConditionStatus::False,
        "FailureThresholdExceeded",
        String::new(),
        1,
        now,
    );
    the_run(&mut fold).status.stages[0].succeeded = Some(failed);
    assert!(bookkeeping(&fold.state), "c1 has no recorded prior work");
    std::sync::Arc::make_mut(&mut the_run(&mut fold).status.stages[0].clusters[0]).prior =
        Some(Box::new((7, Default::default())));
    assert_eq!(check(&fold.state), Ok(()));
}

/// The bindings a run binds hold one copy of its name, as folded and as decoded from a
/// checkpoint.
#[test]
fn a_runs_bindings_share_its_name_folded_and_restored() {
    let mut fold = staged();
    fold.report("c1", "crp");
    fold.send(Input::Approve {
        name: "run-before-s1".to_owned(),
        namespace: None,
        reason: None,
        message: None,
    });
    let names = |state: &State| -> Vec<std::sync::Arc<str>> {
        let placement = state.placements.values().next().expect("the placement");
        (placement.bindings.values())
            .filter_map(|binding| binding.update_run.clone())
            .collect()
    };
    let one_copy = |names: &[std::sync::Arc<str>]| {
        names.len() == 3 && names.iter().all(|n| std::sync::Arc::ptr_eq(n, &names[0]))
    };
    assert!(
        one_copy(&names(&fold.state)),
        "folded: {:?}",
        names(&fold.state)
    );
    let hash = fold.state.hash().expect("hashes");
    let bytes = crate::wire::checkpoint::encode(1, &hash, &fold.state).expect("encodes");
    let restored = crate::wire::checkpoint::decode(&bytes)
        .expect("decodes")
        .state;
    assert!(
        one_copy(&names(&restored)),
        "restored: {:?}",
        names(&restored)
    );
    assert!(restored == fold.state);
}

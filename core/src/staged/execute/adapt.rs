//! `spec.onClusterChange: Adapt` (`docs/rollout-safety.md`): instead of failing when its
//! placement's selected clusters change, a run takes the change in, each step recorded as an
//! `UpdateRunClusterChanged` decision:
//! - a joining cluster that matches a stage not yet finished (its clusters not all done) is
//!   appended to that stage (`Added`), with the override snapshots that apply to it now; one
//!   that matches only finished stages, or no stage, is left for the next run (`Deferred`);
//! - a leaving cluster is `Dropped`: marked so, never started (or no longer waited for), and
//!   its binding left to the run's delete stage when that has not run yet.
//!
//! Appending keeps every recorded position valid (the stage's order is its sorting label's
//! otherwise; a late cluster goes last). A stage is *finished* once its clusters all finished
//! and its after-stage tasks are waited on, or it succeeded.

use std::collections::BTreeSet;

use super::Pass;
use crate::condition::ConditionStatus;
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::overrides;
use crate::staged::initialize::selects;
use crate::staged::run::ClusterStatus;

/// The Succeeded reason of a cluster that left the placement during the run.
pub(crate) const REASON_CLUSTER_LEFT: &str = "ClusterLeftPlacement";

/// Takes the difference between the clusters selected now and those planned into the run.
pub(super) fn adapt(
    pass: &mut Pass<'_>,
    selected: &BTreeSet<ClusterName>,
    planned: &BTreeSet<ClusterName>,
) {
    for cluster in selected.difference(planned) {
        join(pass, cluster);
    }
    for cluster in planned.difference(selected) {
        leave(pass, cluster);
    }
}

fn join(pass: &mut Pass<'_>, cluster: &str) {
    let labels = pass
        .state
        .sources
        .members
        .get(cluster)
        .map(|m| m.meta.labels.clone())
        .unwrap_or_default();
    let stages = pass
        .run
        .status
        .strategy_snapshot
        .as_ref()
        .map(|s| s.stages.clone())
        .unwrap_or_default();
    let matched = stages
        .iter()
        .position(|stage| selects(stage.label_selector.as_ref(), &labels));
    let open = matched.filter(|index| {
        pass.run
            .status
            .stages
            .get(*index)
            .is_some_and(|s| s.succeeded.is_none() && !s.after_waiting)
    });
    let Some(index) = open else {
        pass.run.status.deferred.insert(cluster.into());
        pass.decisions.push(Decision::UpdateRunClusterChanged {
            run: pass.scope.run_key(),
            cluster: cluster.to_owned(),
            stage: None,
            change: "Deferred".to_owned(),
        });
        return;
    };
    let mut status = ClusterStatus::new(cluster.into());
    let key = pass.placement.clone();
    let index_used = pass.run.status.resource_snapshot_index_used;
    let resources = pass
        .state
        .placements
        .get(&key)
        .and_then(|p| {
            p.resource_snapshots
                .iter()
                .find(|s| Some(s.index) == index_used)
        })
        .map(|s| s.resources.clone());
    if let (Some(resources), false) = (resources, pass.state.sources.overrides.is_empty()) {
        let (cro, ro) =
            overrides::applicable_overrides(pass.state.sources, &key, &resources, cluster);
        status.cluster_resource_overrides = cro;
        status.resource_overrides = ro;
    }
    let stage = &mut pass.run.status.stages[index];
    stage.clusters.push(std::sync::Arc::new(status));
    let position = stage.clusters.len() - 1;
    let name = stage.name.clone();
    pass.run
        .status
        .positions
        .insert(cluster.into(), (index, position));
    pass.decisions.push(Decision::UpdateRunClusterChanged {
        run: pass.scope.run_key(),
        cluster: cluster.to_owned(),
        stage: Some(name),
        change: "Added".to_owned(),
    });
}

fn leave(pass: &mut Pass<'_>, cluster: &str) {
    let Some((index, position)) = pass.run.status.positions.get(cluster).copied() else {
        return;
    };
    let message = format!("cluster `{cluster}` left the placement; the run goes on without it");
    let condition = pass.condition(
        "Succeeded",
        ConditionStatus::False,
        REASON_CLUSTER_LEFT,
        &message,
    );
    let stage = &mut pass.run.status.stages[index];
    let name = stage.name.clone();
    if stage.clusters[position].dropped {
        return;
    }
    if crate::staged::run::is_failed(&stage.clusters[position]) {
        stage.failures.forget();
    }
    let status = std::sync::Arc::make_mut(&mut stage.clusters[position]);
    status.dropped = true;
    if status.succeeded.is_none() {
        status.succeeded = Some(std::sync::Arc::new(condition));
    }
    stage.updating.remove(&position);
    if let Some(deletion) = pass
        .run
        .status
        .deletion
        .as_mut()
        .filter(|d| d.succeeded.is_none())
        && !deletion.clusters.iter().any(|c| c.cluster == cluster)
    {
        deletion
            .clusters
            .push(std::sync::Arc::new(ClusterStatus::new(cluster.into())));
    }
    pass.decisions.push(Decision::UpdateRunClusterChanged {
        run: pass.scope.run_key(),
        cluster: cluster.to_owned(),
        stage: Some(name),
        change: "Dropped".to_owned(),
    });
}

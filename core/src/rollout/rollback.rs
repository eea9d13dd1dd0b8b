//! `onFailure: Rollback` for a rolling update (issue 17): every cluster the tripped rollout
//! updated gets the work it carried before — its binding points at that resource snapshot
//! again — within the same `maxUnavailable` budget as the rollout: a cluster that is not ready
//! on its new work goes back at once (it is unavailable already, as KubeFleet updates failed
//! bindings at once), a ready one only while enough others stay ready. The rollback is
//! `RolledBack` once every rolled-back cluster reports its old work ready, `RollbackFailed`
//! when one fails to apply it, loses it after having it available, or the progress deadline
//! passes without a rolled-back cluster becoming ready. A cluster newly placed by the rollout
//! had nothing before and keeps its work; a cluster no longer scheduled is left to removal.

use chrono::{DateTime, Duration, Utc};

use crate::change::Changes;
use crate::decision::Decision;
use crate::model::ObjectKey;
use crate::placement::{BindingState, Placement, Work};

use super::readiness::Readiness;
use super::safety::{Judging, Phase, names};

/// What the rollback may do in this pass: how many ready clusters it may take off their
/// current work (`ready - (target - maxUnavailable)`, less what the pass removes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Ready clusters that may become unavailable now.
    pub ready_to_move: usize,
}

/// Moves the clusters whose turn it is back to their prior work, then judges the rollback.
/// Returns the decisions, the clusters whose bindings changed, and when it next needs a pass.
pub(crate) fn step(
    placement: &mut Placement,
    key: &ObjectKey,
    budget: Budget,
    judging: Judging<'_>,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> (Vec<Decision>, Vec<String>, Option<DateTime<Utc>>) {
    let Some(guard) = placement.guard.as_ref() else {
        return (Vec::new(), Vec::new(), None);
    };
    if !matches!(guard.phase, Phase::RollingBack { .. }) {
        return (Vec::new(), Vec::new(), None);
    }
    let from = guard.resource_index;
    let mut moves = Vec::new();
    let mut ready_left = budget.ready_to_move;
    for (cluster, (index, overrides)) in &guard.prior {
        let Some(binding) = placement.bindings.get(cluster.as_str()) else {
            continue;
        };
        if binding.state != BindingState::Bound || binding.resource_index != Some(from) {
            continue;
        }
        let readiness = judging.readiness(binding, now);
        if readiness == Readiness::Ready {
            if ready_left == 0 {
                continue;
            }
            ready_left -= 1;
        }
        let work = Work {
            resource_index: *index,
            override_snapshots: overrides.clone(),
        };
        moves.push((cluster.clone(), work));
    }
    let mut decisions = Vec::new();
    let mut moved = Vec::new();
    for (cluster, work) in moves {
        let to_index = work.resource_index;
        decisions.extend(placement.bind(key, &cluster, (work, None), now, changes));
        decisions.push(Decision::ClusterRolledBack {
            placement: key.clone(),
            cluster: cluster.clone(),
            from_index: from,
            to_index,
        });
        moved.push(cluster);
    }
    let (judged, next) = judge(placement, key, judging, now);
    decisions.extend(judged);
    (decisions, moved, next)
}

/// Judges the rolled-back clusters: `RolledBack`, `RollbackFailed`, or still rolling back
/// (with the deadline of its own progress, when there is one).
fn judge(
    placement: &mut Placement,
    key: &ObjectKey,
    judging: Judging<'_>,
    now: DateTime<Utc>,
) -> (Vec<Decision>, Option<DateTime<Utc>>) {
    let Placement {
        bindings, guard, ..
    } = placement;
    let Some(guard) = guard.as_mut() else {
        return (Vec::new(), None);
    };
    let Phase::RollingBack {
        ready,
        last_progress,
    } = &mut guard.phase
    else {
        return (Vec::new(), None);
    };
    let mut pending = Vec::new();
    let mut failure = None;
    for (cluster, (index, _)) in &guard.prior {
        let Some(binding) = bindings.get(cluster.as_str()) else {
            continue;
        };
        if binding.state == BindingState::Unscheduled {
            continue;
        }
        if binding.resource_index != Some(*index) {
            pending.push(cluster.as_str());
            continue;
        }
        let readiness = judging.readiness(binding, now);
        let lost = ready.contains(cluster)
            && binding
                .report
                .as_ref()
                .is_some_and(|r| r.resource_index == *index && r.available == Some(false));
        if readiness == Readiness::Failed || lost {
            let what = if lost {
                "became unavailable"
            } else {
                "failed to apply"
            };
            failure.get_or_insert(format!(
                "cluster {cluster} {what} on resource snapshot {index}"
            ));
        } else if readiness == Readiness::Ready {
            if ready.insert(cluster.clone()) {
                *last_progress = now;
            }
        } else {
            pending.push(cluster.as_str());
        }
    }
    let deadline = guard
        .safety
        .progress_deadline_seconds
        .map(|secs| *last_progress + Duration::seconds(secs));
    if failure.is_none()
        && let Some(deadline) = deadline.filter(|d| *d <= now && !pending.is_empty())
    {
        {
            let secs = (deadline - *last_progress).num_seconds();
            failure = Some(format!(
                "no rolled-back cluster became ready for {secs}s ({}.progressDeadlineSeconds): {}",
                judging.path,
                names(pending.iter().copied())
            ));
        }
    }
    let (succeeded, message) = match failure {
        Some(why) => (false, why),
        None if pending.is_empty() => (
            true,
            format!(
                "every rolled-back cluster has its old work available: {}",
                names(guard.prior.keys().map(String::as_str))
            ),
        ),
        None => return (Vec::new(), deadline),
    };
    guard.phase = if succeeded {
        Phase::RolledBack
    } else {
        Phase::RollbackFailed(message.clone())
    };
    let decision = Decision::RollbackFinished {
        placement: key.clone(),
        resource_index: guard.resource_index,
        succeeded,
        message,
    };
    (vec![decision], None)
}

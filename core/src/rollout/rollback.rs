//! `onFailure: Rollback` for a rolling update (docs/rollout-safety.md): every cluster the
//! tripped rollout updated gets the work it carried before — its binding points at that
//! resource snapshot again — within the same `maxUnavailable` budget as the rollout: a cluster
//! that is not ready on its new work goes back at once (it is unavailable already, as KubeFleet
//! updates failed bindings at once), a ready one only while enough others stay ready. The
//! rollback is `RolledBack` once every rolled-back cluster reports its old work ready,
//! `RollbackFailed` when one fails to apply it, loses it after having it available, or the
//! progress deadline passes without a rolled-back cluster becoming ready. A cluster newly
//! placed by the rollout had nothing before and keeps its work; a cluster no longer scheduled
//! is left to removal.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use crate::change::Changes;
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::ObjectKey;
use crate::placement::{Binding, BindingState, Bindings, OverrideSnapshots, Placement, Work};

use super::readiness::Readiness;
use super::rollback_watch::{RollbackTargets, RollbackWatch, Watch};
use super::safety::{Guard, Judging, Phase, names};

/// What the rollback may do in this pass: how many ready clusters it may take off their
/// current work (`ready - (target - maxUnavailable)`, less what the pass removes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Ready clusters that may become unavailable now.
    pub ready_to_move: usize,
}

/// What one pass of a rollback did: its decisions, the clusters whose bindings it changed,
/// and when it next needs a pass.
pub(crate) type Stepped = (Vec<Decision>, Vec<String>, Option<DateTime<Utc>>);

/// Moves the clusters whose turn it is back to their prior work, then judges the rollback.
/// `touched` names the clusters whose bindings may have changed since the last pass (`None`:
/// any may have): with the rollback's watch known, only those are looked at again. Debug
/// builds check such a pass against one that walks every rolled-back cluster.
pub(crate) fn step(
    placement: &mut Placement,
    key: &ObjectKey,
    budget: Budget,
    judging: Judging<'_>,
    now: DateTime<Utc>,
    changes: &mut Changes,
    touched: Option<&BTreeSet<ClusterName>>,
) -> Stepped {
    let rolling_back = placement.guard.as_ref().is_some_and(Guard::is_rolling_back);
    if !rolling_back {
        return (Vec::new(), Vec::new(), None);
    }
    let pass = RollbackPass {
        key,
        budget,
        judging,
        now,
    };
    #[cfg(debug_assertions)]
    let walked = touched.is_some().then(|| {
        let mut whole = placement.clone();
        let mut scratch = Changes::default();
        let out = run(&mut whole, &pass, &mut scratch, None);
        (out, whole.guard)
    });
    let out = run(placement, &pass, changes, touched);
    #[cfg(debug_assertions)]
    if let Some(walked) = walked {
        assert_eq!(
            (out.clone(), placement.guard.clone()),
            walked,
            "the rollback of {} looked only at what changed, and differs",
            key.display()
        );
    }
    out
}

/// One pass of a rollback over one placement.
struct RollbackPass<'a> {
    key: &'a ObjectKey,
    budget: Budget,
    judging: Judging<'a>,
    now: DateTime<Utc>,
}

/// One pass of a rollback, from its watch when `touched` is given and the watch known, else
/// by a walk of every rolled-back cluster (which then builds the watch for the next pass).
fn run(
    placement: &mut Placement,
    pass: &RollbackPass<'_>,
    changes: &mut Changes,
    touched: Option<&BTreeSet<ClusterName>>,
) -> Stepped {
    let Some(mut watch) = placement
        .guard
        .as_mut()
        .map(|g| std::mem::take(&mut g.watch))
    else {
        return (Vec::new(), Vec::new(), None);
    };
    let Some(guard) = placement.guard.as_ref() else {
        return (Vec::new(), Vec::new(), None);
    };
    let incremental = match (touched, watch.known_mut()) {
        (Some(touched), Some(known)) => {
            Some(pass.watched_moves(known, &placement.bindings, guard, touched))
        }
        _ => None,
    };
    let walked = incremental.is_none();
    let moves = incremental.unwrap_or_else(|| pass.walk_moves(&placement.bindings, guard));
    let from = guard.resource_index;
    let (mut decisions, moved) = pass.move_back(placement, from, moves, changes);
    let (judged, next) = if walked {
        let judged = judge(placement, pass, None);
        if let Some(guard) = placement.guard.as_ref() {
            watch = RollbackWatch::build(guard, &placement.bindings, pass.judging, pass.now);
        }
        judged
    } else {
        let mut looked: BTreeSet<&str> =
            touched.into_iter().flatten().map(|c| c.as_str()).collect();
        looked.extend(moved.iter().map(String::as_str));
        let looked: Vec<String> = looked.into_iter().map(str::to_owned).collect();
        judge(placement, pass, Some((&looked, &mut watch)))
    };
    if let Some(guard) = placement.guard.as_mut()
        && guard.is_rolling_back()
    {
        // A finished rollback needs its watch no more.
        guard.watch = watch;
    }
    decisions.extend(judged);
    (decisions, moved, next)
}

impl RollbackPass<'_> {
    /// The clusters whose turn it is, from the watch once the `touched` clusters are placed
    /// in it again.
    fn watched_moves(
        &self,
        known: &mut Watch,
        bindings: &Bindings,
        guard: &Guard,
        touched: &BTreeSet<ClusterName>,
    ) -> Vec<String> {
        for cluster in touched {
            let binding = bindings.get(cluster.as_str());
            known.refresh(
                RollbackTargets::of(guard),
                cluster,
                binding.as_ref(),
                self.judging,
                self.now,
            );
        }
        known.moves(self.budget.ready_to_move)
    }

    /// The clusters whose turn it is, by a walk of every rolled-back cluster, in cluster order.
    fn walk_moves(&self, bindings: &Bindings, guard: &Guard) -> Vec<String> {
        let from = guard.resource_index;
        let mut moves = Vec::new();
        let mut ready_left = self.budget.ready_to_move;
        for cluster in guard.prior.keys() {
            let Some(binding) = bindings.get(cluster.as_str()) else {
                continue;
            };
            if binding.state != BindingState::Bound || binding.resource_index != Some(from) {
                continue;
            }
            if self.judging.readiness(&binding, self.now) == Readiness::Ready {
                if ready_left == 0 {
                    continue;
                }
                ready_left -= 1;
            }
            moves.push(cluster.clone());
        }
        moves
    }

    /// Binds each of `moves` to the work it carried before the failed snapshot `from`.
    /// Returns the decisions and the clusters moved.
    fn move_back(
        &self,
        placement: &mut Placement,
        from: u64,
        moves: Vec<String>,
        changes: &mut Changes,
    ) -> (Vec<Decision>, Vec<String>) {
        let mut decisions = Vec::new();
        let mut moved = Vec::new();
        for cluster in moves {
            let Some((index, overrides)) = placement
                .guard
                .as_ref()
                .and_then(|g| g.prior.get(&cluster))
                .cloned()
            else {
                continue;
            };
            let work = Work {
                resource_index: index,
                override_snapshots: overrides,
            };
            decisions.extend(placement.bind(self.key, &cluster, work, None, self.now, changes));
            decisions.push(Decision::ClusterRolledBack {
                placement: self.key.clone(),
                cluster: cluster.clone(),
                from_index: from,
                to_index: index,
            });
            moved.push(cluster);
        }
        (decisions, moved)
    }
}

/// The rolled-back clusters not ready on their old work yet: found by a walk, or kept by the
/// watch (read whole only for a deadline's message).
enum Pending<'a> {
    Walked(Vec<&'a str>),
    Kept(&'a BTreeSet<String>),
}

impl Pending<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Pending::Walked(clusters) => clusters.is_empty(),
            Pending::Kept(clusters) => clusters.is_empty(),
        }
    }

    /// Their names, in cluster order.
    fn names(&self) -> String {
        match self {
            Pending::Walked(clusters) => names(clusters.iter().copied()),
            Pending::Kept(clusters) => names(clusters.iter().map(String::as_str)),
        }
    }
}

/// One rolled-back cluster as the rollback judges it.
enum Verdict {
    /// Not on its old work yet, or not ready on it.
    Pending,
    /// Ready on its old work.
    Ready,
    /// Failed on its old work, or lost it after having it available: why.
    Failed(String),
    /// Not the rollback's any more (no live binding).
    Gone,
}

/// Judges one rolled-back cluster at `now`.
fn verdict(
    cluster: &str,
    index: u64,
    binding: Option<&Binding>,
    ready: &BTreeSet<String>,
    judging: Judging<'_>,
    now: DateTime<Utc>,
) -> Verdict {
    let Some(binding) = binding.filter(|b| b.state != BindingState::Unscheduled) else {
        return Verdict::Gone;
    };
    if binding.resource_index != Some(index) {
        return Verdict::Pending;
    }
    let readiness = judging.readiness(binding, now);
    let lost = ready.contains(cluster)
        && binding
            .report
            .as_ref()
            .is_some_and(|r| r.resource_index == index && r.available == Some(false));
    if readiness == Readiness::Failed || lost {
        let what = if lost {
            "became unavailable"
        } else {
            "failed to apply"
        };
        Verdict::Failed(format!(
            "cluster {cluster} {what} on resource snapshot {index}"
        ))
    } else if readiness == Readiness::Ready {
        Verdict::Ready
    } else {
        Verdict::Pending
    }
}

/// Judges the rollback: every rolled-back cluster (`looked: None`), or only those looked at,
/// the watch's `pending` standing for the rest.
fn judge(
    placement: &mut Placement,
    pass: &RollbackPass<'_>,
    looked: Option<(&[String], &mut RollbackWatch)>,
) -> (Vec<Decision>, Option<DateTime<Utc>>) {
    let Placement {
        bindings, guard, ..
    } = placement;
    let Some(guard) = guard.as_mut() else {
        return (Vec::new(), None);
    };
    let Guard {
        phase,
        prior,
        resource_index: from,
        safety,
        ..
    } = guard;
    let Phase::RollingBack {
        ready,
        last_progress,
    } = phase
    else {
        return (Vec::new(), None);
    };
    let clusters: Box<dyn Iterator<Item = (&String, &(u64, _))>> = match &looked {
        None => Box::new(prior.iter()),
        Some((looked, _)) => Box::new(looked.iter().filter_map(|c| prior.get_key_value(c))),
    };
    let (walked_pending, failure) = pass.record_verdicts(clusters, bindings, ready, last_progress);
    let targets = RollbackTargets { prior, from: *from };
    let pending = pass.pending(looked, targets, bindings, walked_pending);
    let deadline = safety
        .progress_deadline_seconds
        .map(|secs| *last_progress + Duration::seconds(secs));
    let failure = failure.or_else(|| pass.deadline_failure(deadline, *last_progress, &pending));
    let (succeeded, message) = match failure {
        Some(why) => (false, why),
        None if pending.is_empty() => (
            true,
            format!(
                "every rolled-back cluster has its old work available: {}",
                names(prior.keys().map(String::as_str))
            ),
        ),
        None => return (Vec::new(), deadline),
    };
    *phase = if succeeded {
        Phase::RolledBack
    } else {
        Phase::RollbackFailed(message.clone())
    };
    let decision = Decision::RollbackFinished {
        placement: pass.key.clone(),
        resource_index: *from,
        succeeded,
        message,
    };
    (vec![decision], None)
}

impl RollbackPass<'_> {
    /// Judges these rolled-back clusters, recording the ones ready on their old work. Returns
    /// those still pending, and the first failure.
    fn record_verdicts<'p>(
        &self,
        clusters: impl Iterator<Item = (&'p String, &'p (u64, OverrideSnapshots))>,
        bindings: &Bindings,
        ready: &mut BTreeSet<String>,
        last_progress: &mut DateTime<Utc>,
    ) -> (Vec<&'p str>, Option<String>) {
        let mut pending = Vec::new();
        let mut failure = None;
        for (cluster, (index, _)) in clusters {
            let binding = bindings.get(cluster.as_str());
            match verdict(
                cluster,
                *index,
                binding.as_ref(),
                ready,
                self.judging,
                self.now,
            ) {
                Verdict::Gone => {}
                Verdict::Pending => pending.push(cluster.as_str()),
                Verdict::Failed(why) => {
                    failure.get_or_insert(why);
                }
                Verdict::Ready => {
                    if ready.insert(cluster.clone()) {
                        *last_progress = self.now;
                    }
                }
            }
        }
        (pending, failure)
    }

    /// The clusters still pending: those the walk found, or the watch's once the clusters
    /// looked at are placed in it again.
    fn pending<'a>(
        &self,
        looked: Option<(&[String], &'a mut RollbackWatch)>,
        targets: RollbackTargets<'_>,
        bindings: &Bindings,
        walked: Vec<&'a str>,
    ) -> Pending<'a> {
        let Some((looked, watch)) = looked else {
            return Pending::Walked(walked);
        };
        let Some(known) = watch.known_mut() else {
            return Pending::Walked(walked);
        };
        for cluster in looked {
            let binding = bindings.get(cluster.as_str());
            known.refresh(targets, cluster, binding.as_ref(), self.judging, self.now);
        }
        Pending::Kept(&known.pending)
    }

    /// The failure of a rollback whose progress deadline passed with clusters still pending.
    fn deadline_failure(
        &self,
        deadline: Option<DateTime<Utc>>,
        last_progress: DateTime<Utc>,
        pending: &Pending<'_>,
    ) -> Option<String> {
        let deadline = deadline.filter(|d| *d <= self.now && !pending.is_empty())?;
        let secs = (deadline - last_progress).num_seconds();
        Some(format!(
            "no rolled-back cluster became ready for {secs}s ({}.progressDeadlineSeconds): {}",
            self.judging.path,
            pending.names()
        ))
    }
}

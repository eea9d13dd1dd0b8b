//! One pass of a rolling update's safety guard over a placement's bindings (see
//! [`super::safety`] and docs/rollout-safety.md): judging the bindings given the new work, and
//! tripping the guard when a rule fires.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::ObjectKey;
use crate::model::safety::OnFailure;
use crate::placement::{Binding, BindingState, Bindings};

use super::readiness::Readiness;
use super::safety::{Failures, Guard, Judging, Phase, Trip, Tripped, names};

/// One pass of a progressing guard over a placement's bindings.
pub(super) struct GuardPass<'a> {
    /// The placement.
    pub key: &'a ObjectKey,
    /// The resource snapshot the rollout moves clusters to.
    pub latest: u64,
    /// How this pass judges bindings.
    pub judging: Judging<'a>,
    /// The event time.
    pub now: DateTime<Utc>,
}

impl GuardPass<'_> {
    /// Judges these clusters' bindings (`None`: every binding), returning a decision for each
    /// cluster newly counted as failed.
    pub(super) fn judge_bindings(
        &self,
        guard: &mut Guard,
        bindings: &Bindings,
        clusters: Option<BTreeSet<ClusterName>>,
    ) -> Vec<Decision> {
        let mut decisions = Vec::new();
        match clusters {
            Some(clusters) => {
                for cluster in &clusters {
                    if let Some(binding) = bindings.get(cluster.as_str()) {
                        self.judge_binding(guard, cluster, &binding, &mut decisions);
                    }
                }
            }
            None => bindings
                .iter()
                .for_each(|(c, b)| self.judge_binding(guard, &c, &b, &mut decisions)),
        }
        decisions
    }

    /// Judges one binding given the new work: ready (progress), or failed when failures count.
    fn judge_binding(
        &self,
        guard: &mut Guard,
        cluster: &str,
        binding: &Binding,
        decisions: &mut Vec<Decision>,
    ) {
        let latest = self.latest;
        // Unscheduled bindings are not the rollout's; scheduled ones, or bound to older work,
        // have not been given the new work yet.
        if binding.state != BindingState::Bound || binding.resource_index != Some(latest) {
            return;
        }
        let readiness = self.judging.readiness(binding, self.now);
        if readiness == Readiness::Ready && guard.ready.insert(cluster.to_owned()) {
            guard.last_progress = self.now;
        }
        let unavailable_again = guard.ready.contains(cluster)
            && binding
                .report
                .as_ref()
                .is_some_and(|r| r.resource_index == latest && r.available == Some(false));
        if self.judging.counts_failures
            && (readiness == Readiness::Failed || unavailable_again)
            && guard.failed.insert(cluster.to_owned())
        {
            decisions.push(Decision::RolloutClusterFailed {
                placement: self.key.clone(),
                cluster: cluster.to_owned(),
                resource_index: latest,
                failures: guard.failed.len() as u64,
                tolerated: self.judging.tolerated,
            });
        }
    }

    /// The failure threshold's trip message, asked with the failures this pass's `decisions`
    /// added.
    pub(super) fn over_threshold(
        &self,
        guard: &mut Guard,
        decisions: &[Decision],
    ) -> Option<String> {
        let added: Vec<&str> = (decisions.iter())
            .filter_map(|decision| match decision {
                Decision::RolloutClusterFailed { cluster, .. } => Some(cluster.as_str()),
                _ => None,
            })
            .collect();
        (self.judging.threshold)(Failures {
            all: &guard.failed,
            added: &added,
            tally: &mut guard.tally,
        })
    }

    /// Whether every scheduled or bound cluster is bound and ready on the new work (a scan).
    pub(super) fn every_cluster_ready(&self, bindings: &Bindings) -> bool {
        let (waiting, unready) = laggards(bindings, self.latest, self.judging, self.now);
        waiting.is_empty() && unready.is_empty()
    }

    /// The trip message of the progress deadline: the clusters given the new work that are
    /// not ready on it, or when none is, those not given it yet.
    pub(super) fn deadline_message(
        &self,
        guard: &Guard,
        bindings: &Bindings,
        deadline: DateTime<Utc>,
    ) -> String {
        let (waiting, unready) = laggards(bindings, self.latest, self.judging, self.now);
        let (what, clusters) = if unready.is_empty() {
            ("not yet given it", waiting)
        } else {
            ("given it but not ready", unready)
        };
        let secs = (deadline - guard.last_progress).num_seconds();
        format!(
            "No cluster became ready on resource snapshot {} for {secs}s \
             ({}.progressDeadlineSeconds); clusters {what}: {}",
            self.latest,
            self.judging.path,
            names(clusters.iter().map(|cluster| cluster.as_str())),
        )
    }

    /// Trips the guard: it halts, or starts rolling back, by `onFailure`. Returns the decision
    /// that says so.
    pub(super) fn trip(
        &self,
        guard: &mut Guard,
        action: OnFailure,
        trip: Trip,
        message: String,
    ) -> Decision {
        guard.phase = match action {
            OnFailure::Halt => Phase::Halted,
            OnFailure::Rollback => Phase::RollingBack {
                ready: BTreeSet::new(),
                last_progress: self.now,
            },
        };
        let halted = Decision::RolloutHalted {
            placement: self.key.clone(),
            resource_index: self.latest,
            reason: trip.reason().to_owned(),
            action: action.as_str().to_owned(),
            message: message.clone(),
        };
        guard.tripped = Some(Tripped {
            trip,
            message,
            at: self.now,
        });
        halted
    }
}

/// For a deadline's message, in cluster order: the scheduled or bound clusters not given the
/// new work yet, and those given it but not ready on it. A scan, made only when it trips.
fn laggards(
    bindings: &Bindings,
    latest: u64,
    judging: Judging<'_>,
    now: DateTime<Utc>,
) -> (Vec<ClusterName>, Vec<ClusterName>) {
    let mut waiting = Vec::new();
    let mut unready = Vec::new();
    for (cluster, binding) in bindings {
        if binding.state == BindingState::Unscheduled {
            continue;
        }
        if binding.resource_index != Some(latest) || binding.state == BindingState::Scheduled {
            waiting.push(cluster);
        } else if judging.readiness(&binding, now) != Readiness::Ready {
            unready.push(cluster);
        }
    }
    (waiting, unready)
}

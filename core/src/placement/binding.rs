//! Bindings: the scheduler's decision that a placement goes to one member cluster
//! (`ClusterResourceBinding` / `ResourceBinding`).

use chrono::{DateTime, Utc};
use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use thin_vec::ThinVec;

use crate::model::ClusterName;

/// The three binding states of KubeFleet's `ClusterResourceBinding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BindingState {
    /// Picked by the scheduler; waiting for the rollout to bind it.
    Scheduled,
    /// The rollout has started placing resources on the cluster.
    Bound,
    /// No longer picked; its resources are being removed.
    Unscheduled,
}

impl BindingState {
    /// The spelling in `spec.state`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            BindingState::Scheduled => "Scheduled",
            BindingState::Bound => "Bound",
            BindingState::Unscheduled => "Unscheduled",
        }
    }
}

/// A cluster's scores (PickN only; zero otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClusterScore {
    /// From preferred cluster affinity terms.
    pub affinity: i32,
    /// From topology spread constraints.
    pub topology_spread: i32,
}

/// The scheduler's decision about one cluster (`clusterDecision` / `targetClusters[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterDecision {
    /// Cluster name.
    pub cluster: ClusterName,
    /// Whether it was picked.
    pub selected: bool,
    /// Its scores, when scored.
    pub score: Option<ClusterScore>,
    /// Why (inline up to 24 bytes; a million bindings share a handful of reasons).
    pub reason: CompactString,
}

/// The scheduler's decision about a binding's cluster, but for the cluster's name: the binding
/// holds it once (a million bindings each held it twice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pick {
    /// Whether it was picked.
    pub selected: bool,
    /// Its scores, when scored.
    pub score: Option<ClusterScore>,
    /// Why (inline up to 24 bytes; a million bindings share a handful of reasons).
    pub reason: CompactString,
}

/// A binding of one placement to one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The last part of its object name, [`Binding::name`]: 4 bytes, shown as 8 hex digits.
    pub name_suffix: [u8; 4],
    /// Target cluster.
    pub cluster: ClusterName,
    /// Current state.
    pub state: BindingState,
    /// The state before it was unscheduled (`kubernetes-fleet.io/previous-binding-state`).
    pub previous_state: Option<BindingState>,
    /// Index of the policy snapshot it was scheduled under.
    pub policy_index: u64,
    /// Index of the resource snapshot it carries, once bound.
    pub resource_index: Option<u64>,
    /// The cluster decision (the cluster is [`Binding::cluster`]).
    pub decision: Pick,
    /// Object generation (bumped on every spec change).
    pub generation: u64,
    /// When the rollout last bound it to a resource snapshot (its RolloutStarted time).
    #[serde(with = "crate::time_text::option")]
    pub rollout_started_at: Option<DateTime<Utc>>,
    /// What the cluster last reported about this work.
    pub report: Option<crate::work_status::WorkStatus>,
    /// The override snapshots its work was rendered with when last bound: cluster resource
    /// override snapshot names, and `(namespace, name)` of resource override snapshots.
    pub override_snapshots: OverrideSnapshots,
    /// When it was created.
    #[serde(with = "crate::time_text")]
    pub created: DateTime<Utc>,
    /// The staged update run that last bound it, when one did.
    pub update_run: Option<std::sync::Arc<str>>,
    /// Set while its work cannot be rendered for its cluster because an override fails on
    /// it: the cluster keeps the last work that could be (KubeFleet's work generator leaves
    /// the Work as it was and sets `Overridden` False on the binding).
    pub override_failure: Option<Box<OverrideFailure>>,
}

/// Why a binding's work cannot be rendered for its cluster, and what the cluster keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverrideFailure {
    /// What failed; `None` only within the step that bound the work, until it is judged.
    pub message: Option<String>,
    /// The last work that rendered for the cluster (what its member keeps applied), if any.
    pub kept: Option<Work>,
    /// The member's report on the kept work when it was left: binding the same work again
    /// gives it back, as KubeFleet's unchanged Work keeps its conditions.
    pub kept_report: Option<crate::work_status::WorkStatus>,
}

impl OverrideFailure {
    /// Whether it was judged a failure (not only bound and waiting to be judged).
    #[must_use]
    pub fn failed(&self) -> bool {
        self.message.is_some()
    }
}

/// Longest placement-name part of a binding name.
const BINDING_PLACEMENT_CHARS_MAX: usize = 26;
/// Longest cluster-name part of a binding name.
const BINDING_CLUSTER_CHARS_MAX: usize = 27;

/// The first `max` characters of `text`.
fn first_chars(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(end, _)| &text[..end])
}

/// The override snapshots a work is rendered with: cluster resource override snapshot names,
/// and `(namespace, name)` of resource override snapshots. Thin vectors (one pointer each,
/// none allocated while empty): a million bindings and run statuses hold them, nearly all empty.
pub type OverrideSnapshots = (ThinVec<String>, ThinVec<(String, String)>);

/// What a binding carries once bound: a resource snapshot rendered with override snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// The resource snapshot index.
    pub resource_index: u64,
    /// The override snapshots it is rendered with.
    pub override_snapshots: OverrideSnapshots,
}

impl Binding {
    /// KubeFleet's `isPlacementPresent`: resources may be on the cluster — the binding is
    /// Bound, or Unscheduled after being Bound.
    #[must_use]
    pub fn is_placed(&self) -> bool {
        match self.state {
            BindingState::Bound => true,
            BindingState::Unscheduled => self.previous_state == Some(BindingState::Bound),
            BindingState::Scheduled => false,
        }
    }

    /// Whether the binding holds work on its cluster: placed, at a resource index.
    #[must_use]
    pub fn carries_work(&self) -> bool {
        self.resource_index.is_some() && self.is_placed()
    }

    /// A new Scheduled binding under policy snapshot `policy_index`.
    #[must_use]
    pub fn scheduled(
        name_suffix: [u8; 4],
        decision: ClusterDecision,
        policy_index: u64,
        now: DateTime<Utc>,
    ) -> Self {
        let ClusterDecision {
            cluster,
            selected,
            score,
            reason,
        } = decision;
        Self {
            name_suffix,
            cluster,
            state: BindingState::Scheduled,
            previous_state: None,
            policy_index,
            resource_index: None,
            decision: Pick {
                selected,
                score,
                reason,
            },
            generation: 1,
            rollout_started_at: None,
            report: None,
            override_snapshots: (ThinVec::new(), ThinVec::new()),
            created: now,
            update_run: None,
            override_failure: None,
        }
    }

    /// Binds to `work` (the rollout starts on the cluster): Bound, started now, by `run` (the
    /// staged update run doing it, `None` for the placement's own rollout). Only a different
    /// work is a new work: then the report on the old one no longer counts (KubeFleet ties
    /// conditions to the binding's generation) and the generation moves; re-binding the same
    /// work (a staged run taking over a cluster that already carries it) keeps both.
    pub(crate) fn bind_to(
        &mut self,
        work: Work,
        run: Option<std::sync::Arc<str>>,
        now: DateTime<Utc>,
    ) {
        let new_work = self.resource_index != Some(work.resource_index)
            || self.override_snapshots != work.override_snapshots;
        self.state = BindingState::Bound;
        self.previous_state = None;
        self.rollout_started_at = Some(now);
        self.update_run = run;
        if new_work {
            let kept_report = self.await_override_verdict(&work);
            self.resource_index = Some(work.resource_index);
            self.override_snapshots = work.override_snapshots;
            self.report = kept_report;
            self.generation += 1;
        }
    }

    /// Before binding to `work`: when overrides are involved (in the work, or in what the
    /// cluster has), remember what the cluster has — or kept through an earlier failure — so
    /// that the work it keeps is known should the new one fail to render; the step judges it
    /// ([`crate::coordinate::override_verdicts::judge_bound`]) before it ends. Binding the very work the
    /// cluster kept ends the failure and gives back the report on it.
    fn await_override_verdict(&mut self, work: &Work) -> Option<crate::work_status::WorkStatus> {
        let overridden =
            |snapshots: &OverrideSnapshots| !snapshots.0.is_empty() || !snapshots.1.is_empty();
        let before = self.override_failure.take();
        if before.is_none()
            && !overridden(&work.override_snapshots)
            && !overridden(&self.override_snapshots)
        {
            return None;
        }
        let (kept, kept_report) = match before {
            Some(failure) => (failure.kept, failure.kept_report),
            None => (
                self.resource_index.map(|resource_index| Work {
                    resource_index,
                    override_snapshots: self.override_snapshots.clone(),
                }),
                self.report.take(),
            ),
        };
        if kept.as_ref() == Some(work) {
            return kept_report;
        }
        self.override_failure = Some(Box::new(OverrideFailure {
            message: None,
            kept,
            kept_report,
        }));
        None
    }

    /// Releases the cluster (Unscheduled), remembering the state to restore; `false` when it
    /// was released already.
    pub(crate) fn unschedule(&mut self) -> bool {
        if self.state == BindingState::Unscheduled {
            return false;
        }
        self.previous_state = Some(self.state);
        self.state = BindingState::Unscheduled;
        self.generation += 1;
        true
    }

    /// Picks an Unscheduled binding's cluster again: back to the state it had before (Scheduled
    /// when unknown); `false` when it was not Unscheduled.
    pub(crate) fn restore(&mut self) -> bool {
        if self.state != BindingState::Unscheduled {
            return false;
        }
        self.state = self
            .previous_state
            .take()
            .unwrap_or(BindingState::Scheduled);
        true
    }

    /// Re-points the binding at the current policy snapshot and cluster decision, keeping its
    /// state; the generation moves only when either changed.
    pub(crate) fn repoint(&mut self, policy_index: u64, decision: ClusterDecision) {
        let decision = Pick {
            selected: decision.selected,
            score: decision.score,
            reason: decision.reason,
        };
        if self.policy_index != policy_index || self.decision != decision {
            self.policy_index = policy_index;
            self.decision = decision;
            self.generation += 1;
        }
    }

    /// Its object name as a binding of placement `placement`: `<placement>-<cluster>-<8 hex>`,
    /// the first two cut as KubeFleet cuts them. Derived, not stored: a million bindings each
    /// held a copy of their placement's name.
    #[must_use]
    pub fn name(&self, placement: &str) -> String {
        let placement = first_chars(placement, BINDING_PLACEMENT_CHARS_MAX);
        let cluster = first_chars(&self.cluster, BINDING_CLUSTER_CHARS_MAX);
        let mut name = String::with_capacity(placement.len() + cluster.len() + 10);
        name.push_str(placement);
        name.push('-');
        name.push_str(cluster);
        name.push('-');
        name.push_str(&hex::encode(self.name_suffix));
        name
    }

    /// The scheduler's decision about the cluster, as the status shows it.
    #[must_use]
    pub fn cluster_decision(&self) -> ClusterDecision {
        ClusterDecision {
            cluster: self.cluster.clone(),
            selected: self.decision.selected,
            score: self.decision.score,
            reason: self.decision.reason.clone(),
        }
    }
}

//! The multi-cluster scheduler (KubeFleet's scheduler framework): for one
//! placement, classify its bindings, then Batch/PostBatch → Filter → Score → Sort → Bind.
//!
//! - **PickAll** picks every cluster that passes the filters; no scores.
//! - **PickN** trims when it has more than N, otherwise fills the gap: filter, score (topology
//!   spread, then affinity, then an obsolete-binding bonus), sort (higher first; equal scores
//!   pick the lexicographically larger name first, as KubeFleet does) and bind. With any
//!   topology spread constraint it picks one cluster at a time and re-scores after each pick.
//! - **PickFixed** binds the listed clusters that exist and are eligible, ignoring taints.
//!
//! "IgnoredDuringExecution": a binding on the current policy is never removed because its
//! cluster's labels, properties, taints or health changed; only a new policy or the cluster
//! leaving does that.

mod fill;
pub mod filter;
pub mod property;
pub mod quantity;
mod rejected;
pub mod score;

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::change::{Change, Changes};
use crate::condition::{Condition, ConditionStatus};
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::placement::{PlacementPolicy, PlacementType};
use crate::model::{ObjectKey, Uid};
use crate::placement::{Binding, BindingState, ClusterDecision, ClusterScore, Fill, Placement};
use rejected::{Rejected, Why};

/// Most not-selected clusters recorded in a policy snapshot's `targetClusters`.
pub const NOT_SELECTED_DECISIONS_MAX: usize = 20;
/// Reason of a picked cluster.
pub const REASON_PICKED: &str = "picked by scheduling policy";
/// Reason of a scored cluster that was not picked.
pub const REASON_NOT_PICKED: &str = "cluster does not score high enough";
/// Reason of a PickFixed name that is not a member cluster.
pub const REASON_NOT_FOUND: &str = "specified cluster is not found";
/// Prefix of the reason of a PickFixed cluster that is not eligible.
pub const REASON_NOT_ELIGIBLE: &str = "cluster is not eligible for resource placement yet: ";
/// Condition type on the policy snapshot.
pub const CONDITION_SCHEDULED: &str = "Scheduled";
/// Reason when the policy is fulfilled.
pub const REASON_FULFILLED: &str = "SchedulingPolicyFulfilled";
/// Reason when it is not.
pub const REASON_UNFULFILLED: &str = "SchedulingPolicyUnfulfilled";
/// Message when the policy is fulfilled (the seeds' text).
pub const MESSAGE_FULFILLED: &str =
    "found all the clusters needed as specified by the scheduling policy";
/// Message when it is not, with the count found (KubeFleet's text; the seeds show none).
pub const MESSAGE_UNFULFILLED: &str =
    "could not find all clusters needed as specified by the scheduling policy";

/// One scheduling cycle over one placement.
struct Cycle<'a> {
    members: &'a crate::member::Members,
    placement: &'a mut Placement,
    key: &'a ObjectKey,
    changes: &'a mut Changes,
    policy: PlacementPolicy,
    policy_index: u64,
    now: DateTime<Utc>,
    /// The caller's decisions, pushed to in place: a first pass decides for every cluster, and
    /// a list of them copied at each level cost a tenth of it.
    decisions: &'a mut Vec<Decision>,
    /// Filtered-out clusters and why (the first names only, in a full pass).
    rejected: Rejected<'a>,
    /// Scored but not picked (PickN), best first.
    not_picked: Vec<ClusterDecision>,
}

/// The decision that `cluster` is picked.
fn picked(cluster: &str, score: Option<ClusterScore>) -> ClusterDecision {
    ClusterDecision {
        cluster: cluster.into(),
        selected: true,
        score,
        reason: compact_str::CompactString::const_new(REASON_PICKED),
    }
}

/// Runs the scheduler for one placement, adding what it decides to `decisions`. `only` limits
/// a PickAll pass to one cluster (a cluster changed and nothing else did); `None` is a full
/// pass.
pub(crate) fn schedule(
    members: &crate::member::Members,
    (placement, key): (&mut Placement, &ObjectKey),
    now: DateTime<Utc>,
    only: Option<&str>,
    changes: &mut Changes,
    decisions: &mut Vec<Decision>,
) {
    let Some(snapshot) = placement.latest_policy() else {
        return;
    };
    let policy = snapshot.policy.clone();
    let policy_index = snapshot.index;
    // A full pass records only the first names it rejected; an incremental one merges what it
    // found with what earlier passes recorded, and PickFixed lists every name.
    let kept = if only.is_some() || policy.placement_type == PlacementType::PickFixed {
        usize::MAX
    } else {
        NOT_SELECTED_DECISIONS_MAX
    };
    let mut cycle = Cycle {
        members,
        placement,
        key,
        changes,
        policy,
        policy_index,
        now,
        decisions,
        rejected: Rejected::new(kept),
        not_picked: Vec::new(),
    };
    cycle.release_dangling(only);
    let fulfilled = match cycle.placement.placement_type() {
        PlacementType::PickAll => cycle.pick_all(only),
        PlacementType::PickN => cycle.pick_n(),
        PlacementType::PickFixed => cycle.pick_fixed(),
    };
    cycle.record(fulfilled, only.is_some());
}

impl Cycle<'_> {
    fn is_current(&self, binding: &Binding) -> bool {
        binding.state != BindingState::Unscheduled && binding.policy_index == self.policy_index
    }

    fn is_obsolete(&self, binding: &Binding) -> bool {
        binding.state != BindingState::Unscheduled && binding.policy_index != self.policy_index
    }

    /// The clusters of live bindings scheduled under an older policy.
    fn obsolete_clusters(&self) -> Vec<ClusterName> {
        self.placement
            .bindings
            .values()
            .filter(|b| self.is_obsolete(b))
            .map(|b| b.cluster.clone())
            .collect()
    }

    fn current_count(&self) -> usize {
        self.placement
            .bindings
            .values()
            .filter(|b| self.is_current(b))
            .count()
    }

    /// Bindings whose cluster is gone or leaving are marked Unscheduled first (only that
    /// cluster's in an incremental pass, so that one cluster leaving costs one lookup, not a
    /// scan); KubeFleet's scheduler treats a deleted cluster's bindings as dangling alike.
    fn release_dangling(&mut self, only: Option<&str>) {
        let dangling = |b: &Binding| {
            b.state != BindingState::Unscheduled
                && self
                    .members
                    .get(b.cluster.as_str())
                    .is_none_or(|member| member.is_leaving())
        };
        let gone: Vec<ClusterName> = match only {
            Some(cluster) => self
                .placement
                .bindings
                .get(cluster)
                .filter(|b| dangling(b))
                .map(|b| b.cluster.clone())
                .into_iter()
                .collect(),
            None => self
                .placement
                .bindings
                .values()
                .filter(|b| dangling(b))
                .map(|b| b.cluster.clone())
                .collect(),
        };
        for cluster in gone {
            self.unschedule(&cluster, "the cluster left the fleet");
        }
    }

    /// The last part of a binding's name (see [`Binding::name`]): derived from the
    /// placement's uid and the cluster (KubeFleet's is random), the first 4 bytes of SHA-256 of
    /// `<uid>/<cluster>`.
    fn binding_suffix(uid: &Uid, cluster: &str) -> [u8; 4] {
        let mut hasher = Sha256::new();
        hasher.update(uid.text(&mut uuid::Uuid::encode_buffer()).as_bytes());
        hasher.update(b"/");
        hasher.update(cluster.as_bytes());
        let digest = hasher.finalize();
        [digest[0], digest[1], digest[2], digest[3]]
    }

    /// Binds `cluster` under the current policy: re-points an obsolete binding (keeping its
    /// state), restores an unscheduled one to its previous state, or creates a Scheduled one.
    /// PickAll and PickN decisions carry scores (zero for PickAll); PickFixed ones do not.
    fn bind(&mut self, cluster: &str, score: Option<ClusterScore>) {
        let decision = picked(cluster, score);
        let policy_index = self.policy_index;
        // The placement's meta and its bindings are borrowed apart: a binding not there is
        // made with the placement's uid.
        let placement = &mut *self.placement;
        let restored = placement.bindings.update(cluster, |binding| {
            let restored = binding.restore();
            binding.repoint(policy_index, decision.clone());
            restored
        });
        let scheduled = restored.unwrap_or_else(|| {
            let suffix = Self::binding_suffix(&placement.meta.uid, cluster);
            let binding = Binding::scheduled(suffix, decision, policy_index, self.now);
            placement.bindings.insert(binding);
            true
        });
        if scheduled {
            self.note_scheduled(cluster);
        }
    }

    /// A new Scheduled PickAll binding of `cluster`, recorded as scheduled, for the caller to
    /// store.
    fn new_binding(&mut self, cluster: &str) -> Binding {
        let decision = picked(cluster, Some(ClusterScore::default()));
        let suffix = Self::binding_suffix(&self.placement.meta.uid, cluster);
        let binding = Binding::scheduled(suffix, decision, self.policy_index, self.now);
        self.note_scheduled(cluster);
        binding
    }

    /// Records that `cluster` was scheduled.
    fn note_scheduled(&mut self, cluster: &str) {
        self.changes.push(Change::ClusterScheduled {
            placement: self.key.clone(),
            cluster: cluster.into(),
        });
        self.decisions.push(Decision::ClusterScheduled {
            placement: self.key.clone(),
            cluster: cluster.to_owned(),
        });
    }

    fn unschedule(&mut self, cluster: &str, reason: &str) {
        let unscheduled = self.placement.bindings.update(cluster, Binding::unschedule);
        if unscheduled != Some(true) {
            return;
        }
        self.changes.push(Change::ClusterUnscheduled {
            placement: self.key.clone(),
            cluster: cluster.into(),
        });
        self.decisions.push(Decision::ClusterUnscheduled {
            placement: self.key.clone(),
            cluster: cluster.to_owned(),
            reason: reason.to_owned(),
        });
    }

    /// PickAll: every cluster that passes the filters.
    fn pick_all(&mut self, only: Option<&str>) -> bool {
        let members = self.members;
        let candidates: Vec<_> = match only {
            Some(name) => members.get_key_value(name).into_iter().collect(),
            None => members.iter().collect(),
        };
        // A placement's first scheduling fills an empty map in cluster order: it is built
        // whole, not searched and split once per cluster.
        let mut fresh = (only.is_none() && self.placement.bindings.is_empty()).then(Fill::default);
        if fresh.is_some() {
            self.changes.reserve(candidates.len());
            self.decisions.reserve(candidates.len());
        }
        for (name, member) in candidates {
            let binding = self.placement.bindings.get(name.as_str());
            if binding.as_ref().is_some_and(|b| self.is_current(b)) {
                continue;
            }
            match filter::check(member, &self.policy, self.now) {
                None => match fresh.as_mut() {
                    Some(fresh) => fresh.push(self.new_binding(name)),
                    None => self.bind(name, Some(ClusterScore::default())),
                },
                Some(rejection) => {
                    if binding.as_ref().is_some_and(|b| self.is_obsolete(b)) {
                        let reason = format!("{}{}", filter::UNSCHEDULABLE, rejection.reason());
                        self.unschedule(name, &reason);
                    }
                    let why = Why::Filtered(rejection);
                    self.rejected.insert(Cow::Borrowed(name.as_str()), why);
                }
            }
        }
        if let Some(fresh) = fresh {
            fresh.finish(&mut self.placement.bindings);
        }
        true
    }

    /// PickFixed: the listed clusters that exist and are eligible; taints are ignored.
    fn pick_fixed(&mut self) -> bool {
        let names = self.policy.cluster_names.clone();
        let mut valid = Vec::new();
        for name in &names {
            let reason = match self.members.get(name.as_str()) {
                None => Some(REASON_NOT_FOUND.to_owned()),
                Some(member) => filter::ineligible(member, self.now)
                    .map(|why| format!("{REASON_NOT_ELIGIBLE}{why}")),
            };
            match reason {
                None => valid.push(name.clone()),
                Some(reason) => {
                    self.rejected
                        .insert(Cow::Owned(name.clone()), Why::Text(reason));
                }
            }
        }
        for name in &valid {
            self.bind(name, None);
        }
        let leftover: Vec<ClusterName> = self
            .placement
            .bindings
            .values()
            .filter(|b| self.is_obsolete(b) && !valid.iter().any(|name| *name == b.cluster))
            .map(|b| b.cluster.clone())
            .collect();
        for cluster in leftover {
            self.unschedule(
                &cluster,
                "the cluster is no longer picked by the scheduling policy",
            );
        }
        valid.len() == names.len()
    }

    /// PickN: trim down to N, or fill up to N.
    fn pick_n(&mut self) -> bool {
        let desired = usize::try_from(
            self.placement
                .latest_policy()
                .and_then(|p| p.number_of_clusters)
                .unwrap_or(0),
        )
        .unwrap_or(0);
        let present = self.current_count();
        let obsolete = self.obsolete_clusters();
        if desired <= present {
            if present - desired + obsolete.len() > 0 {
                for cluster in &obsolete {
                    self.unschedule(
                        cluster,
                        "the cluster is no longer picked by the scheduling policy",
                    );
                }
                self.trim(present - desired);
            }
            return true;
        }
        self.fill(desired - present)
    }

    /// Unschedules `count` current bindings: Scheduled before Bound, lowest scores first,
    /// then names ascending.
    fn trim(&mut self, count: usize) {
        let mut current: Vec<(BindingState, Option<ClusterScore>, ClusterName)> = self
            .placement
            .bindings
            .values()
            .filter(|b| self.is_current(b))
            .map(|b| (b.state, b.decision.score, b.cluster.clone()))
            .collect();
        current.sort_by(|a, b| {
            let key = |s: &Option<ClusterScore>| s.map(|s| (s.topology_spread, s.affinity));
            a.0.cmp(&b.0)
                .then(key(&a.1).cmp(&key(&b.1)))
                .then(a.2.cmp(&b.2))
        });
        for (_, _, cluster) in current.into_iter().take(count) {
            self.unschedule(&cluster, "the scheduling policy needs fewer clusters");
        }
    }

    /// Writes the outcome into the policy snapshot and the placement's condition.
    fn record(&mut self, fulfilled: bool, incremental: bool) {
        if self.placement.policy_snapshots.is_empty() {
            return;
        }
        self.record_not_selected(incremental);
        let message = if fulfilled {
            MESSAGE_FULFILLED.to_owned()
        } else {
            let found = self.current_count();
            format!("{MESSAGE_UNFULFILLED}, found {found} cluster(s) instead")
        };
        let (status, reason) = if fulfilled {
            (ConditionStatus::True, REASON_FULFILLED)
        } else {
            (ConditionStatus::False, REASON_UNFULFILLED)
        };
        let condition = Condition::new(CONDITION_SCHEDULED, status, reason, message, 1, self.now);
        if self.set_scheduled(condition) {
            self.changes.push(Change::SchedulingChanged {
                placement: self.key.clone(),
            });
            self.decisions.push(Decision::SchedulingChanged {
                placement: self.key.clone(),
                fulfilled,
                message: self
                    .placement
                    .scheduled
                    .as_ref()
                    .map(|c| c.message.clone())
                    .unwrap_or_default(),
            });
        }
    }

    /// The latest snapshot's not-selected clusters: not picked (best first), then filtered out
    /// in name order, at most [`NOT_SELECTED_DECISIONS_MAX`] in all (PickFixed lists every
    /// name). An incremental pass keeps what earlier passes found about other clusters.
    fn record_not_selected(&mut self, incremental: bool) {
        let rejected = std::mem::replace(&mut self.rejected, Rejected::new(0));
        let not_picked = std::mem::take(&mut self.not_picked);
        let cap = if self.policy.placement_type == PlacementType::PickFixed {
            usize::MAX
        } else {
            NOT_SELECTED_DECISIONS_MAX
        };
        let Placement {
            bindings,
            policy_snapshots,
            ..
        } = &mut *self.placement;
        let Some(snapshot) = policy_snapshots.last_mut() else {
            return;
        };
        let picked = |cluster: &str| {
            bindings
                .get(cluster)
                .is_some_and(|b| b.state != BindingState::Unscheduled)
        };
        let mut filtered: Vec<ClusterDecision> = if incremental {
            snapshot
                .not_selected
                .drain(..)
                .filter(|d| !rejected.contains(&d.cluster) && !picked(&d.cluster))
                .collect()
        } else {
            Vec::new()
        };
        filtered.extend(rejected.into_decisions(&self.policy.topology_spread_constraints));
        filtered.sort_by(|a, b| a.cluster.cmp(&b.cluster));
        snapshot.not_selected = not_picked.into_iter().chain(filtered).take(cap).collect();
    }

    /// Sets the Scheduled condition on the latest snapshot and, typed for its kind, on the
    /// placement; whether the snapshot's condition changed.
    fn set_scheduled(&mut self, condition: Condition) -> bool {
        let generation = self.placement.meta.generation;
        let Some(snapshot) = self.placement.policy_snapshots.last_mut() else {
            return false;
        };
        let changed = Condition::set(&mut snapshot.scheduled, condition.clone());
        snapshot.observed_placement_generation = generation;
        let placement_type = if self.key.kind == crate::model::RESOURCE_PLACEMENT {
            "ResourcePlacementScheduled"
        } else {
            "ClusterResourcePlacementScheduled"
        };
        let placement_condition = Condition {
            condition_type: placement_type.into(),
            observed_generation: generation,
            ..condition
        };
        Condition::set(&mut self.placement.scheduled, placement_condition);
        changed
    }
}

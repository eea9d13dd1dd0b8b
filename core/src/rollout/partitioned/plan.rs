//! The partitioned rollout's working memory for one placement: its partitions, what it knows
//! about each target cluster, and per-partition tallies kept up to date one cluster at a time,
//! so that a work report costs O(log n) instead of a scan of every binding.
//!
//! A plan is derived data: [`Plan::build`] makes it from the state alone, and the fold drops it
//! whenever something it was built from changes (the target set, the placement's spec, member
//! labels, cluster groups, overrides, a new resource snapshot). Between rebuilds only work
//! reports change a cluster, and those are replayed through [`Plan::reclassify`].

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::partition::{self, Partition};
use crate::model::ObjectKey;
use crate::model::partitioned::limit;
use crate::overrides;
use crate::placement::{Binding, BindingState, Placement};
use crate::rollout::View;
use crate::rollout::readiness::{self, Readiness};

/// What the rollout knows about one target cluster's work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Class {
    /// The cluster has work (its binding is Bound).
    pub bound: bool,
    /// Its work is the latest resource snapshot with the overrides that apply now.
    pub current: bool,
    /// The cluster reported on the work it carries (the work is *evaluated*).
    pub reported: bool,
    /// The cluster reported that work applied and available.
    pub ready: bool,
    /// The cluster reported that work failed to apply.
    pub failed: bool,
}

/// One target cluster: the partitions it is in and its class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Indices into [`Plan::partitions`], ascending.
    pub partitions: Vec<u32>,
    /// What the rollout knows about its work.
    pub class: Class,
}

/// Counts over one partition's members, kept in step with their classes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Members without work, in name order (Pending).
    pub unbound: BTreeSet<String>,
    /// Members whose work is out of date and ready (waiting for a switch), in name order.
    pub outdated_ready: BTreeSet<String>,
    /// Members whose work is out of date and not ready (always switched), in name order.
    pub outdated_not_ready: BTreeSet<String>,
    /// Members with current work that is not ready.
    pub current_not_ready: u64,
}

impl Tally {
    /// Fleet's partition `unavailable`: members without work, out of date, or not ready.
    #[must_use]
    pub fn unavailable(&self) -> u64 {
        self.unbound.len() as u64
            + self.outdated_ready.len() as u64
            + self.outdated_not_ready.len() as u64
            + self.current_not_ready
    }

    /// Members with work that is not ready (at whatever index they carry).
    #[must_use]
    pub fn deployed_not_ready(&self) -> u64 {
        self.outdated_not_ready.len() as u64 + self.current_not_ready
    }

    /// Whether any member still waits for work or for a switch.
    #[must_use]
    pub fn has_work_left(&self) -> bool {
        !self.unbound.is_empty()
            || !self.outdated_ready.is_empty()
            || !self.outdated_not_ready.is_empty()
    }
}

/// What the last pass concluded, for the status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Partitions found NotReady on the walk (Fleet's `unavailablePartitions`).
    pub unavailable_partitions: u64,
    /// Why the rollout cannot go on right now, when work is left.
    pub paused: Option<String>,
}

/// One placement's partitioned rollout.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The resource snapshot index the plan was built against.
    pub latest: u64,
    /// The partitions, in rollout order.
    pub partitions: Vec<Partition>,
    /// Tallies, one per partition.
    pub tallies: Vec<Tally>,
    /// Every target cluster (Scheduled or Bound binding), by name.
    pub targets: BTreeMap<String, Target>,
    /// `limit(targets, maxUnavailable)`: the placement-wide switch window.
    pub max_unavailable: u64,
    /// `limit(partitions, maxUnavailablePartitions)`.
    pub max_unavailable_partitions: u64,
    /// Most deployments one pass stages (maxNew).
    pub max_new: u64,
    /// Targets with work that is not ready (Fleet's bundle-level `unavailable`).
    pub not_ready: u64,
    /// Targets with work they have not reported on yet: staged, not yet evaluated. No
    /// decision reads it since maxNew limits a pass, not this count; it stays so that the
    /// checkpointed `State` keeps its encoding.
    pub unevaluated: u64,
    /// Clusters whose reports arrived since the last pass.
    pub dirty: BTreeSet<String>,
    /// The last pass's conclusion.
    pub outcome: Outcome,
}

/// The work a binding should carry now: latest snapshot, applicable override snapshots.
pub(crate) struct Wanted<'a> {
    pub(crate) view: View<'a>,
    pub(crate) key: &'a ObjectKey,
    pub(crate) latest: u64,
}

impl Wanted<'_> {
    /// The override snapshots the cluster's work should be rendered with.
    pub(crate) fn overrides(
        &self,
        placement: &Placement,
        cluster: &str,
    ) -> crate::placement::OverrideSnapshots {
        match placement.latest_resources() {
            Some(resources) if !self.view.sources.overrides.is_empty() => {
                overrides::applicable_overrides(
                    self.view.sources,
                    self.key,
                    &resources.resources,
                    cluster,
                )
            }
            _ => Default::default(),
        }
    }

    /// Classifies one binding.
    pub(crate) fn classify(
        &self,
        placement: &Placement,
        binding: &Binding,
        now: DateTime<Utc>,
    ) -> Class {
        if binding.state != BindingState::Bound {
            return Class::default();
        }
        // No artificial delays: a not-trackable available report counts at once.
        let mode = readiness::ApplyMode::of(placement);
        let readiness = readiness::judge(
            binding,
            binding.report.as_ref(),
            mode,
            Duration::zero(),
            now,
        );
        Class {
            bound: true,
            current: binding.resource_index == Some(self.latest)
                && binding.override_snapshots == self.overrides(placement, &binding.cluster),
            reported: binding
                .report
                .as_ref()
                .is_some_and(|r| Some(r.resource_index) == binding.resource_index),
            ready: matches!(readiness, Readiness::Ready | Readiness::ReadyAt(_)),
            failed: readiness == Readiness::Failed,
        }
    }
}

impl Plan {
    /// Builds the plan from the state: partitions, every target's class, the tallies.
    pub(crate) fn build(wanted: &Wanted<'_>, placement: &Placement, now: DateTime<Utc>) -> Plan {
        let rollout = placement.spec.strategy.partitioned();
        let owned: Vec<_> = placement
            .bindings
            .states()
            .filter(|(_, state)| *state != BindingState::Unscheduled)
            .map(|(cluster, _)| cluster)
            .collect();
        let names: Vec<&str> = owned.iter().map(|cluster| cluster.as_str()).collect();
        let cut = partition::partition(wanted.view, wanted.key, &rollout, &names);
        let mut plan = Plan {
            latest: wanted.latest,
            tallies: vec![Tally::default(); cut.partitions.len()],
            max_unavailable: limit(names.len() as u64, rollout.max_unavailable()),
            max_unavailable_partitions: limit(
                cut.partitions.len() as u64,
                rollout.max_unavailable_partitions(),
            ),
            partitions: cut.partitions,
            max_new: rollout.max_new(),
            ..Plan::default()
        };
        for (name, partitions) in names.iter().zip(cut.membership) {
            let class = placement
                .bindings
                .get(name)
                .map(|b| wanted.classify(placement, &b, now))
                .unwrap_or_default();
            plan.count(name, &partitions, class, true);
            plan.targets
                .insert((*name).to_owned(), Target { partitions, class });
        }
        plan
    }

    /// Records a cluster's new class, moving it between tallies.
    pub(crate) fn reclassify(&mut self, cluster: &str, class: Class) {
        let Some(target) = self.targets.get(cluster) else {
            return;
        };
        let (old, partitions) = (target.class, target.partitions.clone());
        if old == class {
            return;
        }
        self.count(cluster, &partitions, old, false);
        self.count(cluster, &partitions, class, true);
        if let Some(target) = self.targets.get_mut(cluster) {
            target.class = class;
        }
    }

    /// Adds (`add`) or takes away one cluster's contribution to the counts.
    fn count(&mut self, cluster: &str, partitions: &[u32], class: Class, add: bool) {
        let step = |value: &mut u64| {
            *value = if add {
                *value + 1
            } else {
                value.saturating_sub(1)
            };
        };
        if class.bound && !class.ready {
            step(&mut self.not_ready);
        }
        if class.bound && !class.reported {
            step(&mut self.unevaluated);
        }
        for index in partitions {
            let Some(tally) = self.tallies.get_mut(*index as usize) else {
                continue;
            };
            let set = match (class.bound, class.current, class.ready) {
                (false, _, _) => Some(&mut tally.unbound),
                (true, false, true) => Some(&mut tally.outdated_ready),
                (true, false, false) => Some(&mut tally.outdated_not_ready),
                (true, true, ready) => {
                    if !ready {
                        step(&mut tally.current_not_ready);
                    }
                    None
                }
            };
            if let Some(set) = set {
                if add {
                    set.insert(cluster.to_owned());
                } else {
                    set.remove(cluster);
                }
            }
        }
    }
}

//! The RollingUpdate rollout (KubeFleet's rollout controller): after anything that
//! can change a placement's bindings or their availability, one pass decides which bindings
//! are bound to the latest resource snapshot, which are updated in place, and which
//! unscheduled ones are removed — never letting more of the target clusters be unavailable
//! than `maxUnavailable` allows, and never exceeding the target by more than `maxSurge`.
//!
//! - Target: PickAll — the clusters the scheduler picked; PickN — `numberOfClusters`;
//!   PickFixed — the number of `clusterNames`.
//! - Both knobs resolve against the target rounding **up**; `maxUnavailable` is at least 1
//!   (KubeFleet's `rollingUpdate.maxUnavailable`: "Minimum value for MaxUnavailable is set to
//!   1").
//! - An in-place update (same clusters, new resources) is limited by `maxUnavailable` only;
//!   surge applies only to newly scheduled clusters.
//! - A binding is *ready* when its cluster reported the work at its resource index applied and
//!   available; a not-trackable report counts once `unavailablePeriodSeconds` of event time
//!   have passed since it arrived. Under a `ReportDiff` apply strategy it is ready once its
//!   diff is reported, and never counts towards `canBeReady` (see [`readiness`]).
//! - `strategy.type: External` placements are left to staged update runs;
//!   `strategy.type: Partitioned` ones roll out by [`partitioned`].

mod guard_pass;
pub mod index;
pub mod partitioned;
mod plan;
pub mod readiness;
pub(crate) mod rollback;
pub mod rollback_watch;
pub mod safety;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use crate::change::{Change, Changes};
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::Resource;
use crate::model::placement::{PlacementType, StrategyType};
use crate::model::{ObjectKey, Rounding};
use crate::overrides;
use crate::placement::{BindingState, Placement, Work};
use index::{BindingIndex, Class, OverrideSnapshots};
use plan::{Budgets, Plan, plan};

/// What the rollout reads besides its own store, borrowed from the state: the placements, the
/// hub's resources (Fleet cluster groups choose partitions), and what overrides render with
/// (the overrides and the member clusters, whose labels choose partitions too). A `&State`
/// converts into it.
#[derive(Clone, Copy)]
pub struct View<'a> {
    /// ClusterResourcePlacements and ResourcePlacements.
    pub placements: &'a BTreeMap<ObjectKey, Placement>,
    /// Every other hub object.
    pub resources: &'a BTreeMap<ObjectKey, Resource>,
    /// The overrides, their retired snapshots and the member clusters.
    pub sources: overrides::Sources<'a>,
}

/// The rollout's store, borrowed from the state: the placements it binds, its deadlines, its
/// binding indexes and partitioned plans, and what it reads ([`View`]).
pub(crate) struct Store<'a> {
    /// ClusterResourcePlacements and ResourcePlacements.
    pub placements: &'a mut BTreeMap<ObjectKey, Placement>,
    /// When a placement's rollout must look again.
    pub rollout_deadlines: &'a mut BTreeSet<(DateTime<Utc>, ObjectKey)>,
    /// The binding indexes (a derived cache).
    pub rollout_index: &'a mut index::IndexCache,
    /// Partitioned placements' rollout plans.
    pub partitioned_rollouts: &'a mut BTreeMap<ObjectKey, partitioned::Plan>,
    /// Every other hub object.
    pub resources: &'a BTreeMap<ObjectKey, Resource>,
    /// The overrides, their retired snapshots and the member clusters.
    pub sources: overrides::Sources<'a>,
}

impl Store<'_> {
    /// What the rollout reads, as the store holds it now.
    pub(crate) fn view(&self) -> View<'_> {
        View {
            placements: self.placements,
            resources: self.resources,
            sources: self.sources,
        }
    }
}

/// Runs a rollout pass for every placement the step's changes touched, and for placements
/// whose readiness deadline has passed, adding what they decide to `decisions`.
pub(crate) fn roll_out(
    state: &mut Store<'_>,
    changes: &mut Changes,
    now: DateTime<Utc>,
    decisions: &mut Vec<Decision>,
) {
    let touched = Touched::of(changes.as_slice());
    let regrouped = partitioned::observe(state, changes.as_slice());
    note_changes(state, changes.as_slice());
    let mut keys = touched.placements;
    keys.extend(regrouped);
    if touched.every {
        keys.extend(state.placements.keys().cloned());
    }
    while let Some((deadline, key)) = state.rollout_deadlines.first().cloned() {
        if deadline > now {
            break;
        }
        state.rollout_deadlines.pop_first();
        keys.insert(key);
    }
    for key in keys {
        pass(state, &key, now, changes, decisions);
    }
}

/// Tells the binding indexes what the step changed: single bindings are marked for
/// classification again; anything broader (a placement's spec, its snapshots, any override)
/// drops the index, to be rebuilt by the next pass.
fn note_changes(state: &mut Store<'_>, changes: &[Change]) {
    let indexes = &mut state.rollout_index.0;
    for change in changes {
        match change {
            Change::WorkReported { placement, cluster }
            | Change::ClusterScheduled { placement, cluster }
            | Change::ClusterUnscheduled { placement, cluster }
            | Change::BindingBound { placement, cluster }
            | Change::BindingRemoved { placement, cluster } => {
                if let Some(index) = indexes.get_mut(placement) {
                    index.mark(cluster);
                }
            }
            // Which overrides apply to a cluster follows its labels.
            Change::ClusterJoined { cluster } | Change::ClusterLeft { cluster } => {
                indexes.values_mut().for_each(|index| index.mark(cluster));
            }
            Change::ObjectStored(key) | Change::ObjectDeleted(key) => {
                if key.is_member_cluster() {
                    indexes.values_mut().for_each(|index| index.mark(&key.name));
                } else if key.is_override() {
                    indexes.clear();
                } else if key.is_placement() {
                    indexes.remove(key);
                }
            }
            Change::PolicySnapshotTaken { placement }
            | Change::ResourceSnapshotTaken { placement } => {
                indexes.remove(placement);
            }
            Change::OverrideSnapshotTaken { .. } => indexes.clear(),
            // Health alone changes no binding's class; scheduling, approvals and evictions
            // reach the index through the binding changes they cause.
            Change::ClusterHealthChanged { .. }
            | Change::SchedulingChanged { .. }
            | Change::ApprovalGranted { .. }
            | Change::ApprovalDeleted { .. }
            | Change::AnalysisMeasured { .. }
            | Change::EvictionReconciled { .. } => {}
        }
    }
}

/// The placements a step's changes touched, which the rollout must look at again.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// These placements.
    pub placements: BTreeSet<ObjectKey>,
    /// Every placement (an override changed, and any placement may render differently).
    pub every: bool,
}

impl Touched {
    /// What these changes touched.
    #[must_use]
    pub fn of(changes: &[Change]) -> Self {
        let mut touched = Self::default();
        for change in changes {
            match change {
                Change::ObjectStored(key) if key.is_placement() => {
                    touched.placements.insert(key.clone());
                }
                Change::ObjectStored(key) | Change::ObjectDeleted(key) => {
                    touched.every |= key.is_override();
                }
                Change::PolicySnapshotTaken { placement }
                | Change::ResourceSnapshotTaken { placement }
                | Change::ClusterScheduled { placement, .. }
                | Change::ClusterUnscheduled { placement, .. }
                | Change::SchedulingChanged { placement }
                | Change::WorkReported { placement, .. }
                | Change::EvictionReconciled { placement } => {
                    // One key per placement, however many of its bindings changed.
                    if !touched.placements.contains(placement) {
                        touched.placements.insert(placement.clone());
                    }
                }
                Change::OverrideSnapshotTaken { .. } => touched.every = true,
                // Cluster changes reach placements through scheduling; bindings bound or
                // removed are the rollout's own doing; approvals drive staged runs only.
                Change::ClusterJoined { .. }
                | Change::ClusterHealthChanged { .. }
                | Change::ClusterLeft { .. }
                | Change::BindingBound { .. }
                | Change::BindingRemoved { .. }
                | Change::ApprovalGranted { .. }
                | Change::ApprovalDeleted { .. }
                | Change::AnalysisMeasured { .. } => {}
            }
        }
        touched
    }
}

/// The number of clusters the placement should end up on.
#[must_use]
pub fn target(placement: &Placement) -> u64 {
    let policy = placement.policy();
    match policy.placement_type {
        PlacementType::PickAll => placement
            .bindings
            .values()
            .filter(|b| matches!(b.state, BindingState::Scheduled | BindingState::Bound))
            .count() as u64,
        PlacementType::PickN => placement
            .latest_policy()
            .and_then(|p| p.number_of_clusters)
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0),
        PlacementType::PickFixed => policy.cluster_names.len() as u64,
    }
}

/// `(maxUnavailable, maxSurge)` as counts for this target.
#[must_use]
pub fn budgets(placement: &Placement, target: u64) -> (i64, i64) {
    let rolling = &placement.spec.strategy.rolling_update;
    let unavailable = rolling.max_unavailable.resolve(target, Rounding::Up).max(1);
    let surge = rolling.max_surge.resolve(target, Rounding::Up).max(0);
    (unavailable, surge)
}

/// The override snapshots these clusters' works should be rendered with now (empty when no
/// override exists at all, which keeps the common case free).
fn wanted_overrides<C: std::borrow::Borrow<ClusterName>>(
    state: &Store<'_>,
    key: &ObjectKey,
    clusters: impl IntoIterator<Item = C>,
) -> BTreeMap<ClusterName, OverrideSnapshots> {
    let (Some(placement), false) = (
        state.placements.get(key),
        state.sources.overrides.is_empty(),
    ) else {
        return BTreeMap::new();
    };
    let Some(resources) = placement.latest_resources() else {
        return BTreeMap::new();
    };
    clusters
        .into_iter()
        .filter(|cluster| {
            (placement.bindings)
                .state(cluster.borrow().as_str())
                .is_some_and(|state| state != BindingState::Unscheduled)
        })
        .map(|cluster| {
            let cluster = cluster.borrow();
            let wanted =
                overrides::applicable_overrides(state.sources, key, &resources.resources, cluster);
            (cluster.clone(), wanted)
        })
        .collect()
}

/// Where a rolling update's safety fields live, for messages.
const ROLLING_UPDATE_PATH: &str = "spec.strategy.rollingUpdate";

/// The rollout settings a pass works with.
struct Settings {
    latest: u64,
    mode: readiness::ApplyMode,
    period: Duration,
}

impl Settings {
    /// `None` when the placement is not rolled out by this pass (External) or has nothing to
    /// roll out yet.
    fn of(placement: &Placement) -> Option<Self> {
        if placement.spec.strategy.strategy_type == StrategyType::External {
            return None;
        }
        Some(Self {
            latest: placement.latest_resources()?.index,
            mode: readiness::ApplyMode::of(placement),
            period: Duration::seconds(
                placement
                    .spec
                    .strategy
                    .rolling_update
                    .unavailable_period_seconds,
            ),
        })
    }
}

/// One placement's pass: partitioned, left to staged runs (External), or rolling.
fn pass(
    state: &mut Store<'_>,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
    decisions: &mut Vec<Decision>,
) {
    if state
        .placements
        .get(key)
        .is_some_and(partitioned::is_partitioned)
    {
        decisions.extend(partitioned::pass(state, key, now, changes));
        return;
    }
    let Some(settings) = state.placements.get(key).and_then(Settings::of) else {
        state.rollout_index.0.remove(key);
        if let Some(placement) = state.placements.get_mut(key) {
            // Staged runs roll an External placement out; no guard of its own applies.
            placement.guard = None;
        }
        return;
    };
    Pass { key, settings, now }.roll(state, changes, decisions);
}

/// One rolling pass over one placement: which, with what settings, at what event time.
struct Pass<'a> {
    key: &'a ObjectKey,
    settings: Settings,
    now: DateTime<Utc>,
}

impl Pass<'_> {
    /// Classifies what changed, runs the safety guard, binds and removes what the budgets
    /// allow, lets a rollback move clusters back, and keeps the index for the next pass.
    fn roll(&self, state: &mut Store<'_>, changes: &mut Changes, decisions: &mut Vec<Decision>) {
        let key = self.key;
        let mut index = self.binding_index(state);
        let budgets = Budgets::of(&state.placements[key], &index);
        let fields = state.placements[key].spec.strategy.rolling_update.safety();
        let threshold = safety::block_threshold(fields, budgets.governed(), ROLLING_UPDATE_PATH);
        let judging = safety::Judging {
            mode: self.settings.mode,
            period: self.settings.period,
            path: ROLLING_UPDATE_PATH,
            counts_failures: fields.counts_failures(),
            tolerated: fields.failures_tolerated(budgets.governed()),
            threshold: &threshold,
            // Its target can change with no binding judged again.
            threshold_follows_failures: false,
        };
        let mut touched = self.run_guard(state, &mut index, judging, decisions);
        let plan = self.plan(state, &index, &budgets);
        let acted: Vec<ClusterName> = plan.bind.iter().chain(&plan.update).cloned().collect();
        let wanted = wanted_overrides(state, key, &acted);
        let Some(placement) = state.placements.get_mut(key) else {
            return;
        };
        self.apply(placement, &plan, &wanted, changes, decisions);
        let budget = budgets.for_rollback(index.ready, plan.remove.len());
        if let Some(touched) = touched.as_mut() {
            // The bindings this pass removed changed too.
            touched.extend(plan.remove.iter().cloned());
        }
        let (rolled, moved, next) = rollback::step(
            placement,
            key,
            budget,
            judging,
            self.now,
            changes,
            touched.as_ref(),
        );
        decisions.extend(rolled);
        if let Some(next) = next {
            state.rollout_deadlines.insert((next, key.clone()));
        }
        let changed: Vec<ClusterName> = acted
            .into_iter()
            .chain(plan.remove)
            .chain(moved.into_iter().map(ClusterName::from))
            .collect();
        self.keep_index(state, index, &changed, &wanted);
    }

    /// The placement's binding index: the one kept from its last pass on the same snapshot,
    /// with the clusters due classified again, else a new one.
    fn binding_index(&self, state: &mut Store<'_>) -> BindingIndex {
        let kept =
            (state.rollout_index.0.remove(self.key)).filter(|i| i.latest == self.settings.latest);
        match kept {
            Some(mut index) => {
                let due: Vec<ClusterName> = index.take_due(self.now).into_iter().collect();
                let wanted = wanted_overrides(state, self.key, &due);
                self.classify(state, &mut index, &due, &wanted);
                index
            }
            None => self.classify_all(state),
        }
    }

    /// Runs the safety guard over what the index reclassified, and stops the index recording
    /// once the guard judges no more. Returns the clusters a rollback looks at again (`None`:
    /// every one, or no rollback).
    fn run_guard(
        &self,
        state: &mut Store<'_>,
        index: &mut BindingIndex,
        judging: safety::Judging<'_>,
        decisions: &mut Vec<Decision>,
    ) -> Option<BTreeSet<ClusterName>> {
        let (seen, touched) = safety::Seen::for_pass(
            state.placements[self.key].guard.as_ref(),
            index.take_reclassified(),
            index.incomplete == 0,
        );
        decisions.extend(self.guard(state, judging, seen));
        let judging_on = state.placements[self.key].guard.as_ref().is_some_and(|g| {
            matches!(
                g.phase,
                safety::Phase::Progressing | safety::Phase::RollingBack { .. }
            )
        });
        if !judging_on {
            index.stop_recording();
        }
        touched
    }

    /// Runs the placement's safety guard (docs/rollout-safety.md) for this pass, asking for a
    /// pass at its progress deadline.
    fn guard(
        &self,
        state: &mut Store<'_>,
        judging: safety::Judging<'_>,
        seen: safety::Seen,
    ) -> Vec<Decision> {
        let Some(placement) = state.placements.get_mut(self.key) else {
            return Vec::new();
        };
        let look = safety::Look {
            key: self.key,
            watched: safety::Watched {
                latest: self.settings.latest,
                safety: placement.spec.strategy.rolling_update.safety(),
            },
            judging,
            now: self.now,
        };
        // The guard judges only what the index reclassified.
        let (decisions, next) = safety::observe_checked(placement, look, seen);
        if let Some(next) = next {
            state.rollout_deadlines.insert((next, self.key.clone()));
        }
        decisions
    }

    /// The bindings this pass acts on. A tripped rollout moves no cluster to the failed
    /// snapshot: its plan only removes, and does not list the clusters it would have moved (a
    /// rollback makes most of them stale).
    fn plan(&self, state: &Store<'_>, index: &BindingIndex, budgets: &Budgets) -> Plan {
        let placement = &state.placements[self.key];
        let progress = (placement.guard.as_ref()).is_none_or(safety::Guard::allows_progress);
        plan(index, &placement.bindings, budgets, progress)
    }

    /// Carries out the plan, adding its decisions to `decisions`.
    fn apply(
        &self,
        placement: &mut Placement,
        plan: &Plan,
        wanted: &BTreeMap<ClusterName, OverrideSnapshots>,
        changes: &mut Changes,
        decisions: &mut Vec<Decision>,
    ) {
        let acting = plan.bind.len() + plan.update.len() + plan.remove.len();
        decisions.reserve(acting);
        changes.reserve(acting);
        // New and updated clusters first, then the removals.
        let work_for = |cluster: &str| Work {
            resource_index: self.settings.latest,
            override_snapshots: wanted.get(cluster).cloned().unwrap_or_default(),
        };
        for clusters in [&plan.bind, &plan.update] {
            placement.roll_in_order(self.key, clusters, work_for, self.now, changes, decisions);
        }
        for cluster in &plan.remove {
            decisions.extend(placement.remove_binding(self.key, cluster, changes));
        }
    }

    /// Classifies the clusters this pass changed again, and keeps the index for the next pass.
    fn keep_index(
        &self,
        state: &mut Store<'_>,
        mut index: BindingIndex,
        changed: &[ClusterName],
        wanted: &BTreeMap<ClusterName, OverrideSnapshots>,
    ) {
        // A pass that acted on most bindings (a placement's first) classifies them all at once.
        if changed.len() * 2 >= state.placements[self.key].bindings.len() {
            index = self.classify_all(state);
        } else {
            self.classify(state, &mut index, changed, wanted);
        }
        debug_assert!(
            self.holds(state, &index),
            "the binding index of {} drifted from its bindings",
            self.key.display()
        );
        state.rollout_index.0.insert(self.key.clone(), index);
    }

    /// Classifies these clusters' bindings again, and asks for a pass when a not-trackable
    /// work becomes ready.
    fn classify(
        &self,
        state: &mut Store<'_>,
        index: &mut BindingIndex,
        clusters: &[ClusterName],
        wanted: &BTreeMap<ClusterName, OverrideSnapshots>,
    ) {
        let none = OverrideSnapshots::default();
        let Store {
            placements,
            rollout_deadlines,
            ..
        } = state;
        let Some(placement) = placements.get_mut(self.key) else {
            return;
        };
        for cluster in clusters {
            let overrides = wanted.get(cluster.as_str()).unwrap_or(&none);
            let class = index.reclassify(&mut placement.bindings, cluster, |b| {
                self.class(b, overrides)
            });
            if let Some(Class {
                readiness: readiness::Readiness::ReadyAt(at),
                ..
            }) = class
            {
                rollout_deadlines.insert((at, self.key.clone()));
            }
        }
    }

    /// Classifies every binding of the placement, in one walk over them, and asks for a pass
    /// when a not-trackable work becomes ready.
    fn classify_all(&self, state: &mut Store<'_>) -> BindingIndex {
        let classes = self.classes(state);
        let index = BindingIndex::of_all(self.settings.latest, &classes);
        if let Some(placement) = state.placements.get_mut(self.key) {
            placement
                .bindings
                .set_tags(classes.iter().map(|(_, class)| class.tag()));
        }
        for at in index.ready_at() {
            state.rollout_deadlines.insert((at, self.key.clone()));
        }
        index
    }

    /// One binding's class in this pass, given the overrides its cluster's work should carry.
    fn class(&self, binding: &crate::placement::Binding, overrides: &OverrideSnapshots) -> Class {
        let Settings {
            latest,
            mode,
            period,
        } = self.settings;
        Class::of(binding, latest, overrides, mode, period, self.now)
    }

    /// Every binding of the placement with its class, in cluster order.
    fn classes(&self, state: &Store<'_>) -> Vec<(ClusterName, Class)> {
        let Some(placement) = state.placements.get(self.key) else {
            return Vec::new();
        };
        let wanted = wanted_overrides(state, self.key, placement.bindings.keys());
        let none = OverrideSnapshots::default();
        let mut classes = Vec::with_capacity(placement.bindings.len());
        placement.bindings.for_each(|cluster, binding| {
            let overrides = wanted.get(cluster.as_str()).unwrap_or(&none);
            classes.push((cluster.clone(), self.class(binding, overrides)));
        });
        classes
    }

    /// Whether the index is what a full classification gives, and each binding's tag its
    /// class: what the incremental index must always be (a debug check).
    fn holds(&self, state: &Store<'_>, index: &BindingIndex) -> bool {
        let classes = self.classes(state);
        let tags = (state.placements.get(self.key)).is_none_or(|placement| {
            BindingIndex::tags_hold(&placement.bindings, &classes)
                && placement.bindings.tags_summarized()
        });
        tags && *index == BindingIndex::of_all(self.settings.latest, &classes)
    }
}

#[cfg(test)]
mod tests;

//! The rollout's view of one placement's bindings — each binding's state, readiness and
//! whether it is out of date, plus the counts KubeFleet's one-pass algorithm needs — kept
//! current as bindings change, so that a pass after one work report costs O(log n + clusters
//! acted on) instead of O(bindings). The algorithm's ordered candidate sets ([`Set`]) are the
//! bindings whose rows carry given tags, found through the bindings' record of which chunks
//! carry which tags; sets of names beside the bindings took about 30 bytes a binding while a
//! rollout ran.
//!
//! The index is a cache, not state: it is never encoded, never hashed, compares equal to any
//! other index, and is rebuilt from the bindings whenever it is missing (after a checkpoint
//! restore) or marked wholly stale. Each binding's class is kept in a byte of its row (the
//! row's tag, [`Class::tag`]), where a map from cluster to class took about 46 bytes a binding;
//! the time a not-trackable work becomes ready is kept here, for the few that have one. Its
//! one contract is that it always equals what a fresh classification of every binding at the
//! same `now` would give, and each row's tag its binding's class; debug builds check both after
//! every pass.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use super::readiness::{self, ApplyMode, Readiness};
use crate::model::ClusterName;
use crate::placement::{Binding, BindingState, Bindings, TagSet};

pub(crate) use crate::placement::OverrideSnapshots;

/// What the pass needs to know about one binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Class {
    /// The binding's state.
    pub state: BindingState,
    /// Whether its cluster has the work applied and available.
    pub readiness: Readiness,
    /// A newer resource snapshot, or other overrides, apply now.
    pub out_of_date: bool,
    /// Its cluster only reports diffs of the work it carries (`ReportDiff`): KubeFleet's
    /// `IsBindingDiffReported`, which keeps it out of `canBeReady`.
    pub reports_diff: bool,
    /// It carries the latest resource snapshot (whatever its overrides).
    pub on_latest: bool,
}

impl Class {
    /// Judges one binding at `now` against the latest resource index and the overrides that
    /// apply to its cluster now.
    pub fn of(
        binding: &Binding,
        latest: u64,
        wanted: &OverrideSnapshots,
        mode: ApplyMode,
        period: Duration,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            state: binding.state,
            readiness: readiness::judge(binding, binding.report.as_ref(), mode, period, now),
            out_of_date: binding.resource_index != Some(latest)
                || &binding.override_snapshots != wanted,
            reports_diff: mode == ApplyMode::ReportDiff && binding.resource_index.is_some(),
            on_latest: binding.resource_index == Some(latest),
        }
    }

    fn is_failed(self) -> bool {
        self.readiness == Readiness::Failed
    }

    fn is_ready(self) -> bool {
        self.readiness == Readiness::Ready
    }

    /// Whether it counts towards `ready` / `canBeReady` (bound now, or being removed).
    fn counts(self) -> bool {
        self.state != BindingState::Scheduled
    }

    /// Whether it keeps a guarded rollout from being complete: scheduled or bound, and not
    /// bound and ready on the latest snapshot.
    /// The class as one byte: bit 0 set (0 is no class), the state, the readiness without
    /// its time, and the three flags.
    pub fn tag(self) -> u8 {
        let state = match self.state {
            BindingState::Scheduled => 0,
            BindingState::Bound => 1,
            BindingState::Unscheduled => 2,
        };
        let readiness = match self.readiness {
            Readiness::NotReady => 0,
            Readiness::Ready => 1,
            Readiness::Failed => 2,
            Readiness::ReadyAt(_) => 3,
        };
        1 | (state << 1)
            | (readiness << 3)
            | (u8::from(self.out_of_date) << 5)
            | (u8::from(self.reports_diff) << 6)
            | (u8::from(self.on_latest) << 7)
    }

    /// The class a tag holds, with the time of a `ReadyAt` readiness; `None` for no class.
    fn of_tag(tag: u8, ready_at: Option<DateTime<Utc>>) -> Option<Self> {
        if tag & 1 == 0 {
            return None;
        }
        let state = match (tag >> 1) & 3 {
            0 => BindingState::Scheduled,
            1 => BindingState::Bound,
            _ => BindingState::Unscheduled,
        };
        let readiness = match (tag >> 3) & 3 {
            0 => Readiness::NotReady,
            1 => Readiness::Ready,
            2 => Readiness::Failed,
            _ => Readiness::ReadyAt(ready_at?),
        };
        Some(Self {
            state,
            readiness,
            out_of_date: tag & (1 << 5) != 0,
            reports_diff: tag & (1 << 6) != 0,
            on_latest: tag & (1 << 7) != 0,
        })
    }

    fn holds_up_completion(self) -> bool {
        self.state != BindingState::Unscheduled
            && (self.state == BindingState::Scheduled || !self.on_latest || !self.is_ready())
    }
}

/// The clusters classified since the rollout's safety guard last looked (`all`: the index was
/// built whole, so every cluster): the guard judges only these again. Bookkeeping for the
/// guard, not part of the classification, so it compares equal to any other.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reclassified {
    all: bool,
    clusters: BTreeSet<ClusterName>,
}

crate::derived::derived_cache!(Reclassified);

impl Reclassified {
    /// Not recording: every cluster counts as classified.
    fn everything() -> Self {
        Self {
            all: true,
            clusters: BTreeSet::new(),
        }
    }
}

/// The pass's candidates, found by the tags of their bindings' rows
/// ([`Bindings::tagged`]), in cluster order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Set {
    /// Unscheduled bindings: removal candidates.
    Unscheduled,
    /// Scheduled bindings: bind candidates.
    Scheduled,
    /// Bound, out of date and not failed: update candidates.
    Stale,
    /// Bound, out of date and failed: always updated.
    StaleFailed,
}

/// Each set's tags, in the order of [`Set`]'s variants.
static SET_TAGS: std::sync::LazyLock<[TagSet; 4]> = std::sync::LazyLock::new(|| {
    let mut sets = [TagSet::EMPTY; 4];
    // The time is only there for a `ReadyAt` class to be made; no set depends on it.
    let at = DateTime::<Utc>::UNIX_EPOCH;
    for tag in 0..=u8::MAX {
        if let Some(set) = Class::of_tag(tag, Some(at)).and_then(Set::of) {
            sets[set as usize] = sets[set as usize].with(tag);
        }
    }
    sets
});

impl Set {
    /// The candidate set a class puts its cluster in, if any.
    fn of(class: Class) -> Option<Self> {
        match class.state {
            BindingState::Unscheduled => Some(Set::Unscheduled),
            BindingState::Scheduled => Some(Set::Scheduled),
            BindingState::Bound if class.out_of_date && class.is_failed() => Some(Set::StaleFailed),
            BindingState::Bound if class.out_of_date => Some(Set::Stale),
            BindingState::Bound => None,
        }
    }

    /// The clusters of this set among `bindings`, in cluster order: those whose rows carry
    /// the tag of a class in it.
    pub fn among(self, bindings: &Bindings) -> impl Iterator<Item = ClusterName> + '_ {
        bindings.tagged(SET_TAGS[self as usize])
    }
}

/// The classified bindings of one placement, with the pass's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BindingIndex {
    /// The resource index the classes were judged against.
    pub latest: u64,
    /// When each not-trackable work classified `ReadyAt` becomes ready: the part of its
    /// class its tag does not hold.
    ready_at: BTreeMap<ClusterName, DateTime<Utc>>,
    /// Bound or unscheduled bindings whose cluster is ready.
    pub ready: i64,
    /// Bound or unscheduled bindings that have not failed and do not only report diffs.
    pub can_be_ready: i64,
    /// Scheduled or bound bindings (PickAll's target).
    pub live: u64,
    /// Not-trackable works that become ready at a time: `(at, cluster)`.
    waiting: BTreeSet<(DateTime<Utc>, ClusterName)>,
    /// Clusters whose binding or overrides may have changed since they were classified.
    dirty: BTreeSet<ClusterName>,
    /// Scheduled or bound bindings not yet bound and ready on the latest snapshot: a guarded
    /// rollout is complete when there are none.
    pub incomplete: u64,
    /// Clusters classified since the safety guard last took them.
    reclassified: Reclassified,
}

impl BindingIndex {
    /// An empty index for this resource index.
    pub fn new(latest: u64) -> Self {
        Self {
            latest,
            reclassified: Reclassified::everything(),
            ..Self::default()
        }
    }

    /// Takes the clusters classified since the last call, in cluster order, and goes on
    /// recording them; `None` when the index was built whole since, or was not recording, so
    /// that every cluster counts as classified.
    pub fn take_reclassified(&mut self) -> Option<BTreeSet<ClusterName>> {
        let taken = std::mem::take(&mut self.reclassified);
        (!taken.all).then_some(taken.clusters)
    }

    /// Stops recording the clusters classified: no guard is judging the rollout (a guard that
    /// starts judges every binding), so the recording would cost every pass for nothing.
    pub fn stop_recording(&mut self) {
        self.reclassified = Reclassified::everything();
    }

    /// Notes that a cluster's binding (or what applies to it) may have changed.
    pub fn mark(&mut self, cluster: &str) {
        self.dirty.insert(cluster.into());
    }

    /// The times at which not-trackable works become ready, earliest first.
    pub fn ready_at(&self) -> impl Iterator<Item = DateTime<Utc>> + '_ {
        self.waiting.iter().map(|(at, _)| *at)
    }

    /// Takes the clusters to classify again at `now`: the marked ones and those whose
    /// not-trackable work has become ready.
    pub fn take_due(&mut self, now: DateTime<Utc>) -> BTreeSet<ClusterName> {
        let mut due = std::mem::take(&mut self.dirty);
        while let Some((at, cluster)) = self.waiting.first().cloned() {
            if at > now {
                break;
            }
            self.waiting.pop_first();
            due.insert(cluster);
        }
        due
    }

    /// Classifies `cluster`'s binding again with `classify` (`None`: it has no binding any
    /// more), its earlier class read from, and its new one written to, its binding's tag.
    pub fn reclassify(
        &mut self,
        bindings: &mut Bindings,
        cluster: &str,
        classify: impl FnOnce(&Binding) -> Class,
    ) -> Option<Class> {
        if !self.reclassified.all {
            self.reclassified.clusters.insert(cluster.into());
        }
        let (old, class) = bindings.rejudge(cluster, |binding| {
            let class = classify(binding);
            (class, class.tag())
        });
        let old = old.and_then(|tag| Class::of_tag(tag, self.ready_at.get(cluster).copied()));
        if old != class {
            if let Some(old) = old {
                self.forget(cluster, old);
            }
            if let Some(class) = class {
                self.count(cluster, class);
            }
        }
        class
    }

    /// Whether each binding's tag holds the class given for it (a debug check).
    pub fn tags_hold(bindings: &Bindings, classes: &[(ClusterName, Class)]) -> bool {
        bindings
            .tags()
            .map(|(c, tag)| (c.clone(), tag))
            .eq(classes.iter().map(|(c, class)| (c.clone(), class.tag())))
    }

    /// Every binding of a placement, classified in cluster order: the maps are built whole,
    /// where setting each class would search and insert once per binding (a placement's
    /// first pass classifies them all, and binds most of them).
    pub fn of_all(latest: u64, classes: &[(ClusterName, Class)]) -> Self {
        let mut index = Self::new(latest);
        let mut waiting = Vec::new();
        for (cluster, class) in classes {
            index.adjust(*class, 1);
            if let Readiness::ReadyAt(at) = class.readiness {
                waiting.push((at, cluster.clone()));
            }
        }
        index.ready_at = waiting.iter().map(|(at, c)| (c.clone(), *at)).collect();
        index.waiting = waiting.into_iter().collect();
        index
    }

    fn count(&mut self, cluster: &str, class: Class) {
        self.adjust(class, 1);
        if let Readiness::ReadyAt(at) = class.readiness {
            self.waiting.insert((at, cluster.into()));
            self.ready_at.insert(cluster.into(), at);
        }
    }

    /// Undoes [`Self::count`] of the class the cluster had.
    fn forget(&mut self, cluster: &str, class: Class) {
        self.adjust(class, -1);
        if let Readiness::ReadyAt(at) = class.readiness {
            self.waiting.remove(&(at, cluster.into()));
            self.ready_at.remove(cluster);
        }
    }

    fn adjust(&mut self, class: Class, sign: i64) {
        if class.counts() {
            self.ready += sign * i64::from(class.is_ready());
            self.can_be_ready += sign * i64::from(!class.is_failed() && !class.reports_diff);
        }
        if class.state != BindingState::Unscheduled {
            self.live = self.live.saturating_add_signed(sign);
        }
        if class.holds_up_completion() {
            self.incomplete = self.incomplete.saturating_add_signed(sign);
        }
    }
}

/// A derived cache inside [`crate::state::State`]: skipped by the encoding (so by the hash and
/// checkpoints) and equal to any other, so state comparisons see only real state.
#[derive(Debug, Clone, Default)]
pub struct IndexCache(pub(crate) BTreeMap<crate::model::ObjectKey, BindingIndex>);

crate::derived::derived_cache!(IndexCache);

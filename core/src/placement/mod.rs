//! The placement aggregate: a `ClusterResourcePlacement` or `ResourcePlacement` with its
//! scheduling policy snapshots, resource snapshots and bindings — the objects KubeFleet's
//! placement controller and scheduler derive from it.

pub mod binding;
pub mod bindings;
pub mod envelope;
pub mod guard;
pub mod policy_snapshot;
pub mod resource_snapshot;
pub mod selection;
pub mod selector_index;
pub(crate) mod store;

use serde::{Deserialize, Serialize};

pub use binding::{Binding, BindingState, ClusterDecision, ClusterScore, OverrideSnapshots, Work};
pub use policy_snapshot::PolicySnapshot;

pub use bindings::Bindings;
pub(crate) use bindings::{Fill, TagSet};
pub use resource_snapshot::{ResourceSnapshot, SelectedResource};

use chrono::{DateTime, Utc};

use crate::change::{Change, Changes};
use crate::condition::Condition;
use crate::decision::Decision;
use crate::model::placement::{PlacementPolicy, PlacementType};
use crate::model::{ObjectKey, ObjectMeta, PlacementSpec};

/// A stored placement and what the hub derived from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Validated spec, defaults filled in.
    pub spec: PlacementSpec,
    /// Scheduling policy snapshots, oldest first; the last is the latest.
    pub policy_snapshots: Vec<PolicySnapshot>,
    /// Resource snapshots, oldest first; the last is the latest.
    pub resource_snapshots: Vec<ResourceSnapshot>,
    /// One binding per member cluster the scheduler has ever picked and not yet released.
    pub bindings: Bindings,
    /// The placement-level `…Scheduled` condition.
    pub scheduled: Option<Condition>,
    /// Why resource selection failed, when it did (e.g. a reserved namespace).
    pub selection_error: Option<String>,
    /// The guard of its rolling update when it has safety fields (docs/rollout-safety.md).
    pub guard: Option<guard::Guard>,
}

crate::revision::stored_objects!(Placement => PlacementSpec);

impl Placement {
    /// A placement with nothing derived yet.
    #[must_use]
    pub fn new(meta: ObjectMeta, spec: PlacementSpec) -> Self {
        Self {
            meta,
            spec,
            policy_snapshots: Vec::new(),
            resource_snapshots: Vec::new(),
            bindings: Bindings::new(),
            scheduled: None,
            selection_error: None,
            guard: None,
        }
    }

    /// The policy as written, `PickAll` when omitted.
    #[must_use]
    pub fn policy(&self) -> PlacementPolicy {
        self.spec.policy.clone().unwrap_or_default()
    }

    /// The placement type.
    #[must_use]
    pub fn placement_type(&self) -> PlacementType {
        self.spec
            .policy
            .as_ref()
            .map_or(PlacementType::PickAll, |p| p.placement_type)
    }

    /// The latest scheduling policy snapshot.
    #[must_use]
    pub fn latest_policy(&self) -> Option<&PolicySnapshot> {
        self.policy_snapshots.last()
    }

    /// The latest resource snapshot.
    #[must_use]
    pub fn latest_resources(&self) -> Option<&ResourceSnapshot> {
        self.resource_snapshots.last()
    }

    /// The resource snapshot at `index`, if the placement still keeps it.
    #[must_use]
    pub fn resource_snapshot(&self, index: u64) -> Option<&ResourceSnapshot> {
        self.resource_snapshots.iter().find(|s| s.index == index)
    }

    /// Whether the latest policy snapshot's `Scheduled` condition is `True`.
    #[must_use]
    pub fn is_fully_scheduled(&self) -> bool {
        self.latest_policy()
            .and_then(|p| p.scheduled.as_ref())
            .is_some_and(|c| c.status == crate::condition::ConditionStatus::True)
    }

    /// Binds `cluster`'s binding to `work` (see [`Binding::bind_to`]): the one place a rollout
    /// — rolling, partitioned or a staged run — starts on a cluster. `None` without a binding.
    pub(crate) fn bind(
        &mut self,
        key: &ObjectKey,
        cluster: &str,
        work: Work,
        run: Option<std::sync::Arc<str>>,
        now: DateTime<Utc>,
        changes: &mut Changes,
    ) -> Option<Decision> {
        let resource_index = work.resource_index;
        self.bindings
            .update(cluster, |binding| binding.bind_to(work, run, now))?;
        Some(Self::bound(key, cluster, resource_index, changes))
    }

    /// [`Placement::bind`] for a rolling or partitioned pass, first telling the placement's
    /// safety guard, when it has one, what the binding carried: one search for both.
    pub(crate) fn roll_to(
        &mut self,
        key: &ObjectKey,
        cluster: &str,
        work: Work,
        now: DateTime<Utc>,
        changes: &mut Changes,
    ) -> Option<Decision> {
        let resource_index = work.resource_index;
        let Placement {
            bindings, guard, ..
        } = self;
        bindings.update(cluster, |binding| roll(guard, cluster, binding, work, now))?;
        Some(Self::bound(key, cluster, resource_index, changes))
    }

    /// [`Placement::roll_to`] for each of `clusters`, given in name order, with the work
    /// `work_for` gives it, adding the decisions to `decisions`: each binding is found from the
    /// last one (see [`Bindings::update_in_order`]).
    pub(crate) fn roll_in_order(
        &mut self,
        key: &ObjectKey,
        clusters: &[crate::model::ClusterName],
        work_for: impl Fn(&str) -> Work,
        now: DateTime<Utc>,
        changes: &mut Changes,
        decisions: &mut Vec<Decision>,
    ) {
        let Placement {
            bindings, guard, ..
        } = self;
        bindings.update_in_order(clusters, |cluster, binding| {
            let work = work_for(cluster);
            let resource_index = work.resource_index;
            roll(guard, cluster, binding, work, now);
            decisions.push(Self::bound(key, cluster, resource_index, changes));
        });
    }

    /// Records that `cluster`'s binding was bound to `resource_index`.
    fn bound(
        key: &ObjectKey,
        cluster: &str,
        resource_index: u64,
        changes: &mut Changes,
    ) -> Decision {
        changes.push(Change::BindingBound {
            placement: key.clone(),
            cluster: cluster.into(),
        });
        Decision::RolloutStarted {
            placement: key.clone(),
            cluster: cluster.to_owned(),
            resource_index,
        }
    }

    /// Removes `cluster`'s binding, and so its work: the one place any rollout, a staged run's
    /// delete stage or an eviction removes one. `None` when there was none.
    pub(crate) fn remove_binding(
        &mut self,
        key: &ObjectKey,
        cluster: &str,
        changes: &mut Changes,
    ) -> Option<Decision> {
        self.bindings.remove(cluster)?;
        changes.push(Change::BindingRemoved {
            placement: key.clone(),
            cluster: cluster.into(),
        });
        Some(Decision::BindingRemoved {
            placement: key.clone(),
            cluster: cluster.to_owned(),
        })
    }
}

/// Binds `cluster`'s binding to `work` for a rolling or partitioned pass, first telling the
/// placement's safety guard, when it has one, what the binding carried.
fn roll(
    guard: &mut Option<guard::Guard>,
    cluster: &str,
    binding: &mut Binding,
    work: Work,
    now: DateTime<Utc>,
) {
    if let (Some(guard), Some(index)) = (guard.as_mut(), binding.resource_index) {
        guard.remember_prior(cluster, (index, binding.override_snapshots.clone()));
    }
    binding.bind_to(work, None, now);
}

//! The RollingUpdate rollout (seed 001, KubeFleet's rollout controller): after anything that
//! can change a placement's bindings or their availability, one pass decides which bindings
//! are bound to the latest resource snapshot, which are updated in place, and which
//! unscheduled ones are removed — never letting more of the target clusters be unavailable
//! than `maxUnavailable` allows, and never exceeding the target by more than `maxSurge`.
//!
//! - Target: PickAll — the clusters the scheduler picked; PickN — `numberOfClusters`;
//!   PickFixed — the number of `clusterNames`.
//! - Both knobs resolve against the target rounding **up**; `maxUnavailable` is at least 1
//!   (seed 001: "Minimum value for MaxUnavailable is set to 1").
//! - An in-place update (same clusters, new resources) is limited by `maxUnavailable` only;
//!   surge applies only to newly scheduled clusters.
//! - A binding is *ready* when its cluster reported the work at its resource index applied and
//!   available; a not-trackable report counts once `unavailablePeriodSeconds` of event time
//!   have passed since it arrived.
//! - `strategy.type: External` placements are left to staged update runs;
//!   `strategy.type: Partitioned` ones roll out by [`partitioned`].

pub mod partitioned;
pub mod readiness;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use crate::decision::Decision;
use crate::model::placement::{PlacementType, StrategyType};
use crate::model::{
    CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP, RESOURCE_PLACEMENT, Rounding,
};
use crate::overrides;
use crate::placement::{BindingState, Placement};
use crate::state::State;
use readiness::Readiness;

/// Override snapshot names a work is rendered with (cluster resource, resource overrides).
type OverrideSnapshots = (Vec<String>, Vec<(String, String)>);

/// What one pass needs from a binding, in list (cluster name) order.
struct Classified<'a> {
    cluster: &'a str,
    state: BindingState,
    readiness: Readiness,
    out_of_date: bool,
}

/// Runs a rollout pass for every placement in `touched`, and for placements whose readiness
/// deadline has passed.
pub(crate) fn roll_out(
    state: &mut State,
    touched: &BTreeSet<ObjectKey>,
    now: DateTime<Utc>,
) -> Vec<Decision> {
    let mut keys = touched.clone();
    if touched.contains(&overrides_changed()) {
        keys.remove(&overrides_changed());
        keys.extend(state.placements.keys().cloned());
    }
    while let Some((deadline, key)) = state.rollout_deadlines.first().cloned() {
        if deadline > now {
            break;
        }
        state.rollout_deadlines.pop_first();
        keys.insert(key);
    }
    let mut decisions = Vec::new();
    for key in keys {
        decisions.extend(pass(state, &key, now));
    }
    decisions
}

/// The placements a step's decisions touched, which the rollout must look at again.
#[must_use]
pub fn touched_placements(decisions: &[Decision]) -> BTreeSet<ObjectKey> {
    decisions
        .iter()
        .filter_map(|decision| match decision {
            Decision::ObjectStored { object, .. }
            | Decision::PolicySnapshotTaken {
                placement: object, ..
            }
            | Decision::ResourceSnapshotTaken {
                placement: object, ..
            }
            | Decision::ClusterScheduled {
                placement: object, ..
            }
            | Decision::ClusterUnscheduled {
                placement: object, ..
            }
            | Decision::SchedulingChanged {
                placement: object, ..
            }
            | Decision::WorkReported {
                placement: object, ..
            } => placement_key(object).or_else(|| is_override(object).then(overrides_changed)),
            Decision::ObjectDeleted { object } if is_override(object) => Some(overrides_changed()),
            Decision::OverrideSnapshotTaken { .. } => Some(overrides_changed()),
            _ => None,
        })
        .collect()
}

/// Whether a display name is a `ClusterResourceOverride` or `ResourceOverride`.
fn is_override(display: &str) -> bool {
    display.starts_with("ClusterResourceOverride/") || display.starts_with("ResourceOverride/")
}

/// A marker in the touched set meaning "an override changed: every placement".
fn overrides_changed() -> ObjectKey {
    ObjectKey::cluster_scoped(PLACEMENT_GROUP, "ClusterResourceOverride", "")
}

/// The key behind a placement's display name (`ClusterResourcePlacement/name`,
/// `ResourcePlacement/namespace/name`); `None` for any other object.
pub(crate) fn placement_key(display: &str) -> Option<ObjectKey> {
    let mut parts = display.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(CLUSTER_RESOURCE_PLACEMENT), Some(name), None) => Some(ObjectKey::cluster_scoped(
            PLACEMENT_GROUP,
            CLUSTER_RESOURCE_PLACEMENT,
            name,
        )),
        (Some(RESOURCE_PLACEMENT), Some(namespace), Some(name)) => Some(ObjectKey {
            group: PLACEMENT_GROUP.into(),
            kind: RESOURCE_PLACEMENT.into(),
            namespace: namespace.into(),
            name: name.into(),
        }),
        _ => None,
    }
}

/// The number of clusters the placement should end up on (seed 001).
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

/// The override snapshots each scheduled or bound cluster's work should be rendered with now
/// (empty when no override exists at all, which keeps the common case free).
fn wanted_overrides(state: &State, key: &ObjectKey) -> BTreeMap<String, OverrideSnapshots> {
    let (Some(placement), false) = (state.placements.get(key), state.overrides.is_empty()) else {
        return BTreeMap::new();
    };
    let Some(resources) = placement.latest_resources() else {
        return BTreeMap::new();
    };
    placement
        .bindings
        .values()
        .filter(|b| b.state != BindingState::Unscheduled)
        .map(|b| {
            let wanted =
                overrides::applicable_overrides(state, key, &resources.resources, &b.cluster);
            (b.cluster.clone(), wanted)
        })
        .collect()
}

fn pass(state: &mut State, key: &ObjectKey, now: DateTime<Utc>) -> Vec<Decision> {
    if state
        .placements
        .get(key)
        .is_some_and(partitioned::is_partitioned)
    {
        return partitioned::pass(state, key, now);
    }
    let wanted = wanted_overrides(state, key);
    let no_overrides: OverrideSnapshots = (Vec::new(), Vec::new());
    let State {
        placements,
        rollout_deadlines,
        ..
    } = state;
    let Some(placement) = placements.get_mut(key) else {
        return Vec::new();
    };
    if placement.spec.strategy.strategy_type == StrategyType::External {
        return Vec::new();
    }
    let Some(latest) = placement.latest_resources().map(|s| s.index) else {
        return Vec::new();
    };
    let period = Duration::seconds(
        placement
            .spec
            .strategy
            .rolling_update
            .unavailable_period_seconds,
    );
    let classified: Vec<Classified> = placement
        .bindings
        .values()
        .map(|b| {
            let readiness = readiness::judge(b, b.report.as_ref(), period, now);
            if let Readiness::ReadyAt(at) = readiness {
                rollout_deadlines.insert((at, key.clone()));
            }
            // Out of date: a newer resource snapshot, or other overrides apply now.
            let overrides = wanted.get(&b.cluster).unwrap_or(&no_overrides);
            Classified {
                cluster: &b.cluster,
                state: b.state,
                readiness,
                out_of_date: b.resource_index != Some(latest) || &b.override_snapshots != overrides,
            }
        })
        .collect();
    let target = i64::try_from(target(placement)).unwrap_or(i64::MAX);
    let (max_unavailable, max_surge) = budgets(placement, u64::try_from(target).unwrap_or(0));
    let plan = plan(&classified, target, max_unavailable, max_surge);
    apply(placement, key, &plan, latest, &wanted, now)
}

/// The bindings one pass acts on.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    remove: Vec<String>,
    update: Vec<String>,
    bind: Vec<String>,
}

/// KubeFleet's one-pass algorithm (`determineBindingsToUpdate`), in list order.
fn plan(bindings: &[Classified<'_>], target: i64, max_unavailable: i64, max_surge: i64) -> Plan {
    let mut ready = 0_i64;
    let mut can_be_ready = 0_i64;
    let mut remove_candidates = Vec::new();
    let mut update_candidates = Vec::new();
    let mut failed_updates = Vec::new();
    let mut bounding_candidates = Vec::new();
    for b in bindings {
        let failed = b.readiness == Readiness::Failed;
        let is_ready = b.readiness == Readiness::Ready;
        match b.state {
            BindingState::Unscheduled => {
                can_be_ready += i64::from(!failed);
                ready += i64::from(is_ready);
                remove_candidates.push(b.cluster);
            }
            BindingState::Scheduled => bounding_candidates.push(b.cluster),
            BindingState::Bound => {
                ready += i64::from(is_ready);
                can_be_ready += i64::from(!failed);
                if b.out_of_date {
                    if failed {
                        failed_updates.push(b.cluster);
                    } else {
                        update_candidates.push(b.cluster);
                    }
                }
            }
        }
    }
    let min_available = target - max_unavailable;
    let mut max_to_remove = ready - min_available;
    let mut plan = Plan {
        update: failed_updates.into_iter().map(str::to_owned).collect(),
        ..Plan::default()
    };
    for cluster in remove_candidates {
        if max_to_remove <= 0 {
            break;
        }
        plan.remove.push(cluster.to_owned());
        max_to_remove -= 1;
    }
    for cluster in update_candidates {
        if max_to_remove <= 0 {
            break;
        }
        plan.update.push(cluster.to_owned());
        max_to_remove -= 1;
    }
    let max_to_add = (target + max_surge) - can_be_ready;
    plan.bind = bounding_candidates
        .into_iter()
        .take(usize::try_from(max_to_add.max(0)).unwrap_or(0))
        .map(str::to_owned)
        .collect();
    plan
}

fn apply(
    placement: &mut Placement,
    key: &ObjectKey,
    plan: &Plan,
    latest: u64,
    wanted: &BTreeMap<String, OverrideSnapshots>,
    now: DateTime<Utc>,
) -> Vec<Decision> {
    let label = key.display();
    let mut decisions = Vec::new();
    // New and updated clusters first, then the removals: the order the seed tells it in.
    for cluster in plan.bind.iter().chain(&plan.update) {
        let Some(binding) = placement.bindings.get_mut(cluster) else {
            continue;
        };
        binding.state = BindingState::Bound;
        binding.previous_state = None;
        binding.resource_index = Some(latest);
        binding.override_snapshots = wanted.get(cluster).cloned().unwrap_or_default();
        binding.rollout_started_at = Some(now);
        // A new work: what the cluster said about the previous one no longer counts (KubeFleet
        // ties conditions to the binding's generation).
        binding.report = None;
        binding.generation += 1;
        decisions.push(Decision::RolloutStarted {
            placement: label.clone(),
            cluster: cluster.clone(),
            resource_index: latest,
        });
    }
    for cluster in &plan.remove {
        if placement.bindings.remove(cluster).is_some() {
            decisions.push(Decision::BindingRemoved {
                placement: label.clone(),
                cluster: cluster.clone(),
            });
        }
    }
    decisions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(
        cluster: &str,
        state: BindingState,
        readiness: Readiness,
        out_of_date: bool,
    ) -> Classified<'_> {
        Classified {
            cluster,
            state,
            readiness,
            out_of_date,
        }
    }

    #[test]
    fn an_in_place_update_goes_one_cluster_at_a_time_and_never_surges() {
        // Seed 001 example 1: three ready bound clusters, a new resource index, maxUnavailable
        // 1, maxSurge 1, one scheduled-but-unused fourth cluster absent (PickN 3).
        let all = [
            binding("cluster-2", BindingState::Bound, Readiness::Ready, true),
            binding("cluster-3", BindingState::Bound, Readiness::Ready, true),
            binding("cluster-4", BindingState::Bound, Readiness::Ready, true),
        ];
        let first = plan(&all, 3, 1, 1);
        assert_eq!(first.update, ["cluster-2"]);
        // cluster-2 took the bad image and never becomes available: the rollout stalls.
        let stalled = [
            binding("cluster-2", BindingState::Bound, Readiness::NotReady, false),
            binding("cluster-3", BindingState::Bound, Readiness::Ready, true),
            binding("cluster-4", BindingState::Bound, Readiness::Ready, true),
        ];
        assert_eq!(plan(&stalled, 3, 1, 1), Plan::default());
    }

    #[test]
    fn a_move_adds_the_new_clusters_before_removing_the_old_one_at_a_time() {
        // Seed 001 example 2: west → east with maxSurge 2, maxUnavailable 25% of 2 → 1.
        let moving = [
            binding(
                "cluster-1",
                BindingState::Unscheduled,
                Readiness::Ready,
                true,
            ),
            binding(
                "cluster-2",
                BindingState::Unscheduled,
                Readiness::Ready,
                true,
            ),
            binding(
                "cluster-3",
                BindingState::Scheduled,
                Readiness::NotReady,
                true,
            ),
            binding(
                "cluster-4",
                BindingState::Scheduled,
                Readiness::NotReady,
                true,
            ),
        ];
        let first = plan(&moving, 2, 1, 2);
        assert_eq!(first.bind, ["cluster-3", "cluster-4"]);
        assert_eq!(first.remove, ["cluster-1"]);
        let later = [
            binding(
                "cluster-2",
                BindingState::Unscheduled,
                Readiness::Ready,
                true,
            ),
            binding("cluster-3", BindingState::Bound, Readiness::NotReady, false),
            binding("cluster-4", BindingState::Bound, Readiness::NotReady, false),
        ];
        assert_eq!(
            plan(&later, 2, 1, 2),
            Plan::default(),
            "one must stay available"
        );
        let done = [
            binding(
                "cluster-2",
                BindingState::Unscheduled,
                Readiness::Ready,
                true,
            ),
            binding("cluster-3", BindingState::Bound, Readiness::Ready, false),
            binding("cluster-4", BindingState::Bound, Readiness::NotReady, false),
        ];
        assert_eq!(plan(&done, 2, 1, 2).remove, ["cluster-2"]);
    }

    #[test]
    fn failed_bindings_are_always_updated() {
        let failing = [binding("c", BindingState::Bound, Readiness::Failed, true)];
        assert_eq!(plan(&failing, 1, 1, 0).update, ["c"]);
    }
}

//! Eviction and placement disruption budgets (KubeFleet's eviction controller).
//!
//! Contract:
//! - A `ClusterResourcePlacementEviction` is reconciled exactly once, in the step that creates
//!   it, to one of three terminal states kept in the state as its conditions: invalid
//!   (`Valid=False`), valid but not executed (`Executed=False`), or executed (`Executed=True`,
//!   the binding removed in that same step). It never changes again: a budget, binding or
//!   placement that changes later does not re-run it, re-applying it is a no-op, and an update
//!   that changes its spec is rejected (the spec is immutable). To evict again, delete it and
//!   create it again.
//! - A `ClusterResourcePlacementDisruptionBudget` guards the placement of the same name. It is
//!   only read when an eviction is reconciled; it has no status and triggers nothing.
//! - An executed eviction removes the binding, then the scheduler runs again for the placement
//!   and may pick the cluster again (a PickAll placement will, and a PickN one may) unless the
//!   cluster has a taint the placement does not tolerate; the rollout then looks at the
//!   placement again.
//! - Everything is decided from the state and the event time alone, in integers.

pub mod budget;
pub mod model;
pub mod reconcile;
pub mod status;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use model::{DisruptionBudgetSpec, EvictionSpec, parse_budget_spec, parse_eviction_spec};
pub use status::Verdict;

use crate::change::{Change, Changes};
use crate::condition::Condition;
use crate::decision::{Decision, RejectCode, rejected};
use crate::model::{
    CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET, CLUSTER_RESOURCE_PLACEMENT_EVICTION, ObjectKey,
    ObjectMeta, PLACEMENT_GROUP,
};
use crate::placement::Placement;
use crate::revision::{Applied, Revision, next_meta, previous_of, revise, stored};

/// A stored eviction and the outcome of its one reconciliation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Eviction {
    /// Metadata.
    pub meta: ObjectMeta,
    /// The immutable spec.
    pub spec: EvictionSpec,
    /// `Valid`, then `Executed` when it was valid: its terminal status.
    pub conditions: Vec<Condition>,
}

/// A stored disruption budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisruptionBudget {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Which bound is set.
    pub spec: DisruptionBudgetSpec,
}

/// Evictions and disruption budgets, both cluster-scoped and keyed by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disruptions {
    /// `ClusterResourcePlacementEviction`s.
    pub evictions: BTreeMap<String, Eviction>,
    /// `ClusterResourcePlacementDisruptionBudget`s; each guards the placement of its name.
    pub budgets: BTreeMap<String, DisruptionBudget>,
}

crate::revision::stored_objects!(DisruptionBudget => DisruptionBudgetSpec);

/// What an eviction verb changes and reads, borrowed from the state: the evictions and budgets,
/// the hub's resource version counter, and the placements an eviction is judged against.
pub(crate) struct Store<'a> {
    /// Evictions and disruption budgets.
    pub disruptions: &'a mut Disruptions,
    /// The last resource version handed out.
    pub resource_version: &'a mut u64,
    /// ClusterResourcePlacements and ResourcePlacements.
    pub placements: &'a BTreeMap<ObjectKey, Placement>,
}

/// A new eviction: its `ObjectStored`, and the eviction judged.
pub(crate) struct New {
    /// Its `ObjectStored`.
    pub stored: Decision,
    /// The eviction and its verdict.
    pub judged: Judged,
}

/// A new eviction, judged and not yet stored, for the caller to carry its verdict out and then
/// record it ([`reconciled`]).
pub(crate) struct Judged {
    /// The eviction's key.
    pub key: ObjectKey,
    /// Its metadata.
    pub meta: ObjectMeta,
    /// Its spec.
    pub spec: EvictionSpec,
    /// The one reconciliation's outcome.
    pub verdict: Verdict,
}

/// Stores an eviction: an existing one only takes new labels and annotations (the error holds
/// what that decided); a new one is judged at once, and is stored by [`reconciled`] once the
/// caller carried its verdict out.
pub(crate) fn apply_eviction(
    store: &mut Store<'_>,
    key: &ObjectKey,
    spec: EvictionSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Result<New, Vec<Decision>> {
    let Applied {
        api_version,
        user,
        origin,
    } = applied;
    let object = key.clone();
    if let Some(existing) = store.disruptions.evictions.get(key.name.as_str()) {
        if let Some(message) = changed_spec(&existing.spec, &spec) {
            return Err(vec![rejected(
                RejectCode::ImmutableField,
                format!("{object}: {message}"),
            )]);
        }
        if existing.meta.labels == user.labels && existing.meta.annotations == user.annotations {
            return Err(vec![Decision::ObjectUnchanged { object }]);
        }
        let old_meta = existing.meta.clone();
        let meta = next_meta(
            store.resource_version,
            Some(&old_meta),
            api_version,
            user,
            false,
            origin,
        );
        let decision = stored(key, &meta, false, changes);
        if let Some(eviction) = store.disruptions.evictions.get_mut(key.name.as_str()) {
            eviction.meta = meta;
        }
        return Err(vec![decision]);
    }
    let meta = next_meta(
        store.resource_version,
        None,
        api_version,
        user,
        true,
        origin,
    );
    let stored = stored(key, &meta, true, changes);
    let budgets = &store.disruptions.budgets;
    let verdict = reconcile::judge(store.placements, budgets, &spec, origin.now);
    let judged = Judged {
        key: object,
        meta,
        spec,
        verdict,
    };
    Ok(New { stored, judged })
}

/// Records a judged eviction's one reconciliation, once its verdict was carried out, and stores
/// it with its terminal conditions.
pub(crate) fn reconciled(
    disruptions: &mut Disruptions,
    judged: Judged,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Decision {
    let Judged {
        key,
        meta,
        spec,
        verdict,
    } = judged;
    changes.push(Change::EvictionReconciled {
        placement: reconcile::placement_key(&spec),
    });
    let decision = Decision::EvictionReconciled {
        eviction: key.clone(),
        placement: reconcile::placement_key(&spec),
        cluster: spec.cluster_name.clone(),
        valid: !matches!(verdict, Verdict::Invalid(_)),
        executed: matches!(verdict, Verdict::Executed(_)),
        message: verdict.message().to_owned(),
    };
    let conditions = verdict.conditions(meta.generation, now);
    disruptions.evictions.insert(
        key.name.to_string(),
        Eviction {
            meta,
            spec,
            conditions,
        },
    );
    decision
}

/// KubeFleet's CEL rules: both spec fields are immutable.
fn changed_spec(stored: &EvictionSpec, applied: &EvictionSpec) -> Option<String> {
    let changed = |field: &str, rule: &str, old: &str, new: &str| {
        format!(
            "spec.{field}: The {rule} field is immutable (stored {old:?}, applied {new:?}); \
             delete the eviction and create it again to evict anew"
        )
    };
    if stored.placement_name != applied.placement_name {
        return Some(changed(
            "placementName",
            "PlacementName",
            &stored.placement_name,
            &applied.placement_name,
        ));
    }
    if stored.cluster_name != applied.cluster_name {
        return Some(changed(
            "clusterName",
            "ClusterName",
            &stored.cluster_name,
            &applied.cluster_name,
        ));
    }
    None
}

/// Stores a disruption budget. Nothing else happens: budgets are read by evictions only.
pub(crate) fn apply_budget(
    store: &mut Store<'_>,
    key: &ObjectKey,
    spec: DisruptionBudgetSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let previous = previous_of(store.disruptions.budgets.get(key.name.as_str()), &spec);
    let Revision { meta, decision, .. } =
        match revise(store.resource_version, key, previous, applied, changes) {
            Ok(revision) => revision,
            Err(unchanged) => return vec![*unchanged],
        };
    store
        .disruptions
        .budgets
        .insert(key.name.to_string(), DisruptionBudget { meta, spec });
    vec![decision]
}

/// Deletes an eviction or a budget; `None` when `key` is neither kind. Deleting an eviction
/// never undoes it.
pub(crate) fn delete(
    disruptions: &mut Disruptions,
    key: &ObjectKey,
    changes: &mut Changes,
) -> Option<Vec<Decision>> {
    if key.group != PLACEMENT_GROUP {
        return None;
    }
    let removed = match key.kind.as_str() {
        CLUSTER_RESOURCE_PLACEMENT_EVICTION => {
            disruptions.evictions.remove(key.name.as_str()).map(|_| ())
        }
        CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET => {
            disruptions.budgets.remove(key.name.as_str()).map(|_| ())
        }
        _ => return None,
    };
    Some(match removed {
        Some(()) => vec![changes.object_deleted(key)],
        None => vec![rejected(
            RejectCode::NotFound,
            format!("{} {} not found", key.kind, key.name),
        )],
    })
}

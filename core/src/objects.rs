//! Applying and deleting objects: the typed kinds go to their aggregates, everything else is
//! stored as a hub resource. An apply that changes nothing is a no-op, which also makes a
//! duplicated apply event harmless.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::change::{Change, Changes};
use crate::decision::{Decision, RejectCode, rejected};
use crate::event::ObjectRef;
use crate::eviction;
use crate::member::{self, Member};
use crate::model::{
    self, Body, CLUSTER_GROUP, CLUSTER_RESOURCE_OVERRIDE, CLUSTER_RESOURCE_PLACEMENT,
    CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET, CLUSTER_RESOURCE_PLACEMENT_EVICTION,
    MEMBER_CLUSTER, Manifest, ObjectKey, ObjectMeta, PLACEMENT_GROUP, RESOURCE_OVERRIDE,
    RESOURCE_PLACEMENT, placement_validation,
};
use crate::overrides::{self, Override, OverrideKind, OverrideSpec};
use crate::placement::{Placement, lifecycle};
use crate::staged::{self, Strategy, model::RunSpec, model::StrategySpec, run::UpdateRun};
use crate::state::{Resource, State};

/// What the event that applies an object contributes to its metadata.
pub(crate) struct Origin {
    pub(crate) event_id: Uuid,
    pub(crate) now: DateTime<Utc>,
}

/// Parses, validates and stores one manifest.
pub(crate) fn apply(
    state: &mut State,
    manifest_text: &str,
    origin: &Origin,
    changes: &mut Changes,
) -> Vec<Decision> {
    let manifest = match model::parse_manifest_text(manifest_text) {
        Ok(manifest) => manifest,
        Err(error) => return vec![rejected(RejectCode::InvalidObject, error.to_string())],
    };
    let Manifest {
        api_version,
        key,
        meta: user,
        body,
    } = manifest;
    let object = key.clone();
    match body {
        Body::MemberCluster(spec) => {
            let existing = state.members.get(&key.name);
            let unchanged = existing.is_some_and(|m| {
                m.spec == spec
                    && m.meta.labels == user.labels
                    && m.meta.annotations == user.annotations
            });
            if unchanged {
                return vec![Decision::ObjectUnchanged { object }];
            }
            let spec_changed = existing.is_none_or(|m| m.spec != spec);
            let old_meta = existing.map(|m| m.meta.clone());
            let old_period = existing.map(|m| m.spec.heartbeat_period_seconds);
            let meta = next_meta(
                state,
                old_meta.as_ref(),
                &api_version,
                user,
                spec_changed,
                origin,
            );
            let decision = stored(&key, &meta, old_meta.is_none(), changes);
            match state.members.get_mut(&key.name) {
                Some(member) => {
                    member.meta = meta;
                    member.spec = spec;
                }
                None => {
                    state
                        .members
                        .insert(key.name.clone(), Member::new(meta, spec));
                }
            }
            if let Some(period) = old_period {
                member::rearm_deadline(state, &key.name, period);
            }
            let mut decisions = vec![decision];
            decisions.extend(lifecycle::member_changed(
                state, &key.name, origin.now, changes,
            ));
            decisions
        }
        Body::ClusterResourcePlacement(spec) | Body::ResourcePlacement(spec) => {
            let existing = state.placements.get(&key);
            if let Some(old) = existing {
                if let Err(error) = placement_validation::validate_update(&old.spec, &spec) {
                    return vec![rejected(RejectCode::ImmutableField, error.to_string())];
                }
                if old.spec == spec
                    && old.meta.labels == user.labels
                    && old.meta.annotations == user.annotations
                {
                    return vec![Decision::ObjectUnchanged { object }];
                }
            }
            let spec_changed = existing.is_none_or(|p| p.spec != spec);
            let old_meta = existing.map(|p| p.meta.clone());
            let meta = next_meta(
                state,
                old_meta.as_ref(),
                &api_version,
                user,
                spec_changed,
                origin,
            );
            let decision = stored(&key, &meta, old_meta.is_none(), changes);
            match state.placements.get_mut(&key) {
                Some(placement) => {
                    placement.meta = meta;
                    placement.spec = spec;
                }
                None => {
                    state
                        .placements
                        .insert(key.clone(), Placement::new(meta, spec));
                }
            }
            let mut decisions = vec![decision];
            decisions.extend(lifecycle::placement_applied(
                state, &key, origin.now, changes,
            ));
            decisions
        }
        Body::ClusterResourceOverride(spec) => apply_override(
            state,
            key,
            &api_version,
            user,
            (OverrideKind::ClusterResourceOverride, spec),
            origin,
            changes,
        ),
        Body::ResourceOverride(spec) => apply_override(
            state,
            key,
            &api_version,
            user,
            (OverrideKind::ResourceOverride, spec),
            origin,
            changes,
        ),
        Body::StagedUpdateStrategy(spec) => {
            apply_strategy(state, key, &api_version, user, spec, origin, changes)
        }
        Body::StagedUpdateRun(spec) => {
            apply_run(state, key, &api_version, user, spec, origin, changes)
        }
        Body::ClusterResourcePlacementEviction(spec) => {
            eviction::apply_eviction(state, &key, &api_version, user, spec, origin, changes)
        }
        Body::ClusterResourcePlacementDisruptionBudget(spec) => {
            eviction::apply_budget(state, &key, &api_version, user, spec, origin, changes)
        }
        Body::Resource { content } => {
            let existing = state.resources.get(&key);
            if existing.is_some_and(|r| {
                r.content == content
                    && r.meta.labels == user.labels
                    && r.meta.annotations == user.annotations
                    && r.meta.api_version == api_version
            }) {
                return vec![Decision::ObjectUnchanged { object }];
            }
            let spec_changed = existing.is_none_or(|r| r.content != content);
            let old_meta = existing.map(|r| r.meta.clone());
            let meta = next_meta(
                state,
                old_meta.as_ref(),
                &api_version,
                user,
                spec_changed,
                origin,
            );
            let decision = stored(&key, &meta, old_meta.is_none(), changes);
            state.resources.insert(key, Resource { meta, content });
            let mut decisions = vec![decision];
            decisions.extend(lifecycle::resources_changed(state, origin.now, changes));
            decisions
        }
    }
}

/// Stores an override after checking it against the stored ones, and takes a snapshot when its
/// spec is new or changed.
fn apply_override(
    state: &mut State,
    key: ObjectKey,
    api_version: &str,
    user: model::UserMeta,
    (kind, spec): (OverrideKind, OverrideSpec),
    origin: &Origin,
    changes: &mut Changes,
) -> Vec<Decision> {
    let object = key.clone();
    let previous = state.overrides.get(&key).map(|o| Previous {
        meta: o.meta.clone(),
        same_spec: o.spec == spec,
    });
    let unchanged = previous.as_ref().is_some_and(|p| {
        p.same_spec && p.meta.labels == user.labels && p.meta.annotations == user.annotations
    });
    if !unchanged
        && let Err(conflict) = overrides::validation::against_stored(state, &key, kind, &spec)
    {
        return vec![rejected(conflict.code, conflict.message)];
    }
    let Revision {
        meta,
        decision,
        spec_changed,
    } = match revise(state, &key, previous, api_version, user, origin, changes) {
        Ok(revision) => revision,
        Err(unchanged) => return vec![*unchanged],
    };
    let mut decisions = vec![decision];
    let override_key = key.clone();
    let index = match state.overrides.get_mut(&key) {
        Some(stored) => {
            stored.meta = meta;
            spec_changed.then(|| {
                stored.spec = spec;
                stored.take_snapshot(origin.now)
            })
        }
        None => {
            state
                .overrides
                .insert(key, Override::new(kind, meta, spec, origin.now));
            Some(0)
        }
    };
    if let Some(index) = index {
        changes.push(Change::OverrideSnapshotTaken { override_key });
        decisions.push(Decision::OverrideSnapshotTaken {
            override_object: object,
            index,
        });
    }
    decisions
}

/// A typed object as stored before an apply: its metadata and whether the applied spec equals
/// the stored one.
pub(crate) struct Previous {
    pub(crate) meta: ObjectMeta,
    pub(crate) same_spec: bool,
}

/// The new revision of a typed object an apply stores.
pub(crate) struct Revision {
    /// Its metadata (resource version, generation bumped when the spec changed).
    pub(crate) meta: ObjectMeta,
    /// `ObjectStored`.
    pub(crate) decision: Decision,
    /// Whether the spec changed (or the object is new).
    pub(crate) spec_changed: bool,
}

/// Decides what an apply of a typed object stores: `Err(ObjectUnchanged)` (boxed: it is rare) when spec, labels and
/// annotations are all as stored, else the next revision's metadata and its decision.
pub(crate) fn revise(
    state: &mut State,
    key: &ObjectKey,
    previous: Option<Previous>,
    api_version: &str,
    user: model::UserMeta,
    origin: &Origin,
    changes: &mut Changes,
) -> Result<Revision, Box<Decision>> {
    if let Some(previous) = &previous
        && previous.same_spec
        && previous.meta.labels == user.labels
        && previous.meta.annotations == user.annotations
    {
        return Err(Box::new(Decision::ObjectUnchanged {
            object: key.clone(),
        }));
    }
    let spec_changed = previous.as_ref().is_none_or(|p| !p.same_spec);
    let old_meta = previous.map(|p| p.meta);
    let meta = next_meta(
        state,
        old_meta.as_ref(),
        api_version,
        user,
        spec_changed,
        origin,
    );
    let decision = stored(key, &meta, old_meta.is_none(), changes);
    Ok(Revision {
        meta,
        decision,
        spec_changed,
    })
}

/// The `ObjectStored` decision for a key just stored, recording the change.
pub(crate) fn stored(
    key: &ObjectKey,
    meta: &ObjectMeta,
    created: bool,
    changes: &mut Changes,
) -> Decision {
    changes.push(Change::ObjectStored(key.clone()));
    Decision::ObjectStored {
        object: key.clone(),
        resource_version: meta.resource_version,
        generation: meta.generation,
        created,
    }
}

pub(crate) fn next_meta(
    state: &mut State,
    old: Option<&ObjectMeta>,
    api_version: &str,
    user: model::UserMeta,
    spec_changed: bool,
    origin: &Origin,
) -> ObjectMeta {
    let resource_version = state.next_resource_version();
    let generation = old.map_or(1, |m| m.generation + u64::from(spec_changed));
    ObjectMeta {
        api_version: api_version.to_owned(),
        labels: user.labels,
        annotations: user.annotations,
        uid: old.map_or_else(|| origin.event_id.to_string(), |m| m.uid.clone()),
        resource_version,
        generation,
        creation_timestamp: old.map_or(origin.now, |m| m.creation_timestamp),
    }
}

/// Resolves a delete target to a stored key; a `None` group means "the group this kind has".
fn resolve(state: &State, target: &ObjectRef) -> Option<ObjectKey> {
    let namespace = target.namespace.clone().unwrap_or_default();
    let fleet_group = match target.kind.as_str() {
        MEMBER_CLUSTER => Some(CLUSTER_GROUP),
        CLUSTER_RESOURCE_PLACEMENT
        | RESOURCE_PLACEMENT
        | CLUSTER_RESOURCE_OVERRIDE
        | RESOURCE_OVERRIDE
        | staged::CLUSTER_STAGED_UPDATE_STRATEGY
        | staged::STAGED_UPDATE_STRATEGY
        | staged::CLUSTER_STAGED_UPDATE_RUN
        | staged::STAGED_UPDATE_RUN => Some(PLACEMENT_GROUP),
        CLUSTER_RESOURCE_PLACEMENT_EVICTION | CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET => {
            Some(PLACEMENT_GROUP)
        }
        _ => None,
    };
    let group = target
        .group
        .clone()
        .or_else(|| fleet_group.map(str::to_owned));
    if let Some(group) = group {
        return Some(ObjectKey {
            group,
            kind: target.kind.clone(),
            namespace,
            name: target.name.clone(),
        });
    }
    // Without a group, the first stored object of that kind, namespace and name (groups in
    // order) is meant — the same as kubectl resolving a short kind.
    state
        .resources
        .keys()
        .find(|k| k.kind == target.kind && k.namespace == namespace && k.name == target.name)
        .cloned()
}

/// Deletes one object.
pub(crate) fn delete(
    state: &mut State,
    target: &ObjectRef,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let not_found = || {
        let namespace = target
            .namespace
            .as_deref()
            .map(|ns| format!("{ns}/"))
            .unwrap_or_default();
        vec![rejected(
            RejectCode::NotFound,
            format!("{} {namespace}{} not found", target.kind, target.name),
        )]
    };
    let Some(key) = resolve(state, target) else {
        return not_found();
    };
    let object = key.clone();
    if key.group == CLUSTER_GROUP && key.kind == MEMBER_CLUSTER {
        if !state.members.contains_key(&key.name) {
            return not_found();
        }
        changes.push(Change::ObjectDeleted(key.clone()));
        let mut decisions = vec![Decision::ObjectDeleted { object }];
        decisions.extend(member::leave(state, &key.name, changes));
        decisions.extend(lifecycle::member_left(state, &key.name, now, changes));
        return decisions;
    }
    if key.group == PLACEMENT_GROUP
        && (key.kind == CLUSTER_RESOURCE_PLACEMENT || key.kind == RESOURCE_PLACEMENT)
    {
        if state.placements.remove(&key).is_none() {
            return not_found();
        }
        changes.push(Change::ObjectDeleted(key));
        return vec![Decision::ObjectDeleted { object }];
    }
    if key.group == PLACEMENT_GROUP
        && (key.kind == CLUSTER_RESOURCE_OVERRIDE || key.kind == RESOURCE_OVERRIDE)
    {
        if state.overrides.remove(&key).is_none() {
            return not_found();
        }
        changes.push(Change::ObjectDeleted(key));
        return vec![Decision::ObjectDeleted { object }];
    }
    if key.group == PLACEMENT_GROUP && staged::is_run(&key) {
        if !staged::delete_run(state, &key) {
            return not_found();
        }
        changes.push(Change::ObjectDeleted(key));
        return vec![Decision::ObjectDeleted { object }];
    }
    if key.group == PLACEMENT_GROUP && state.strategies.contains_key(&key) {
        state.strategies.remove(&key);
        changes.push(Change::ObjectDeleted(key));
        return vec![Decision::ObjectDeleted { object }];
    }
    if let Some(decisions) = eviction::delete(state, &key, changes) {
        return decisions;
    }
    if state.resources.remove(&key).is_none() {
        return not_found();
    }
    changes.push(Change::ObjectDeleted(key));
    let mut decisions = vec![Decision::ObjectDeleted { object }];
    decisions.extend(lifecycle::resources_changed(state, now, changes));
    decisions
}

/// Stores a strategy. Runs snapshot it when they initialize, so an edit never reaches a run
/// that has started.
fn apply_strategy(
    state: &mut State,
    key: ObjectKey,
    api_version: &str,
    user: model::UserMeta,
    spec: StrategySpec,
    origin: &Origin,
    changes: &mut Changes,
) -> Vec<Decision> {
    let previous = state.strategies.get(&key).map(|s| Previous {
        meta: s.meta.clone(),
        same_spec: s.spec == spec,
    });
    match revise(state, &key, previous, api_version, user, origin, changes) {
        Err(unchanged) => vec![*unchanged],
        Ok(Revision { meta, decision, .. }) => {
            state.strategies.insert(key, Strategy { meta, spec });
            vec![decision]
        }
    }
}

/// Stores a run, refusing changes to its immutable fields and invalid state transitions; the
/// run is then driven (initialized on creation) by the fold.
fn apply_run(
    state: &mut State,
    key: ObjectKey,
    api_version: &str,
    user: model::UserMeta,
    spec: RunSpec,
    origin: &Origin,
    changes: &mut Changes,
) -> Vec<Decision> {
    let existing = state.update_runs.get(&key);
    if let Some(old) = existing
        && let Err(error) = staged::model::validate_run_update(&old.spec, &spec)
    {
        return vec![rejected(RejectCode::ImmutableField, error.to_string())];
    }
    let status = existing.map(|r| r.status.clone()).unwrap_or_default();
    let previous = existing.map(|r| Previous {
        meta: r.meta.clone(),
        same_spec: r.spec == spec,
    });
    match revise(state, &key, previous, api_version, user, origin, changes) {
        Err(unchanged) => vec![*unchanged],
        Ok(Revision { meta, decision, .. }) => {
            state
                .update_runs
                .insert(key, UpdateRun { meta, spec, status });
            vec![decision]
        }
    }
}

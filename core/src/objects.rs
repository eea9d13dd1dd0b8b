//! Applying and deleting objects: the typed kinds go to their aggregates, everything else is
//! stored as a hub resource. An apply that changes nothing is a no-op, which also makes a
//! duplicated apply event harmless.

use chrono::{DateTime, Utc};

use crate::change::Changes;
use crate::coordinate::{self, lifecycle};
use crate::decision::{Decision, RejectCode, rejected};
use crate::event::ObjectRef;
use crate::eviction;
use crate::manifest::{self, Body, Manifest};
use crate::model::{
    CLUSTER_GROUP, CLUSTER_RESOURCE_OVERRIDE, CLUSTER_RESOURCE_PLACEMENT,
    CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET, CLUSTER_RESOURCE_PLACEMENT_EVICTION,
    MEMBER_CLUSTER, ObjectKey, PLACEMENT_GROUP, RESOURCE_OVERRIDE, RESOURCE_PLACEMENT,
};
use crate::overrides::{self, OverrideKind};
use crate::revision::{Applied, Origin, next_meta, stored};
use crate::staged;
use crate::state::{Resource, State};

/// Parses, validates and stores one manifest.
pub(crate) fn apply(
    state: &mut State,
    manifest_text: &str,
    origin: &Origin,
    changes: &mut Changes,
) -> Vec<Decision> {
    let manifest = match manifest::parse_manifest_text(manifest_text) {
        Ok(manifest) => manifest,
        Err(error) => return vec![rejected(RejectCode::InvalidObject, error.to_string())],
    };
    let Manifest {
        api_version,
        key,
        meta: user,
        body,
    } = manifest;
    let applied = Applied::new(&api_version, user, origin);
    match body {
        Body::MemberCluster(spec) => {
            coordinate::members::apply(state, &key, spec, applied, changes)
        }
        Body::ClusterResourcePlacement(spec) | Body::ResourcePlacement(spec) => {
            coordinate::placements::apply(state, &key, spec, applied, changes)
        }
        Body::ClusterResourceOverride(spec) => {
            let manifest = OverrideKind::ClusterResourceOverride.manifest(spec);
            let store = &mut state.override_store();
            overrides::store::apply(store, key, manifest, applied, changes)
        }
        Body::ResourceOverride(spec) => {
            let manifest = OverrideKind::ResourceOverride.manifest(spec);
            let store = &mut state.override_store();
            overrides::store::apply(store, key, manifest, applied, changes)
        }
        Body::StagedUpdateStrategy(spec) => {
            let store = &mut state.staged_store();
            staged::store::apply_strategy(store, key, spec, applied, changes)
        }
        Body::StagedUpdateRun(spec) => {
            let store = &mut state.staged_store();
            staged::store::apply_run(store, key, spec, applied, changes)
        }
        Body::ClusterResourcePlacementEviction(spec) => {
            coordinate::evictions::apply(state, &key, spec, applied, changes)
        }
        Body::ClusterResourcePlacementDisruptionBudget(spec) => {
            let store = &mut state.eviction_store();
            eviction::apply_budget(store, &key, spec, applied, changes)
        }
        Body::Resource { content } => apply_resource(state, key, content, applied, changes),
    }
}

/// Stores a hub resource (content to be placed); the placements it concerns re-select.
fn apply_resource(
    state: &mut State,
    key: ObjectKey,
    content: String,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Applied {
        api_version,
        user,
        origin,
    } = applied;
    let existing = state.resources.get(&key);
    if existing.is_some_and(|r| {
        r.content == content
            && r.meta.labels == user.labels
            && r.meta.annotations == user.annotations
            && r.meta.api_version == api_version
    }) {
        return vec![Decision::ObjectUnchanged { object: key }];
    }
    let spec_changed = existing.is_none_or(|r| r.content != content);
    let old_meta = existing.map(|r| r.meta.clone());
    let meta = next_meta(
        &mut state.resource_version,
        old_meta.as_ref(),
        api_version,
        user,
        spec_changed,
        origin,
    );
    let decision = stored(&key, &meta, old_meta.is_none(), changes);
    state
        .resources
        .insert(key.clone(), Resource { meta, content });
    let mut decisions = vec![decision];
    decisions.extend(lifecycle::resources_changed(
        state, &key, origin.now, changes,
    ));
    decisions
}

/// Resolves a delete target to a stored key; a `None` group means "the group this kind has".
fn resolve(state: &State, target: &ObjectRef) -> Option<ObjectKey> {
    let namespace = target.namespace.clone().unwrap_or_default();
    // An alias (`crp`, `cm`, `deployments`) means the kind the auth rules judged it as.
    let alias = crate::kind_scope::canonical_kind(target.group.as_deref(), &target.kind)
        .filter(|known| known.kind != target.kind);
    let (kind, alias_group) = match alias {
        Some(known) => (known.kind, Some(known.group)),
        None => (target.kind.clone(), None),
    };
    let fleet_group = match kind.as_str() {
        MEMBER_CLUSTER => Some(CLUSTER_GROUP),
        CLUSTER_RESOURCE_PLACEMENT
        | RESOURCE_PLACEMENT
        | CLUSTER_RESOURCE_OVERRIDE
        | RESOURCE_OVERRIDE
        | staged::CLUSTER_STAGED_UPDATE_STRATEGY
        | staged::STAGED_UPDATE_STRATEGY
        | staged::CLUSTER_STAGED_UPDATE_RUN
        | staged::STAGED_UPDATE_RUN
        | staged::CLUSTER_APPROVAL_REQUEST
        | staged::APPROVAL_REQUEST => Some(PLACEMENT_GROUP),
        CLUSTER_RESOURCE_PLACEMENT_EVICTION | CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET => {
            Some(PLACEMENT_GROUP)
        }
        _ => None,
    };
    let group = target
        .group
        .clone()
        .or(alias_group)
        .or_else(|| fleet_group.map(str::to_owned));
    if let Some(group) = group {
        return Some(ObjectKey {
            group: group.into(),
            kind: kind.as_str().into(),
            namespace: namespace.into(),
            name: target.name.as_str().into(),
        });
    }
    // Without a group, the first stored object of that kind, namespace and name (groups in
    // order) is meant — the same as kubectl resolving a short kind.
    state
        .resources
        .keys()
        .find(|k| k.kind == kind && k.namespace == namespace && k.name == target.name)
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
    let deleted = if key.is_member_cluster() {
        coordinate::members::delete(state, &key, now, changes)
    } else if key.is_placement() {
        coordinate::placements::delete(state, &key, changes)
    } else if key.is_override() {
        overrides::store::delete(&mut state.override_store(), &key, changes)
    } else {
        staged::store::delete(&mut state.staged_store(), &key, changes)
    };
    if let Some(decisions) = deleted {
        return decisions;
    }
    // Hub resources never hold a fleet kind's key (parsing routes those to their aggregates),
    // so a fleet object that does not exist ends as not found below.
    if let Some(decisions) = eviction::delete(&mut state.disruptions, &key, changes) {
        return decisions;
    }
    if state.resources.remove(&key).is_none() {
        return not_found();
    }
    let mut decisions = vec![changes.object_deleted(&key)];
    decisions.extend(lifecycle::resources_changed(state, &key, now, changes));
    decisions
}

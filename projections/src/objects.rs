//! Whole objects as `kubectl get -o json` shows them: `apiVersion`, `kind`, `metadata`, then the
//! kind's own fields, every object's keys sorted.
//!
//! Guarantees: rendering is a pure function of the state (event time only, no clock), and
//! [`render_all`] and [`list`] return objects in a fixed, documented order. Besides what was
//! applied, the objects KubeFleet derives from placements (policy and resource snapshots,
//! bindings, works, the status mirror) are rendered from the placement that owns them.

use flotilla_core::State;
use flotilla_core::model::{
    CLUSTER_GROUP, CLUSTER_RESOURCE_PLACEMENT, MEMBER_CLUSTER, ObjectKey, ObjectMeta,
    PLACEMENT_GROUP, RESOURCE_PLACEMENT,
};
use flotilla_core::state::Resource;
use serde_json::Value;

use crate::derived::{self, DerivedKind};
use crate::json;
use crate::kinds::KindInfo;
use crate::placement_status::PerCluster;
use crate::staged;
use crate::{eviction, member_cluster, overrides, placement};

/// The object stored under `key`, rendered in KubeFleet's shape; `None` if there is none.
///
/// A `MemberCluster` is looked up by name (its key's namespace must be empty); the placement
/// kinds, the kinds derived from placements and every other kind by their full key.
#[must_use]
pub fn render_object(state: &State, key: &ObjectKey) -> Option<Value> {
    let object = if is_member_cluster(key) {
        if !key.namespace.is_empty() {
            return None;
        }
        member_cluster::render(state, &key.name)?
    } else if is_placement(key) {
        placement::render(state, key, state.placements().get(key)?, PerCluster::Listed)
    } else if DerivedKind::parse(&key.group, &key.kind).is_some() {
        derived::render(state, &derived::find(state, key)?)
    } else if staged::is_staged(key) {
        staged::render(state, key)?
    } else if eviction::is_eviction_kind(&key.group, &key.kind) {
        eviction::render(state, key)?
    } else if crate::events::is_event_kind(&key.group, &key.kind) {
        return crate::events::render(state, key)
            .or_else(|| Some(render_resource(key, state.resources().get(key)?)));
    } else if overrides::is_override(key) {
        overrides::render(key, state.overrides().get(key)?)
    } else if overrides::is_snapshot(key) {
        overrides::render_snapshot_key(state, key)?
    } else {
        render_resource(key, state.resources().get(key)?)
    };
    Some(json::canonical(object))
}

/// Every object in the hub: `MemberCluster`s by name, then hub resources in key order (group,
/// kind, namespace, name), then overrides in key order each followed by its snapshots (oldest
/// first), then staged update objects, then placements in key order, each followed by what it derives: its
/// scheduling policy snapshots (oldest first), its resource snapshots (oldest first, each master
/// before its sub-snapshots), its bindings (by cluster name), the `Work`s of those that carry
/// resources (by cluster name), then its `ClusterResourcePlacementStatus` when it has one; then
/// the disruption budgets and the evictions, each by name.
#[must_use]
pub fn render_all(state: &State) -> Vec<Value> {
    let mut objects: Vec<Value> = state
        .members()
        .keys()
        .filter_map(|name| member_cluster::render(state, name).map(json::canonical))
        .collect();
    objects.extend(render_all_but_members(state));
    objects
}

/// The `MemberCluster` named `name`, rendered from that member alone (nothing else in the
/// state shows in it); `None` if there is none.
#[must_use]
pub fn render_member(state: &State, name: &str) -> Option<Value> {
    member_cluster::render(state, name).map(json::canonical)
}

/// [`render_all`] without the `MemberCluster`s, in the same order.
#[must_use]
pub fn render_all_but_members(state: &State) -> Vec<Value> {
    let resources = state.resources().keys().cloned();
    let overrides = state.overrides().keys().flat_map(|key| {
        let snapshots = overrides::snapshot_keys_of(state, key);
        std::iter::once(key.clone()).chain(snapshots)
    });
    let mut objects: Vec<Value> = resources
        .chain(overrides)
        .chain(staged::keys(state))
        .filter_map(|key| render_object(state, &key))
        .collect();
    for (key, stored) in state.placements() {
        objects.push(json::canonical(placement::render(
            state,
            key,
            stored,
            PerCluster::Listed,
        )));
        objects.extend(
            derived::derived_of(state, key, stored)
                .iter()
                .map(|object| json::canonical(derived::render(state, object))),
        );
    }
    objects.extend(
        eviction::all_keys(state)
            .iter()
            .filter_map(|key| render_object(state, key)),
    );
    objects
}

/// Every object of one kind, in key order. `namespace` filters namespaced kinds (`None` means
/// all namespaces); it is ignored for cluster-scoped kinds, as kubectl ignores `-n` for them.
#[must_use]
pub fn list(state: &State, kind: &KindInfo, namespace: Option<&str>) -> Vec<Value> {
    if let Some((derived_kind, cluster_owned)) = DerivedKind::parse(&kind.group, &kind.kind) {
        return derived::all_of_kind(state, derived_kind, cluster_owned, namespace)
            .iter()
            .map(|object| json::canonical(derived::render(state, object)))
            .collect();
    }
    let stored = keys_of(state, kind, namespace)
        .into_iter()
        .filter_map(|key| render_object(state, &key));
    if crate::events::is_event_kind(&kind.group, &kind.kind) {
        let derived =
            crate::events::list(state, &kind.group, namespace.filter(|_| kind.namespaced));
        return derived.into_iter().chain(stored).collect();
    }
    stored.collect()
}

/// As [`list`], for a table's rows: placements without their per-cluster list, which no
/// column reads.
pub(crate) fn list_for_table(
    state: &State,
    kind: &KindInfo,
    namespace: Option<&str>,
) -> Vec<Value> {
    let placement_kind = ObjectKey::cluster_scoped(&kind.group, &kind.kind, "");
    if !is_placement(&placement_kind) {
        return list(state, kind, namespace);
    }
    keys_of(state, kind, namespace)
        .into_iter()
        .filter_map(|key| {
            let placement = state.placements().get(&key)?;
            let object = placement::render(state, &key, placement, PerCluster::Omitted);
            Some(json::canonical(object))
        })
        .collect()
}

/// The keys of every stored object of one kind, in key order (see [`list`]).
pub(crate) fn keys_of(state: &State, kind: &KindInfo, namespace: Option<&str>) -> Vec<ObjectKey> {
    let filter = namespace.filter(|_| kind.namespaced);
    let wanted = |key: &&ObjectKey| {
        key.group == kind.group
            && key.kind == kind.kind
            && filter.is_none_or(|namespace| key.namespace == namespace)
    };
    let probe = ObjectKey::cluster_scoped(&kind.group, &kind.kind, "");
    if kind.group == CLUSTER_GROUP && kind.kind == MEMBER_CLUSTER {
        state
            .members()
            .keys()
            .map(|name| member_key(name))
            .collect()
    } else if kind.group == PLACEMENT_GROUP
        && (kind.kind == CLUSTER_RESOURCE_PLACEMENT || kind.kind == RESOURCE_PLACEMENT)
    {
        state.placements().keys().filter(wanted).cloned().collect()
    } else if staged::is_staged(&probe) {
        staged::keys(state)
            .into_iter()
            .filter(|k| wanted(&k))
            .collect()
    } else if eviction::is_eviction_kind(&kind.group, &kind.kind) {
        eviction::keys_of(state, &kind.kind)
    } else if overrides::is_override(&probe) {
        state.overrides().keys().filter(wanted).cloned().collect()
    } else if overrides::is_snapshot(&probe) {
        overrides::snapshot_keys(state, overrides::override_kind_of_snapshot(&kind.kind))
            .into_iter()
            .filter(|k| wanted(&k))
            .collect()
    } else {
        state.resources().keys().filter(wanted).cloned().collect()
    }
}

/// `metadata` as the API server returns it: user metadata plus what the hub assigned. Empty
/// labels and annotations are left out, and `resourceVersion` is a string, as in Kubernetes.
pub(crate) fn metadata(key: &ObjectKey, meta: &ObjectMeta) -> Value {
    let mut metadata = json::object([
        ("name", Value::from(key.name.as_str())),
        ("uid", Value::from(meta.uid.to_string())),
        (
            "resourceVersion",
            Value::from(meta.resource_version.to_string()),
        ),
        ("generation", Value::from(meta.generation)),
        (
            "creationTimestamp",
            Value::from(json::timestamp(meta.creation_timestamp)),
        ),
    ]);
    if !key.namespace.is_empty() {
        json::insert(
            &mut metadata,
            "namespace",
            Value::from(key.namespace.as_str()),
        );
    }
    if !meta.labels.is_empty() {
        json::insert(&mut metadata, "labels", json::string_map(&meta.labels));
    }
    if !meta.annotations.is_empty() {
        json::insert(
            &mut metadata,
            "annotations",
            json::string_map(&meta.annotations),
        );
    }
    metadata
}

/// The key a member cluster is stored under in object terms.
pub(crate) fn member_key(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(CLUSTER_GROUP, MEMBER_CLUSTER, name)
}

fn is_member_cluster(key: &ObjectKey) -> bool {
    key.group == CLUSTER_GROUP && key.kind == MEMBER_CLUSTER
}

fn is_placement(key: &ObjectKey) -> bool {
    key.group == PLACEMENT_GROUP
        && (key.kind == CLUSTER_RESOURCE_PLACEMENT || key.kind == RESOURCE_PLACEMENT)
}

/// A hub resource: its stored content (`data`, `spec`, …) merged back under the identity and
/// metadata. The hub does not act on these objects, so they carry no status of their own.
fn render_resource(key: &ObjectKey, resource: &Resource) -> Value {
    // The content was canonical JSON when stored; should it ever fail to parse, the object is
    // still shown with its identity rather than hidden.
    let content = serde_json::from_str::<Value>(&resource.content).unwrap_or(Value::Null);
    let mut object = match json::prune_nulls(content) {
        Value::Object(map) => Value::Object(map),
        _ => json::empty_object(),
    };
    json::insert(
        &mut object,
        "apiVersion",
        Value::from(resource.meta.api_version.as_str()),
    );
    json::insert(&mut object, "kind", Value::from(key.kind.as_str()));
    json::insert(&mut object, "metadata", metadata(key, &resource.meta));
    object
}

//! Overrides and their snapshots as KubeFleet shows them: a `ClusterResourceOverride` /
//! `ResourceOverride` with its spec, and one `ClusterResourceOverrideSnapshot` /
//! `ResourceOverrideSnapshot` per kept snapshot, named `<override>-<index>`, labelled with its
//! parent, its index and whether it is the latest, its spec under `overrideSpec`.
//!
//! `overrideHash` is KubeFleet's: the SHA-256 of the snapshot's spec as JSON, written in hex,
//! served as bytes (base64). Nothing in flotilla reads it (snapshots are told apart by index);
//! KubeFleet's CRD requires it.

use flotilla_core::State;
use flotilla_core::model::{
    CLUSTER_RESOURCE_OVERRIDE, ObjectKey, PLACEMENT_GROUP, RESOURCE_OVERRIDE,
};
use flotilla_core::query::overrides::{
    Override, OverrideSnapshot, parse_snapshot_name, snapshot_name,
};
use serde_json::Value;

use crate::json;
use crate::objects::metadata;

/// `ClusterResourceOverrideSnapshot`.
pub const CLUSTER_RESOURCE_OVERRIDE_SNAPSHOT: &str = "ClusterResourceOverrideSnapshot";
/// `ResourceOverrideSnapshot`.
pub const RESOURCE_OVERRIDE_SNAPSHOT: &str = "ResourceOverrideSnapshot";

/// Whether `key` names an override.
pub(crate) fn is_override(key: &ObjectKey) -> bool {
    key.group == PLACEMENT_GROUP
        && (key.kind == CLUSTER_RESOURCE_OVERRIDE || key.kind == RESOURCE_OVERRIDE)
}

/// Whether `key` names an override snapshot.
pub(crate) fn is_snapshot(key: &ObjectKey) -> bool {
    key.group == PLACEMENT_GROUP
        && (key.kind == CLUSTER_RESOURCE_OVERRIDE_SNAPSHOT
            || key.kind == RESOURCE_OVERRIDE_SNAPSHOT)
}

/// The override kind a snapshot kind belongs to.
fn parent_kind(snapshot_kind: &str) -> &'static str {
    if snapshot_kind == CLUSTER_RESOURCE_OVERRIDE_SNAPSHOT {
        CLUSTER_RESOURCE_OVERRIDE
    } else {
        RESOURCE_OVERRIDE
    }
}

/// The snapshot kind of an override kind.
fn snapshot_kind(override_kind: &str) -> &'static str {
    if override_kind == CLUSTER_RESOURCE_OVERRIDE {
        CLUSTER_RESOURCE_OVERRIDE_SNAPSHOT
    } else {
        RESOURCE_OVERRIDE_SNAPSHOT
    }
}

/// An override object.
pub(crate) fn render(key: &ObjectKey, stored: &Override) -> Value {
    json::object([
        ("apiVersion", Value::from(stored.meta.api_version.as_str())),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", metadata(key, &stored.meta)),
        ("spec", stored.spec.to_json(stored.kind)),
    ])
}

/// The snapshot `key` names, rendered; `None` if its override or that index is gone.
pub(crate) fn render_snapshot_key(state: &State, key: &ObjectKey) -> Option<Value> {
    let (parent, index) = parse_snapshot_name(&key.name)?;
    let parent_key = ObjectKey {
        kind: parent_kind(&key.kind).into(),
        name: parent.into(),
        ..key.clone()
    };
    let stored = state.overrides().get(&parent_key)?;
    Some(render_snapshot(
        &parent_key,
        stored,
        stored.snapshot(index)?,
    ))
}

fn render_snapshot(parent: &ObjectKey, stored: &Override, snapshot: &OverrideSnapshot) -> Value {
    let key = snapshot_key(parent, snapshot.index);
    let latest = stored.latest().is_some_and(|l| l.index == snapshot.index);
    let labels = json::object([
        (
            "kubernetes-fleet.io/is-latest-snapshot",
            Value::from(latest.to_string()),
        ),
        (
            "kubernetes-fleet.io/override-index",
            Value::from(snapshot.index.to_string()),
        ),
        (
            "kubernetes-fleet.io/parent-resource-override",
            Value::from(parent.name.as_str()),
        ),
    ]);
    let mut meta = stored.meta.clone();
    meta.labels.clear();
    meta.annotations.clear();
    meta.generation = 1;
    meta.creation_timestamp = snapshot.created;
    let mut metadata = metadata(&key, &meta);
    json::insert(&mut metadata, "labels", labels);
    json::object([
        ("apiVersion", Value::from(stored.meta.api_version.as_str())),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", metadata),
        ("spec", snapshot_spec(snapshot.spec.to_json(stored.kind))),
    ])
}

/// `{overrideHash, overrideSpec}`, the hash as KubeFleet's `resource.HashOf` makes it.
fn snapshot_spec(spec: Value) -> Value {
    use base64::Engine;
    use sha2::Digest;
    let digest = sha2::Sha256::digest(spec.to_string().as_bytes());
    let hash = base64::engine::general_purpose::STANDARD.encode(hex::encode(digest));
    json::object([("overrideHash", Value::from(hash)), ("overrideSpec", spec)])
}

fn snapshot_key(parent: &ObjectKey, index: u64) -> ObjectKey {
    ObjectKey {
        kind: snapshot_kind(&parent.kind).into(),
        name: snapshot_name(&parent.name, index).into(),
        ..parent.clone()
    }
}

/// The keys of one override's kept snapshots, oldest first.
pub(crate) fn snapshot_keys_of(state: &State, key: &ObjectKey) -> Vec<ObjectKey> {
    state.overrides().get(key).map_or_else(Vec::new, |stored| {
        stored
            .snapshots
            .iter()
            .map(|snapshot| snapshot_key(key, snapshot.index))
            .collect()
    })
}

/// The keys of every kept snapshot of the overrides of `override_kind`, in override key order,
/// oldest snapshot first.
pub(crate) fn snapshot_keys(state: &State, override_kind: &str) -> Vec<ObjectKey> {
    state
        .overrides()
        .iter()
        .filter(|(key, _)| key.kind == override_kind)
        .flat_map(|(key, stored)| {
            stored
                .snapshots
                .iter()
                .map(move |snapshot| snapshot_key(key, snapshot.index))
        })
        .collect()
}

/// The override kind whose snapshots `snapshot_kind` lists.
pub(crate) fn override_kind_of_snapshot(snapshot_kind: &str) -> &'static str {
    parent_kind(snapshot_kind)
}

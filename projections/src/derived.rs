//! The objects KubeFleet derives from a placement, found and named as KubeFleet names them:
//! scheduling policy snapshots, resource snapshots, bindings, the `Work` of each binding that
//! carries resources, and (for a `NamespaceAccessible` `ClusterResourcePlacement`) the
//! `ClusterResourcePlacementStatus` mirror.
//!
//! A `ClusterResourcePlacement`'s snapshots and bindings are cluster-scoped
//! (`ClusterSchedulingPolicySnapshot`, `ClusterResourceSnapshot`, `ClusterResourceBinding`); a
//! `ResourcePlacement`'s live in its namespace (`SchedulingPolicySnapshot`, `ResourceSnapshot`,
//! `ResourceBinding`). Works of either live in the target cluster's `fleet-member-<cluster>`
//! namespace.
//!
//! Guarantees: nothing here is stored; every derived object is recomputed from its placement, so
//! it can never disagree with it. Uids are derived from the placement's uid, the kind and the
//! name ([`derived_uid`]), so the same log gives the same uids on every replay. Each placement's
//! derived objects come in a fixed order ([`derived_of`]).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::condition::Condition;
use flotilla_core::model::{
    CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP, RESOURCE_PLACEMENT,
};
use flotilla_core::query::placement::{
    Binding, ClusterDecision, Placement, PolicySnapshot, ResourceSnapshot, SelectedResource,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::json;
use crate::{binding, placement_status, snapshots, work};

/// Label naming the parent placement (KubeFleet keeps the `CRP` spelling for RPs too).
pub(crate) const LABEL_PARENT: &str = "kubernetes-fleet.io/parent-CRP";
/// Label marking the latest policy snapshot or master resource snapshot.
pub(crate) const LABEL_IS_LATEST: &str = "kubernetes-fleet.io/is-latest-snapshot";
/// Label with a policy snapshot's index.
pub(crate) const LABEL_POLICY_INDEX: &str = "kubernetes-fleet.io/policy-index";
/// Label with a resource snapshot's index.
pub(crate) const LABEL_RESOURCE_INDEX: &str = "kubernetes-fleet.io/resource-index";

/// What a derived object is, whichever placement kind owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DerivedKind {
    /// `ClusterSchedulingPolicySnapshot` / `SchedulingPolicySnapshot`.
    PolicySnapshot,
    /// `ClusterResourceSnapshot` / `ResourceSnapshot`.
    ResourceSnapshot,
    /// `ClusterResourceBinding` / `ResourceBinding`.
    Binding,
    /// `ClusterResourcePlacementStatus` (CRP only).
    PlacementStatus,
    /// `Work`, in the target cluster's namespace (either placement kind).
    Work,
}

/// The kind owned by a `ClusterResourcePlacement`, then the one owned by a `ResourcePlacement`
/// (`Work` is the same kind for both; [`DerivedKind::parse`] reports it as CRP-owned, and the
/// lookups below take it from placements of either kind).
const KIND_NAMES: [(DerivedKind, &str, Option<&str>); 5] = [
    (
        DerivedKind::PolicySnapshot,
        "ClusterSchedulingPolicySnapshot",
        Some("SchedulingPolicySnapshot"),
    ),
    (
        DerivedKind::ResourceSnapshot,
        "ClusterResourceSnapshot",
        Some("ResourceSnapshot"),
    ),
    (
        DerivedKind::Binding,
        "ClusterResourceBinding",
        Some("ResourceBinding"),
    ),
    (
        DerivedKind::PlacementStatus,
        "ClusterResourcePlacementStatus",
        None,
    ),
    (DerivedKind::Work, work::WORK_KIND, Some(work::WORK_KIND)),
];

impl DerivedKind {
    /// The derived kind called `kind`, and whether a `ClusterResourcePlacement` owns it.
    pub(crate) fn parse(group: &str, kind: &str) -> Option<(Self, bool)> {
        if group != PLACEMENT_GROUP {
            return None;
        }
        KIND_NAMES
            .iter()
            .find_map(|(derived, cluster, namespaced)| {
                if *cluster == kind {
                    Some((*derived, true))
                } else if *namespaced == Some(kind) {
                    Some((*derived, false))
                } else {
                    None
                }
            })
    }

    /// The kind's name when a `ClusterResourcePlacement` (`true`) or a `ResourcePlacement` owns it.
    pub(crate) fn kind_name(self, by_cluster_placement: bool) -> &'static str {
        KIND_NAMES
            .iter()
            .find(|(derived, _, _)| *derived == self)
            .and_then(|(_, cluster, namespaced)| {
                if by_cluster_placement {
                    Some(*cluster)
                } else {
                    *namespaced
                }
            })
            .unwrap_or_default()
    }
}

/// The placement a derived object belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner<'a> {
    /// The placement's key.
    pub(crate) key: &'a ObjectKey,
    /// The placement.
    pub(crate) placement: &'a Placement,
}

impl Owner<'_> {
    /// Whether the owner is a `ClusterResourcePlacement`.
    pub(crate) fn is_cluster_placement(&self) -> bool {
        self.key.kind == CLUSTER_RESOURCE_PLACEMENT
    }
}

/// What a derived object is made from.
#[derive(Debug, Clone)]
pub(crate) enum Source<'a> {
    /// A policy snapshot.
    PolicySnapshot(&'a PolicySnapshot),
    /// One part of a resource snapshot: `part` 0 is the master.
    ResourceSnapshot {
        /// The snapshot.
        snapshot: &'a ResourceSnapshot,
        /// Which part.
        part: usize,
        /// Its resources.
        resources: &'a [SelectedResource],
        /// How many parts the snapshot has.
        parts: usize,
    },
    /// A binding (a value the bindings made, shared by the objects made from it).
    Binding(Arc<Binding>),
    /// The placement's status mirror.
    PlacementStatus,
    /// The work of a binding.
    Work(Arc<Binding>),
}

/// One derived object: its key, its owner and its source.
#[derive(Debug, Clone)]
pub(crate) struct DerivedObject<'a> {
    /// The object's key.
    pub(crate) key: ObjectKey,
    /// Its placement.
    pub(crate) owner: Owner<'a>,
    /// What it is made from.
    pub(crate) source: Source<'a>,
}

impl DerivedObject<'_> {
    /// Which derived kind this is.
    pub(crate) fn kind(&self) -> DerivedKind {
        match &self.source {
            Source::PolicySnapshot(_) => DerivedKind::PolicySnapshot,
            Source::ResourceSnapshot { .. } => DerivedKind::ResourceSnapshot,
            Source::Binding(_) => DerivedKind::Binding,
            Source::PlacementStatus => DerivedKind::PlacementStatus,
            Source::Work(_) => DerivedKind::Work,
        }
    }
}

/// Every object derived from one placement, in this order: policy snapshots (oldest first),
/// resource snapshots (oldest first; each master, then its sub-snapshots), bindings (by cluster
/// name), the works of the bindings that have one (by cluster name), then the status mirror when
/// there is one.
pub(crate) fn derived_of<'a>(
    state: &'a State,
    key: &'a ObjectKey,
    placement: &'a Placement,
) -> Vec<DerivedObject<'a>> {
    let owner = Owner { key, placement };
    let cluster_owned = owner.is_cluster_placement();
    let object_key = |kind: DerivedKind, name: String| ObjectKey {
        group: PLACEMENT_GROUP.into(),
        kind: kind.kind_name(cluster_owned).into(),
        namespace: key.namespace.clone(),
        name: name.into(),
    };
    let mut objects = Vec::new();
    for snapshot in &placement.policy_snapshots {
        objects.push(DerivedObject {
            key: object_key(
                DerivedKind::PolicySnapshot,
                policy_snapshot_name(&key.name, snapshot.index),
            ),
            owner,
            source: Source::PolicySnapshot(snapshot),
        });
    }
    for snapshot in &placement.resource_snapshots {
        let parts = snapshot.parts();
        let count = parts.len();
        for (part, resources) in parts.into_iter().enumerate() {
            let name = match part.checked_sub(1) {
                None => resource_snapshot_name(&key.name, snapshot.index),
                Some(subindex) => format!("{}-{}-{subindex}", key.name, snapshot.index),
            };
            objects.push(DerivedObject {
                key: object_key(DerivedKind::ResourceSnapshot, name),
                owner,
                source: Source::ResourceSnapshot {
                    snapshot,
                    part,
                    resources,
                    parts: count,
                },
            });
        }
    }
    let bindings: Vec<Arc<Binding>> = placement.bindings.values().map(Arc::new).collect();
    for binding in &bindings {
        objects.push(DerivedObject {
            key: object_key(DerivedKind::Binding, binding.name(&key.name)),
            owner,
            source: Source::Binding(binding.clone()),
        });
    }
    objects.extend(
        bindings
            .into_iter()
            .filter_map(|binding| work_object(state, owner, binding)),
    );
    if let Some(namespace) = placement_status::mirror_namespace(&owner) {
        objects.push(DerivedObject {
            key: ObjectKey {
                group: PLACEMENT_GROUP.into(),
                kind: DerivedKind::PlacementStatus.kind_name(true).into(),
                namespace: namespace.into(),
                name: key.name.clone(),
            },
            owner,
            source: Source::PlacementStatus,
        });
    }
    objects
}

/// The work of one binding, when it has one.
fn work_object<'a>(
    state: &State,
    owner: Owner<'a>,
    binding: Arc<Binding>,
) -> Option<DerivedObject<'a>> {
    work::exists(state, &owner, &binding).then(|| DerivedObject {
        key: work::key_of(owner.key, &binding.cluster),
        owner,
        source: Source::Work(binding),
    })
}

/// Works straight from the bindings, without deriving anything else: every work, or (with
/// `namespace`) only those in that cluster namespace, in key order. A cluster's works come from
/// one binding lookup per placement.
fn works<'a>(state: &'a State, namespace: Option<&str>) -> Vec<DerivedObject<'a>> {
    let cluster = namespace.map(work::cluster_of);
    let mut objects: Vec<DerivedObject<'a>> = state
        .placements()
        .iter()
        .filter(|(owner, _)| owned_by(owner, DerivedKind::Work, true))
        .flat_map(|(key, placement)| {
            let owner = Owner { key, placement };
            let bindings: Vec<Arc<Binding>> = match cluster {
                None => placement.bindings.values().map(Arc::new).collect(),
                Some(Some(cluster)) => placement
                    .bindings
                    .get(cluster)
                    .map(Arc::new)
                    .into_iter()
                    .collect(),
                Some(None) => Vec::new(),
            };
            bindings
                .into_iter()
                .filter_map(move |binding| work_object(state, owner, binding))
        })
        .collect();
    objects.sort_by(|a, b| a.key.cmp(&b.key));
    objects
}

/// `<placement>-<index>` (KubeFleet's `PolicySnapshotNameFmt`).
pub(crate) fn policy_snapshot_name(placement: &str, index: u64) -> String {
    format!("{placement}-{index}")
}

/// `<placement>-<index>-snapshot` (KubeFleet's `ResourceSnapshotNameFmt`), the master's name.
pub(crate) fn resource_snapshot_name(placement: &str, index: u64) -> String {
    format!("{placement}-{index}-snapshot")
}

/// The placements that may own an object of `kind` called `key`: placements of the owning kind
/// in the key's namespace, narrowed for snapshots to those whose name the key's name starts
/// with (a mirror: the placement of that very name). Binding names start with a *cut* placement
/// name (core's choice), so bindings are not narrowed.
fn candidate_owners<'a>(
    state: &'a State,
    key: &'a ObjectKey,
    kind: DerivedKind,
    cluster_owned: bool,
) -> impl Iterator<Item = (&'a ObjectKey, &'a Placement)> {
    state.placements().iter().filter(move |(owner, _)| {
        if !owned_by(owner, kind, cluster_owned) {
            return false;
        }
        match kind {
            DerivedKind::PlacementStatus => owner.name == key.name,
            DerivedKind::Work => work::name_of(owner) == key.name,
            DerivedKind::Binding => owner.namespace == key.namespace,
            DerivedKind::PolicySnapshot | DerivedKind::ResourceSnapshot => {
                owner.namespace == key.namespace
                    && key
                        .name
                        .strip_prefix(owner.name.as_str())
                        .is_some_and(|rest| rest.starts_with('-'))
            }
        }
    })
}

/// The derived object stored under `key`, if `key` names a derived kind and such an object
/// exists. Should two placements derive the same name, the first placement in key order wins.
pub(crate) fn find<'a>(state: &'a State, key: &'a ObjectKey) -> Option<DerivedObject<'a>> {
    let (kind, cluster_owned) = DerivedKind::parse(&key.group, &key.kind)?;
    if kind == DerivedKind::Work {
        return works(state, Some(&key.namespace))
            .into_iter()
            .find(|object| object.key == *key);
    }
    candidate_owners(state, key, kind, cluster_owned).find_map(|(owner, placement)| {
        derived_of(state, owner, placement)
            .into_iter()
            .find(|object| object.key == *key)
    })
}

/// Every derived object of one kind, in key order; `namespace` filters by namespace (the
/// cluster-scoped kinds are never filtered, as kubectl ignores `-n` for them).
pub(crate) fn all_of_kind<'a>(
    state: &'a State,
    kind: DerivedKind,
    cluster_owned: bool,
    namespace: Option<&str>,
) -> Vec<DerivedObject<'a>> {
    if kind == DerivedKind::Work {
        return works(state, namespace);
    }
    let namespaced = kind == DerivedKind::PlacementStatus || !cluster_owned;
    let filter = namespace.filter(|_| namespaced);
    let mut objects: Vec<DerivedObject<'a>> = state
        .placements()
        .iter()
        .filter(|(owner, _)| owned_by(owner, kind, cluster_owned))
        .flat_map(|(owner, placement)| derived_of(state, owner, placement))
        .filter(|object| object.kind() == kind)
        .filter(|object| filter.is_none_or(|namespace| object.key.namespace == namespace))
        .collect();
    objects.sort_by(|a, b| a.key.cmp(&b.key));
    objects
}

/// Whether a placement under `owner` can own objects of `kind` (`cluster_owned` as
/// [`DerivedKind::parse`] reported it): a placement of the owning kind; for works, any placement.
fn owned_by(owner: &ObjectKey, kind: DerivedKind, cluster_owned: bool) -> bool {
    let owner_kind = if cluster_owned {
        CLUSTER_RESOURCE_PLACEMENT
    } else {
        RESOURCE_PLACEMENT
    };
    owner.group == PLACEMENT_GROUP
        && (owner.kind == owner_kind
            || (kind == DerivedKind::Work && owner.kind == RESOURCE_PLACEMENT))
}

/// One derived object in KubeFleet's shape (keys not yet sorted).
pub(crate) fn render(state: &State, object: &DerivedObject<'_>) -> Value {
    match &object.source {
        Source::PolicySnapshot(snapshot) => snapshots::policy_snapshot(object, snapshot),
        Source::ResourceSnapshot {
            snapshot,
            part,
            resources,
            parts,
        } => snapshots::resource_snapshot(object, snapshot, *part, resources, *parts),
        Source::Binding(binding) => binding::render(state, object, binding),
        Source::PlacementStatus => placement_status::mirror(state, object),
        Source::Work(binding) => work::render(state, object, binding),
    }
}

/// A uid for an object the hub derives: SHA-256 of `<owner uid>/<kind>/<name>`, its first 16
/// bytes shaped as an RFC 9562 version-8 UUID. KubeFleet's are random; these are stable across
/// replays and machines, and distinct for distinct objects.
pub(crate) fn derived_uid(
    owner_uid: &(impl std::fmt::Display + ?Sized),
    kind: &str,
    name: &str,
) -> String {
    let digest = Sha256::digest(format!("{owner_uid}/{kind}/{name}").as_bytes());
    let mut bytes = [0_u8; 16];
    for (slot, byte) in bytes.iter_mut().zip(digest.iter()) {
        *slot = *byte;
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The `apiVersion` of the objects a placement derives. KubeFleet serves them in v1 and v1beta1
/// alike; we mirror the version the placement was applied in (v1 for a v1 placement), so that a
/// v1beta1 user sees v1beta1 objects, as the seed's v1beta1 binding sample shows.
pub(crate) fn api_version(owner: &Owner<'_>) -> String {
    owner.placement.meta.api_version.to_string()
}

/// `metadata` of a derived object: name, namespace, a derived uid, the owner's resourceVersion
/// (derived objects change only when their placement's state does), `generation` and
/// `creationTimestamp`. Callers add labels, annotations, owner references and finalizers.
pub(crate) fn metadata(
    object: &DerivedObject<'_>,
    generation: u64,
    created: DateTime<Utc>,
) -> Value {
    let meta = &object.owner.placement.meta;
    let mut metadata = json::object([
        ("name", Value::from(object.key.name.as_str())),
        (
            "uid",
            Value::from(derived_uid(&meta.uid, &object.key.kind, &object.key.name)),
        ),
        (
            "resourceVersion",
            Value::from(meta.resource_version.to_string()),
        ),
        ("generation", Value::from(generation)),
        ("creationTimestamp", Value::from(json::timestamp(created))),
    ]);
    if !object.key.namespace.is_empty() {
        json::insert(
            &mut metadata,
            "namespace",
            Value::from(object.key.namespace.as_str()),
        );
    }
    metadata
}

/// `ownerReferences`: the placement, as its controller (`SetControllerReference`).
pub(crate) fn owner_references(owner: &Owner<'_>) -> Value {
    Value::Array(vec![json::object([
        ("apiVersion", Value::from(api_version(owner))),
        ("kind", Value::from(owner.key.kind.as_str())),
        ("name", Value::from(owner.key.name.as_str())),
        ("uid", Value::from(owner.placement.meta.uid.to_string())),
        ("controller", Value::Bool(true)),
        ("blockOwnerDeletion", Value::Bool(true)),
    ])])
}

/// A `metav1.Condition`.
pub(crate) fn condition(condition: &Condition) -> Value {
    metav1_condition(
        &condition.condition_type,
        condition.status.as_str(),
        &condition.reason,
        &condition.message,
        condition.last_transition_time,
        condition.observed_generation,
    )
}

/// A `metav1.Condition` from its fields, for the conditions computed at render time rather
/// than stored.
pub(crate) fn metav1_condition(
    condition_type: &str,
    status: &str,
    reason: &str,
    message: &str,
    last_transition: DateTime<Utc>,
    observed_generation: u64,
) -> Value {
    json::object([
        ("type", Value::from(condition_type)),
        ("status", Value::from(status)),
        ("reason", Value::from(reason)),
        ("message", Value::from(message)),
        (
            "lastTransitionTime",
            Value::from(json::timestamp(last_transition)),
        ),
        ("observedGeneration", Value::from(observed_generation)),
    ])
}

/// A `ClusterDecision`: the topology spread score is serialized as `priorityScore`, as
/// KubeFleet's API names it, and `clusterScore` is left out when the cluster was not scored.
pub(crate) fn decision(decision: &ClusterDecision) -> Value {
    let mut value = json::object([
        ("clusterName", Value::from(decision.cluster.as_str())),
        ("selected", Value::Bool(decision.selected)),
        ("reason", Value::from(decision.reason.as_str())),
    ]);
    if let Some(score) = decision.score {
        let score = json::object([
            ("affinityScore", Value::from(score.affinity)),
            ("priorityScore", Value::from(score.topology_spread)),
        ]);
        json::insert(&mut value, "clusterScore", score);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_uids_are_version_8_uuids_that_differ_by_input() {
        let uid = derived_uid("owner", "ClusterResourceBinding", "crp-1-a-12345678");
        assert_eq!(uid.len(), 36);
        assert_eq!(uid.as_bytes()[14], b'8');
        assert!(matches!(uid.as_bytes()[19], b'8' | b'9' | b'a' | b'b'));
        assert_eq!(
            uid,
            derived_uid("owner", "ClusterResourceBinding", "crp-1-a-12345678")
        );
        assert_ne!(
            uid,
            derived_uid("owner", "ClusterResourceSnapshot", "crp-1-a-12345678")
        );
    }

    #[test]
    fn kinds_parse_to_their_owner_scope() {
        let parse = |kind| DerivedKind::parse(PLACEMENT_GROUP, kind);
        assert_eq!(
            parse("ClusterResourceBinding"),
            Some((DerivedKind::Binding, true))
        );
        assert_eq!(
            parse("ResourceSnapshot"),
            Some((DerivedKind::ResourceSnapshot, false))
        );
        assert_eq!(
            parse("ClusterResourcePlacementStatus"),
            Some((DerivedKind::PlacementStatus, true))
        );
        assert_eq!(parse("ClusterResourcePlacement"), None);
        assert_eq!(DerivedKind::parse("", "ResourceBinding"), None);
    }
}

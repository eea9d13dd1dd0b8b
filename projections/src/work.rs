//! `Work` objects in KubeFleet's shape (`apis/placement/v1beta1/work_types.go`; the work
//! generator, `pkg/controllers/workgenerator/controller.go`): what each member cluster is asked
//! to apply, one per binding that carries resources.
//!
//! - **Which bindings**: a `Bound` binding, and an `Unscheduled` one that was bound (KubeFleet's
//!   work generator treats an unscheduled binding as bound until the rollout deletes it, so its
//!   resources stay on the cluster meanwhile). A `Scheduled` binding has no work.
//! - **Name and namespace**: `<placement>-work` (`FirstWorkNameFmt`) for a
//!   `ClusterResourcePlacement`, `<namespace>.<placement>-work` (`WorkNameBaseFmt` then
//!   `FirstWorkNameFmt`) for a `ResourcePlacement`, in `fleet-member-<cluster>`.
//! - **Labels**: `parent-CRP` (the placement's name), `parent-resource-binding`,
//!   `parent-resource-snapshot-index`, and `parent-placement-namespace` for a `ResourcePlacement`.
//!   **Annotations**: `parent-resource-snapshot-name` and the SHA-256 of the binding's cluster
//!   resource override and resource override snapshot lists, as Go's `json.Marshal` writes them
//!   (`null` when empty). **Owner**: the binding (`blockOwnerDeletion`, not controller).
//! - **Spec**: `workload.manifests`, the binding's resource snapshot rendered for the cluster by
//!   the override snapshots the binding was bound with (`render_with_snapshots`), each manifest
//!   parsed from its canonical JSON; and
//!   `applyStrategy`, the placement's (the rollout copies it onto the binding).
//! - **Status**: `Applied` and `Available` from the member's latest report, only when it is about
//!   this work's resource index, with the seed-era work applier's reasons and messages
//!   (`WorkAppliedCompleted` "Work is applied successfully", `WorkAppliedFailed` with the
//!   member's message, `WorkAvailable` "Work is available now", `WorkNotTrackable` "Work's
//!   availability is not trackable", `WorkNotAvailableYet` / `WorkAvailabilityUnknown` with the
//!   member's message). `Applied` dates from the report, `Available` from when the availability
//!   was first reported as it is. Under `ReportDiff`, `DiffReported` instead
//!   (`AllManifestsDiffReported` "All the specified manifests have reported diff", or
//!   `SomeManifestsHaveNotReportedDiff` with the member's message), dated from the report.
//!
//! - **Envelopes** (`flotilla_core::query::placement::envelope`): the wrapper is not placed; the objects
//!   it holds take its place among the manifests, overridden like any other. One that cannot be
//!   unwrapped leaves the binding without a work, its `WorkSynchronized` condition `False`
//!   (`SyncWorkFailed`), as KubeFleet's work generator reports it.
//!
//! Simplifications (the state does not keep what they would need): one work per binding even
//! when the resource snapshot has sub-snapshots or envelopes (KubeFleet makes one per
//! sub-snapshot, `<placement>-<subindex>`, and one per envelope, `<placement>-envelope-<hash>`;
//! flotilla's member reports on one work per placement, so an envelope's objects ride in the
//! binding's work); no `manifestConditions`;
//! `metadata.generation` is the binding's generation less one (the binding's first bind creates
//! the work, each later spec change of the binding updates it); `creationTimestamp` is the
//! binding's. A binding whose resource snapshot is gone, or whose overrides fail, has no work
//! (its binding status says why). A work whose manifests are all gone (nothing selected, or
//! everything deleted by overrides) is still shown, empty: KubeFleet would delete it, but core's
//! rollout waits for the member's report on every bound binding, so the member must see it.

use std::collections::BTreeMap;
use std::rc::Rc;

use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::model::{CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP};
use flotilla_core::query::overrides::{OverrideError, RenderedWork, render_with_snapshots};
use flotilla_core::query::placement::{Binding, BindingState, OverrideSnapshots};
use flotilla_core::query::rollout::readiness::ApplyMode;
use flotilla_core::state::WorkStatus;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::derived::{self, DerivedKind, DerivedObject, LABEL_PARENT, Owner};
use crate::{json, placement, progress};

/// The kind name.
pub(crate) const WORK_KIND: &str = "Work";
/// Works are served in v1beta1.
pub(crate) const WORK_API_VERSION: &str = "placement.kubernetes-fleet.io/v1beta1";
/// The prefix of a member cluster's namespace on the hub (`utils.NamespaceNameFormat`).
const MEMBER_NAMESPACE_PREFIX: &str = "fleet-member-";
/// Label: the binding that generated the work.
const LABEL_PARENT_BINDING: &str = "kubernetes-fleet.io/parent-resource-binding";
/// Label: the namespace of the `ResourcePlacement` that generated the work.
const LABEL_PARENT_NAMESPACE: &str = "kubernetes-fleet.io/parent-placement-namespace";
/// Label: the resource index the work carries.
const LABEL_PARENT_INDEX: &str = "kubernetes-fleet.io/parent-resource-snapshot-index";
/// Annotation: the master resource snapshot the work carries.
const ANNOTATION_SNAPSHOT_NAME: &str = "kubernetes-fleet.io/parent-resource-snapshot-name";
/// Annotation: hash of the binding's cluster resource override snapshot list.
const ANNOTATION_CRO_HASH: &str =
    "kubernetes-fleet.io/parent-cluster-resource-override-snapshot-hash";
/// Annotation: hash of the binding's resource override snapshot list.
const ANNOTATION_RO_HASH: &str = "kubernetes-fleet.io/parent-resource-override-snapshot-hash";
/// The work generator's error when a binding's resource snapshot no longer exists.
pub(crate) const SNAPSHOT_NOT_FOUND: &str = "the master resource snapshot is not found";

/// What the hub knows about one binding's work.
pub(crate) struct WorkFacts<'a> {
    /// The work's name (one for all of a placement's works).
    pub(crate) name: Rc<str>,
    /// The resource index it carries.
    pub(crate) index: u64,
    /// The manifests for the cluster, or why they could not be rendered (shared by the
    /// bindings that render alike, see [`Renders`]).
    pub(crate) rendered: Rc<Result<RenderedWork, RenderError>>,
    /// While overrides fail on the binding: the resource index and manifests of the last work
    /// that rendered, which the cluster keeps (the Work object shows it).
    pub(crate) kept: Option<(u64, RenderedWork)>,
    /// The member's latest report, when it is about this resource index.
    pub(crate) report: Option<&'a WorkStatus>,
}

/// What one placement's works share: its work name, and the works already rendered for its
/// bindings, by resource index. A binding without override snapshots gets its resource
/// snapshot's manifests as they are (envelopes unwrapped), whatever its cluster, so the
/// bindings that carry the same snapshot share one rendering: a placement over a whole fleet
/// renders its work once, not once per cluster.
#[derive(Default)]
pub(crate) struct Renders {
    by_index: BTreeMap<u64, Rc<Result<RenderedWork, RenderError>>>,
    /// The placement's work name.
    name: Option<Rc<str>>,
}

/// Why a work could not be rendered.
pub(crate) enum RenderError {
    /// The binding's resource snapshot is gone.
    SnapshotNotFound,
    /// An override failed (core's message).
    Override(String),
    /// An envelope's content cannot be placed (core's message); whether the binding has
    /// overrides, which KubeFleet still reports as applied.
    Envelope {
        /// Core's message, naming the envelope and entry.
        message: String,
        /// Whether the binding carries override snapshots.
        overridden: bool,
    },
}

impl RenderError {
    /// The message KubeFleet puts after "Failed to apply the override rules on the resources: ".
    pub(crate) fn message(&self) -> &str {
        match self {
            RenderError::SnapshotNotFound => SNAPSHOT_NOT_FOUND,
            RenderError::Override(message) | RenderError::Envelope { message, .. } => message,
        }
    }
}

/// `fleet-member-<cluster>`.
pub(crate) fn namespace_of(cluster: &str) -> String {
    format!("{MEMBER_NAMESPACE_PREFIX}{cluster}")
}

/// The cluster whose namespace `fleet-member-<cluster>` is; `None` for any other namespace.
pub(crate) fn cluster_of(namespace: &str) -> Option<&str> {
    namespace
        .strip_prefix(MEMBER_NAMESPACE_PREFIX)
        .filter(|cluster| !cluster.is_empty())
}

/// `<placement>-work`, or `<namespace>.<placement>-work` for a `ResourcePlacement`.
pub(crate) fn name_of(placement: &ObjectKey) -> String {
    if placement.kind == CLUSTER_RESOURCE_PLACEMENT {
        format!("{}-work", placement.name)
    } else {
        format!("{}.{}-work", placement.namespace, placement.name)
    }
}

/// Whether the binding carries resources to its cluster (and so has a work).
pub(crate) fn carries_resources(binding: &Binding) -> bool {
    binding.state != BindingState::Scheduled && binding.resource_index.is_some()
}

/// The facts of a binding's work; `None` when the binding carries no resources.
pub(crate) fn facts<'a>(
    state: &'a State,
    owner: &Owner<'a>,
    binding: &'a Binding,
) -> Option<WorkFacts<'a>> {
    facts_sharing(state, owner, binding, &mut Renders::default())
}

/// [`facts`], taking the rendering from `renders` where the binding's cannot differ from it.
pub(crate) fn facts_sharing<'a>(
    state: &'a State,
    owner: &Owner<'a>,
    binding: &'a Binding,
    renders: &mut Renders,
) -> Option<WorkFacts<'a>> {
    if !carries_resources(binding) {
        return None;
    }
    let index = binding.resource_index?;
    let (cluster_overrides, resource_overrides) = &binding.override_snapshots;
    let shared = cluster_overrides.is_empty()
        && resource_overrides.is_empty()
        && state.members().contains_key(binding.cluster.as_str());
    let render = || {
        Rc::new(render_work(
            state,
            owner,
            binding,
            index,
            &binding.override_snapshots,
        ))
    };
    let rendered = if shared {
        Rc::clone(renders.by_index.entry(index).or_insert_with(render))
    } else {
        render()
    };
    // While overrides fail on the binding, its cluster keeps the last work that rendered.
    let kept = match (&*rendered, binding.override_failure.as_deref()) {
        (Err(_), Some(failure)) => failure.kept.as_ref().and_then(|work| {
            render_work(
                state,
                owner,
                binding,
                work.resource_index,
                &work.override_snapshots,
            )
            .ok()
            .map(|rendered| (work.resource_index, rendered))
        }),
        _ => None,
    };
    let report = binding
        .report
        .as_ref()
        .filter(|report| report.resource_index == index);
    Some(WorkFacts {
        name: Rc::clone(
            renders
                .name
                .get_or_insert_with(|| name_of(owner.key).into()),
        ),
        index,
        rendered,
        kept,
        report,
    })
}

/// The placement's resource snapshot `index` rendered for the binding's cluster with these
/// override snapshots.
fn render_work(
    state: &State,
    owner: &Owner<'_>,
    binding: &Binding,
    index: u64,
    (cluster_overrides, resource_overrides): &OverrideSnapshots,
) -> Result<RenderedWork, RenderError> {
    let snapshot = owner
        .placement
        .resource_snapshots
        .iter()
        .find(|snapshot| snapshot.index == index)
        .ok_or(RenderError::SnapshotNotFound)?;
    render_with_snapshots(
        state,
        &snapshot.resources,
        &binding.cluster,
        cluster_overrides,
        resource_overrides,
    )
    .map_err(|error| match error {
        OverrideError::Envelope(envelope) => RenderError::Envelope {
            message: envelope.to_string(),
            overridden: !cluster_overrides.is_empty() || !resource_overrides.is_empty(),
        },
        other => RenderError::Override(other.to_string()),
    })
}

/// Whether the binding's work exists (it carries resources and they rendered, or its cluster
/// keeps an earlier work while overrides fail).
pub(crate) fn exists(state: &State, owner: &Owner<'_>, binding: &Binding) -> bool {
    facts(state, owner, binding).is_some_and(|facts| facts.rendered.is_ok() || facts.kept.is_some())
}

/// Every work in the cluster's namespace (`fleet-member-<cluster>`), in placement key order:
/// what `flotilla get work --cluster C` shows and what the cluster's member agent applies.
#[must_use]
pub fn works_for_cluster(state: &State, cluster: &str) -> Vec<Value> {
    let namespace = namespace_of(cluster);
    derived::all_of_kind(state, DerivedKind::Work, true, Some(&namespace))
        .iter()
        .map(|object| json::canonical(derived::render(state, object)))
        .collect()
}

/// A work's labels: its placement, binding and resource index, and a `ResourcePlacement`'s
/// namespace.
fn labels(owner: &Owner<'_>, binding: &Binding, index: u64) -> Vec<(&'static str, String)> {
    let mut labels = vec![
        (LABEL_PARENT, owner.key.name.to_string()),
        (LABEL_PARENT_BINDING, binding.name(&owner.key.name)),
        (LABEL_PARENT_INDEX, index.to_string()),
    ];
    if !owner.is_cluster_placement() {
        labels.push((LABEL_PARENT_NAMESPACE, owner.key.namespace.to_string()));
    }
    labels
}

/// A work's annotations: the resource snapshot it was rendered from and the hashes of the
/// override snapshots applied.
fn annotations(
    owner: &Owner<'_>,
    index: u64,
    rendered: &RenderedWork,
) -> [(&'static str, String); 3] {
    [
        (
            ANNOTATION_SNAPSHOT_NAME,
            derived::resource_snapshot_name(&owner.key.name, index),
        ),
        (
            ANNOTATION_CRO_HASH,
            list_hash(&cluster_override_list(&rendered.cluster_resource_overrides)),
        ),
        (
            ANNOTATION_RO_HASH,
            list_hash(&override_list(&rendered.resource_overrides)),
        ),
    ]
}

/// Every work of every member cluster, with its cluster, in work key order: what the hub
/// publishes for agents that follow their works on NATS.
#[must_use]
pub fn all_works(state: &State) -> Vec<(String, Value)> {
    derived::all_of_kind(state, DerivedKind::Work, true, None)
        .iter()
        .filter_map(|object| {
            let cluster = cluster_of(&object.key.namespace)?.to_owned();
            Some((cluster, json::canonical(derived::render(state, object))))
        })
        .collect()
}

/// One work object; `{}` for a binding without one (callers only ask for existing works).
pub(crate) fn render(state: &State, object: &DerivedObject<'_>, binding: &Binding) -> Value {
    let owner = &object.owner;
    let Some(facts) = facts(state, owner, binding) else {
        return json::empty_object();
    };
    let (index, rendered) = match (&*facts.rendered, &facts.kept) {
        (Ok(rendered), _) => (facts.index, rendered),
        (Err(_), Some((index, kept))) => (*index, kept),
        (Err(_), None) => return json::empty_object(),
    };
    let generation = generation(binding);
    let mut metadata = derived::metadata(object, generation, binding.created);
    // Works of one placement share a name across cluster namespaces: the uid covers both.
    let uid = derived::derived_uid(
        &owner.placement.meta.uid,
        WORK_KIND,
        &format!("{}/{}", object.key.namespace, object.key.name),
    );
    json::insert(&mut metadata, "uid", Value::from(uid));
    json::insert_labels_and_owners(
        &mut metadata,
        &labels(owner, binding, index),
        &annotations(owner, index, rendered),
        Value::Array(vec![binding_reference(owner, binding)]),
    );
    let manifests = json::manifest_list(rendered.manifests.iter().map(String::as_str));
    let spec = json::object([
        ("workload", json::object([("manifests", manifests)])),
        (
            "applyStrategy",
            placement::apply_strategy(&owner.placement.spec.strategy.apply_strategy),
        ),
    ]);
    let mut status = json::empty_object();
    let mode = ApplyMode::of(owner.placement);
    let conditions = match facts.report {
        Some(report) if mode == ApplyMode::ReportDiff => diff_reported(report, generation),
        report => conditions(report, generation),
    };
    if !conditions.is_empty() {
        json::insert(&mut status, "conditions", Value::Array(conditions));
    }
    json::object([
        ("apiVersion", Value::from(WORK_API_VERSION)),
        ("kind", Value::from(WORK_KIND)),
        ("metadata", metadata),
        ("spec", spec),
        ("status", status),
    ])
}

/// The work's generation: created by the binding's first bind (binding generation 2), updated
/// by each later spec change of the binding.
fn generation(binding: &Binding) -> u64 {
    binding.generation.saturating_sub(1).max(1)
}

/// The binding as the work's owner (KubeFleet sets `blockOwnerDeletion` only).
fn binding_reference(owner: &Owner<'_>, binding: &Binding) -> Value {
    let kind = DerivedKind::Binding.kind_name(owner.is_cluster_placement());
    let name = binding.name(&owner.key.name);
    json::object([
        ("apiVersion", Value::from(WORK_API_VERSION)),
        ("kind", Value::from(kind)),
        ("name", Value::from(name.as_str())),
        (
            "uid",
            Value::from(derived::derived_uid(&owner.placement.meta.uid, kind, &name)),
        ),
        ("blockOwnerDeletion", Value::Bool(true)),
    ])
}

/// Cluster resource override snapshot names, as a binding's `clusterResourceOverrideSnapshots`
/// lists them (`null` when there are none).
pub(crate) fn cluster_override_list(names: &[String]) -> Value {
    if names.is_empty() {
        return Value::Null;
    }
    Value::Array(
        names
            .iter()
            .map(|name| Value::from(name.as_str()))
            .collect(),
    )
}

/// Resource override snapshots `(namespace, name)`, as a binding's `resourceOverrideSnapshots`
/// lists them (`{name, namespace}` each; `null` when there are none).
pub(crate) fn override_list(snapshots: &[(String, String)]) -> Value {
    if snapshots.is_empty() {
        return Value::Null;
    }
    Value::Array(
        snapshots
            .iter()
            .map(|(namespace, name)| {
                json::object([
                    ("name", Value::from(name.as_str())),
                    ("namespace", Value::from(namespace.as_str())),
                ])
            })
            .collect(),
    )
}

/// KubeFleet's `HashOf`: SHA-256 (lower-case hex) of Go's JSON of the value. serde_json writes
/// these lists exactly as Go does (no spaces; struct fields in declaration order, which for
/// `{name, namespace}` is also key order).
fn list_hash(list: &Value) -> String {
    let digest = Sha256::digest(list.to_string().as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `Applied` and `Available` from the member's report on this resource index.
fn conditions(report: Option<&WorkStatus>, generation: u64) -> Vec<Value> {
    let Some(report) = report else {
        return Vec::new();
    };
    let condition = |kind: &str, status: ConditionStatus, reason: &str, message: &str, since| {
        progress::condition_json(kind, status, reason, message, since, generation)
    };
    match report.applied {
        None => Vec::new(),
        Some(false) => vec![
            condition(
                "Applied",
                ConditionStatus::False,
                "WorkAppliedFailed",
                report.message(),
                report.reported_at,
            ),
            condition(
                "Available",
                ConditionStatus::Unknown,
                "WorkAppliedFailed",
                "",
                report.reported_at,
            ),
        ],
        Some(true) => {
            let (status, reason, message) = match report.available {
                None => (
                    ConditionStatus::Unknown,
                    "WorkAvailabilityUnknown",
                    report.message(),
                ),
                Some(false) => (
                    ConditionStatus::False,
                    "WorkNotAvailableYet",
                    report.message(),
                ),
                Some(true) if report.trackable => (
                    ConditionStatus::True,
                    "WorkAvailable",
                    "Work is available now",
                ),
                Some(true) => (
                    ConditionStatus::True,
                    "WorkNotTrackable",
                    "Work's availability is not trackable",
                ),
            };
            vec![
                condition(
                    "Applied",
                    ConditionStatus::True,
                    "WorkAppliedCompleted",
                    "Work is applied successfully",
                    report.reported_at,
                ),
                condition("Available", status, reason, message, report.available_since),
            ]
        }
    }
}

/// `DiffReported` from a `ReportDiff` member's report (the work applier's texts; the member's
/// message stands in for its manifest counts).
fn diff_reported(report: &WorkStatus, generation: u64) -> Vec<Value> {
    let (status, reason, message) = match report.diff_reported {
        None => return Vec::new(),
        Some(true) => (
            ConditionStatus::True,
            "AllManifestsDiffReported",
            "All the specified manifests have reported diff",
        ),
        Some(false) => (
            ConditionStatus::False,
            "SomeManifestsHaveNotReportedDiff",
            report.message(),
        ),
    };
    vec![progress::condition_json(
        "DiffReported",
        status,
        reason,
        message,
        report.reported_at,
        generation,
    )]
}

/// The key of a binding's work.
pub(crate) fn key_of(placement: &ObjectKey, cluster: &str) -> ObjectKey {
    ObjectKey {
        group: PLACEMENT_GROUP.into(),
        kind: WORK_KIND.into(),
        namespace: namespace_of(cluster).into(),
        name: name_of(placement).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_override_list_hashes_as_go_null() {
        // sha256("null"), as KubeFleet annotates a work without overrides.
        assert_eq!(
            list_hash(&Value::Null),
            "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"
        );
    }

    #[test]
    fn resource_placement_works_carry_the_namespace_in_their_name() {
        let mut key =
            ObjectKey::cluster_scoped(PLACEMENT_GROUP, CLUSTER_RESOURCE_PLACEMENT, "crp-1");
        assert_eq!(name_of(&key), "crp-1-work");
        key.kind = "ResourcePlacement".into();
        key.namespace = "team-a".into();
        assert_eq!(name_of(&key), "team-a.crp-1-work");
    }
}

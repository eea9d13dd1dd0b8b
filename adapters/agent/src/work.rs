//! A Work as the agent sees it: read from the hub's Kubernetes API (`projections/src/work.rs`
//! renders it), reduced to what an applier needs — the work's name, the placement it comes from,
//! the resource index it carries, its manifests, its apply strategy (`spec.applyStrategy`,
//! which only the `kube` applier acts on) and the override snapshots it was rendered with (the
//! agent's notion of what content a report is about).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Label: the placement that generated the work.
pub const LABEL_PARENT: &str = "kubernetes-fleet.io/parent-CRP";
/// Label: the resource index the work carries.
pub const LABEL_INDEX: &str = "kubernetes-fleet.io/parent-resource-snapshot-index";
/// Label: the namespace of a `ResourcePlacement`.
pub const LABEL_NAMESPACE: &str = "kubernetes-fleet.io/parent-placement-namespace";
/// Annotation: hash of the cluster resource override snapshots the work was rendered with.
pub const ANNOTATION_CRO_HASH: &str =
    "kubernetes-fleet.io/parent-cluster-resource-override-snapshot-hash";
/// Annotation: hash of the resource override snapshots the work was rendered with.
pub const ANNOTATION_RO_HASH: &str = "kubernetes-fleet.io/parent-resource-override-snapshot-hash";
/// Manifests per work the agent accepts; a work with more is refused whole.
pub const MANIFESTS_PER_WORK_MAX: usize = 10_000;

/// Where a work's objects belong: its name and its placement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WorkTarget {
    /// The Work's name on the hub.
    pub name: String,
    /// The placement's name (`parent-CRP`).
    pub placement: String,
    /// The namespace of a `ResourcePlacement`; `None` for a cluster-scoped placement.
    pub namespace: Option<String>,
}

impl WorkTarget {
    /// `placement`, or `namespace_placement` for a `ResourcePlacement` (a directory name).
    #[must_use]
    pub fn directory(&self) -> String {
        match &self.namespace {
            Some(namespace) => format!("{namespace}_{}", self.placement),
            None => self.placement.clone(),
        }
    }
}

/// One desired Work.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredWork {
    /// Name and placement.
    pub target: WorkTarget,
    /// The resource index the work carries (`parent-resource-snapshot-index`).
    pub resource_index: u64,
    /// `spec.workload.manifests`.
    pub manifests: Vec<Value>,
    /// `spec.applyStrategy` (KubeFleet's defaults when absent).
    pub apply_strategy: ApplyStrategy,
    /// The override snapshots the manifests were rendered with, as the hub's two list-hash
    /// annotations name them; `None` when there are none. The hub drops a binding's report
    /// whenever these change, even when the rendered manifests come out the same, so they are
    /// part of the content a report is about.
    pub override_snapshots: Option<String>,
}

/// `applyStrategy.type`: how manifests reach the cluster.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApplyType {
    /// A three-way merge as `kubectl apply` does (KubeFleet's default).
    #[default]
    ClientSideApply,
    /// Server-side apply with the agent's field manager.
    ServerSideApply,
    /// Compare only: report how the cluster differs from the hub, write nothing.
    ReportDiff,
}

/// `applyStrategy.comparisonOption`: which fields drift and diff detection compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Comparison {
    /// Only the fields the manifest sets (default).
    #[default]
    Partial,
    /// Every field, including those only the member's object has.
    Full,
}

/// `applyStrategy.whenToApply`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhenToApply {
    /// Apply over whatever the object has become (default).
    #[default]
    Always,
    /// Do not apply over an object that drifted from what was applied.
    IfNotDrifted,
}

/// `applyStrategy.whenToTakeOver`: what to do with an object the agent did not place.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhenToTakeOver {
    /// Adopt it (default).
    #[default]
    Always,
    /// Adopt it only when it does not differ from the manifest.
    IfNoDiff,
    /// Never adopt it.
    Never,
}

/// A Work's `spec.applyStrategy`, as KubeFleet defines it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApplyStrategy {
    /// `type`.
    pub apply_type: ApplyType,
    /// `comparisonOption`.
    pub comparison: Comparison,
    /// `whenToApply`.
    pub when_to_apply: WhenToApply,
    /// `whenToTakeOver`.
    pub when_to_take_over: WhenToTakeOver,
    /// `allowCoOwnership`: an object other owners reference may still be taken over.
    pub allow_co_ownership: bool,
    /// `serverSideApplyConfig.force`: server-side apply takes conflicting fields over.
    pub force_conflicts: bool,
}

impl ApplyStrategy {
    /// Reads `spec.applyStrategy` (absent or `null`: the defaults).
    ///
    /// # Errors
    /// A message naming the field whose value is not one KubeFleet defines.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        if value.is_null() {
            return Ok(Self::default());
        }
        if !value.is_object() {
            return Err("spec.applyStrategy is not an object".to_owned());
        }
        let field = |name: &str, allowed: &[&str]| -> Result<usize, String> {
            match &value[name] {
                Value::Null => Ok(0),
                Value::String(text) => allowed.iter().position(|a| a == text).ok_or_else(|| {
                    format!(
                        "spec.applyStrategy.{name}: {text:?} is not one of {}",
                        allowed.join(", ")
                    )
                }),
                _ => Err(format!("spec.applyStrategy.{name} is not a string")),
            }
        };
        let apply_type = match field(
            "type",
            &["ClientSideApply", "ServerSideApply", "ReportDiff"],
        )? {
            0 => ApplyType::ClientSideApply,
            1 => ApplyType::ServerSideApply,
            _ => ApplyType::ReportDiff,
        };
        let comparison = match field("comparisonOption", &["PartialComparison", "FullComparison"])?
        {
            0 => Comparison::Partial,
            _ => Comparison::Full,
        };
        let when_to_apply = match field("whenToApply", &["Always", "IfNotDrifted"])? {
            0 => WhenToApply::Always,
            _ => WhenToApply::IfNotDrifted,
        };
        let when_to_take_over = match field("whenToTakeOver", &["Always", "IfNoDiff", "Never"])? {
            0 => WhenToTakeOver::Always,
            1 => WhenToTakeOver::IfNoDiff,
            _ => WhenToTakeOver::Never,
        };
        Ok(Self {
            apply_type,
            comparison,
            when_to_apply,
            when_to_take_over,
            allow_co_ownership: value["allowCoOwnership"].as_bool().unwrap_or(false),
            force_conflicts: value["serverSideApplyConfig"]["force"]
                .as_bool()
                .unwrap_or(false),
        })
    }
}

/// Why a Work object could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WorkError {
    /// A required field or label is missing or malformed.
    #[error("work {work}: {what}")]
    Malformed {
        /// The work's name (or `?`).
        work: String,
        /// What is wrong.
        what: String,
    },
}

/// The identity of one manifest: group, version, kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ManifestId {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (`""` for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ManifestId {
    /// Stands for a manifest that names no object (no apiVersion, kind or name) in a report.
    #[must_use]
    pub fn unnamed() -> Self {
        Self {
            group: String::new(),
            version: "v1".into(),
            kind: "Unknown".into(),
            namespace: String::new(),
            name: "unknown".into(),
        }
    }

    /// The identity of a manifest; `None` when it has no kind, apiVersion or name.
    #[must_use]
    pub fn of(manifest: &Value) -> Option<Self> {
        let api_version = manifest["apiVersion"].as_str()?;
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        let name = manifest["metadata"]["name"].as_str()?;
        Some(Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: manifest["kind"].as_str()?.to_owned(),
            namespace: manifest["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            name: name.to_owned(),
        })
    }

    /// `Kind namespace/name` for output lines.
    #[must_use]
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// Whether the hub holds a report on the Work it serves: its `status.conditions` (which the
/// hub renders from the binding's report; over NATS only their types) are not empty. A Work re-created for a new binding —
/// an evicted cluster picked again — carries the same content as before but no report, as a
/// new Work object in KubeFleet has an empty status.
#[must_use]
pub fn hub_holds_report(object: &Value) -> bool {
    // A Work from a hub that published none of its status (over NATS before it published
    // condition types) says nothing: the agent's acknowledgements stand.
    let Some(status) = object.get("status") else {
        return true;
    };
    status["conditions"]
        .as_array()
        .is_some_and(|conditions| !conditions.is_empty())
}

impl DesiredWork {
    /// Reads a Work object as the hub serves it.
    ///
    /// # Errors
    /// When its name, labels or manifests are missing or malformed.
    pub fn from_object(object: &Value) -> Result<Self, WorkError> {
        let name = object["metadata"]["name"].as_str().unwrap_or("?");
        let fail = |what: &str| WorkError::Malformed {
            work: name.to_owned(),
            what: what.to_owned(),
        };
        let labels = &object["metadata"]["labels"];
        let placement = labels[LABEL_PARENT]
            .as_str()
            .ok_or_else(|| fail("no parent-CRP label"))?;
        let resource_index = labels[LABEL_INDEX]
            .as_str()
            .and_then(|index| index.parse::<u64>().ok())
            .ok_or_else(|| fail("no numeric parent-resource-snapshot-index label"))?;
        let manifests = match &object["spec"]["workload"]["manifests"] {
            Value::Null => Vec::new(),
            Value::Array(manifests) => manifests.clone(),
            _ => return Err(fail("spec.workload.manifests is not a list")),
        };
        if manifests.len() > MANIFESTS_PER_WORK_MAX {
            return Err(fail("more manifests than the agent accepts"));
        }
        let apply_strategy =
            ApplyStrategy::from_value(&object["spec"]["applyStrategy"]).map_err(|e| fail(&e))?;
        Ok(Self {
            target: WorkTarget {
                name: name.to_owned(),
                placement: placement.to_owned(),
                namespace: labels[LABEL_NAMESPACE].as_str().map(str::to_owned),
            },
            resource_index,
            manifests,
            apply_strategy,
            override_snapshots: override_snapshots(&object["metadata"]["annotations"]),
        })
    }

    /// SHA-256 of what the work holds: the resource index, the manifests, and — only when they
    /// are not the defaults — the apply strategy and the override snapshots. The same work twice
    /// has the same fingerprint, so it is applied once; a changed strategy or a re-rendering by
    /// other override snapshots is new content, applied and reported again. Defaults add
    /// nothing, so fingerprints stored before either was read still match.
    #[must_use]
    pub fn fingerprint(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.resource_index.to_le_bytes());
        for manifest in &self.manifests {
            hasher.update(manifest.to_string().as_bytes());
            hasher.update([0]);
        }
        if self.apply_strategy != ApplyStrategy::default() {
            hasher.update(format!("strategy {:?}", self.apply_strategy).as_bytes());
        }
        if let Some(snapshots) = &self.override_snapshots {
            hasher.update(format!("overrides {snapshots}").as_bytes());
        }
        hex::encode(hasher.finalize())
    }
}

/// The two override-snapshot hash annotations as one text, `None` when both are absent or hash
/// an empty list (the hub hashes an empty list as JSON `null`, as KubeFleet does).
fn override_snapshots(annotations: &Value) -> Option<String> {
    let empty = hex::encode(Sha256::digest(b"null"));
    let hashes: Vec<&str> = [ANNOTATION_CRO_HASH, ANNOTATION_RO_HASH]
        .into_iter()
        .map(|key| {
            annotations[key]
                .as_str()
                .filter(|hash| *hash != empty)
                .unwrap_or_default()
        })
        .collect();
    hashes
        .iter()
        .any(|hash| !hash.is_empty())
        .then(|| hashes.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn work(index: &str, manifests: Value) -> Value {
        json!({"metadata": {"name": "crp-1-work", "namespace": "fleet-member-m1",
            "labels": {LABEL_PARENT: "crp-1", LABEL_INDEX: index}},
            "spec": {"workload": {"manifests": manifests}}})
    }

    #[test]
    fn a_work_is_read_from_its_labels_and_manifests() -> Result<(), WorkError> {
        let manifest = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}});
        let desired = DesiredWork::from_object(&work("3", json!([manifest.clone()])))?;
        assert_eq!(desired.target.placement, "crp-1");
        assert_eq!(desired.target.directory(), "crp-1");
        assert_eq!(desired.resource_index, 3);
        assert_eq!(
            ManifestId::of(&desired.manifests[0]).map(|id| id.display()),
            Some("Namespace a".to_owned())
        );
        let again = DesiredWork::from_object(&work("3", json!([manifest.clone()])))?;
        assert_eq!(desired.fingerprint(), again.fingerprint());
        let next = DesiredWork::from_object(&work("4", json!([manifest])))?;
        assert_ne!(desired.fingerprint(), next.fingerprint());
        Ok(())
    }

    #[test]
    fn the_apply_strategy_is_read_and_changes_the_fingerprint() -> Result<(), WorkError> {
        let mut object = work("3", json!([]));
        let plain = DesiredWork::from_object(&object)?;
        assert_eq!(plain.apply_strategy, ApplyStrategy::default());
        // The hub renders the defaults explicitly; they hash as no strategy at all.
        object["spec"]["applyStrategy"] = json!({"type": "ClientSideApply",
            "comparisonOption": "PartialComparison", "whenToApply": "Always",
            "whenToTakeOver": "Always", "serverSideApplyConfig": {"force": false}});
        let defaults = DesiredWork::from_object(&object)?;
        assert_eq!(defaults.fingerprint(), plain.fingerprint());
        object["spec"]["applyStrategy"] = json!({"type": "ServerSideApply",
            "comparisonOption": "FullComparison", "whenToApply": "IfNotDrifted",
            "whenToTakeOver": "IfNoDiff", "allowCoOwnership": true,
            "serverSideApplyConfig": {"force": true}});
        let strict = DesiredWork::from_object(&object)?;
        assert_eq!(
            strict.apply_strategy,
            ApplyStrategy {
                apply_type: ApplyType::ServerSideApply,
                comparison: Comparison::Full,
                when_to_apply: WhenToApply::IfNotDrifted,
                when_to_take_over: WhenToTakeOver::IfNoDiff,
                allow_co_ownership: true,
                force_conflicts: true,
            }
        );
        assert_ne!(strict.fingerprint(), plain.fingerprint());
        object["spec"]["applyStrategy"] = json!({"type": "Replace"});
        assert!(DesiredWork::from_object(&object).is_err());
        Ok(())
    }

    #[test]
    fn other_override_snapshots_are_other_content_even_with_the_same_manifests()
    -> Result<(), WorkError> {
        let mut object = work("3", json!([]));
        let plain = DesiredWork::from_object(&object)?;
        // The hub writes an empty list's hash when the work has no override snapshots.
        let empty = hex::encode(Sha256::digest(b"null"));
        object["metadata"]["annotations"] =
            json!({ANNOTATION_CRO_HASH: empty, ANNOTATION_RO_HASH: empty});
        let none = DesiredWork::from_object(&object)?;
        assert_eq!(none.override_snapshots, None);
        assert_eq!(none.fingerprint(), plain.fingerprint());
        object["metadata"]["annotations"][ANNOTATION_CRO_HASH] = json!("a1");
        let first = DesiredWork::from_object(&object)?;
        object["metadata"]["annotations"][ANNOTATION_CRO_HASH] = json!("b2");
        let second = DesiredWork::from_object(&object)?;
        assert_ne!(first.fingerprint(), plain.fingerprint());
        assert_ne!(first.fingerprint(), second.fingerprint());
        Ok(())
    }

    #[test]
    fn a_work_without_its_index_label_is_refused() {
        let mut object = work("3", json!([]));
        object["metadata"]["labels"][LABEL_INDEX] = json!("x");
        assert!(DesiredWork::from_object(&object).is_err());
    }
}

//! What the `kube` applier writes onto an object besides the manifest: the marks that say which
//! agent placed it (member cluster, Work and placement, as annotations so long names fit), the
//! hash of the manifest applied (KubeFleet's `spec-hash`, which drift detection compares), and
//! for client-side apply `kubectl`'s last-applied configuration. A manifest is first cleaned of
//! what only the API server may set, as KubeFleet's work applier cleans enveloped objects.
//!
//! Ownership is read back from the marks: an object is this agent's for a Work only when both
//! the member cluster and the Work named match, so a removal never deletes an object another
//! Work, another agent or a person placed.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::diff::comparable;
use crate::work::WorkTarget;

/// Annotation: the member cluster whose agent placed the object.
pub const ANNOTATION_MEMBER: &str = "kubernetes-fleet.io/applied-by-member";
/// Annotation: the Work that placed the object.
pub const ANNOTATION_WORK: &str = "kubernetes-fleet.io/applied-by-work";
/// Annotation: the placement of that Work (`name`, or `namespace/name` for a ResourcePlacement).
pub const ANNOTATION_PLACEMENT: &str = "kubernetes-fleet.io/applied-by-placement";
/// Annotation: the hash of the manifest last applied (KubeFleet's name).
pub const ANNOTATION_SPEC_HASH: &str = "kubernetes-fleet.io/spec-hash";
/// Annotation: the configuration last applied by a client-side apply (`kubectl`'s name).
pub const ANNOTATION_LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// KubeFleet's own last-applied annotation, removed from manifests like `kubectl`'s.
const ANNOTATION_FLEET_LAST_APPLIED: &str = "kubernetes-fleet.io/last-applied-configuration";
/// The Deployment controller's revision, never applied from a manifest.
const ANNOTATION_DEPLOYMENT_REVISION: &str = "deployment.kubernetes.io/revision";
/// The most bytes all of an object's annotations may take (the API server's limit); past it the
/// last-applied configuration is left out and server-side apply used instead.
pub const ANNOTATIONS_BYTES_MAX: usize = 256 * 1024;

/// Metadata a manifest may not carry into an apply (the API server owns it).
pub(super) const SERVER_METADATA: [&str; 9] = [
    "ownerReferences",
    "managedFields",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// Who applies: this agent's member cluster and the Work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The member cluster.
    pub cluster: String,
    /// The Work's name.
    pub work: String,
    /// The placement (`name` or `namespace/name`).
    pub placement: String,
}

impl Owner {
    /// The owner for `cluster` applying `target`.
    #[must_use]
    pub fn new(cluster: &str, target: &WorkTarget) -> Self {
        let placement = match &target.namespace {
            Some(namespace) => format!("{namespace}/{}", target.placement),
            None => target.placement.clone(),
        };
        Self {
            cluster: cluster.to_owned(),
            work: target.name.clone(),
            placement,
        }
    }
}

/// Whose an object on the cluster is, by its marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    /// This agent placed it for this Work.
    Ours,
    /// This agent placed it for another Work.
    OtherWork(String),
    /// Another member cluster's agent placed it.
    OtherMember(String),
    /// No agent placed it.
    Unmarked,
}

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object["metadata"]["annotations"][key].as_str()
}

/// Whose `object` is, for `owner`.
#[must_use]
pub fn ownership(object: &Value, owner: &Owner) -> Ownership {
    match (
        annotation(object, ANNOTATION_MEMBER),
        annotation(object, ANNOTATION_WORK),
    ) {
        (Some(member), _) if member != owner.cluster => Ownership::OtherMember(member.to_owned()),
        (Some(_), Some(work)) if work == owner.work => Ownership::Ours,
        (Some(_), Some(work)) => Ownership::OtherWork(work.to_owned()),
        _ => Ownership::Unmarked,
    }
}

/// The manifest without what only the API server sets (owner references, managed fields,
/// timestamps, generation, resource version, uid, `status`) and without the annotations the
/// applier itself writes or that controllers own.
#[must_use]
pub fn sanitize(manifest: &Value) -> Value {
    let mut object = manifest.clone();
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SERVER_METADATA {
            metadata.remove(field);
        }
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            for key in [
                ANNOTATION_SPEC_HASH,
                ANNOTATION_LAST_APPLIED,
                ANNOTATION_FLEET_LAST_APPLIED,
                ANNOTATION_DEPLOYMENT_REVISION,
                ANNOTATION_MEMBER,
                ANNOTATION_WORK,
                ANNOTATION_PLACEMENT,
            ] {
                annotations.remove(key);
            }
            if annotations.is_empty() {
                metadata.remove("annotations");
            }
        }
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    object
}

/// SHA-256 of the manifest as compared (see `diff::comparable`), hex.
#[must_use]
pub fn spec_hash(manifest: &Value) -> String {
    hex::encode(Sha256::digest(comparable(manifest).to_string().as_bytes()))
}

/// The hash of the manifest last applied to `object`, if it carries one.
#[must_use]
pub fn applied_hash(object: &Value) -> Option<&str> {
    annotation(object, ANNOTATION_SPEC_HASH)
}

fn annotations_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    if !object["metadata"]["annotations"].is_object() {
        object["metadata"]["annotations"] = json!({});
    }
    match object["metadata"]["annotations"].as_object_mut() {
        Some(map) => map,
        None => unreachable!("annotations were just made an object"),
    }
}

/// The sanitized manifest with the owner's marks and its hash: what is applied.
#[must_use]
pub fn marked(sanitized: &Value, owner: &Owner) -> Value {
    let hash = spec_hash(sanitized);
    let mut object = sanitized.clone();
    let annotations = annotations_mut(&mut object);
    annotations.insert(ANNOTATION_MEMBER.to_owned(), json!(owner.cluster));
    annotations.insert(ANNOTATION_WORK.to_owned(), json!(owner.work));
    annotations.insert(ANNOTATION_PLACEMENT.to_owned(), json!(owner.placement));
    annotations.insert(ANNOTATION_SPEC_HASH.to_owned(), json!(hash));
    object
}

/// `object` with the last-applied annotation holding itself (as `kubectl` writes it: compact
/// JSON with sorted keys and a final newline); `None` when the annotations would pass
/// [`ANNOTATIONS_BYTES_MAX`].
#[must_use]
pub fn with_last_applied(object: &Value) -> Option<Value> {
    let mut full = object.clone();
    let configuration = format!("{object}\n");
    let annotations = annotations_mut(&mut full);
    annotations.insert(ANNOTATION_LAST_APPLIED.to_owned(), json!(configuration));
    let bytes: usize = annotations
        .iter()
        .map(|(key, value)| key.len() + value.as_str().map_or(0, str::len))
        .sum();
    (bytes <= ANNOTATIONS_BYTES_MAX).then_some(full)
}

/// The configuration last applied to `object` (its last-applied annotation), if readable.
#[must_use]
pub fn last_applied(object: &Value) -> Option<Value> {
    annotation(object, ANNOTATION_LAST_APPLIED).and_then(|text| serde_json::from_str(text).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> Owner {
        Owner::new(
            "member-1",
            &WorkTarget {
                name: "shop-work".into(),
                placement: "shop".into(),
                namespace: Some("team".into()),
            },
        )
    }

    #[test]
    fn marks_name_the_member_work_and_placement_and_are_read_back() {
        let manifest = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "uid": "u", "resourceVersion": "3",
                "annotations": {ANNOTATION_LAST_APPLIED: "{}"}},
            "data": {"k": "v"}, "status": {}});
        let sanitized = sanitize(&manifest);
        assert_eq!(sanitized["metadata"], json!({"name": "c"}));
        let object = marked(&sanitized, &owner());
        assert_eq!(
            object["metadata"]["annotations"][ANNOTATION_PLACEMENT],
            "team/shop"
        );
        assert_eq!(ownership(&object, &owner()), Ownership::Ours);
        let other_work = Owner {
            work: "other-work".into(),
            ..owner()
        };
        assert_eq!(
            ownership(&object, &other_work),
            Ownership::OtherWork("shop-work".into())
        );
        let other_member = Owner {
            cluster: "member-2".into(),
            ..owner()
        };
        assert_eq!(
            ownership(&object, &other_member),
            Ownership::OtherMember("member-1".into())
        );
        assert_eq!(ownership(&manifest, &owner()), Ownership::Unmarked);
        // The hash ignores the marks, so it is the same before and after marking.
        assert_eq!(spec_hash(&object), spec_hash(&sanitized));
    }

    #[test]
    fn the_last_applied_configuration_is_the_object_without_itself() {
        let object = marked(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            &owner(),
        );
        let full = with_last_applied(&object);
        assert_eq!(full.as_ref().and_then(last_applied), Some(object));
        let huge = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"k": "x".repeat(ANNOTATIONS_BYTES_MAX)}});
        assert!(with_last_applied(&huge).is_none());
    }
}

//! Events, as KubeFleet's controllers record them, derived from the folded state: `kubectl get
//! events` lists them and `kubectl describe` finds an object's by `involvedObject`. The state is
//! the log's fold, so each event is a transition the log holds, dated by the condition that marks
//! it; the hub keeps no separate event history, so a milestone reached twice shows its latest
//! occurrence (count 1).
//!
//! - Placements: one Normal event per milestone reached (the `placement_events` texts, KubeFleet's
//!   `EventReasonForTrue`), and a Warning per failed condition (its reason and message).
//! - Member clusters, staged update runs (and each stage), approval requests and evictions: one
//!   event per condition, Normal unless a condition other than `Progressing` is `False`.
//!
//! Both `v1` `Event` and `events.k8s.io/v1` `Event` are served from the same list. An event of a
//! cluster-scoped object lives in the `default` namespace, as client-go's recorder puts it.

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::objects::member_key;
use crate::{eviction, objects, placement_events, staged};

/// Where events of cluster-scoped objects are recorded.
const DEFAULT_NAMESPACE: &str = "default";
/// The events API group.
pub const EVENTS_GROUP: &str = "events.k8s.io";

/// One recorded event, before it is shaped for an API version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    /// The object it is about: `apiVersion`, `kind`, `name`, `namespace` (absent when
    /// cluster-scoped), `uid`, `resourceVersion`.
    pub involved: Value,
    /// `Normal` or `Warning`.
    pub kind: &'static str,
    /// Why (a CamelCase reason).
    pub reason: String,
    /// What happened.
    pub message: String,
    /// When (RFC 3339).
    pub at: String,
    /// The controller that records it.
    pub component: &'static str,
}

/// Whether `(group, kind)` is one of the two Event kinds.
#[must_use]
pub fn is_event_kind(group: &str, kind: &str) -> bool {
    kind == "Event" && (group.is_empty() || group == EVENTS_GROUP)
}

/// Every derived event in `namespace` (all namespaces when `None`), in the shape of `group`'s
/// `Event`, oldest first.
#[must_use]
pub fn list(state: &State, group: &str, namespace: Option<&str>) -> Vec<Value> {
    let mut recorded = recorded(state);
    recorded.sort_by(|a, b| (&a.at, &a.reason).cmp(&(&b.at, &b.reason)));
    recorded
        .iter()
        .map(|event| (event_namespace(event), event))
        .filter(|(ns, _)| namespace.is_none_or(|wanted| wanted == ns))
        .map(|(ns, event)| shape(event, &ns, group))
        .collect()
}

/// The derived event `key` names, if any.
#[must_use]
pub fn render(state: &State, key: &ObjectKey) -> Option<Value> {
    list(state, &key.group, Some(&key.namespace))
        .into_iter()
        .find(|event| event["metadata"]["name"] == key.name.as_str())
}

fn event_namespace(event: &Recorded) -> String {
    event.involved["namespace"]
        .as_str()
        .filter(|ns| !ns.is_empty())
        .unwrap_or(DEFAULT_NAMESPACE)
        .to_owned()
}

/// The event's name: the object's name and a digest of what the event says, stable across
/// replays as an apiserver's `<name>.<hex>` is unique.
fn name_of(event: &Recorded) -> String {
    let mut hasher = Sha256::new();
    for part in [
        event.involved["kind"].as_str().unwrap_or_default(),
        event.involved["namespace"].as_str().unwrap_or_default(),
        event.reason.as_str(),
        event.message.as_str(),
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    let digest = hex::encode(&hasher.finalize()[..8]);
    let object = event.involved["name"].as_str().unwrap_or_default();
    format!("{object}.{digest}")
}

fn shape(event: &Recorded, namespace: &str, group: &str) -> Value {
    let name = name_of(event);
    let metadata = json!({
        "name": name,
        "namespace": namespace,
        "uid": crate::derived::derived_uid(
            event.involved["uid"].as_str().unwrap_or_default(), "Event", &name),
        "resourceVersion": event.involved["resourceVersion"],
        "creationTimestamp": event.at,
    });
    if group == EVENTS_GROUP {
        return json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": metadata,
            "eventTime": micro_time(&event.at),
            "reportingController": event.component,
            "reportingInstance": event.component,
            "action": event.reason,
            "reason": event.reason,
            "regarding": event.involved,
            "note": event.message,
            "type": event.kind,
            "deprecatedFirstTimestamp": event.at,
            "deprecatedLastTimestamp": event.at,
            "deprecatedCount": 1,
            "deprecatedSource": {"component": event.component},
        });
    }
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": metadata,
        "involvedObject": event.involved,
        "reason": event.reason,
        "message": event.message,
        "type": event.kind,
        "source": {"component": event.component},
        "firstTimestamp": event.at,
        "lastTimestamp": event.at,
        "count": 1,
        "reportingComponent": event.component,
        "reportingInstance": "",
    })
}

/// `eventTime` is a `MicroTime`: RFC 3339 with six fractional digits.
fn micro_time(at: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(at).map_or_else(
        |_| at.to_owned(),
        |t| t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
    )
}

/// Every event the state holds, unsorted.
fn recorded(state: &State) -> Vec<Recorded> {
    let mut out = Vec::new();
    for (key, placement) in state.placements() {
        let object = crate::placement::render(
            state,
            key,
            placement,
            crate::placement_status::PerCluster::Listed,
        );
        out.extend(placement_events::recorded(&object));
    }
    for name in state.members().keys() {
        if let Some(object) = objects::render_object(state, &member_key(name)) {
            out.extend(from_conditions(&object, "membercluster-controller"));
        }
    }
    for key in staged::keys(state) {
        let component = "updaterun-controller";
        if let Some(object) = staged::render(state, &key) {
            out.extend(from_conditions(&object, component));
            out.extend(stage_events(&object, component));
        }
    }
    for key in eviction::keys_of(state, "ClusterResourcePlacementEviction") {
        if let Some(object) = eviction::render(state, &key) {
            out.extend(from_conditions(&object, "eviction-controller"));
        }
    }
    out
}

/// The reference an event makes to `object`.
pub(crate) fn involved(object: &Value) -> Value {
    let metadata = &object["metadata"];
    let mut reference = json!({
        "apiVersion": object["apiVersion"],
        "kind": object["kind"],
        "name": metadata["name"],
        "uid": metadata["uid"],
        "resourceVersion": metadata["resourceVersion"],
    });
    if let Some(namespace) = metadata["namespace"].as_str().filter(|ns| !ns.is_empty()) {
        reference["namespace"] = Value::from(namespace);
    }
    reference
}

/// One event per condition of `object` that says when it changed.
fn from_conditions(object: &Value, component: &'static str) -> Vec<Recorded> {
    conditions_to_events(object, &object["status"]["conditions"], "", component)
}

/// One event per condition of each stage of a run, the stage named in its message.
fn stage_events(run: &Value, component: &'static str) -> Vec<Recorded> {
    run["status"]["stagesStatus"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|stage| {
            let prefix = format!("stage {}: ", stage["stageName"].as_str().unwrap_or("?"));
            conditions_to_events(run, &stage["conditions"], &prefix, component)
        })
        .collect()
}

fn conditions_to_events(
    object: &Value,
    conditions: &Value,
    prefix: &str,
    component: &'static str,
) -> Vec<Recorded> {
    conditions
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|condition| {
            let at = condition["lastTransitionTime"].as_str()?;
            let reason = condition["reason"].as_str().filter(|r| !r.is_empty())?;
            let failed = condition["status"] == "False" && condition["type"] != "Progressing";
            Some(Recorded {
                involved: involved(object),
                kind: if failed { "Warning" } else { "Normal" },
                reason: reason.to_owned(),
                message: format!("{prefix}{}", condition["message"].as_str().unwrap_or("")),
                at: at.to_owned(),
                component,
            })
        })
        .collect()
}

//! What changed between two folded states, as `get` shows them: objects added and removed,
//! fields changed (JSON pointer, old → new), bindings moved (a cluster's binding state and
//! resource index), conditions flipped (status or reason of a condition type).
//!
//! Contract:
//! - Objects are compared as [`flotilla_projections::render_all`] renders them, every field
//!   included — `metadata.resourceVersion` too (it moves with every change, and says so; the
//!   hub renders no `managedFields`). Times in them are event times, so the same two points
//!   always give the same diff. A `MemberCluster` renders from its member alone, so members
//!   equal at both points are not rendered at all: the cost follows the members that changed
//!   and the rest of the hub, not the fleet's size.
//! - Order is fixed: objects by kind, namespace, name and API group; fields in key order (arrays
//!   index by index); bindings by placement and cluster; conditions by object, where they sit and
//!   type.
//! - Conditions flip only in objects present at both points (an object added or removed is
//!   listed as such). They are found wherever an object holds a `conditions` list (the
//!   placement's, each cluster's placement status, a run's stages and tasks, a binding's); where
//!   they sit is named by the path to the list, a list element named by its `clusterName`,
//!   `stageName`, `name` or `type` (`status.placementStatuses[cluster-2].conditions`), so a
//!   reordered list does not read as a flip.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use flotilla_eventstore::LogReader;
use serde::Serialize;
use serde_json::Value;

use crate::ReplayError;
use crate::seek::{Point, fold_on, fold_to, resolve};
use crate::text::string_field;

/// Fields that name a list element for condition paths, in order of preference.
const ELEMENT_NAMES: [&str; 4] = ["clusterName", "stageName", "name", "type"];

/// The difference between two states.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StateDiff {
    /// Objects only in the second state.
    pub added: Vec<ObjectId>,
    /// Objects only in the first state.
    pub removed: Vec<ObjectId>,
    /// Objects in both whose rendering differs, with the fields that changed.
    pub changed: Vec<ObjectChange>,
    /// Bindings whose state or resource index changed, or that appeared or went.
    pub bindings: Vec<BindingMove>,
    /// Conditions whose status or reason changed, or that appeared or went.
    pub conditions: Vec<ConditionFlip>,
}

/// The difference between the states at two points of a log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PointsDiff {
    /// The first point: after this input.
    pub from: u64,
    /// The second point.
    pub to: u64,
    /// What changed.
    #[serde(flatten)]
    pub diff: StateDiff,
}

/// An object's identity as rendered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectId {
    /// `Kind/name` or `Kind/namespace/name`.
    pub object: String,
    /// Its `apiVersion`.
    pub api_version: String,
}

/// The fields that changed in one object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectChange {
    /// The object.
    #[serde(flatten)]
    pub id: ObjectId,
    /// Its changed fields, in key order.
    pub fields: Vec<FieldChange>,
}

/// One field that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// Its JSON pointer (RFC 6901) in the object.
    pub pointer: String,
    /// The old value; absent when the field was added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    /// The new value; absent when the field was removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
}

/// A binding of one placement to one cluster that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingMove {
    /// The placement (`Kind/name`, `Kind/namespace/name`).
    pub placement: String,
    /// The cluster.
    pub cluster: String,
    /// Before; absent when there was no binding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<BindingSide>,
    /// After; absent when the binding is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<BindingSide>,
}

/// A binding's state and the resource index it carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingSide {
    /// `Scheduled`, `Bound` or `Unscheduled`.
    pub state: String,
    /// The resource snapshot index it carries, once bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_index: Option<u64>,
}

/// A condition whose status or reason changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionFlip {
    /// The object holding it.
    pub object: String,
    /// Where its list sits in the object (`status.conditions`).
    pub path: String,
    /// Its type.
    #[serde(rename = "type")]
    pub condition_type: String,
    /// Before; absent when it was not set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<ConditionSide>,
    /// After; absent when it is no longer set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<ConditionSide>,
}

/// A condition's status and reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConditionSide {
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Its reason.
    pub reason: String,
}

/// What changed from state `a` to state `b`.
#[must_use]
pub fn diff(a: &State, b: &State) -> StateDiff {
    let changed = members_changed(a, b);
    let old = rendered(a, &changed);
    let new = rendered(b, &changed);
    let mut result = StateDiff::default();
    for (key, (id, object)) in &new {
        match old.get(key) {
            None => result.added.push(id.clone()),
            Some((_, before)) if before != object => {
                let mut fields = Vec::new();
                compare(&mut String::new(), before, object, &mut fields);
                result.changed.push(ObjectChange {
                    id: id.clone(),
                    fields,
                });
            }
            Some(_) => {}
        }
    }
    result.removed = old
        .iter()
        .filter(|(key, _)| !new.contains_key(*key))
        .map(|(_, (id, _))| id.clone())
        .collect();
    result.bindings = bindings_moved(a, b);
    result.conditions = conditions_flipped(&old, &new);
    result
}

/// What changed from point `from` to point `to` of a log: the state at `from`, folded on to
/// `to`.
///
/// # Errors
/// A log read or fold failure.
pub async fn diff_points<L: LogReader>(
    log: &L,
    from: Point,
    to: Point,
) -> Result<PointsDiff, ReplayError> {
    let from = resolve(log, from).await?;
    let to = resolve(log, to).await?;
    let first = fold_to(log, from).await?;
    let second = if to >= from {
        let mut second = first.clone();
        fold_on(log, &mut second, to).await?;
        second
    } else {
        fold_to(log, to).await?
    };
    Ok(PointsDiff {
        from,
        to,
        diff: diff(&first.state, &second.state),
    })
}

impl StateDiff {
    /// Keeps only what concerns objects of these kinds (`ConfigMap`, `Deployment`, …, compared
    /// without case): their objects, fields and conditions, and the bindings of placements of
    /// those kinds. Every kind when `kinds` is empty.
    pub fn retain_kinds(&mut self, kinds: &[String]) {
        if kinds.is_empty() {
            return;
        }
        let wanted = |object: &str| {
            let kind = object.split('/').next().unwrap_or_default();
            kinds.iter().any(|k| k.eq_ignore_ascii_case(kind))
        };
        self.added.retain(|id| wanted(&id.object));
        self.removed.retain(|id| wanted(&id.object));
        self.changed.retain(|change| wanted(&change.id.object));
        self.bindings.retain(|binding| wanted(&binding.placement));
        self.conditions.retain(|flip| wanted(&flip.object));
    }

    /// Whether nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.bindings.is_empty()
            && self.conditions.is_empty()
    }

    /// The diff as text: `+`/`-` lines for objects, `~` lines per changed object with its
    /// fields beneath, then bindings moved and conditions flipped.
    #[must_use]
    pub fn text(&self) -> String {
        if self.is_empty() {
            return "no differences\n".to_owned();
        }
        let mut text = String::new();
        for id in &self.added {
            text.push_str(&format!("+ {}\n", id.object));
        }
        for id in &self.removed {
            text.push_str(&format!("- {}\n", id.object));
        }
        for change in &self.changed {
            text.push_str(&format!("~ {}\n", change.id.object));
            for field in &change.fields {
                text.push_str(&format!(
                    "    {}: {} -> {}\n",
                    field.pointer,
                    shown(field.old.as_ref()),
                    shown(field.new.as_ref())
                ));
            }
        }
        for moved in &self.bindings {
            text.push_str(&format!(
                "binding {} {}: {} -> {}\n",
                moved.placement,
                moved.cluster,
                binding_side(moved.old.as_ref()),
                binding_side(moved.new.as_ref())
            ));
        }
        for flip in &self.conditions {
            text.push_str(&format!(
                "condition {} {} {}: {} -> {}\n",
                flip.object,
                flip.path,
                flip.condition_type,
                condition_side(flip.old.as_ref()),
                condition_side(flip.new.as_ref())
            ));
        }
        text
    }
}

impl PointsDiff {
    /// `from #A to #B` then the diff's text.
    #[must_use]
    pub fn text(&self) -> String {
        format!("from #{} to #{}\n{}", self.from, self.to, self.diff.text())
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_owned(), Value::to_string)
}

fn binding_side(side: Option<&BindingSide>) -> String {
    match side {
        None => "(none)".to_owned(),
        Some(BindingSide {
            state,
            resource_index: Some(index),
        }) => format!("{state} at resource index {index}"),
        Some(BindingSide { state, .. }) => state.clone(),
    }
}

fn condition_side(side: Option<&ConditionSide>) -> String {
    side.map_or_else(
        || "(none)".to_owned(),
        |side| format!("{} ({})", side.status, side.reason),
    )
}

/// Sort key of a rendered object: kind, namespace, name, API group.
type ObjectSortKey = (String, String, String, String);

/// The names of the members that differ between `a` and `b` (added, removed or changed).
fn members_changed<'a>(a: &'a State, b: &'a State) -> BTreeSet<&'a str> {
    let (old, new) = (a.members(), b.members());
    let removed_or_changed = old
        .iter()
        .filter(|(name, member)| new.get(*name) != Some(*member));
    let added = new.keys().filter(|name| !old.contains_key(*name));
    removed_or_changed
        .map(|(name, _)| name.as_str())
        .chain(added.map(|name| name.as_str()))
        .collect()
}

/// Every object of a state but the members not in `members`, rendered, by [`ObjectSortKey`].
fn rendered(state: &State, members: &BTreeSet<&str>) -> BTreeMap<ObjectSortKey, (ObjectId, Value)> {
    let members = members
        .iter()
        .filter_map(|name| flotilla_projections::render_member(state, name));
    members
        .chain(flotilla_projections::render_all_but_members(state))
        .map(|object| {
            let text = |pointer: &str| {
                object
                    .pointer(pointer)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let api_version = text("/apiVersion");
            let key = ObjectKey {
                group: flotilla_core::model::group_of(&api_version).into(),
                kind: text("/kind").into(),
                namespace: text("/metadata/namespace").into(),
                name: text("/metadata/name").into(),
            };
            let id = ObjectId {
                object: key.to_string(),
                api_version,
            };
            (
                (
                    key.kind.into(),
                    key.namespace.into(),
                    key.name.into(),
                    key.group.into(),
                ),
                (id, object),
            )
        })
        .collect()
}

/// Field by field, recursively: maps by key, lists index by index.
fn compare(pointer: &mut String, old: &Value, new: &Value, out: &mut Vec<FieldChange>) {
    match (old, new) {
        (Value::Object(before), Value::Object(after)) => {
            let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
            for key in keys {
                let length = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                compare_present(pointer, before.get(key), after.get(key), out);
                pointer.truncate(length);
            }
        }
        (Value::Array(before), Value::Array(after)) => {
            for index in 0..before.len().max(after.len()) {
                let length = pointer.len();
                pointer.push_str(&format!("/{index}"));
                compare_present(pointer, before.get(index), after.get(index), out);
                pointer.truncate(length);
            }
        }
        _ if old != new => out.push(FieldChange {
            pointer: pointer.clone(),
            old: Some(old.clone()),
            new: Some(new.clone()),
        }),
        _ => {}
    }
}

fn compare_present(
    pointer: &mut String,
    old: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<FieldChange>,
) {
    match (old, new) {
        (Some(old), Some(new)) => compare(pointer, old, new, out),
        (None, None) => {}
        (old, new) => out.push(FieldChange {
            pointer: pointer.clone(),
            old: old.cloned(),
            new: new.cloned(),
        }),
    }
}

/// Every binding's side, by placement and cluster.
fn binding_sides(state: &State) -> BTreeMap<(String, String), BindingSide> {
    state
        .placements()
        .iter()
        .flat_map(|(key, placement)| {
            placement.bindings.values().map(move |binding| {
                let side = BindingSide {
                    state: binding.state.as_str().to_owned(),
                    resource_index: binding.resource_index,
                };
                ((key.to_string(), binding.cluster.to_string()), side)
            })
        })
        .collect()
}

fn bindings_moved(a: &State, b: &State) -> Vec<BindingMove> {
    let old = binding_sides(a);
    let new = binding_sides(b);
    let keys: BTreeSet<&(String, String)> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter(|key| old.get(*key) != new.get(*key))
        .map(|key| BindingMove {
            placement: key.0.clone(),
            cluster: key.1.clone(),
            old: old.get(key).cloned(),
            new: new.get(key).cloned(),
        })
        .collect()
}

/// Conditions by (object, path, type) → their side.
type Conditions = BTreeMap<(String, String, String), ConditionSide>;

fn conditions_of(objects: &BTreeMap<ObjectSortKey, (ObjectId, Value)>) -> Conditions {
    let mut found = Conditions::new();
    for (id, object) in objects.values() {
        collect_conditions(&id.object, &mut Vec::new(), object, &mut found);
    }
    found
}

/// Walks an object, keeping the path by names (`status`, `placementStatuses[cluster-2]`), and
/// notes every condition of every `conditions` list.
fn collect_conditions(object: &str, path: &mut Vec<String>, value: &Value, out: &mut Conditions) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                path.push(key.clone());
                if key == "conditions"
                    && let Value::Array(conditions) = inner
                {
                    note_conditions(object, &path.join("."), conditions, out);
                } else {
                    collect_conditions(object, path, inner, out);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let name = ELEMENT_NAMES
                    .iter()
                    .find_map(|field| item.get(*field).and_then(Value::as_str))
                    .map_or_else(|| index.to_string(), str::to_owned);
                let Some(last) = path.pop() else {
                    continue;
                };
                path.push(format!("{last}[{name}]"));
                collect_conditions(object, path, item, out);
                path.pop();
                path.push(last);
            }
        }
        _ => {}
    }
}

fn note_conditions(object: &str, path: &str, conditions: &[Value], out: &mut Conditions) {
    let text = |condition: &Value, field: &str| string_field(condition, field).to_owned();
    for condition in conditions {
        let side = ConditionSide {
            status: text(condition, "status"),
            reason: text(condition, "reason"),
        };
        let key = (object.to_owned(), path.to_owned(), text(condition, "type"));
        out.insert(key, side);
    }
}

fn conditions_flipped(
    old: &BTreeMap<ObjectSortKey, (ObjectId, Value)>,
    new: &BTreeMap<ObjectSortKey, (ObjectId, Value)>,
) -> Vec<ConditionFlip> {
    let in_both: BTreeSet<&String> = old
        .iter()
        .filter(|(key, _)| new.contains_key(*key))
        .map(|(_, (id, _))| &id.object)
        .collect();
    let before = conditions_of(old);
    let after = conditions_of(new);
    let keys: BTreeSet<&(String, String, String)> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|key| in_both.contains(&key.0) && before.get(*key) != after.get(*key))
        .map(|key| ConditionFlip {
            object: key.0.clone(),
            path: key.1.clone(),
            condition_type: key.2.clone(),
            old: before.get(key).cloned(),
            new: after.get(key).cloned(),
        })
        .collect()
}

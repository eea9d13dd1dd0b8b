//! `kubectl get`-style tables.
//!
//! Columns follow KubeFleet's printer columns, read from the rendered objects the way the API
//! server's JSONPath columns read them, so a table always agrees with `render_object`:
//! - `MemberCluster`: NAME, JOINED, AGE, MEMBER-AGENT-LAST-SEEN, NODE-COUNT, AVAILABLE-CPU,
//!   AVAILABLE-MEMORY; wide adds ALLOCATABLE-CPU and ALLOCATABLE-MEMORY (KubeFleet's priority-1
//!   columns), then flotilla's HEALTHY and TAINTS.
//! - `ClusterResourcePlacement` / `ResourcePlacement`: NAME, GEN, SCHEDULED, SCHEDULED-GEN,
//!   AVAILABLE, AVAILABLE-GEN, AGE; wide adds TYPE, WORK-SYNCHRONIZED and
//!   WORK-SYNCHRONIZED-GEN in KubeFleet's positions. Condition cells stay empty until the
//!   condition exists.
//! - Scheduling policy snapshots and resource snapshots: NAME, GEN, AGE (KubeFleet's columns).
//! - Bindings: NAME, STATE, TARGET-CLUSTER, AGE (KubeFleet shows WORKSYNCHRONIZED and
//!   RESOURCESAPPLIED instead).
//! - `Work`: NAME, APPLIED, AVAILABLE, AGE (KubeFleet's printer columns).
//! - `ClusterResourcePlacementEviction`: NAME, VALID, EXECUTED (KubeFleet's printer columns).
//! - `Event`: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; wide adds SOURCE, FIRST SEEN, COUNT and
//!   NAME (the API server's columns).
//! - Any other kind (the status mirror included): NAME, AGE.
//!
//! Namespaced kinds listed across all namespaces (`namespace` is `None`) get a leading NAMESPACE
//! column, as `kubectl get -A` does. Ages and "last seen" times are measured against the state's
//! event time.

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::model::{
    CLUSTER_GROUP, CLUSTER_RESOURCE_PLACEMENT, CLUSTER_RESOURCE_PLACEMENT_EVICTION, MEMBER_CLUSTER,
    PLACEMENT_GROUP, RESOURCE_PLACEMENT,
};
use serde_json::Value;

use crate::age::age;
use crate::derived::DerivedKind;
use crate::json::{at, scalar_text};
use crate::kinds::KindInfo;
use crate::objects;
use crate::tabwriter::{self, TABLE};

/// Reads one cell from a rendered object, given the state's event time.
type ReadCell = dyn Fn(&Value, Option<DateTime<Utc>>) -> String;

/// One column: its header and how to read its cell.
pub(crate) struct Column {
    pub(crate) header: &'static str,
    read: Box<ReadCell>,
}

impl Column {
    pub(crate) fn new(
        header: &'static str,
        read: impl Fn(&Value, Option<DateTime<Utc>>) -> String + 'static,
    ) -> Self {
        Self {
            header,
            read: Box::new(read),
        }
    }

    /// The cell of `object`, ages counted to `now`.
    pub(crate) fn cell(&self, object: &Value, now: Option<DateTime<Utc>>) -> String {
        (self.read)(object, now)
    }

    /// The scalar at a path of object fields (a JSONPath column such as `.spec.state`).
    pub(crate) fn scalar(header: &'static str, path: &'static [&'static str]) -> Self {
        Self::new(header, move |object, _| scalar_text(at(object, path)))
    }

    /// `.status.conditions[?(@.type==T)].status`.
    fn condition(header: &'static str, condition_type: &'static str) -> Self {
        Self::condition_field(header, condition_type, "status")
    }

    /// `.status.conditions[?(@.type==T)].<field>`.
    fn condition_field(
        header: &'static str,
        condition_type: &'static str,
        field: &'static str,
    ) -> Self {
        Self::new(header, move |object, _| {
            condition_field(object, condition_type, field)
        })
    }

    pub(crate) fn name() -> Self {
        Self::scalar("NAME", &["metadata", "name"])
    }

    fn age() -> Self {
        Self::new("AGE", |object, now| {
            date_age(at(object, &["metadata", "creationTimestamp"]), now)
        })
    }
}

/// The `get` table of one kind, aligned with spaces; `No resources found…` when there is
/// nothing to show (kubectl's words).
#[must_use]
pub fn table(state: &State, kind: &KindInfo, namespace: Option<&str>, wide: bool) -> String {
    let objects = objects::list_for_table(state, kind, namespace);
    table_of(state, kind, namespace, &objects, wide)
}

/// Like [`table`], limited to the object called `name` when one is given (`get KIND NAME`).
/// Returns `None` when that object does not exist.
#[must_use]
pub fn table_named(
    state: &State,
    kind: &KindInfo,
    namespace: Option<&str>,
    name: &str,
    wide: bool,
) -> Option<String> {
    let mut objects = objects::list_for_table(state, kind, namespace);
    objects.retain(|object| object["metadata"]["name"] == name);
    (!objects.is_empty()).then(|| table_of(state, kind, namespace, &objects, wide))
}

fn table_of(
    state: &State,
    kind: &KindInfo,
    namespace: Option<&str>,
    objects: &[Value],
    wide: bool,
) -> String {
    if objects.is_empty() {
        return match namespace.filter(|_| kind.namespaced) {
            Some(namespace) => format!("No resources found in {namespace} namespace.\n"),
            None => "No resources found\n".to_owned(),
        };
    }
    let mut columns = Vec::new();
    if kind.namespaced && namespace.is_none() {
        columns.push(Column::scalar("NAMESPACE", &["metadata", "namespace"]));
    }
    columns.extend(kind_columns(kind, wide));
    let mut text = row(columns.iter().map(|column| column.header.to_owned()));
    for object in objects {
        text.push_str(&row(columns
            .iter()
            .map(|column| column.cell(object, state.now()))));
    }
    tabwriter::align(&text, TABLE)
}

/// One column of a [`TableData`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableColumn {
    /// Header, as `kubectl get` prints it.
    pub name: String,
    /// 0 for columns always shown, 1 for those only `-o wide` shows.
    pub priority: u8,
}

/// A `kubectl get` table as data (the API server's `Table`): every column, wide ones marked by
/// their priority, and one row of cells per object, in the objects' order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableData {
    /// The columns.
    pub columns: Vec<TableColumn>,
    /// One row of cells per object.
    pub rows: Vec<Vec<String>>,
}

/// The table of `objects` (rendered objects of `kind`), without a NAMESPACE column: a client
/// adds that itself when it lists across namespaces. Ages are counted to `clock`, which the
/// caller chooses: a reader's wall clock at the edge (the Kubernetes API's `Table`, whose AGE
/// kubectl prints as is), or the state's own time ([`State::now`]) for a reading of the past.
#[must_use]
pub fn table_data(kind: &KindInfo, objects: &[Value], clock: Option<DateTime<Utc>>) -> TableData {
    let narrow: Vec<&str> = kind_columns(kind, false)
        .iter()
        .map(|column| column.header)
        .collect();
    let wide = kind_columns(kind, true);
    TableData {
        columns: wide
            .iter()
            .map(|column| TableColumn {
                name: column.header.to_owned(),
                priority: u8::from(!narrow.contains(&column.header)),
            })
            .collect(),
        rows: objects
            .iter()
            .map(|object| {
                wide.iter()
                    .map(|column| column.cell(object, clock))
                    .collect()
            })
            .collect(),
    }
}

fn row(cells: impl Iterator<Item = String>) -> String {
    let mut line = cells.collect::<Vec<_>>().join("\t");
    line.push('\n');
    line
}

fn kind_columns(kind: &KindInfo, wide: bool) -> Vec<Column> {
    if kind.group == CLUSTER_GROUP && kind.kind == MEMBER_CLUSTER {
        member_cluster_columns(wide)
    } else if kind.group == PLACEMENT_GROUP && kind.kind == CLUSTER_RESOURCE_PLACEMENT {
        placement_columns(wide, &PlacementConditions::CLUSTER)
    } else if kind.group == PLACEMENT_GROUP && kind.kind == RESOURCE_PLACEMENT {
        placement_columns(wide, &PlacementConditions::NAMESPACED)
    } else if kind.group == PLACEMENT_GROUP && kind.kind == CLUSTER_RESOURCE_PLACEMENT_EVICTION {
        // KubeFleet's printer columns for evictions: the Valid and Executed condition statuses.
        vec![
            Column::name(),
            Column::condition("VALID", "Valid"),
            Column::condition("EXECUTED", "Executed"),
        ]
    } else if crate::events::is_event_kind(&kind.group, &kind.kind) {
        crate::event_columns::columns(wide)
    } else {
        let mut columns = vec![Column::name()];
        columns.extend(columns_between_name_and_age(kind));
        columns.push(Column::age());
        columns
    }
}

/// The columns KubeFleet prints between NAME and AGE for the kinds it frames that way; none for
/// the kinds it has no printer columns for (the status mirror included), which show NAME and AGE
/// alone.
fn columns_between_name_and_age(kind: &KindInfo) -> Vec<Column> {
    let placement_kind =
        |kinds: [&str; 2]| kind.group == PLACEMENT_GROUP && kinds.contains(&kind.kind.as_str());
    if placement_kind(["ClusterStagedUpdateRun", "StagedUpdateRun"]) {
        vec![
            Column::scalar("PLACEMENT", &["spec", "placementName"]),
            Column::scalar(
                "RESOURCE-SNAPSHOT-INDEX",
                &["status", "resourceSnapshotIndexUsed"],
            ),
            Column::scalar(
                "POLICY-SNAPSHOT-INDEX",
                &["status", "policySnapshotIndexUsed"],
            ),
            Column::condition("INITIALIZED", "Initialized"),
            Column::condition("PROGRESSING", "Progressing"),
            Column::condition("SUCCEEDED", "Succeeded"),
        ]
    } else if placement_kind(["ClusterApprovalRequest", "ApprovalRequest"]) {
        vec![
            Column::scalar("UPDATE-RUN", &["spec", "parentStageRollout"]),
            Column::scalar("STAGE", &["spec", "targetStage"]),
            Column::condition("APPROVED", "Approved"),
            Column::condition("APPROVAL-ACCEPTED", "ApprovalAccepted"),
        ]
    } else {
        match DerivedKind::parse(&kind.group, &kind.kind) {
            Some((DerivedKind::PolicySnapshot | DerivedKind::ResourceSnapshot, _)) => {
                vec![Column::scalar("GEN", &["metadata", "generation"])]
            }
            // KubeFleet shows WORKSYNCHRONIZED and RESOURCESAPPLIED instead.
            Some((DerivedKind::Binding, _)) => vec![
                Column::scalar("STATE", &["spec", "state"]),
                Column::scalar("TARGET-CLUSTER", &["spec", "targetCluster"]),
            ],
            Some((DerivedKind::Work, _)) => vec![
                Column::condition("APPLIED", "Applied"),
                Column::condition("AVAILABLE", "Available"),
            ],
            Some((DerivedKind::PlacementStatus, _)) | None => Vec::new(),
        }
    }
}

fn member_cluster_columns(wide: bool) -> Vec<Column> {
    let mut columns = vec![
        Column::name(),
        Column::condition("JOINED", "Joined"),
        Column::age(),
        Column::new("MEMBER-AGENT-LAST-SEEN", last_seen_cell),
        Column::scalar(
            "NODE-COUNT",
            &[
                "status",
                "properties",
                "kubernetes-fleet.io/node-count",
                "value",
            ],
        ),
        usage("AVAILABLE-CPU", "available", "cpu"),
        usage("AVAILABLE-MEMORY", "available", "memory"),
    ];
    if wide {
        columns.extend([
            usage("ALLOCATABLE-CPU", "allocatable", "cpu"),
            usage("ALLOCATABLE-MEMORY", "allocatable", "memory"),
            Column::condition("HEALTHY", "Healthy"),
            Column::new("TAINTS", taints_cell),
        ]);
    }
    columns
}

/// The condition types a placement kind's columns read.
struct PlacementConditions {
    scheduled: &'static str,
    work_synchronized: &'static str,
    available: &'static str,
}

impl PlacementConditions {
    const CLUSTER: Self = Self {
        scheduled: "ClusterResourcePlacementScheduled",
        work_synchronized: "ClusterResourcePlacementWorkSynchronized",
        available: "ClusterResourcePlacementAvailable",
    };
    const NAMESPACED: Self = Self {
        scheduled: "ResourcePlacementScheduled",
        work_synchronized: "ResourcePlacementWorkSynchronized",
        available: "ResourcePlacementAvailable",
    };
}

fn placement_columns(wide: bool, conditions: &PlacementConditions) -> Vec<Column> {
    let generation = "observedGeneration";
    let mut columns = vec![
        Column::name(),
        Column::scalar("GEN", &["metadata", "generation"]),
    ];
    if wide {
        columns.push(Column::scalar("TYPE", &["spec", "policy", "placementType"]));
    }
    columns.extend([
        Column::condition("SCHEDULED", conditions.scheduled),
        Column::condition_field("SCHEDULED-GEN", conditions.scheduled, generation),
    ]);
    if wide {
        columns.extend([
            Column::condition("WORK-SYNCHRONIZED", conditions.work_synchronized),
            Column::condition_field(
                "WORK-SYNCHRONIZED-GEN",
                conditions.work_synchronized,
                generation,
            ),
        ]);
    }
    columns.extend([
        Column::condition("AVAILABLE", conditions.available),
        Column::condition_field("AVAILABLE-GEN", conditions.available, generation),
        Column::age(),
    ]);
    columns
}

fn last_seen_cell(object: &Value, now: Option<DateTime<Utc>>) -> String {
    let agent = typed_entry(object, "/status/agentStatus", "MemberAgent");
    match agent.and_then(|agent| agent.get("lastReceivedHeartbeat")) {
        Some(time) => date_age(Some(time), now),
        None => String::new(),
    }
}

/// The entry of the list at `pointer` whose `type` is `entry_type`: KubeFleet keys its
/// conditions and agent statuses by type.
fn typed_entry<'a>(object: &'a Value, pointer: &str, entry_type: &str) -> Option<&'a Value> {
    object
        .pointer(pointer)
        .and_then(Value::as_array)?
        .iter()
        .find(|entry| entry.get("type").and_then(Value::as_str) == Some(entry_type))
}

/// A `type: date` printer column: the age of an RFC 3339 time.
pub(crate) fn date_age(value: Option<&Value>, now: Option<DateTime<Utc>>) -> String {
    let parsed = value
        .and_then(Value::as_str)
        .and_then(|text| DateTime::parse_from_rfc3339(text).ok());
    match parsed {
        Some(time) => age(now, time.with_timezone(&Utc)),
        None => "<unknown>".to_owned(),
    }
}

/// `.status.conditions[?(@.type==T)].<field>`, empty when there is no such condition.
fn condition_field(object: &Value, condition_type: &str, field: &str) -> String {
    let condition = typed_entry(object, "/status/conditions", condition_type);
    scalar_text(condition.and_then(|condition| condition.get(field)))
}

/// `.status.resourceUsage.<list>.<resource>`.
fn usage(header: &'static str, list: &'static str, resource: &'static str) -> Column {
    Column::new(header, move |object, _| {
        scalar_text(at(object, &["status", "resourceUsage", list, resource]))
    })
}

/// Taints as kubectl shows node taints: `key=value:Effect`, comma-separated.
fn taints_cell(object: &Value, _: Option<DateTime<Utc>>) -> String {
    let Some(taints) = at(object, &["spec", "taints"]).and_then(Value::as_array) else {
        return String::new();
    };
    let texts: Vec<String> = taints
        .iter()
        .map(|taint| {
            let key = scalar_text(taint.get("key"));
            let effect = scalar_text(taint.get("effect"));
            match taint.get("value") {
                Some(value) => format!("{key}={}:{effect}", scalar_text(Some(value))),
                None => format!("{key}:{effect}"),
            }
        })
        .collect();
    texts.join(",")
}

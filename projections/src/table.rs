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
pub(crate) type CellFn = fn(&Value, Option<DateTime<Utc>>) -> String;

/// One column: its header and how to read its cell.
pub(crate) struct Column {
    pub(crate) header: &'static str,
    pub(crate) cell: CellFn,
}

/// The `get` table of one kind, aligned with spaces; `No resources found…` when there is
/// nothing to show (kubectl's words).
#[must_use]
pub fn table(state: &State, kind: &KindInfo, namespace: Option<&str>, wide: bool) -> String {
    table_of(state, kind, namespace, None, wide)
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
    let exists = objects::list(state, kind, namespace)
        .iter()
        .any(|object| object["metadata"]["name"] == name);
    exists.then(|| table_of(state, kind, namespace, Some(name), wide))
}

fn table_of(
    state: &State,
    kind: &KindInfo,
    namespace: Option<&str>,
    name: Option<&str>,
    wide: bool,
) -> String {
    let mut objects = objects::list(state, kind, namespace);
    if let Some(name) = name {
        objects.retain(|object| object["metadata"]["name"] == name);
    }
    if objects.is_empty() {
        return match namespace.filter(|_| kind.namespaced) {
            Some(namespace) => format!("No resources found in {namespace} namespace.\n"),
            None => "No resources found\n".to_owned(),
        };
    }
    let mut columns = Vec::new();
    if kind.namespaced && namespace.is_none() {
        columns.push(Column {
            header: "NAMESPACE",
            cell: namespace_cell,
        });
    }
    columns.extend(kind_columns(kind, wide));
    let mut text = row(columns.iter().map(|column| column.header.to_owned()));
    for object in &objects {
        text.push_str(&row(columns
            .iter()
            .map(|column| (column.cell)(object, state.now()))));
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
                    .map(|column| (column.cell)(object, clock))
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
        eviction_columns()
    } else if crate::events::is_event_kind(&kind.group, &kind.kind) {
        crate::event_columns::columns(wide)
    } else if kind.group == PLACEMENT_GROUP
        && matches!(
            kind.kind.as_str(),
            "ClusterStagedUpdateRun" | "StagedUpdateRun"
        )
    {
        update_run_columns()
    } else if kind.group == PLACEMENT_GROUP
        && matches!(
            kind.kind.as_str(),
            "ClusterApprovalRequest" | "ApprovalRequest"
        )
    {
        approval_request_columns()
    } else {
        match DerivedKind::parse(&kind.group, &kind.kind) {
            Some((DerivedKind::PolicySnapshot | DerivedKind::ResourceSnapshot, _)) => {
                snapshot_columns()
            }
            Some((DerivedKind::Binding, _)) => binding_columns(),
            Some((DerivedKind::Work, _)) => work_columns(),
            Some((DerivedKind::PlacementStatus, _)) | None => vec![
                Column {
                    header: "NAME",
                    cell: name_cell,
                },
                Column {
                    header: "AGE",
                    cell: age_cell,
                },
            ],
        }
    }
}

/// KubeFleet's printer columns for update runs.
fn update_run_columns() -> Vec<Column> {
    vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "PLACEMENT",
            cell: |object, _| scalar_text(object.pointer("/spec/placementName")),
        },
        Column {
            header: "RESOURCE-SNAPSHOT-INDEX",
            cell: |object, _| scalar_text(object.pointer("/status/resourceSnapshotIndexUsed")),
        },
        Column {
            header: "POLICY-SNAPSHOT-INDEX",
            cell: |object, _| scalar_text(object.pointer("/status/policySnapshotIndexUsed")),
        },
        Column {
            header: "INITIALIZED",
            cell: |object, _| condition_field(object, "Initialized", "status"),
        },
        Column {
            header: "PROGRESSING",
            cell: |object, _| condition_field(object, "Progressing", "status"),
        },
        Column {
            header: "SUCCEEDED",
            cell: |object, _| condition_field(object, "Succeeded", "status"),
        },
        Column {
            header: "AGE",
            cell: age_cell,
        },
    ]
}

/// KubeFleet's printer columns for approval requests.
fn approval_request_columns() -> Vec<Column> {
    vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "UPDATE-RUN",
            cell: |object, _| scalar_text(object.pointer("/spec/parentStageRollout")),
        },
        Column {
            header: "STAGE",
            cell: |object, _| scalar_text(object.pointer("/spec/targetStage")),
        },
        Column {
            header: "APPROVED",
            cell: |object, _| condition_field(object, "Approved", "status"),
        },
        Column {
            header: "APPROVAL-ACCEPTED",
            cell: |object, _| condition_field(object, "ApprovalAccepted", "status"),
        },
        Column {
            header: "AGE",
            cell: age_cell,
        },
    ]
}

/// KubeFleet's printer columns for evictions: the Valid and Executed condition statuses.
fn eviction_columns() -> Vec<Column> {
    vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "VALID",
            cell: |object, _| condition_field(object, "Valid", "status"),
        },
        Column {
            header: "EXECUTED",
            cell: |object, _| condition_field(object, "Executed", "status"),
        },
    ]
}

fn snapshot_columns() -> Vec<Column> {
    vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "GEN",
            cell: |object, _| scalar_text(at(object, &["metadata", "generation"])),
        },
        Column {
            header: "AGE",
            cell: age_cell,
        },
    ]
}

fn binding_columns() -> Vec<Column> {
    vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "STATE",
            cell: |object, _| scalar_text(at(object, &["spec", "state"])),
        },
        Column {
            header: "TARGET-CLUSTER",
            cell: |object, _| scalar_text(at(object, &["spec", "targetCluster"])),
        },
        Column {
            header: "AGE",
            cell: age_cell,
        },
    ]
}

fn work_columns() -> Vec<Column> {
    vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "APPLIED",
            cell: |object, _| condition_field(object, "Applied", "status"),
        },
        Column {
            header: "AVAILABLE",
            cell: |object, _| condition_field(object, "Available", "status"),
        },
        Column {
            header: "AGE",
            cell: age_cell,
        },
    ]
}

fn member_cluster_columns(wide: bool) -> Vec<Column> {
    let mut columns = vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "JOINED",
            cell: |object, _| condition_field(object, "Joined", "status"),
        },
        Column {
            header: "AGE",
            cell: age_cell,
        },
        Column {
            header: "MEMBER-AGENT-LAST-SEEN",
            cell: last_seen_cell,
        },
        Column {
            header: "NODE-COUNT",
            cell: |object, _| {
                let path = [
                    "status",
                    "properties",
                    "kubernetes-fleet.io/node-count",
                    "value",
                ];
                scalar_text(at(object, &path))
            },
        },
        Column {
            header: "AVAILABLE-CPU",
            cell: |object, _| usage(object, "available", "cpu"),
        },
        Column {
            header: "AVAILABLE-MEMORY",
            cell: |object, _| usage(object, "available", "memory"),
        },
    ];
    if wide {
        columns.extend([
            Column {
                header: "ALLOCATABLE-CPU",
                cell: |object, _| usage(object, "allocatable", "cpu"),
            },
            Column {
                header: "ALLOCATABLE-MEMORY",
                cell: |object, _| usage(object, "allocatable", "memory"),
            },
            Column {
                header: "HEALTHY",
                cell: |object, _| condition_field(object, "Healthy", "status"),
            },
            Column {
                header: "TAINTS",
                cell: taints_cell,
            },
        ]);
    }
    columns
}

/// The condition types a placement kind's columns read.
struct PlacementConditions {
    scheduled: CellFn,
    scheduled_gen: CellFn,
    work_synchronized: CellFn,
    work_synchronized_gen: CellFn,
    available: CellFn,
    available_gen: CellFn,
}

impl PlacementConditions {
    const CLUSTER: Self = Self {
        scheduled: |o, _| condition_field(o, "ClusterResourcePlacementScheduled", "status"),
        scheduled_gen: |o, _| {
            condition_field(o, "ClusterResourcePlacementScheduled", "observedGeneration")
        },
        work_synchronized: |o, _| {
            condition_field(o, "ClusterResourcePlacementWorkSynchronized", "status")
        },
        work_synchronized_gen: |o, _| {
            condition_field(
                o,
                "ClusterResourcePlacementWorkSynchronized",
                "observedGeneration",
            )
        },
        available: |o, _| condition_field(o, "ClusterResourcePlacementAvailable", "status"),
        available_gen: |o, _| {
            condition_field(o, "ClusterResourcePlacementAvailable", "observedGeneration")
        },
    };
    const NAMESPACED: Self = Self {
        scheduled: |o, _| condition_field(o, "ResourcePlacementScheduled", "status"),
        scheduled_gen: |o, _| {
            condition_field(o, "ResourcePlacementScheduled", "observedGeneration")
        },
        work_synchronized: |o, _| condition_field(o, "ResourcePlacementWorkSynchronized", "status"),
        work_synchronized_gen: |o, _| {
            condition_field(o, "ResourcePlacementWorkSynchronized", "observedGeneration")
        },
        available: |o, _| condition_field(o, "ResourcePlacementAvailable", "status"),
        available_gen: |o, _| {
            condition_field(o, "ResourcePlacementAvailable", "observedGeneration")
        },
    };
}

fn placement_columns(wide: bool, conditions: &PlacementConditions) -> Vec<Column> {
    let mut columns = vec![
        Column {
            header: "NAME",
            cell: name_cell,
        },
        Column {
            header: "GEN",
            cell: |object, _| scalar_text(at(object, &["metadata", "generation"])),
        },
    ];
    if wide {
        columns.push(Column {
            header: "TYPE",
            cell: |object, _| scalar_text(at(object, &["spec", "policy", "placementType"])),
        });
    }
    columns.push(Column {
        header: "SCHEDULED",
        cell: conditions.scheduled,
    });
    columns.push(Column {
        header: "SCHEDULED-GEN",
        cell: conditions.scheduled_gen,
    });
    if wide {
        columns.push(Column {
            header: "WORK-SYNCHRONIZED",
            cell: conditions.work_synchronized,
        });
        columns.push(Column {
            header: "WORK-SYNCHRONIZED-GEN",
            cell: conditions.work_synchronized_gen,
        });
    }
    columns.push(Column {
        header: "AVAILABLE",
        cell: conditions.available,
    });
    columns.push(Column {
        header: "AVAILABLE-GEN",
        cell: conditions.available_gen,
    });
    columns.push(Column {
        header: "AGE",
        cell: age_cell,
    });
    columns
}

fn name_cell(object: &Value, _: Option<DateTime<Utc>>) -> String {
    scalar_text(at(object, &["metadata", "name"]))
}

fn namespace_cell(object: &Value, _: Option<DateTime<Utc>>) -> String {
    scalar_text(at(object, &["metadata", "namespace"]))
}

fn age_cell(object: &Value, now: Option<DateTime<Utc>>) -> String {
    date_age(at(object, &["metadata", "creationTimestamp"]), now)
}

fn last_seen_cell(object: &Value, now: Option<DateTime<Utc>>) -> String {
    let heartbeat = object
        .pointer("/status/agentStatus")
        .and_then(Value::as_array)
        .and_then(|agents| {
            agents
                .iter()
                .find(|agent| agent.get("type") == Some(&"MemberAgent".into()))
        })
        .and_then(|agent| agent.get("lastReceivedHeartbeat"));
    match heartbeat {
        Some(time) => date_age(Some(time), now),
        None => String::new(),
    }
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
    let condition = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| {
            conditions
                .iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(condition_type))
        });
    scalar_text(condition.and_then(|condition| condition.get(field)))
}

fn usage(object: &Value, list: &str, resource: &str) -> String {
    scalar_text(at(object, &["status", "resourceUsage", list, resource]))
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

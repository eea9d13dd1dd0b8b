//! The `kubectl get events` columns, as the API server prints events: LAST SEEN, TYPE, REASON,
//! OBJECT (`kind/name`, the kind lowercased), MESSAGE; wide adds SOURCE, FIRST SEEN, COUNT and
//! NAME. The same columns serve `v1` and `events.k8s.io/v1` events, read from either shape.

use serde_json::Value;

use crate::json::scalar_text;
use crate::table::{Column, date_age};

/// The event's field in either shape: `v1` name first, then `events.k8s.io/v1`.
fn either<'a>(object: &'a Value, core: &str, events: &str) -> Option<&'a Value> {
    object
        .get(core)
        .filter(|value| !value.is_null())
        .or_else(|| object.get(events))
}

fn object_cell(object: &Value) -> String {
    let Some(reference) = either(object, "involvedObject", "regarding") else {
        return String::new();
    };
    let kind = reference["kind"].as_str().unwrap_or_default();
    let name = reference["name"].as_str().unwrap_or_default();
    format!("{}/{name}", kind.to_ascii_lowercase())
}

pub(crate) fn columns(wide: bool) -> Vec<Column> {
    let mut columns = vec![
        Column {
            header: "LAST SEEN",
            cell: |object, now| {
                date_age(
                    either(object, "lastTimestamp", "deprecatedLastTimestamp"),
                    now,
                )
            },
        },
        Column {
            header: "TYPE",
            cell: |object, _| scalar_text(object.get("type")),
        },
        Column {
            header: "REASON",
            cell: |object, _| scalar_text(object.get("reason")),
        },
        Column {
            header: "OBJECT",
            cell: |object, _| object_cell(object),
        },
        Column {
            header: "MESSAGE",
            cell: |object, _| scalar_text(either(object, "message", "note")),
        },
    ];
    if wide {
        columns.extend([
            Column {
                header: "SOURCE",
                cell: |object, _| {
                    let source = either(object, "source", "deprecatedSource");
                    scalar_text(source.and_then(|s| s.get("component")))
                },
            },
            Column {
                header: "FIRST SEEN",
                cell: |object, now| {
                    date_age(
                        either(object, "firstTimestamp", "deprecatedFirstTimestamp"),
                        now,
                    )
                },
            },
            Column {
                header: "COUNT",
                cell: |object, _| scalar_text(either(object, "count", "deprecatedCount")),
            },
            Column {
                header: "NAME",
                cell: |object, _| scalar_text(object.pointer("/metadata/name")),
            },
        ]);
    }
    columns
}

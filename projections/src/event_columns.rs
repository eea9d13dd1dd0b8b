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

/// A column that reads the event's field in either shape.
fn either_scalar(header: &'static str, core: &'static str, events: &'static str) -> Column {
    Column::new(header, move |object, _| {
        scalar_text(either(object, core, events))
    })
}

/// A column that shows the age of the event's time in either shape.
fn either_age(header: &'static str, core: &'static str, events: &'static str) -> Column {
    Column::new(header, move |object, now| {
        date_age(either(object, core, events), now)
    })
}

pub(crate) fn columns(wide: bool) -> Vec<Column> {
    let mut columns = vec![
        either_age("LAST SEEN", "lastTimestamp", "deprecatedLastTimestamp"),
        Column::scalar("TYPE", &["type"]),
        Column::scalar("REASON", &["reason"]),
        Column::new("OBJECT", |object, _| object_cell(object)),
        either_scalar("MESSAGE", "message", "note"),
    ];
    if wide {
        columns.extend([
            Column::new("SOURCE", |object, _| {
                let source = either(object, "source", "deprecatedSource");
                scalar_text(source.and_then(|s| s.get("component")))
            }),
            either_age("FIRST SEEN", "firstTimestamp", "deprecatedFirstTimestamp"),
            either_scalar("COUNT", "count", "deprecatedCount"),
            Column::name(),
        ]);
    }
    columns
}

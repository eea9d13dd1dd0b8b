//! The top-level fields the JSON form of an event defines (`docs/events.md`), so that a field it
//! does not define is refused by name instead of dropped in silence: a misspelt `resourceIndx`
//! or `namespce` would otherwise be an event that says something other than what its
//! publisher meant. serde cannot refuse them itself: `deny_unknown_fields` does not work
//! through the `#[serde(flatten)]` that joins the envelope and the event, so the check is this
//! table, held equal to the JSON Schema (`flotilla schema`, which says
//! `unevaluatedProperties: false`) by a test.

use serde_json::Value;

/// The envelope's fields, beside the event's own; `type` names the event.
pub const ENVELOPE_FIELDS: &[&str] = &[
    "id",
    "time",
    "claimedTime",
    "source",
    "schemaVersion",
    "type",
];

/// The fields of the event of type `kind` (`apply`, `heartbeat`, …); `None` for a type the
/// JSON form does not define (serde names that one).
#[must_use]
pub fn event_fields(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "apply" => &["manifest"],
        "delete" => &["kind", "group", "namespace", "name"],
        "heartbeat" => &["cluster", "properties", "resourceUsage"],
        "report" => &[
            "cluster",
            "placement",
            "namespace",
            "resourceIndex",
            "applied",
            "available",
            "trackable",
            "message",
            "failedManifests",
            "diffReported",
            "diffedManifests",
            "driftedManifests",
        ],
        "approve" => &["name", "namespace", "reason", "message"],
        "tick" => &[],
        "leave" => &["cluster"],
        "analysisResult" => &["run", "namespace", "stage", "task", "value", "error"],
        _ => return None,
    })
}

/// The first top-level field of `event` that the JSON form of its type does not define, as the
/// message that refuses it; `None` when every field is known, or when `event` is not an object
/// or names no known type (the parse then says what is wrong).
#[must_use]
pub fn unknown_field(event: &Value) -> Option<String> {
    let object = event.as_object()?;
    let kind = object.get("type")?.as_str()?;
    let fields = event_fields(kind)?;
    object
        .keys()
        .find(|key| !ENVELOPE_FIELDS.contains(&key.as_str()) && !fields.contains(&key.as_str()))
        .map(|key| {
            format!(
                "unknown field `{key}`: an event of type `{kind}` has no such top-level field \
                 (docs/events.md)"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_the_form_does_not_define_is_named() {
        let misspelt = json!({"type": "heartbeat", "cluster": "m1", "propertees": {}});
        let message = unknown_field(&misspelt).unwrap_or_default();
        assert!(message.contains("`propertees`"), "{message}");
        let known = json!({"id": "0190b3d2-0000-7000-8000-000000000000", "time": "2025-01-01T00:00:00Z",
            "source": "s", "schemaVersion": 5, "type": "heartbeat", "cluster": "m1",
            "properties": {}, "resourceUsage": {}});
        assert_eq!(unknown_field(&known), None);
        // Another type's field is unknown here.
        assert!(unknown_field(&json!({"type": "tick", "cluster": "m1"})).is_some());
        // Left to serde: not an object, no type, an unknown type.
        assert_eq!(unknown_field(&json!([1])), None);
        assert_eq!(unknown_field(&json!({"cluster": "m1"})), None);
        assert_eq!(unknown_field(&json!({"type": "explode", "x": 1})), None);
    }

    /// The table is the JSON Schema's: every variant's properties, no more, no fewer.
    #[cfg(feature = "json-schema")]
    #[test]
    fn the_table_is_the_json_schemas() {
        let schema = super::super::json::schema();
        assert_eq!(
            schema["unevaluatedProperties"],
            serde_json::Value::Bool(false)
        );
        let envelope: Vec<&str> = schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let variants = schema["oneOf"].as_array().cloned().unwrap_or_default();
        assert_eq!(variants.len(), 8);
        for variant in &variants {
            let kind = variant["properties"]["type"]["const"]
                .as_str()
                .unwrap_or("");
            let mut defined: Vec<&str> = variant["properties"]
                .as_object()
                .map(|p| {
                    p.keys()
                        .map(String::as_str)
                        .filter(|k| *k != "type")
                        .collect()
                })
                .unwrap_or_default();
            defined.sort_unstable();
            let mut table = event_fields(kind).unwrap_or_default().to_vec();
            table.sort_unstable();
            assert_eq!(defined, table, "fields of `{kind}`");
        }
        for field in envelope {
            assert!(ENVELOPE_FIELDS.contains(&field), "envelope field {field}");
        }
    }
}

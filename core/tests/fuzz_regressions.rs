//! Inputs the fuzz targets (`fuzz/`, `scripts/fuzz`) found, kept so that they stay fixed.

use chrono::{TimeZone, Utc};
use flotilla_core::wire::json::{JsonDefaults, JsonEnvelope, parse_event};
use uuid::Uuid;

/// fuzz/json_event: a manifest number too large for an integer was parsed to an f64 one unit
/// off the nearest, so the event's listed JSON form (`flotilla events -o json`) read back as a
/// different manifest. serde_json's `float_roundtrip` parses to the nearest f64.
#[test]
fn a_huge_number_in_a_manifest_survives_the_listed_form() -> Result<(), String> {
    let body = br#"{"type":"apply","manifest":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"spec":{"n":28888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888888}}}"#;
    let defaults = JsonDefaults {
        id: Uuid::from_u128(1),
        time: Utc
            .timestamp_opt(1_750_000_000, 0)
            .single()
            .unwrap_or_default(),
        source: "test",
    };
    let event = parse_event(body, &defaults)?;
    let listed =
        serde_json::to_vec(&JsonEnvelope::from_envelope(&event)).map_err(|e| e.to_string())?;
    let read: JsonEnvelope = serde_json::from_slice(&listed).map_err(|e| e.to_string())?;
    assert_eq!(read.into_logged_envelope(&defaults), event);
    Ok(())
}

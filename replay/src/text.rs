//! Reading rendered objects as the replay's sentences and tables show them.

use serde_json::Value;

/// The string field `field` of a rendered object or list entry (a condition's `type`, `status`,
/// `reason`), empty when it is absent or not a string: the lines show such a field as nothing
/// rather than as JSON.
pub(crate) fn string_field<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or_default()
}

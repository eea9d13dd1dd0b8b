//! What the API server does to a custom resource before it validates it (`structural/
//! defaulting`): a `null` in a property that is not `nullable` is dropped, and every absent
//! property with a `default` gets it. flotilla does this on a copy, for validation only.

use serde_json::Value;

/// Drops non-nullable nulls and fills in defaults, throughout `value`.
pub fn prepare(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (key, property) in properties {
                    let nullable = property.get("nullable") == Some(&Value::Bool(true));
                    if map.get(key).is_some_and(Value::is_null) && !nullable {
                        map.remove(key);
                    }
                    match (map.get_mut(key), property.get("default")) {
                        (Some(child), _) => prepare(property, child),
                        (None, Some(default)) => {
                            let mut default = default.clone();
                            prepare(property, &mut default);
                            map.insert(key.clone(), default);
                        }
                        (None, None) => {}
                    }
                }
            }
            if let Some(additional) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                let declared = schema.get("properties");
                for (key, child) in map.iter_mut() {
                    if declared.and_then(|d| d.get(key)).is_none() {
                        prepare(additional, child);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    prepare(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

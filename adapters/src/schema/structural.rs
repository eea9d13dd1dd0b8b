//! The walk of an object against a structural schema: every keyword but the CEL rules, which
//! it collects for `cel` to evaluate once the walk found nothing that blocks them.

use serde_json::{Map, Value};

use super::cel::{self, Rules};
use super::metadata;
use super::path::{FieldPath, Segment};
use super::prepare::prepare;
use super::violation::{Checked, Reason, Violation, quoted, shown, type_name};

/// Fields every object and every embedded resource has whatever its schema declares.
const ENVELOPE: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Checks `object` (and, for transition rules, `old`) against a CRD's `openAPIV3Schema`.
pub fn check(schema: &Value, object: &Value, old: Option<&Value>) -> Checked {
    let mut object = object.clone();
    prepare(schema, &mut object);
    let old = old.map(|old| {
        let mut old = old.clone();
        prepare(schema, &mut old);
        old
    });
    let mut walk = Walk::default();
    walk.node(schema, &object, old.as_ref(), &FieldPath::default(), true);
    let Walk {
        unknown,
        mut violations,
        rules,
    } = walk;
    let blocked = violations
        .iter()
        .any(|v| matches!(v.reason, Reason::TypeInvalid | Reason::NotSupported));
    if blocked && !rules.is_empty() {
        // The API server's `hasBlockingErr`: CEL rules assume the types are right.
        violations.push(Violation::new(
            &FieldPath::default(),
            Reason::Invalid,
            Some(quoted("null")),
            "some validation rules were not checked because the object was invalid; correct \
             the existing errors to complete validation",
        ));
    } else {
        violations.extend(cel::evaluate(&rules));
    }
    Checked {
        unknown,
        violations,
    }
}

#[derive(Default)]
struct Walk<'a> {
    unknown: Vec<FieldPath>,
    violations: Vec<Violation>,
    rules: Rules<'a>,
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name) == Some(&Value::Bool(true))
}

fn is_integer(value: &Value) -> bool {
    value.as_i64().is_some()
        || value.as_u64().is_some()
        || value.as_f64().is_some_and(|f| f.fract() == 0.0)
}

impl<'a> Walk<'a> {
    fn invalid(&mut self, path: &FieldPath, value: &Value, detail: String) {
        let violation = Violation::new(path, Reason::Invalid, Some(shown(value)), detail);
        self.violations.push(violation);
    }

    /// One value against one schema node; `root` for the object itself.
    fn node(
        &mut self,
        schema: &'a Value,
        value: &'a Value,
        old: Option<&'a Value>,
        path: &FieldPath,
        root: bool,
    ) {
        if value.is_null() && flag(schema, "nullable") {
            return;
        }
        if old == Some(value) && !root {
            // Ratcheting: an unchanged value is not the writer's doing.
            return;
        }
        if !self.type_matches(schema, value, path) {
            return;
        }
        self.enumeration(schema, value, path);
        match value {
            Value::String(text) => self.string(schema, text, value, path),
            Value::Number(_) => self.number(schema, value, path),
            Value::Array(items) => self.array(schema, items, old, path),
            Value::Object(map) => self.object(schema, map, old, path, root),
            _ => {}
        }
        if let Some(Value::Array(rules)) = schema.get("x-kubernetes-validations") {
            self.rules.push(cel::Site {
                path: path.clone(),
                schema,
                rules,
                value,
                old,
            });
        }
    }

    /// `type` and `x-kubernetes-int-or-string`; false (and a violation) on a mismatch.
    fn type_matches(&mut self, schema: &Value, value: &Value, path: &FieldPath) -> bool {
        let (wanted, matches) = if flag(schema, "x-kubernetes-int-or-string") {
            ("integer,string", is_integer(value) || value.is_string())
        } else {
            let Some(wanted) = schema.get("type").and_then(Value::as_str) else {
                return true;
            };
            let matches = match wanted {
                "object" => value.is_object(),
                "array" => value.is_array(),
                "string" => value.is_string(),
                "integer" => is_integer(value),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                _ => true,
            };
            (wanted, matches)
        };
        if !matches {
            let actual = quoted(type_name(value));
            self.violations.push(Violation::new(
                path,
                Reason::TypeInvalid,
                Some(actual.clone()),
                format!("{path} in body must be of type {wanted}: {actual}"),
            ));
        }
        matches
    }

    fn enumeration(&mut self, schema: &Value, value: &Value, path: &FieldPath) {
        let Some(Value::Array(allowed)) = schema.get("enum") else {
            return;
        };
        if allowed.contains(value) {
            return;
        }
        // The API server sorts them (`field.NotSupported`).
        let mut listed: Vec<String> = allowed.iter().map(shown).collect();
        listed.sort();
        self.violations.push(Violation::new(
            path,
            Reason::NotSupported,
            Some(shown(value)),
            format!("supported values: {}", listed.join(", ")),
        ));
    }

    fn string(&mut self, schema: &Value, text: &str, value: &Value, path: &FieldPath) {
        let length = text.chars().count();
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && (length as u64) < min
        {
            let detail = format!("{path} in body should be at least {min} chars long");
            self.invalid(path, value, detail);
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && (length as u64) > max
        {
            let detail = format!("may not be more than {max} bytes");
            let violation = Violation::new(path, Reason::TooLong, None, detail);
            self.violations.push(violation);
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && !super::metadata::matches(pattern, text)
        {
            let detail = format!("{path} in body should match '{pattern}'");
            self.invalid(path, value, detail);
        }
        let format_ok = match schema.get("format").and_then(Value::as_str) {
            Some("date-time") => chrono::DateTime::parse_from_rfc3339(text).is_ok(),
            Some("byte") => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .is_ok()
            }
            _ => true,
        };
        if !format_ok {
            let format = schema["format"].as_str().unwrap_or_default();
            let detail = format!("{path} in body must be of type {format}: {}", quoted(text));
            self.invalid(path, value, detail);
        }
    }

    fn number(&mut self, schema: &Value, value: &Value, path: &FieldPath) {
        let Some(number) = value.as_f64() else {
            return;
        };
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            let exclusive = flag(schema, "exclusiveMinimum");
            if number < min || (exclusive && number <= min) {
                let bound = schema["minimum"].to_string();
                let relation = if exclusive { "" } else { " or equal to" };
                let detail = format!("{path} in body should be greater than{relation} {bound}");
                self.invalid(path, value, detail);
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            let exclusive = flag(schema, "exclusiveMaximum");
            if number > max || (exclusive && number >= max) {
                let bound = schema["maximum"].to_string();
                let relation = if exclusive { "" } else { " or equal to" };
                let detail = format!("{path} in body should be less than{relation} {bound}");
                self.invalid(path, value, detail);
            }
        }
    }

    fn array(
        &mut self,
        schema: &'a Value,
        items: &'a [Value],
        old: Option<&'a Value>,
        path: &FieldPath,
    ) {
        let count = items.len() as u64;
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && count < min
        {
            let detail = format!("{path} in body should have at least {min} items");
            self.invalid(path, &Value::from(count), detail);
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && count > max
        {
            let detail = format!("must have at most {max} items");
            let shown = Some(count.to_string());
            let violation = Violation::new(path, Reason::TooMany, shown, detail);
            self.violations.push(violation);
        }
        let keys = list_map_keys(schema);
        self.unique_items(schema, items, keys.as_deref(), path);
        let Some(item_schema) = schema.get("items") else {
            return;
        };
        let old_items = old.and_then(Value::as_array);
        for (index, item) in items.iter().enumerate() {
            // Only the items of a `map` list have an old self (the item with the same keys).
            let old_item = keys.as_deref().and_then(|keys| {
                let key = key_of(item, keys);
                old_items?.iter().find(|o| key_of(o, keys) == key)
            });
            let item_path = path.child(Segment::Index(index));
            self.node(item_schema, item, old_item, &item_path, false);
        }
    }

    /// `x-kubernetes-list-type: set` items and `map` keys are unique.
    fn unique_items(
        &mut self,
        schema: &Value,
        items: &[Value],
        keys: Option<&[String]>,
        path: &FieldPath,
    ) {
        let set = schema.get("x-kubernetes-list-type") == Some(&Value::from("set"));
        if !set && keys.is_none() {
            return;
        }
        let identity = |item: &Value| keys.map_or_else(|| item.clone(), |keys| key_of(item, keys));
        for (index, item) in items.iter().enumerate() {
            let id = identity(item);
            if items[..index].iter().any(|earlier| identity(earlier) == id) {
                let shown = if keys.is_some() {
                    id.to_string()
                } else {
                    shown(item)
                };
                let item_path = path.child(Segment::Index(index));
                let violation = Violation::new(&item_path, Reason::Duplicate, Some(shown), "");
                self.violations.push(violation);
            }
        }
    }

    fn object(
        &mut self,
        schema: &'a Value,
        map: &'a Map<String, Value>,
        old: Option<&'a Value>,
        path: &FieldPath,
        root: bool,
    ) {
        self.required(schema, map, path);
        self.property_count(schema, map, path);
        let embedded = flag(schema, "x-kubernetes-embedded-resource");
        if root || embedded {
            let meta = metadata::check(map, path, root, embedded);
            self.unknown.extend(meta.unknown);
            self.violations.extend(meta.violations);
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        let open = flag(schema, "x-kubernetes-preserve-unknown-fields")
            || additional == Some(&Value::Bool(true));
        for (key, child) in map {
            let old_child = old.and_then(|o| o.get(key));
            if (root || embedded) && ENVELOPE.contains(&key.as_str()) {
                continue;
            }
            if let Some(property) = properties.and_then(|p| p.get(key)) {
                self.node(property, child, old_child, &path.key(key), false);
            } else if let Some(additional) = additional.filter(|a| a.is_object()) {
                let child_path = path.child(Segment::MapKey(key.clone()));
                self.node(additional, child, old_child, &child_path, false);
            } else if !open {
                self.unknown.push(path.key(key));
            }
        }
    }

    fn required(&mut self, schema: &Value, map: &Map<String, Value>, path: &FieldPath) {
        let Some(Value::Array(required)) = schema.get("required") else {
            return;
        };
        for field in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(field) {
                let violation = Violation::new(&path.key(field), Reason::Required, None, "");
                self.violations.push(violation);
            }
        }
    }

    fn property_count(&mut self, schema: &Value, map: &Map<String, Value>, path: &FieldPath) {
        let count = map.len() as u64;
        if let Some(min) = schema.get("minProperties").and_then(Value::as_u64)
            && count < min
        {
            let detail = format!("{path} in body should have at least {min} properties");
            self.invalid(path, &Value::from(count), detail);
        }
        if let Some(max) = schema.get("maxProperties").and_then(Value::as_u64)
            && count > max
        {
            let detail = format!("must have at most {max} items");
            let shown = Some(count.to_string());
            let violation = Violation::new(path, Reason::TooMany, shown, detail);
            self.violations.push(violation);
        }
    }
}

/// The `x-kubernetes-list-map-keys` of a `map` list.
fn list_map_keys(schema: &Value) -> Option<Vec<String>> {
    if schema.get("x-kubernetes-list-type") != Some(&Value::from("map")) {
        return None;
    }
    let keys = schema.get("x-kubernetes-list-map-keys")?.as_array()?;
    Some(
        keys.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
    )
}

/// An item's map keys, as an object (`{"type":"Ready"}`).
fn key_of(item: &Value, keys: &[String]) -> Value {
    let mut out = Map::new();
    for key in keys {
        out.insert(key.clone(), item.get(key).cloned().unwrap_or(Value::Null));
    }
    Value::Object(out)
}

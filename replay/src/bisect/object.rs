//! The predicates over one object as `get` renders it: a field at a JSON pointer
//! (`object:…`), or a condition named by its type (`condition:…`), so a condition is found
//! wherever it stands in `status.conditions`.

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use serde_json::Value;

use super::predicate::{FieldTest, Predicate};
use crate::text::string_field;

/// The object an `object:` or `condition:` predicate names, as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedObject {
    /// Kind as typed (resolved against each state, as `get` does).
    pub kind: String,
    /// Namespace, when given.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl NamedObject {
    /// Its key and its rendering in `state`, if the kind resolves and the object exists.
    fn render(&self, state: &State) -> Option<(ObjectKey, Value)> {
        let info = flotilla_projections::resolve_kind(state, &self.kind)?;
        let key = info.key(self.namespace.as_deref(), &self.name);
        let object = flotilla_projections::render_object(state, &key)?;
        Some((key, object))
    }
}

/// `KIND/NAME` or `KIND/NS/NAME`, as typed.
impl std::fmt::Display for NamedObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{}/{namespace}/{}", self.kind, self.name),
            None => write!(f, "{}/{}", self.kind, self.name),
        }
    }
}

/// `KIND/NAME` or `KIND/NS/NAME`, then `:` and the rest.
fn split_object(rest: &str) -> Result<(NamedObject, &str), String> {
    let (object, expression) = rest
        .split_once(':')
        .ok_or("expected KIND/[NS/]NAME: and a test")?;
    let (kind, namespace, name) = match object.split('/').collect::<Vec<_>>().as_slice() {
        [kind, name] => (*kind, None, *name),
        [kind, namespace, name] => (*kind, Some(*namespace), *name),
        _ => return Err("the object is KIND/NAME or KIND/NS/NAME".into()),
    };
    if kind.is_empty() || name.is_empty() || namespace == Some("") {
        return Err("the object is KIND/NAME or KIND/NS/NAME".into());
    }
    let object = NamedObject {
        kind: kind.to_owned(),
        namespace: namespace.map(str::to_owned),
        name: name.to_owned(),
    };
    Ok((object, expression))
}

/// `condition:KIND/[NS/]NAME:TYPE=STATUS`.
pub(crate) fn parse_condition(rest: &str) -> Result<Predicate, String> {
    let (object, expression) = split_object(rest)?;
    let (condition_type, status) = expression
        .split_once('=')
        .filter(|(t, s)| !t.is_empty() && !s.is_empty())
        .ok_or("expected condition:KIND/[NS/]NAME:TYPE=STATUS (e.g. Healthy=False)")?;
    Ok(Predicate::Condition {
        object,
        condition_type: condition_type.to_owned(),
        status: status.to_owned(),
    })
}

/// The object's condition of `condition_type` has `status`: why, with since when and its
/// reason and message.
pub(crate) fn condition_holds(
    state: &State,
    named: &NamedObject,
    condition_type: &str,
    status: &str,
) -> Option<String> {
    let (key, object) = named.render(state)?;
    let conditions = object.pointer("/status/conditions")?.as_array()?;
    let condition = conditions
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(condition_type))?;
    let text = |field: &str| string_field(condition, field);
    if text("status") != status {
        return None;
    }
    let mut why = format!("{} {condition_type} is {status}", key.display());
    let since = text("lastTransitionTime");
    if !since.is_empty() {
        why.push_str(&format!(" since {since}"));
    }
    let (reason, message) = (text("reason"), text("message"));
    if !reason.is_empty() {
        why.push_str(&format!(" ({reason}"));
        if !message.is_empty() {
            why.push_str(&format!(": {message}"));
        }
        why.push(')');
    }
    Some(why)
}

pub(crate) fn parse_object(rest: &str) -> Result<Predicate, String> {
    let (object, expression) = split_object(rest)?;
    let (pointer, test) = if let Some(pointer) = expression.strip_suffix(" exists") {
        (pointer, FieldTest::Exists)
    } else if let Some((pointer, value)) = expression.split_once("==") {
        (pointer, FieldTest::Equals(value.to_owned()))
    } else if let Some((pointer, value)) = expression.split_once("!=") {
        (pointer, FieldTest::Differs(value.to_owned()))
    } else {
        return Err("expected POINTER==VALUE, POINTER!=VALUE or 'POINTER exists'".into());
    };
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(format!(
            "{pointer:?} is not a JSON pointer (e.g. /spec/replicas)"
        ));
    }
    Ok(Predicate::Object {
        object,
        pointer: pointer.to_owned(),
        test,
    })
}

pub(crate) fn object_field(
    state: &State,
    named: &NamedObject,
    pointer: &str,
    test: &FieldTest,
) -> Option<String> {
    let (key, object) = named.render(state)?;
    let field = object.pointer(pointer);
    let shown = |value: &Value| value.to_string();
    match (test, field) {
        (FieldTest::Exists, Some(value)) => {
            Some(format!("{} {pointer} is {}", key.display(), shown(value)))
        }
        (FieldTest::Equals(wanted), Some(value)) if field_equals(value, wanted) => {
            Some(format!("{} {pointer} is {}", key.display(), shown(value)))
        }
        (FieldTest::Differs(wanted), Some(value)) if !field_equals(value, wanted) => {
            Some(format!("{} {pointer} is {}", key.display(), shown(value)))
        }
        (FieldTest::Differs(_), None) => Some(format!("{} {pointer} is absent", key.display())),
        _ => None,
    }
}

/// VALUE as JSON when it parses, else as text; a string field also matches the raw text.
fn field_equals(value: &Value, wanted: &str) -> bool {
    let as_json = serde_json::from_str::<Value>(wanted).ok();
    as_json.as_ref() == Some(value) || value.as_str() == Some(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_as_json_or_as_text() {
        assert!(field_equals(&Value::from(2), "2"));
        assert!(field_equals(&Value::from("2"), "2"));
        assert!(field_equals(&Value::from("nginx:1.27"), "nginx:1.27"));
        assert!(!field_equals(&Value::from(3), "2"));
    }
}

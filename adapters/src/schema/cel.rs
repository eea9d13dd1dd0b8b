//! The CEL `x-kubernetes-validations` rules of a schema (KubeFleet's: `has`, `size`, `all`,
//! `exists`, `filter`, `matches`, `type()`, `self == oldSelf`), evaluated by the `cel` crate
//! with `self` bound to the value at the rule's node and `oldSelf` to the stored value there.
//! A rule that reads `oldSelf` is a transition rule: on a create, or where the old value cannot
//! be matched (a new field, an item of a list that is not a `map` list), it is not evaluated.
//! A rule that evaluates to false reports its `message` (else `failed rule: <rule>`) as the API
//! server does: `spec: Invalid value: "object": The placement field is immutable`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use cel::{Context, Program};
use serde_json::Value;

use super::path::FieldPath;
use super::violation::{Reason, Violation, quoted};

/// A schema node with rules, and the values they are about.
pub struct Site<'a> {
    /// Where the node is.
    pub path: FieldPath,
    /// The node's schema.
    pub schema: &'a Value,
    /// Its `x-kubernetes-validations`.
    pub rules: &'a [Value],
    /// `self`.
    pub value: &'a Value,
    /// `oldSelf`, on an update where the old value is known.
    pub old: Option<&'a Value>,
}

/// The sites of one object, in the order the walk met them.
pub type Rules<'a> = Vec<Site<'a>>;

/// Evaluates every rule at every site; the failures, in order.
pub fn evaluate(sites: &[Site<'_>]) -> Vec<Violation> {
    let mut out = Vec::new();
    for site in sites {
        for rule in site.rules {
            if let Some(violation) = evaluate_rule(site, rule) {
                out.push(violation);
            }
        }
    }
    out
}

fn evaluate_rule(site: &Site<'_>, rule: &Value) -> Option<Violation> {
    let text = rule.get("rule")?.as_str()?;
    let transition = text.contains("oldSelf");
    if transition && site.old.is_none() {
        return None;
    }
    let message = rule
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| format!("failed rule: {text}"), str::to_owned);
    let outcome = compiled(text).and_then(|program| {
        let mut context = Context::default();
        context.add_variable_from_value("self", to_cel(site.value));
        if let Some(old) = site.old {
            context.add_variable_from_value("oldSelf", to_cel(old));
        }
        program.execute(&context).map_err(|e| e.to_string())
    });
    let detail = match outcome {
        Ok(cel::Value::Bool(true)) => return None,
        Ok(cel::Value::Bool(false)) => message,
        Ok(other) => format!("{message} (the rule gave {other:?}, not a boolean)"),
        Err(error) => format!("{message} (the rule could not be evaluated: {error})"),
    };
    let schema_type = site
        .schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("");
    Some(Violation::new(
        &site.path,
        Reason::Invalid,
        Some(quoted(schema_type)),
        detail,
    ))
}

/// The compiled program of a rule, compiled once per thread.
fn compiled(rule: &str) -> Result<Rc<Program>, String> {
    thread_local! {
        static PROGRAMS: RefCell<HashMap<String, Rc<Program>>> = RefCell::default();
    }
    PROGRAMS.with(|programs| {
        if let Some(program) = programs.borrow().get(rule) {
            return Ok(Rc::clone(program));
        }
        let program = Rc::new(Program::compile(rule).map_err(|e| e.to_string())?);
        programs
            .borrow_mut()
            .insert(rule.to_owned(), Rc::clone(&program));
        Ok(program)
    })
}

/// A JSON value as CEL sees it: integers as `int` (`uint` past `i64`), other numbers as
/// `double`, objects as maps with string keys.
pub fn to_cel(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => n.as_i64().map_or_else(
            || {
                n.as_u64().map_or_else(
                    || cel::Value::Float(n.as_f64().unwrap_or_default()),
                    cel::Value::UInt,
                )
            },
            cel::Value::Int,
        ),
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let entries: HashMap<String, cel::Value> =
                map.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::Map(entries.into())
        }
    }
}

/// Every rule of a schema tree, for tests that they all compile.
#[cfg(test)]
pub fn all_rules(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(rules)) = map.get("x-kubernetes-validations") {
                out.extend(
                    rules
                        .iter()
                        .filter_map(|r| r["rule"].as_str().map(str::to_owned)),
                );
            }
            map.values().for_each(|child| all_rules(child, out));
        }
        Value::Array(items) => items.iter().for_each(|child| all_rules(child, out)),
        _ => {}
    }
}

/// Whether a rule compiles (for tests).
#[cfg(test)]
pub fn compiles(rule: &str) -> Result<(), String> {
    compiled(rule).map(|_| ())
}

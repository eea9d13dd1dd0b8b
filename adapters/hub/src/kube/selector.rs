//! `labelSelector` and `fieldSelector` query parameters, in the Kubernetes text syntax:
//! `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)` for labels; `path=v`,
//! `path==v`, `path!=v` for fields (`metadata.name`, `metadata.namespace`, or any dotted path
//! to a scalar of the object).

use serde_json::Value;

use super::status::ApiError;

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

/// Splits at commas that are not inside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0_i32, 0);
    for (index, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn set_of(text: &str) -> Option<Vec<String>> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
}

fn term(text: &str) -> Option<Requirement> {
    if let Some(key) = text.strip_prefix('!') {
        return Some(Requirement::NotExists(key.trim().to_owned()));
    }
    if let Some((key, value)) = text.split_once("!=") {
        return Some(Requirement::NotEquals(
            key.trim().into(),
            value.trim().into(),
        ));
    }
    if let Some((key, value)) = text.split_once("==").or_else(|| text.split_once('=')) {
        return Some(Requirement::Equals(key.trim().into(), value.trim().into()));
    }
    if let Some((key, set)) = text.split_once(" notin ") {
        return Some(Requirement::NotIn(key.trim().into(), set_of(set)?));
    }
    if let Some((key, set)) = text.split_once(" in ") {
        return Some(Requirement::In(key.trim().into(), set_of(set)?));
    }
    let key = text.trim();
    (!key.contains(' ')).then(|| Requirement::Exists(key.to_owned()))
}

impl Selector {
    /// Parses a selector; `param` names the parameter in the error.
    ///
    /// # Errors
    /// A term that is none of the accepted forms (400).
    pub fn parse(param: &str, text: &str) -> Result<Self, ApiError> {
        let requirements = split_terms(text)
            .into_iter()
            .map(|t| {
                term(t).ok_or_else(|| {
                    ApiError::bad_request(format!("unable to parse requirement {t:?} in {param}"))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { requirements })
    }

    /// Whether `lookup` (a key's value, if present) satisfies every requirement.
    pub fn matches(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements
            .iter()
            .all(|requirement| match requirement {
                Requirement::Equals(k, v) => lookup(k).is_some_and(|x| &x == v),
                Requirement::NotEquals(k, v) => lookup(k).is_none_or(|x| &x != v),
                Requirement::Exists(k) => lookup(k).is_some(),
                Requirement::NotExists(k) => lookup(k).is_none(),
                Requirement::In(k, set) => lookup(k).is_some_and(|x| set.contains(&x)),
                Requirement::NotIn(k, set) => lookup(k).is_none_or(|x| !set.contains(&x)),
            })
    }
}

/// A label of an object.
pub fn label(object: &Value, key: &str) -> Option<String> {
    object["metadata"]["labels"][key]
        .as_str()
        .map(str::to_owned)
}

/// A field of an object by dotted path; a missing field reads as `""`, as in Kubernetes, whose
/// selectable fields always hold a string (`involvedObject.namespace=` finds the events of a
/// cluster-scoped object, as `kubectl describe` asks).
pub fn field(object: &Value, path: &str) -> Option<String> {
    let found = path
        .split('.')
        .try_fold(object, |at, part| at.get(part))
        .and_then(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        });
    Some(found.unwrap_or_default())
}

/// The selectors a list or watch request carries.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    labels: Selector,
    fields: Selector,
}

impl Filter {
    /// Reads `labelSelector` and `fieldSelector`.
    ///
    /// # Errors
    /// A selector that does not parse.
    pub fn from_params(params: &super::request::Params) -> Result<Self, ApiError> {
        let parse = |name: &str| {
            params
                .get(name)
                .map_or(Ok(Selector::default()), |text| Selector::parse(name, text))
        };
        Ok(Self {
            labels: parse("labelSelector")?,
            fields: parse("fieldSelector")?,
        })
    }

    /// Whether an object passes both selectors.
    pub fn admits(&self, object: &Value) -> bool {
        self.labels.matches(|key| label(object, key))
            && self.fields.matches(|path| field(object, path))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn label_selectors_take_every_kubernetes_form() {
        let object = json!({"metadata": {"labels": {"env": "prod", "tier": "web"}}});
        let admits = |text: &str| {
            Selector::parse("labelSelector", text)
                .map(|s| s.matches(|k| label(&object, k)))
                .unwrap_or(false)
        };
        assert!(admits("env=prod"));
        assert!(admits("env==prod,tier"));
        assert!(admits("env in (dev,prod)"));
        assert!(admits("env notin (dev),!missing"));
        assert!(!admits("env!=prod"));
        assert!(!admits("tier in (db)"));
        assert!(!admits("missing"));
    }

    #[test]
    fn field_selectors_read_dotted_paths() {
        let object = json!({"metadata": {"name": "crp-1"}, "spec": {"state": "Run"}});
        let selector = Selector::parse("fieldSelector", "metadata.name=crp-1,spec.state!=Stop");
        assert!(selector.is_ok_and(|s| s.matches(|p| field(&object, p))));
        let namespace = Selector::parse("fieldSelector", "metadata.namespace=");
        assert!(namespace.is_ok_and(|s| s.matches(|p| field(&object, p))));
    }
}

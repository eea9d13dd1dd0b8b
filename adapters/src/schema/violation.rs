//! A schema violation, worded as the API server's `field.Error` (`k8s.io/apimachinery/pkg/util/
//! validation/field`): `spec.policy.placementType: Unsupported value: "PickAl": supported
//! values: "PickAll", "PickFixed", "PickN"`.

use std::fmt;

use serde_json::Value;

use super::path::FieldPath;

/// The kind of a violation: the API server's `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `Invalid value`.
    Invalid,
    /// `Invalid value`, for a value of the wrong type.
    TypeInvalid,
    /// `Unsupported value` (not in the `enum`).
    NotSupported,
    /// `Required value`.
    Required,
    /// `Duplicate value` (an item of a `set` or `map` list twice).
    Duplicate,
    /// `Too long` (over `maxLength`).
    TooLong,
    /// `Too many` (over `maxItems` or `maxProperties`).
    TooMany,
    /// A field the schema does not declare (never from the API server's validation: it
    /// reports these as strict decoding errors or warnings).
    UnknownField,
}

impl Reason {
    /// What the message says (`field.ErrorType.String()`).
    #[must_use]
    pub fn text(self) -> &'static str {
        match self {
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::UnknownField => "Unknown field",
        }
    }

    /// The `reason` of a `Status` cause (`metav1.CauseType`).
    #[must_use]
    pub fn cause(self) -> &'static str {
        match self {
            Self::Invalid => "FieldValueInvalid",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::UnknownField => "FieldValueUnknown",
        }
    }
}

/// One violation of one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The field, as the API server names it (`spec.policy.affinity`, `spec.x[0].y`); empty for
    /// the object itself (printed `<nil>`).
    pub field: String,
    /// What kind of violation.
    pub reason: Reason,
    /// The bad value as the message shows it (`"PickAl"`, `0`, `"object"`), if it shows one.
    pub value: Option<String>,
    /// What is wrong, after the value.
    pub detail: String,
}

impl Violation {
    pub(crate) fn new(
        path: &FieldPath,
        reason: Reason,
        value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            field: path.to_string(),
            reason,
            value,
            detail: detail.into(),
        }
    }

    pub(crate) fn unknown_field(path: &FieldPath) -> Self {
        Self::new(path, Reason::UnknownField, None, "")
    }

    /// The message after the field name (`field.Error.ErrorBody`).
    #[must_use]
    pub fn body(&self) -> String {
        let mut body = self.reason.text().to_owned();
        if let Some(value) = &self.value {
            body.push_str(": ");
            body.push_str(value);
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = if self.field.is_empty() {
            "<nil>"
        } else {
            &self.field
        };
        write!(f, "{field}: {}", self.body())
    }
}

/// A value as the API server's messages quote it: strings quoted, numbers and booleans bare,
/// `null` as `"null"`, objects and lists by their type name.
#[must_use]
pub fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => quoted(text),
        Value::Number(_) | Value::Bool(_) => value.to_string(),
        other => quoted(type_name(other)),
    }
}

/// Go's `%q` of a string, close enough: JSON's escaping.
#[must_use]
pub fn quoted(text: &str) -> String {
    Value::from(text).to_string()
}

/// The JSON type of a value as schema messages name it.
#[must_use]
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What checking one object found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checked {
    /// Fields the schema does not declare, in document order.
    pub unknown: Vec<FieldPath>,
    /// Schema violations, in document order (CEL rules last).
    pub violations: Vec<Violation>,
}

//! The typed specs of `ClusterResourcePlacementEviction` and
//! `ClusterResourcePlacementDisruptionBudget` (`placement.kubernetes-fleet.io` v1beta1), parsed
//! from JSON with KubeFleet's validation rules, each failure naming its field.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{FieldError, IntOrPercent, typed};

/// Longest `placementName` / `clusterName` (KubeFleet's `MaxLength=255`).
pub const TARGET_NAME_CHARS_MAX: usize = 255;

/// `spec` of an eviction: which placement's resources to remove from which cluster. Immutable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvictionSpec {
    /// The `ClusterResourcePlacement` that propagated the resources.
    pub placement_name: String,
    /// The member cluster to remove them from.
    pub cluster_name: String,
}

/// `spec` of a disruption budget: exactly one of `maxUnavailable` / `minAvailable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DisruptionBudgetSpec {
    /// At most this many placements (clusters) may be unavailable for an eviction to proceed.
    MaxUnavailable(IntOrPercent),
    /// At least this many placements (clusters) must stay available.
    MinAvailable(IntOrPercent),
}

impl DisruptionBudgetSpec {
    /// The spec field that is set.
    #[must_use]
    pub fn field(self) -> &'static str {
        match self {
            DisruptionBudgetSpec::MaxUnavailable(_) => "maxUnavailable",
            DisruptionBudgetSpec::MinAvailable(_) => "minAvailable",
        }
    }

    /// The value of the field that is set.
    #[must_use]
    pub fn amount(self) -> IntOrPercent {
        match self {
            DisruptionBudgetSpec::MaxUnavailable(amount)
            | DisruptionBudgetSpec::MinAvailable(amount) => amount,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EvictionWire {
    #[serde(default)]
    placement_name: String,
    #[serde(default)]
    cluster_name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BudgetWire {
    #[serde(default)]
    max_unavailable: Option<Value>,
    #[serde(default)]
    min_available: Option<Value>,
}

/// Parses and validates an eviction's `spec`.
///
/// # Errors
/// A missing, empty or over-long `placementName` / `clusterName`, or a wrong type.
pub fn parse_eviction_spec(spec: &Value) -> Result<EvictionSpec, FieldError> {
    let wire: EvictionWire = typed(spec, "spec")?;
    target_name("spec.placementName", &wire.placement_name)?;
    target_name("spec.clusterName", &wire.cluster_name)?;
    Ok(EvictionSpec {
        placement_name: wire.placement_name,
        cluster_name: wire.cluster_name,
    })
}

fn target_name(field: &str, name: &str) -> Result<(), FieldError> {
    if name.is_empty() {
        return Err(FieldError::new(field, "is required"));
    }
    let chars = name.chars().count();
    if chars > TARGET_NAME_CHARS_MAX {
        return Err(FieldError::new(
            field,
            format!("is {chars} characters long, at most {TARGET_NAME_CHARS_MAX} are allowed"),
        ));
    }
    Ok(())
}

/// Parses and validates a disruption budget's `spec`.
///
/// # Errors
/// Both or neither of `maxUnavailable` / `minAvailable` set, or a value that is neither an
/// integer ≥ 0 nor a percentage matching `^(100|[0-9]{1,2})%$`.
pub fn parse_budget_spec(spec: &Value) -> Result<DisruptionBudgetSpec, FieldError> {
    let wire: BudgetWire = typed(spec, "spec")?;
    let max_unavailable = wire.max_unavailable.filter(|v| !v.is_null());
    let min_available = wire.min_available.filter(|v| !v.is_null());
    match (max_unavailable, min_available) {
        (Some(_), Some(_)) => Err(FieldError::new(
            "spec",
            "Both MaxUnavailable and MinAvailable cannot be specified: set exactly one of \
             maxUnavailable and minAvailable",
        )),
        (None, None) => Err(FieldError::new(
            "spec",
            "exactly one of maxUnavailable and minAvailable must be set, and neither is",
        )),
        (Some(value), None) => Ok(DisruptionBudgetSpec::MaxUnavailable(amount(
            "spec.maxUnavailable",
            &value,
        )?)),
        (None, Some(value)) => Ok(DisruptionBudgetSpec::MinAvailable(amount(
            "spec.minAvailable",
            &value,
        )?)),
    }
}

/// KubeFleet's rule: a string must match `^(100|[0-9]{1,2})%$`, an integer must be ≥ 0.
fn amount(field: &str, value: &Value) -> Result<IntOrPercent, FieldError> {
    let invalid = |shown: String| {
        FieldError::new(
            field,
            format!(
                "{shown} is invalid: an integer must be greater than or equal to 0, a string \
                 must be a percentage matching ^(100|[0-9]{{1,2}})%$"
            ),
        )
    };
    match value {
        Value::Number(number) => match number.as_i64() {
            Some(count) if count >= 0 => Ok(IntOrPercent::Int(count)),
            _ => Err(invalid(number.to_string())),
        },
        Value::String(text) if text.ends_with('%') => {
            IntOrPercent::parse(text).map_err(|_| invalid(format!("{text:?}")))
        }
        Value::String(text) => Err(invalid(format!("{text:?}"))),
        other => Err(invalid(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_budget_reads_an_integer_or_a_percentage() {
        assert_eq!(
            parse_budget_spec(&json!({"minAvailable": 2})),
            Ok(DisruptionBudgetSpec::MinAvailable(IntOrPercent::Int(2)))
        );
        assert_eq!(
            parse_budget_spec(&json!({"maxUnavailable": "25%"})),
            Ok(DisruptionBudgetSpec::MaxUnavailable(IntOrPercent::Percent(
                25
            )))
        );
        assert_eq!(
            parse_budget_spec(&json!({"maxUnavailable": 0, "minAvailable": null})),
            Ok(DisruptionBudgetSpec::MaxUnavailable(IntOrPercent::Int(0)))
        );
    }

    #[test]
    fn a_string_count_is_not_a_percentage() {
        let error = parse_budget_spec(&json!({"minAvailable": "3"})).expect_err("invalid");
        assert_eq!(error.field, "spec.minAvailable");
    }
}

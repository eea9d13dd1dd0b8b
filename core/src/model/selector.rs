//! Kubernetes label selectors (`matchLabels` AND `matchExpressions`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LabelLookup;

/// A label selector. An empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Exact label matches.
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements.
    #[serde(default)]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One set-based requirement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// Label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: SelectorOperator,
    /// Values for `In` / `NotIn`.
    #[serde(default)]
    pub values: Vec<String>,
}

/// Label selector operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SelectorOperator {
    /// The label's value is one of `values`.
    In,
    /// The label is absent or its value is not in `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

impl LabelSelector {
    /// Whether `labels` satisfy every term.
    #[must_use]
    pub fn matches(&self, labels: &impl LabelLookup) -> bool {
        self.match_labels
            .iter()
            .all(|(key, value)| labels.label(key) == Some(value.as_str()))
            && self.match_expressions.iter().all(|req| req.matches(labels))
    }

    /// Checks the Kubernetes rules for a selector; returns the first problem.
    ///
    /// # Errors
    /// A message naming the offending requirement.
    pub fn validate(&self) -> Result<(), String> {
        for (index, req) in self.match_expressions.iter().enumerate() {
            let needs_values =
                matches!(req.operator, SelectorOperator::In | SelectorOperator::NotIn);
            if needs_values && req.values.is_empty() {
                return Err(format!(
                    "matchExpressions[{index}]: operator {:?} needs at least one value",
                    req.operator
                ));
            }
            if !needs_values && !req.values.is_empty() {
                return Err(format!(
                    "matchExpressions[{index}]: operator {:?} takes no values",
                    req.operator
                ));
            }
        }
        Ok(())
    }
}

impl LabelSelectorRequirement {
    fn matches(&self, labels: &impl LabelLookup) -> bool {
        let value = labels.label(&self.key);
        let listed = |v: &str| self.values.iter().any(|listed| listed == v);
        match self.operator {
            SelectorOperator::In => value.is_some_and(listed),
            SelectorOperator::NotIn => value.is_none_or(|v| !listed(v)),
            SelectorOperator::Exists => value.is_some(),
            SelectorOperator::DoesNotExist => value.is_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_selector_matches_everything_and_terms_are_anded() {
        let labels: BTreeMap<String, String> = [("env".to_string(), "prod".to_string())]
            .into_iter()
            .collect();
        assert!(LabelSelector::default().matches(&labels));
        let selector = LabelSelector {
            match_labels: labels.clone(),
            match_expressions: vec![LabelSelectorRequirement {
                key: "region".into(),
                operator: SelectorOperator::DoesNotExist,
                values: vec![],
            }],
        };
        assert!(selector.matches(&labels));
        let mut with_region = labels;
        with_region.insert("region".into(), "east".into());
        assert!(!selector.matches(&with_region));
    }
}

//! Reserved variables in JSON patch values, substituted per member cluster in the value's JSON
//! text before it is decoded (never in paths). Other spellings (`${Member-Cluster-Name}`,
//! `$CLUSTER_NAME`) are left as they are.

/// Replaced by the member cluster's name, on every occurrence.
pub const MEMBER_CLUSTER_NAME: &str = "${MEMBER-CLUSTER-NAME}";
/// `${MEMBER-CLUSTER-LABEL-KEY-<key>}` is replaced by the value of the cluster's label `<key>`.
pub const MEMBER_CLUSTER_LABEL_KEY_PREFIX: &str = "${MEMBER-CLUSTER-LABEL-KEY-";

/// Substitutes the reserved variables in `text` for the cluster `cluster` with `labels`.
///
/// # Errors
/// A label variable without its closing `}`, or naming a label the cluster does not have.
pub fn substitute(
    text: &str,
    cluster: &str,
    labels: &impl crate::model::LabelLookup,
) -> Result<String, String> {
    let named = text.replace(MEMBER_CLUSTER_NAME, cluster);
    let mut out = String::with_capacity(named.len());
    let mut rest = named.as_str();
    // Each pass consumes one variable or ends; substituted values are never scanned again.
    while let Some(start) = rest.find(MEMBER_CLUSTER_LABEL_KEY_PREFIX) {
        out.push_str(&rest[..start]);
        let after = &rest[start + MEMBER_CLUSTER_LABEL_KEY_PREFIX.len()..];
        let Some(end) = after.find('}') else {
            return Err(format!(
                "variable {MEMBER_CLUSTER_LABEL_KEY_PREFIX}… has no closing \"}}\""
            ));
        };
        let key = &after[..end];
        let Some(value) = labels.label(key) else {
            return Err(format!(
                "label key {key:?} of variable {MEMBER_CLUSTER_LABEL_KEY_PREFIX}{key}}} is not \
                 found on member cluster {cluster}"
            ));
        };
        out.push_str(value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn labels() -> BTreeMap<String, String> {
        [("region".to_owned(), "east".to_owned())]
            .into_iter()
            .collect()
    }

    #[test]
    fn name_and_labels_are_substituted_everywhere() {
        let text = r#"{"a":"${MEMBER-CLUSTER-NAME}-${MEMBER-CLUSTER-LABEL-KEY-region}","b":"${MEMBER-CLUSTER-NAME}"}"#;
        assert_eq!(
            substitute(text, "c1", &labels()),
            Ok(r#"{"a":"c1-east","b":"c1"}"#.to_owned())
        );
    }

    #[test]
    fn other_spellings_are_left_alone() {
        let text = r#""${Member-Cluster-Name} $CLUSTER_NAME""#;
        assert_eq!(substitute(text, "c1", &labels()), Ok(text.to_owned()));
    }

    #[test]
    fn missing_labels_and_unclosed_variables_fail() {
        let missing = substitute(r#""${MEMBER-CLUSTER-LABEL-KEY-zone}""#, "c1", &labels());
        assert!(missing.is_err_and(|e| e.contains("\"zone\"") && e.contains("c1")));
        let unclosed = substitute(r#""${MEMBER-CLUSTER-LABEL-KEY-region""#, "c1", &labels());
        assert!(unclosed.is_err_and(|e| e.contains("closing")));
    }
}

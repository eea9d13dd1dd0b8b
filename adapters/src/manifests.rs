//! Reading users' YAML: multi-document files as `kubectl apply -f` takes them.
//!
//! Every document is parsed and validated against the typed model before anything is sent, so
//! one bad document rejects the whole file and nothing is written. Errors name the file, the
//! document (1-based, as a person counts `---` sections) and the field.

use flotilla_core::query::manifest::{self, Manifest};
use serde_json::Value;

/// One parsed document with where it came from.
#[derive(Debug, Clone)]
pub struct Document {
    /// 1-based document number within the file.
    pub index: usize,
    /// The document as JSON.
    pub value: Value,
    /// The validated manifest.
    pub manifest: Manifest,
}

/// Why a file of manifests was refused.
#[derive(Debug, thiserror::Error)]
#[error("{file}: document {document}{}: {message}", field.as_deref().map(|f| format!(", field {f}")).unwrap_or_default())]
pub struct ManifestError {
    /// File name as given (`-` for stdin).
    pub file: String,
    /// 1-based document number.
    pub document: usize,
    /// Field path, when the problem is in one field.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// Splits YAML text into documents at `---` lines, keeping each document's first line number.
fn split_documents(text: &str) -> Vec<(usize, String)> {
    let mut documents = Vec::new();
    let mut current = String::new();
    let mut first_line = 1;
    for (number, line) in text.lines().enumerate() {
        let separator = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if separator || line == "..." {
            documents.push((first_line, std::mem::take(&mut current)));
            first_line = number + 2;
            if let Some(rest) = line.strip_prefix("---").filter(|_| separator) {
                current.push_str(rest.trim_start());
                current.push('\n');
                first_line = number + 1;
            }
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    documents.push((first_line, current));
    documents
}

fn is_blank(document: &str) -> bool {
    document.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with('#')
    })
}

/// One document of a file as YAML gave it, not yet validated.
#[derive(Debug, Clone, PartialEq)]
pub struct RawDocument {
    /// 1-based document number within the file.
    pub index: usize,
    /// The document (or one item of a `List`) as JSON.
    pub value: Value,
}

/// Parses every document of a YAML (or JSON) file, without validating it as a manifest. A
/// document that is a Kubernetes `List` contributes its `items`.
///
/// # Errors
/// The first document that is not YAML, with file and document.
pub fn read_documents(file: &str, text: &str) -> Result<Vec<RawDocument>, ManifestError> {
    let mut out = Vec::new();
    let mut index = 0;
    for (first_line, document) in split_documents(text) {
        if is_blank(&document) {
            continue;
        }
        index += 1;
        let value: Value = serde_saphyr::from_str(&document).map_err(|e| ManifestError {
            file: file.to_owned(),
            document: index,
            field: None,
            message: format!("invalid YAML (document starts at line {first_line}): {e}"),
        })?;
        let items = match value.get("items") {
            Some(Value::Array(items)) if value.get("kind") == Some(&Value::from("List")) => {
                items.clone()
            }
            _ => vec![value],
        };
        out.extend(items.into_iter().map(|value| RawDocument { index, value }));
    }
    Ok(out)
}

/// Parses every document of a YAML (or JSON) file and validates each as a manifest.
///
/// A document that is a Kubernetes `List` contributes its `items`.
///
/// # Errors
/// The first document that fails to parse or validate, with file, document and field.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<Document>, ManifestError> {
    parse_documents(file, read_documents(file, text)?)
}

/// Validates documents already read as manifests.
///
/// # Errors
/// The first document that fails to validate, with file, document and field.
pub fn parse_documents(file: &str, raw: Vec<RawDocument>) -> Result<Vec<Document>, ManifestError> {
    raw.into_iter()
        .map(|RawDocument { index, value }| {
            let manifest = manifest::parse_manifest(&value).map_err(|e| ManifestError {
                file: file.to_owned(),
                document: index,
                field: Some(e.field.clone()),
                message: e.message.clone(),
            })?;
            Ok(Document {
                index,
                value,
                manifest,
            })
        })
        .collect()
}

/// Holds every document of a file to its KubeFleet CRD schema (`crate::schema`) as `kubectl
/// apply --validate=MODE` has the API server do: violations always refuse the file, naming
/// file, document and field; unknown fields refuse it under `Strict`, and are dropped under
/// `Warn` (each returned as a warning) and `Ignore`.
///
/// # Errors
/// The first document that breaks its schema.
pub fn validate_documents(
    file: &str,
    documents: &mut [RawDocument],
    mode: crate::schema::FieldValidation,
) -> Result<Vec<String>, ManifestError> {
    use crate::schema::{self, FieldValidation};
    let mut warnings = Vec::new();
    for document in documents.iter_mut() {
        let checked = schema::check_manifest(&document.value);
        let refused_unknown = if mode == FieldValidation::Strict {
            checked.unknown.as_slice()
        } else {
            &[]
        };
        let mut problems = refused_unknown
            .iter()
            .map(|path| (path.to_string(), "unknown field".to_owned()))
            .chain(
                checked
                    .violations
                    .iter()
                    .map(|v| (v.field.clone(), v.body())),
            );
        if let Some((field, message)) = problems.next() {
            let more: Vec<String> = problems.map(|(f, m)| format!("field {f}: {m}")).collect();
            let message = if more.is_empty() {
                message
            } else {
                format!("{message}; also {}", more.join("; "))
            };
            return Err(ManifestError {
                file: file.to_owned(),
                document: document.index,
                field: Some(field),
                message,
            });
        }
        if mode == FieldValidation::Warn {
            warnings.extend(checked.unknown.iter().map(|path| {
                format!(
                    "{file}: document {}: unknown field {:?}",
                    document.index,
                    path.to_string()
                )
            }));
        }
        schema::prune(&mut document.value, &checked.unknown);
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: a}\ndata: {k: v}\n";

    #[test]
    fn reads_every_document() {
        let documents = parse_file("f.yaml", TWO).expect("valid");
        assert_eq!(documents.len(), 2);
        assert_eq!(documents[1].index, 2);
        assert_eq!(documents[1].manifest.key.display(), "ConfigMap/a/b");
    }

    #[test]
    fn errors_name_file_document_and_field() {
        let text = format!(
            "{TWO}---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {{name: m}}\nspec: {{heartbeatPeriodSeconds: soon}}\n"
        );
        let error = parse_file("fleet.yaml", &text).expect_err("invalid");
        assert_eq!(error.document, 3);
        assert_eq!(error.field.as_deref(), Some("spec.heartbeatPeriodSeconds"));
        assert!(
            error
                .to_string()
                .starts_with("fleet.yaml: document 3, field spec.heartbeatPeriodSeconds:")
        );
    }

    #[test]
    fn yaml_syntax_errors_name_the_document() {
        let text = format!("{TWO}---\nkind: [unclosed\n");
        let error = parse_file("x.yaml", &text).expect_err("invalid");
        assert_eq!(error.document, 3);
        assert!(error.field.is_none());
    }

    #[test]
    fn leading_separator_and_comments_are_not_documents() {
        let text = format!("# fleet\n---\n{TWO}---\n# trailing\n");
        assert_eq!(parse_file("f.yaml", &text).expect("valid").len(), 2);
    }

    #[test]
    fn validation_names_file_document_and_field_and_warn_drops_the_field() {
        use crate::schema::FieldValidation;
        let text = format!(
            "{TWO}---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n\
             kind: ClusterResourcePlacement\nmetadata: {{name: crp-1}}\nspec:\n  \
             resourceSelectors: [{{group: \"\", version: v1, kind: Namespace, name: a}}]\n  \
             policy: {{placementType: PickAll, afinity: {{}}}}\n"
        );
        let mut documents = read_documents("p.yaml", &text).expect("parses");
        let error = validate_documents("p.yaml", &mut documents, FieldValidation::Strict)
            .expect_err("strict refuses");
        assert_eq!(
            error.to_string(),
            "p.yaml: document 3, field spec.policy.afinity: unknown field"
        );
        let warnings = validate_documents("p.yaml", &mut documents, FieldValidation::Warn)
            .expect("warn accepts");
        assert_eq!(
            warnings,
            ["p.yaml: document 3: unknown field \"spec.policy.afinity\""]
        );
        assert!(
            documents[2].value["spec"]["policy"]
                .get("afinity")
                .is_none()
        );
        let mut documents =
            read_documents("p.yaml", &text.replace("PickAll", "PickAl")).expect("parses");
        let error = validate_documents("p.yaml", &mut documents, FieldValidation::Ignore)
            .expect_err("violations refuse under every mode");
        assert!(
            error
                .to_string()
                .contains("field spec.policy.placementType: Unsupported value")
        );
    }
}

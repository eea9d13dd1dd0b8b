//! `kubectl describe`-style text, as kubectl's generic describer prints custom resources such as
//! KubeFleet's (its `kubectl describe crp` sample).
//!
//! Layout: `Name:`, `Namespace:`, `Labels:` and `Annotations:` first, then every top-level field
//! of the rendered object in key order (`API Version:`, `Kind:`, `Metadata:`, `Spec:`,
//! `Status:`, …), nested fields indented two spaces per level, keys split into words the way
//! kubectl's `smartLabelFor` splits them (`heartbeatPeriodSeconds` → `Heartbeat Period
//! Seconds`, `apiVersion` → `API Version`), and values aligned per block as Go's tabwriter
//! aligns them. Every kind goes through this one generic layout, core kinds included (kubectl has
//! dedicated describers for those; a multi-line value such as a ConfigMap entry therefore breaks
//! the lines as the generic describer does). Placements end with KubeFleet's `Events:` section
//! (see `placement_events`); other kinds have none (the timeline is flotilla's equivalent).

use std::collections::BTreeMap;

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use serde_json::{Map, Value};

use crate::json::at;
use crate::objects::render_object;
use crate::tabwriter::{self, DESCRIBE};

/// kubectl's limit on an annotation line (`maxAnnotationLen`).
const ANNOTATION_LEN_MAX: usize = 140;
/// Annotations kubectl never shows.
const SKIPPED_ANNOTATIONS: [&str; 1] = ["kubectl.kubernetes.io/last-applied-configuration"];
/// Metadata fields shown in the header rather than under `Metadata:`.
const METADATA_IN_HEADER: [&str; 4] = ["name", "namespace", "labels", "annotations"];
/// Words kubectl keeps upper-case in labels.
const ACRONYMS: [&str; 5] = ["API", "URL", "UID", "OSB", "GUID"];

/// The `describe` text of the object stored under `key`; `None` if there is none.
#[must_use]
pub fn describe(state: &State, key: &ObjectKey) -> Option<String> {
    let mut object = render_object(state, key)?;
    if crate::staged::is_staged(key) {
        show_approval_wait_times(&mut object);
    }
    let Value::Object(content) = &object else {
        return None;
    };
    let mut lines = vec![
        format!("Name:\t{}", str_at(&object, &["metadata", "name"])),
        format!(
            "Namespace:\t{}",
            str_at(&object, &["metadata", "namespace"])
        ),
    ];
    labels(
        &mut lines,
        &string_map(at(&object, &["metadata", "labels"])),
    );
    annotations(
        &mut lines,
        string_map(at(&object, &["metadata", "annotations"])),
    );
    fields(&mut lines, 0, content, true);
    if key.group == flotilla_core::model::PLACEMENT_GROUP
        && matches!(
            key.kind.as_str(),
            "ClusterResourcePlacement" | "ResourcePlacement"
        )
    {
        lines.extend(crate::placement_events::lines(&object, state.now()));
    } else if flotilla_core::query::staged::is_run(key) {
        // Runs record their history in their conditions; there are no Kubernetes events.
        lines.push("Events:  <none>".to_owned());
    }
    let mut text = lines.join("\n");
    text.push('\n');
    Some(tabwriter::align(&text, DESCRIBE))
}

fn str_at<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    at(object, path).and_then(Value::as_str).unwrap_or_default()
}

fn string_map(value: Option<&Value>) -> BTreeMap<&str, &str> {
    let Some(Value::Object(map)) = value else {
        return BTreeMap::new();
    };
    map.iter()
        .filter_map(|(key, value)| Some((key.as_str(), value.as_str()?)))
        .collect()
}

/// kubectl's `printLabelsMultiline`: `key=value`, one per line, aligned under the first.
fn labels(lines: &mut Vec<String>, labels: &BTreeMap<&str, &str>) {
    if labels.is_empty() {
        lines.push("Labels:\t<none>".to_owned());
    }
    for (index, (key, value)) in labels.iter().enumerate() {
        let title = if index == 0 { "Labels:" } else { "" };
        lines.push(format!("{title}\t{key}={value}"));
    }
}

/// kubectl's `printAnnotationsMultiline`: `key: value`; long or multi-line values go on their own
/// indented lines, each cut at the annotation length limit.
fn annotations(lines: &mut Vec<String>, mut annotations: BTreeMap<&str, &str>) {
    annotations.retain(|key, _| !SKIPPED_ANNOTATIONS.contains(key));
    if annotations.is_empty() {
        lines.push("Annotations:\t<none>".to_owned());
    }
    for (index, (key, value)) in annotations.iter().enumerate() {
        let title = if index == 0 { "Annotations:" } else { "" };
        let value = value.strip_suffix('\n').unwrap_or(value);
        if value.len() + key.len() + 2 > ANNOTATION_LEN_MAX || value.contains('\n') {
            lines.push(format!("{title}\t{key}:"));
            for line in value.split('\n') {
                lines.push(format!("\t  {}", shorten(line, ANNOTATION_LEN_MAX - 2)));
            }
        } else {
            lines.push(format!("{title}\t{key}: {value}"));
        }
    }
}

/// Cuts at `bytes_max` bytes (kubectl counts bytes), backing off to a character boundary.
fn shorten(line: &str, bytes_max: usize) -> String {
    if line.len() <= bytes_max {
        return line.to_owned();
    }
    let mut end = bytes_max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &line[..end])
}

/// kubectl's `printUnstructuredContent`: maps and lists open a labelled block one level deeper,
/// scalars print as `Label:\tvalue`. At the top level, the metadata already shown in the header
/// is skipped.
fn fields(lines: &mut Vec<String>, level: usize, content: &Map<String, Value>, top: bool) {
    let indent = "  ".repeat(level);
    for (field, value) in content {
        let label = smart_label(field);
        match value {
            Value::Object(map) => {
                lines.push(format!("{indent}{label}:"));
                if top && field == "metadata" {
                    let rest: Map<String, Value> = map
                        .iter()
                        .filter(|(name, _)| !METADATA_IN_HEADER.contains(&name.as_str()))
                        .map(|(name, value)| (name.clone(), value.clone()))
                        .collect();
                    fields(lines, level + 1, &rest, false);
                } else {
                    fields(lines, level + 1, map, false);
                }
            }
            Value::Array(items) => {
                lines.push(format!("{indent}{label}:"));
                for item in items {
                    match item {
                        Value::Object(map) => fields(lines, level + 1, map, false),
                        other => lines.push(format!("{indent}  {}", go_value(other))),
                    }
                }
            }
            scalar => lines.push(format!("{indent}{label}:\t{}", go_value(scalar))),
        }
    }
}

/// A value as Go's `%v` prints what `encoding/json` decoded.
fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => text.clone(),
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(go_value).collect::<Vec<_>>().join(" ")
            )
        }
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{key}:{}", go_value(value)))
                .collect();
            format!("map[{}]", members.join(" "))
        }
    }
}

/// kubectl's `smartLabelFor`: camel-case words, title-cased, common acronyms upper-cased; a
/// field with characters other than letters and `-` is shown as it is.
pub(crate) fn smart_label(field: &str) -> String {
    if field.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return field.to_owned();
    }
    camel_case_split(field)
        .iter()
        .filter(|part| part.as_str() != "_")
        .map(|part| {
            let upper = part.to_uppercase();
            if ACRONYMS.contains(&upper.as_str()) {
                upper
            } else {
                title(part)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// First letter upper-case, the rest lower-case (`cases.Title` in current kubectl).
fn title(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// `fatih/camelcase.Split`: runs of lower-case, upper-case, digits and other characters, with an
/// upper-case run's last letter moved to a following lower-case run (`CRPGeneration` → `CRP`,
/// `Generation`).
fn camel_case_split(text: &str) -> Vec<String> {
    fn class(c: char) -> u8 {
        if c.is_lowercase() {
            1
        } else if c.is_uppercase() {
            2
        } else if c.is_numeric() {
            3
        } else {
            4
        }
    }
    let mut runs: Vec<Vec<char>> = Vec::new();
    let mut last_class = 0;
    for c in text.chars() {
        let current = class(c);
        match runs.last_mut() {
            Some(run) if current == last_class => run.push(c),
            _ => runs.push(vec![c]),
        }
        last_class = current;
    }
    for index in 0..runs.len().saturating_sub(1) {
        let upper_then_lower = runs[index].first().is_some_and(|c| c.is_uppercase())
            && runs[index + 1].first().is_some_and(|c| c.is_lowercase());
        if upper_then_lower && let Some(moved) = runs[index].pop() {
            runs[index + 1].insert(0, moved);
        }
    }
    runs.into_iter()
        .filter(|run| !run.is_empty())
        .map(|run| run.into_iter().collect())
        .collect()
}

/// Gives every Approval task a `waitTime` of `0s` for describe, as the seed's `kubectl describe
/// csur` samples print it (an older KubeFleet serialized a zero duration there). The served
/// object has none: KubeFleet's CRD now forbids `waitTime` on an Approval task.
fn show_approval_wait_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, member) in map.iter_mut() {
                let tasks = key == "beforeStageTasks" || key == "afterStageTasks";
                for task in member
                    .as_array_mut()
                    .into_iter()
                    .flatten()
                    .filter(|_| tasks)
                {
                    if let Some(task) = task.as_object_mut()
                        && task.get("type").is_some_and(|t| t == "Approval")
                    {
                        task.entry("waitTime").or_insert_with(|| Value::from("0s"));
                    }
                }
                show_approval_wait_times(member);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(show_approval_wait_times),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_split_like_kubectl() {
        assert_eq!(
            smart_label("heartbeatPeriodSeconds"),
            "Heartbeat Period Seconds"
        );
        assert_eq!(smart_label("apiVersion"), "API Version");
        assert_eq!(smart_label("uid"), "UID");
        assert_eq!(smart_label("resourceVersion"), "Resource Version");
        assert_eq!(
            smart_label("observedCRPGeneration"),
            "Observed Crp Generation"
        );
        assert_eq!(
            smart_label("kubernetes-fleet.io/node-count"),
            "kubernetes-fleet.io/node-count"
        );
        assert_eq!(smart_label("cpu"), "Cpu");
        assert_eq!(smart_label("type"), "Type");
    }

    #[test]
    fn long_annotations_are_cut() {
        assert_eq!(shorten("abcdef", 4), "abcd...");
        assert_eq!(shorten("abc", 4), "abc");
    }
}

//! The scenario file format (documented in `docs/scenarios.md`): a start time and a list of
//! steps, each a one-key mapping. The step names are a public contract.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use flotilla_core::wire::json_property::JsonPropertyValue;

use flotilla_core::RejectCode;

use flotilla_adapters::manifests::{self, RawDocument};

/// A parsed scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Event time of the first step.
    pub start: DateTime<Utc>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One step.
#[derive(Debug, Clone)]
pub enum Step {
    /// Apply one or more manifests, as YAML gave them: the hub validates each, and refuses an
    /// invalid one with a rejection.
    Apply(Vec<RawDocument>),
    /// Delete one object.
    Delete {
        /// Kind.
        kind: String,
        /// Optional API group.
        group: Option<String>,
        /// Optional namespace.
        namespace: Option<String>,
        /// Name.
        name: String,
    },
    /// A heartbeat from one member.
    Heartbeat {
        /// Cluster.
        cluster: String,
        /// Properties.
        properties: BTreeMap<String, String>,
        /// Resource usage.
        resource_usage: Option<flotilla_core::ResourceUsage>,
    },
    /// A work report from one member.
    Report(ReportStep),
    /// Approve an approval request.
    Approve {
        /// Request name.
        name: String,
        /// Namespace of a namespaced request.
        namespace: Option<String>,
        /// The `Approved` condition's reason (absent: `approved`).
        reason: Option<String>,
        /// The condition's message (absent: `approved`).
        message: Option<String>,
    },
    /// One measurement of an update run's Analysis task (`docs/rollout-safety.md`).
    Analysis(flotilla_core::AnalysisResult),
    /// Let event time pass.
    Advance(Duration),
    /// Set how the simulated member agents report work.
    Agents(AgentsStep),
    /// Set whether simulated member agents heartbeat by themselves while time advances.
    Heartbeats(bool),
    /// Fail the run unless the previous step was rejected with this code.
    ExpectRejection(RejectCode),
}

/// A `report` step.
#[derive(Debug, Clone)]
pub struct ReportStep {
    /// Cluster.
    pub cluster: String,
    /// Placement.
    pub placement: String,
    /// Namespace of a ResourcePlacement.
    pub namespace: Option<String>,
    /// Resource index; default: the last one the cluster reported on for this placement.
    pub resource_index: Option<u64>,
    /// Applied (default true).
    pub applied: Option<bool>,
    /// Available (default: same as applied).
    pub available: Option<bool>,
    /// Trackable (default true).
    pub trackable: bool,
    /// Message.
    pub message: String,
    /// Manifests that failed (`failedManifests`, as in the JSON event form).
    pub failed_manifests: Vec<flotilla_core::ManifestFailure>,
    /// `diffReported`, `diffedManifests` and `driftedManifests`, as in the JSON event form.
    pub differences: flotilla_core::Differences,
}

/// An `agents` step.
#[derive(Debug, Clone)]
pub enum AgentsStep {
    /// Every simulated member reports applied+available for all work it receives.
    Auto,
    /// Members report only when a `report` step says so.
    Manual,
    /// Per-cluster settings, e.g. `{member2: {available: false}}`.
    PerCluster(BTreeMap<String, AgentSettings>),
}

/// Per-cluster settings of a simulated member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentSettings {
    /// Report applied (default true).
    pub applied: Option<bool>,
    /// Report available (default true).
    pub available: Option<bool>,
    /// Report trackable (default true).
    pub trackable: Option<bool>,
    /// Heartbeat while time advances (default true when `heartbeats: auto`).
    pub heartbeat: Option<bool>,
}

/// A scenario file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {location}: {message}")]
pub struct ScenarioError {
    /// File name.
    pub file: String,
    /// `start`, `step 3 (apply)`, …
    pub location: String,
    /// What is wrong.
    pub message: String,
}

/// Parses a duration like `90s`, `5m`, `1h30m`, `500ms`, `2d`.
///
/// # Errors
/// A message when the text is not such a duration.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let mut total = Duration::zero();
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let number: i64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{text:?} is not a duration like 90s, 5m or 1h30m"))?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        total += match unit {
            "ms" => Duration::milliseconds(number),
            "s" => Duration::seconds(number),
            "m" => Duration::minutes(number),
            "h" => Duration::hours(number),
            "d" => Duration::days(number),
            _ => {
                return Err(format!(
                    "{text:?}: unknown unit {unit:?} (use ms, s, m, h or d)"
                ));
            }
        };
    }
    Ok(total)
}

/// Parses a scenario file.
///
/// # Errors
/// The first problem, with the step number.
pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let fail = |location: &str, message: String| ScenarioError {
        file: file.to_owned(),
        location: location.to_owned(),
        message,
    };
    let root: Value =
        serde_saphyr::from_str(text).map_err(|e| fail("document", format!("invalid YAML: {e}")))?;
    let start = root
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(|| fail("start", "an RFC 3339 start time is required".into()))?;
    let start = DateTime::parse_from_rfc3339(start)
        .map_err(|e| fail("start", format!("{start:?}: {e}")))?
        .with_timezone(&Utc);
    let raw_steps = match root.get("steps") {
        Some(Value::Array(steps)) => steps.clone(),
        None | Some(Value::Null) => Vec::new(),
        Some(_) => return Err(fail("steps", "must be a list".into())),
    };
    let mut steps = Vec::with_capacity(raw_steps.len());
    for (index, raw) in raw_steps.iter().enumerate() {
        let location = format!("step {}", index + 1);
        let Some((name, body)) = raw
            .as_object()
            .filter(|m| m.len() == 1)
            .and_then(|m| m.iter().next())
        else {
            return Err(fail(
                &location,
                "each step is a mapping with exactly one key".into(),
            ));
        };
        let location = format!("{location} ({name})");
        let step = parse_step(file, name, body, index + 1).map_err(|m| fail(&location, m))?;
        steps.push(step);
    }
    Ok(Scenario { start, steps })
}

fn parse_step(file: &str, name: &str, body: &Value, number: usize) -> Result<Step, String> {
    match name {
        "apply" => {
            let text = body
                .as_str()
                .ok_or("apply takes YAML text (use `apply: |`)")?;
            let documents = manifests::read_documents(&format!("{file} step {number}"), text)
                .map_err(|e| e.to_string())?;
            Ok(Step::Apply(documents))
        }
        "delete" => Ok(Step::Delete {
            kind: string(body, "kind")?,
            group: optional_string(body, "group")?,
            namespace: optional_string(body, "namespace")?,
            name: string(body, "name")?,
        }),
        "heartbeat" => {
            let properties = property_map(body.get("properties"))?;
            let resource_usage = match body.get("resourceUsage") {
                None | Some(Value::Null) => None,
                Some(usage) => Some(flotilla_core::ResourceUsage {
                    capacity: string_map(usage.get("capacity"), "resourceUsage.capacity")?.into(),
                    allocatable: string_map(usage.get("allocatable"), "resourceUsage.allocatable")?
                        .into(),
                    available: string_map(usage.get("available"), "resourceUsage.available")?
                        .into(),
                }),
            };
            Ok(Step::Heartbeat {
                cluster: string(body, "cluster")?,
                properties,
                resource_usage,
            })
        }
        "report" => Ok(Step::Report(ReportStep {
            cluster: string(body, "cluster")?,
            placement: string(body, "placement")?,
            namespace: optional_string(body, "namespace")?,
            resource_index: match body.get("resourceIndex") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_u64()
                        .ok_or("resourceIndex must be a non-negative integer")?,
                ),
            },
            applied: optional_bool(body, "applied")?,
            available: optional_bool(body, "available")?,
            trackable: optional_bool(body, "trackable")?.unwrap_or(true),
            message: optional_string(body, "message")?.unwrap_or_default(),
            failed_manifests: failed_manifests(body)?,
            differences: differences(body)?,
        })),
        "approve" => match body {
            Value::String(name) => Ok(Step::Approve {
                name: name.clone(),
                namespace: None,
                reason: None,
                message: None,
            }),
            _ => Ok(Step::Approve {
                name: string(body, "name")?,
                namespace: optional_string(body, "namespace")?,
                reason: optional_string(body, "reason")?,
                message: optional_string(body, "message")?,
            }),
        },
        "analysis" => parse_analysis(body).map(Step::Analysis),
        "advance" => {
            let text = match body {
                Value::String(text) => text.clone(),
                Value::Number(n) => format!("{n}s"),
                _ => return Err("advance takes a duration like 90s".into()),
            };
            let duration = parse_duration(&text)?;
            if duration < Duration::zero() {
                return Err("time only moves forward".into());
            }
            Ok(Step::Advance(duration))
        }
        "agents" => parse_agents(body).map(Step::Agents),
        "expectRejection" => parse_expect_rejection(body),
        "heartbeats" => match body.as_str() {
            Some("auto") => Ok(Step::Heartbeats(true)),
            Some("manual") => Ok(Step::Heartbeats(false)),
            _ => Err("heartbeats takes auto or manual".into()),
        },
        other => Err(format!(
            "unknown step {other:?} (steps: apply, delete, heartbeat, report, approve, analysis, advance, agents, heartbeats, expectRejection)"
        )),
    }
}

/// `expectRejection: {code: InvalidObject}`: the code is one of the core's `RejectCode` names.
fn parse_expect_rejection(body: &Value) -> Result<Step, String> {
    let name = string(body, "code")?;
    let code = RejectCode::from_name(&name).ok_or_else(|| {
        let names: Vec<&str> = RejectCode::ALL.iter().map(|c| c.as_str()).collect();
        format!("code {name:?} is not one of {}", names.join(", "))
    })?;
    Ok(Step::ExpectRejection(code))
}

fn parse_agents(body: &Value) -> Result<AgentsStep, String> {
    match body {
        Value::String(mode) if mode == "auto" => Ok(AgentsStep::Auto),
        Value::String(mode) if mode == "manual" => Ok(AgentsStep::Manual),
        Value::Object(clusters) => {
            let mut settings = BTreeMap::new();
            for (cluster, value) in clusters {
                let setting = AgentSettings {
                    applied: optional_bool(value, "applied")?,
                    available: optional_bool(value, "available")?,
                    trackable: optional_bool(value, "trackable")?,
                    heartbeat: optional_bool(value, "heartbeat")?,
                };
                settings.insert(cluster.clone(), setting);
            }
            Ok(AgentsStep::PerCluster(settings))
        }
        _ => Err("agents takes auto, manual, or a map like {member2: {available: false}}".into()),
    }
}

fn string(body: &Value, field: &str) -> Result<String, String> {
    optional_string(body, field)?.ok_or_else(|| format!("{field} is required"))
}

fn optional_string(body: &Value, field: &str) -> Result<Option<String>, String> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(format!("{field} must be a string")),
    }
}

fn optional_bool(body: &Value, field: &str) -> Result<Option<bool>, String> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(value)) => Ok(Some(*value)),
        Some(_) => Err(format!("{field} must be true or false")),
    }
}

fn string_map(value: Option<&Value>, field: &str) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let object = value
        .as_object()
        .ok_or_else(|| format!("{field} must be a mapping"))?;
    object
        .iter()
        .map(|(key, value)| {
            let text = match value {
                Value::String(text) => text.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(format!("{field}.{key} must be a string or a number")),
            };
            Ok((key.clone(), text))
        })
        .collect()
}

/// A heartbeat's `properties`: name → a quantity (string or number) or KubeFleet's
/// `{value, observationTime}`, as the JSON event form takes them.
fn property_map(value: Option<&Value>) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let object = value.as_object().ok_or("properties must be a mapping")?;
    object
        .iter()
        .map(|(name, value)| {
            let quantity = match value {
                Value::Number(n) => n.to_string(),
                _ => serde_json::from_value::<JsonPropertyValue>(value.clone())
                    .map_err(|_| {
                        format!(
                            "properties.{name} must be a quantity or {{value: …, observationTime: …}}"
                        )
                    })?
                    .into_value(),
            };
            Ok((name.clone(), quantity))
        })
        .collect()
}

/// `failedManifests` of a `report` step: the JSON event form's list.
fn failed_manifests(body: &Value) -> Result<Vec<flotilla_core::ManifestFailure>, String> {
    match body.get("failedManifests") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(list) => {
            let parsed: Vec<flotilla_adapters::json_event::JsonManifestFailure> =
                serde_json::from_value(list.clone())
                    .map_err(|e| format!("failedManifests: {e}"))?;
            Ok(parsed.into_iter().map(Into::into).collect())
        }
    }
}

/// `diffReported`, `diffedManifests` and `driftedManifests` of a `report` step: the JSON event
/// form's fields.
fn differences(body: &Value) -> Result<flotilla_core::Differences, String> {
    fn list<T: serde::de::DeserializeOwned>(body: &Value, field: &str) -> Result<Vec<T>, String> {
        match body.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(list) => serde_json::from_value(list.clone()).map_err(|e| format!("{field}: {e}")),
        }
    }
    let diffed: Vec<flotilla_adapters::json_event::JsonDiffedManifest> =
        list(body, "diffedManifests")?;
    let drifted: Vec<flotilla_adapters::json_event::JsonDriftedManifest> =
        list(body, "driftedManifests")?;
    Ok(flotilla_core::Differences {
        diff_reported: optional_bool(body, "diffReported")?,
        diffed_manifests: diffed.into_iter().map(Into::into).collect(),
        drifted_manifests: drifted.into_iter().map(Into::into).collect(),
    })
}

/// `analysis: {run, namespace?, stage, task?, value | error}`: `value` a number or its text
/// (`"NaN"`); `task` as `afterStageTasks[1]`, `after`, or absent for the one measuring.
fn parse_analysis(body: &Value) -> Result<flotilla_core::AnalysisResult, String> {
    let value = match body.get("value") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => return Err("analysis value must be a number".into()),
    };
    let error = optional_string(body, "error")?;
    if value.is_none() && error.is_none() {
        return Err("analysis takes a value or an error".into());
    }
    Ok(flotilla_core::AnalysisResult {
        run: string(body, "run")?,
        namespace: optional_string(body, "namespace")?,
        stage: string(body, "stage")?,
        task: optional_string(body, "task")?.unwrap_or_default(),
        value,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Ok(Duration::seconds(90)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::minutes(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::milliseconds(500)));
        assert!(parse_duration("5 minutes").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn parses_every_step_kind() {
        let text = r"
start: 2025-03-12T23:00:00Z
steps:
  - apply: |
      apiVersion: cluster.kubernetes-fleet.io/v1beta1
      kind: MemberCluster
      metadata: {name: member1, labels: {environment: staging}}
      spec: {heartbeatPeriodSeconds: 60}
  - delete: {kind: ClusterResourcePlacement, name: crp-1}
  - heartbeat: {cluster: member1}
  - report: {cluster: member1, placement: crp-1, applied: true, available: true}
  - approve: example-run-after-canary
  - advance: 90s
  - agents: auto
  - agents: {member2: {available: false}}
  - heartbeats: auto
";
        let scenario = parse("s.yaml", text).expect("valid");
        assert_eq!(scenario.steps.len(), 9);
        assert!(matches!(scenario.steps[5], Step::Advance(d) if d == Duration::seconds(90)));
    }

    #[test]
    fn a_report_names_its_failed_manifests() {
        let text = r"
start: 2025-03-12T23:00:00Z
steps:
  - report:
      cluster: member1
      placement: crp-1
      applied: false
      failedManifests:
        - {group: apps, version: v1, kind: Deployment, namespace: app, name: web, message: image pull failed}
        - {version: v1, kind: Namespace, name: app, condition: Available}
";
        let scenario = parse("s.yaml", text).expect("valid");
        let Step::Report(report) = &scenario.steps[0] else {
            panic!("a report step");
        };
        assert_eq!(report.failed_manifests.len(), 2);
        assert_eq!(report.failed_manifests[0].kind, "Deployment");
        assert_eq!(
            report.failed_manifests[0].condition,
            flotilla_core::ManifestCondition::Applied
        );
        assert_eq!(
            report.failed_manifests[1].condition,
            flotilla_core::ManifestCondition::Available
        );
        let bad = "start: 2025-03-12T23:00:00Z\nsteps:\n  - report: {cluster: m, placement: p, failedManifests: [{kind: X}]}\n";
        let error = parse("s.yaml", bad)
            .expect_err("version and name are required")
            .to_string();
        assert!(error.contains("failedManifests"), "{error}");
    }

    #[test]
    fn heartbeat_properties_take_kubefleet_shape_and_bare_quantities() {
        let text = r#"
start: 2025-03-12T23:00:00Z
steps:
  - heartbeat:
      cluster: member1
      properties:
        kubernetes-fleet.io/node-count: {value: "3", observationTime: "2025-03-12T22:59:00Z"}
        example.com/zone-count: 2
        example.com/tier: gold
"#;
        let scenario = parse("s.yaml", text).expect("valid");
        let Step::Heartbeat { properties, .. } = &scenario.steps[0] else {
            panic!("a heartbeat step");
        };
        assert_eq!(properties["kubernetes-fleet.io/node-count"], "3");
        assert_eq!(properties["example.com/zone-count"], "2");
        assert_eq!(properties["example.com/tier"], "gold");
        let bad = "start: 2025-03-12T23:00:00Z\nsteps:\n  - heartbeat: {cluster: m, properties: {p: {quantity: 3}}}\n";
        let error = parse("s.yaml", bad).expect_err("no value").to_string();
        assert!(error.contains("properties.p"), "{error}");
    }

    #[test]
    fn errors_name_the_step() {
        let text =
            "start: 2025-03-12T23:00:00Z\nsteps:\n  - heartbeat: {cluster: a}\n  - jump: 3\n";
        let error = parse("s.yaml", text).expect_err("invalid");
        assert_eq!(error.location, "step 2 (jump)");
    }
}

//! What each CLI verb does.

use std::io::Read;
use std::time::Duration;

use anyhow::{Context, bail};
use chrono::Utc;
use serde_json::{Value, json};
use uuid::Uuid;

use flotilla_adapters::client::Client;
use flotilla_adapters::json_event::AppendResult;
use flotilla_adapters::json_event::{JsonEnvelope, JsonInput};
use flotilla_adapters::manifests;
use flotilla_adapters::output::{Output, RecordOutput, object_name, print_value};

/// Source name of events the CLI publishes.
pub const CLI_SOURCE: &str = "cli";

fn read_input(file: &str) -> anyhow::Result<String> {
    if file == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(file).with_context(|| format!("reading {file}"))
}

fn envelope(event: JsonInput) -> JsonEnvelope {
    JsonEnvelope {
        id: Some(Uuid::now_v7()),
        // Not the event's time (the log assigns that): what the CLI claims, for readers.
        time: Some(Utc::now()),
        claimed_time: None,
        source: Some(CLI_SOURCE.to_owned()),
        // The hub records who sent it, from the token the request carries.
        principal: None,
        schema_version: flotilla_core::SCHEMA_VERSION,
        event,
    }
}

/// Prints each result kubectl-style; returns whether any input was rejected.
fn report(labels: &[String], results: &[AppendResult]) -> bool {
    let mut failed = false;
    for (label, result) in labels.iter().zip(results) {
        let decisions = result.decisions.clone().unwrap_or(Value::Null);
        let first = decisions
            .as_array()
            .and_then(|d| d.first())
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(rejected) = first.get("Rejected") {
            failed = true;
            let code = rejected
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or("Rejected");
            let message = rejected
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            eprintln!("Error from server ({code}): {label}: {message}");
            continue;
        }
        let verb = if first.get("ObjectUnchanged").is_some() {
            "unchanged"
        } else if first.get("ObjectDeleted").is_some() {
            "deleted"
        } else if let Some(stored) = first.get("ObjectStored") {
            if stored.get("created") == Some(&Value::Bool(true)) {
                "created"
            } else {
                "configured"
            }
        } else if result.decisions.is_none() {
            "accepted (not folded yet)"
        } else {
            "accepted"
        };
        println!("{label} {verb}");
    }
    failed
}

/// `flotilla apply -f FILE [--validate=strict|warn|ignore]`.
///
/// # Errors
/// A file that does not parse or breaks KubeFleet's schema (nothing is sent), an unreachable
/// hub, or a rejection.
pub async fn apply(
    client: &Client,
    file: &str,
    validate: flotilla_adapters::schema::FieldValidation,
) -> anyhow::Result<()> {
    let text = read_input(file)?;
    // KubeFleet's schema first, so its wording names a problem both it and the model see.
    let mut raw = manifests::read_documents(file, &text)?;
    for warning in manifests::validate_documents(file, &mut raw, validate)? {
        eprintln!("Warning: {warning}");
    }
    let documents = manifests::parse_documents(file, raw)?;
    let labels: Vec<String> = documents
        .iter()
        .map(|d| {
            object_name(
                &d.manifest.key.kind,
                &d.manifest.key.group,
                &d.manifest.key.name,
            )
        })
        .collect();
    let events: Vec<JsonEnvelope> = documents
        .into_iter()
        .map(|d| envelope(JsonInput::Apply { manifest: d.value }))
        .collect();
    let results = client.submit(&events).await?;
    if report(&labels, &results) {
        bail!("some objects were rejected");
    }
    Ok(())
}

/// `flotilla delete KIND NAME` or `flotilla delete -f FILE`.
///
/// # Errors
/// Bad arguments, an unreachable hub, or a rejection (e.g. not found).
pub async fn delete(
    client: &Client,
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    file: Option<String>,
) -> anyhow::Result<()> {
    let targets: Vec<(String, Option<String>, Option<String>, String)> = match (file, kind, name) {
        (Some(file), None, None) => {
            let text = read_input(&file)?;
            manifests::parse_file(&file, &text)?
                .into_iter()
                .map(|d| {
                    let key = d.manifest.key;
                    let namespace = Some(key.namespace.to_string()).filter(|ns| !ns.is_empty());
                    (
                        key.kind.into(),
                        Some(key.group.into()),
                        namespace,
                        key.name.into(),
                    )
                })
                .collect()
        }
        (None, Some(kind), Some(name)) => {
            return crate::kube_commands::delete(client, &kind, &name, namespace.as_deref()).await;
        }
        _ => bail!("usage: flotilla delete KIND NAME [-n NAMESPACE] | flotilla delete -f FILE"),
    };
    let labels: Vec<String> = targets
        .iter()
        .map(|(kind, group, _, name)| object_name(kind, group.as_deref().unwrap_or_default(), name))
        .collect();
    let events: Vec<JsonEnvelope> = targets
        .into_iter()
        .map(|(kind, group, namespace, name)| {
            envelope(JsonInput::Delete {
                kind,
                group,
                namespace,
                name,
            })
        })
        .collect();
    let results = client.submit(&events).await?;
    if report(&labels, &results) {
        bail!("some deletions were rejected");
    }
    Ok(())
}

/// `flotilla approve NAME [--reason R] [--message M]`.
///
/// # Errors
/// An unreachable hub, or no such approval request.
pub async fn approve(
    client: &Client,
    name: String,
    namespace: Option<String>,
    reason: Option<String>,
    message: Option<String>,
) -> anyhow::Result<()> {
    let label = format!("approvalrequest/{name}");
    let approval = JsonInput::Approve {
        name,
        namespace,
        reason,
        message,
    };
    let results = client.submit(&[envelope(approval)]).await?;
    if report(&[label], &results) {
        bail!("the approval was rejected");
    }
    Ok(())
}

/// `flotilla run start|stop NAME`: re-applies the run with `spec.state` changed (the only
/// mutable field; the hub refuses invalid transitions).
///
/// # Errors
/// An unknown run, a refused transition, or an unreachable hub.
pub async fn set_run_state(
    client: &Client,
    name: &str,
    namespace: Option<String>,
    state: &str,
) -> anyhow::Result<()> {
    let kind = if namespace.is_some() {
        "StagedUpdateRun"
    } else {
        "ClusterStagedUpdateRun"
    };
    let mut query = vec![("name", name.to_owned())];
    if let Some(namespace) = &namespace {
        query.push(("namespace", namespace.clone()));
    }
    let object = client
        .get_json(&format!("/v1/objects/{kind}"), &query)
        .await
        .with_context(|| format!("{kind} {name}"))?;
    let mut manifest = json!({
        "apiVersion": object["apiVersion"],
        "kind": kind,
        "metadata": {"name": name},
        "spec": object["spec"],
    });
    if let Some(namespace) = namespace {
        manifest["metadata"]["namespace"] = json!(namespace);
    }
    manifest["spec"]["state"] = json!(state);
    let label = format!("{}/{name}", kind.to_lowercase());
    let results = client
        .submit(&[envelope(JsonInput::Apply { manifest })])
        .await?;
    if report(&[label], &results) {
        bail!("the run was not changed");
    }
    Ok(())
}

/// `flotilla get KIND [NAME]`.
///
/// # Errors
/// An unknown kind or object, or an unreachable hub.
pub async fn get(
    client: &Client,
    kind: &str,
    name: Option<String>,
    namespace: Option<String>,
    output: Option<Output>,
) -> anyhow::Result<()> {
    let mut query = Vec::new();
    if let Some(namespace) = namespace {
        query.push(("namespace", namespace));
    }
    match output {
        None | Some(Output::Wide) => {
            if let Some(name) = name {
                query.push(("name", name));
            }
            if output == Some(Output::Wide) {
                query.push(("wide", "true".to_owned()));
            }
            let text = client
                .get_text(&format!("/v1/table/{kind}"), &query)
                .await?;
            print!("{text}");
        }
        Some(format) => {
            let single = name.is_some();
            if let Some(name) = name {
                query.push(("name", name));
            }
            let value = client
                .get_json(&format!("/v1/objects/{kind}"), &query)
                .await?;
            let value = if single {
                value
            } else {
                json!({"apiVersion": "v1", "items": value, "kind": "List", "metadata": {"resourceVersion": ""}})
            };
            print_value(&value, format)?;
        }
    }
    Ok(())
}

/// `flotilla describe KIND NAME`.
///
/// # Errors
/// An unknown kind or object, or an unreachable hub.
pub async fn describe(
    client: &Client,
    kind: &str,
    name: &str,
    namespace: Option<String>,
) -> anyhow::Result<()> {
    let query: Vec<(&str, String)> = namespace.into_iter().map(|ns| ("namespace", ns)).collect();
    let text = client
        .get_text(&format!("/v1/describe/{kind}/{name}"), &query)
        .await?;
    print!("{text}");
    Ok(())
}

/// `flotilla events [--follow]`.
///
/// # Errors
/// An unreachable hub.
pub async fn events(
    client: &Client,
    (from, follow): (u64, bool),
    output: RecordOutput,
    filter: &EventFilter,
) -> anyhow::Result<()> {
    let mut next = from.max(1);
    loop {
        let page = client
            .get_json("/v1/log", &[("from", next.to_string())])
            .await?;
        let events = page
            .get("events")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let decisions = page
            .get("decisions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for event in &events {
            let seq = event.get("seq").and_then(Value::as_u64).unwrap_or(0);
            let decided: Vec<&Value> = decisions
                .iter()
                .filter(|d| d.get("seq").and_then(Value::as_u64) == Some(seq))
                .collect();
            if filter.admits(event, &decided) {
                print_event(event, &decided, output)?;
            }
            next = seq + 1;
        }
        if events.is_empty() {
            if !follow {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// Which events `flotilla events` prints; every one when empty.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EventFilter {
    /// Only events of these types (`heartbeat`, `apply`, `report`, `approve`, …;
    /// comma-separated or repeated).
    #[arg(long = "type", value_delimiter = ',')]
    pub types: Vec<String>,
    /// Only events about this member cluster (heartbeats, reports, leaves).
    #[arg(long)]
    pub cluster: Option<String>,
    /// Only events that decided something: hides the heartbeats that changed nothing.
    #[arg(long)]
    pub decided: bool,
    /// Only events sent by this caller: a token's name or an agent's cluster as the hub
    /// authenticated them (`token/NAME`, `agent/CLUSTER`, or the bare name), or a source.
    #[arg(long)]
    pub actor: Option<String>,
    /// Only events on this placement: reports on it, applies and deletes of it.
    #[arg(long)]
    pub placement: Option<String>,
    /// Only events the hub rejected.
    #[arg(long)]
    pub rejected: bool,
}

impl EventFilter {
    /// Whether the listed `event` (with its decision batches) passes.
    fn admits(&self, event: &Value, decided: &[&Value]) -> bool {
        let body = &event["event"];
        let typed = self.types.is_empty()
            || body["type"]
                .as_str()
                .is_some_and(|kind| self.types.iter().any(|t| t == kind));
        let about = (self.cluster.as_deref()).is_none_or(|cluster| body["cluster"] == cluster);
        let decisions = || {
            decided
                .iter()
                .filter_map(|batch| batch["decisions"].as_array())
                .flatten()
        };
        let decisive = !self.decided || decisions().next().is_some();
        let refused = !self.rejected || decisions().any(|d| d.get("Rejected").is_some());
        let by = (self.actor.as_deref()).is_none_or(|actor| sent_by(body, actor));
        let on = (self.placement.as_deref()).is_none_or(|placement| on_placement(body, placement));
        typed && about && decisive && refused && by && on
    }
}

/// Whether `actor` sent the event: its authenticated principal, or its source as written.
fn sent_by(body: &Value, actor: &str) -> bool {
    let principal = &body["principal"];
    let name = actor
        .strip_prefix("token/")
        .or_else(|| actor.strip_prefix("agent/"))
        .unwrap_or(actor);
    principal["name"] == name || principal["cluster"] == name || body["source"] == actor
}

/// Whether the event is on the placement `name`: a work report on it, or an apply or delete of
/// a placement of that name.
fn on_placement(body: &Value, name: &str) -> bool {
    if body["placement"] == name {
        return true;
    }
    let manifest = match &body["manifest"] {
        Value::String(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        other => other.clone(),
    };
    let target = if manifest.is_null() {
        &body["target"]
    } else {
        &manifest
    };
    let kind = target["kind"].as_str().unwrap_or_default();
    let named = target["metadata"]["name"] == name || target["name"] == name;
    kind.ends_with("ResourcePlacement") && named
}

fn print_event(event: &Value, decided: &[&Value], output: RecordOutput) -> anyhow::Result<()> {
    let decisions: Vec<Value> = decided
        .iter()
        .filter_map(|d| d.get("decisions").and_then(Value::as_array))
        .flatten()
        .cloned()
        .collect();
    match output {
        RecordOutput::Json => {
            let mut line = event.clone();
            line["decisions"] = Value::Array(decisions);
            println!("{}", serde_json::to_string(&line)?);
        }
        RecordOutput::Yaml => {
            let mut doc = event.clone();
            doc["decisions"] = Value::Array(decisions);
            print!("---\n{}", serde_saphyr::to_string(&doc)?);
        }
        RecordOutput::Text => {
            let seq = event.get("seq").and_then(Value::as_u64).unwrap_or(0);
            let parsed: Option<JsonEnvelope> = event
                .get("event")
                .and_then(|e| serde_json::from_value(e.clone()).ok());
            match parsed {
                Some(parsed) => {
                    let defaults = flotilla_adapters::json_event::JsonDefaults {
                        id: Uuid::nil(),
                        time: Utc::now(),
                        source: "unknown",
                    };
                    let envelope = parsed.into_logged_envelope(&defaults);
                    let line = flotilla_projections::event_line(seq, &envelope);
                    // `source` is what the publisher said; the principal is who the hub
                    // authenticated (`docs/security.md`).
                    println!("{line}  by {}", envelope.principal);
                }
                // A rejected record, or one of a newer build: shown as the hub lists it.
                None => match event.get("rejected").or_else(|| event.get("newer")) {
                    Some(record) => println!("{seq:>6}  {record}"),
                    None => return Ok(()),
                },
            }
            for decision in decisions {
                if let Ok(decision) = serde_json::from_value::<flotilla_core::Decision>(decision) {
                    println!(
                        "    {}",
                        flotilla_projections::decision_line(seq, &decision)
                    );
                }
            }
        }
    }
    Ok(())
}

/// `flotilla schema`.
///
/// # Errors
/// Only if stdout is closed.
pub fn schema() -> anyhow::Result<()> {
    println!(
        "{}",
        serde_json::to_string_pretty(&flotilla_adapters::json_event::schema())?
    );
    Ok(())
}

/// `flotilla scenario run FILE`.
///
/// # Errors
/// A file that does not parse, or a failure of the temporary store.
pub async fn scenario_run(file: &std::path::Path, output: RecordOutput) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let scenario = crate::scenario::parse(&file.display().to_string(), &text)?;
    let dir = tempfile::tempdir().context("creating a temporary store")?;
    let log = flotilla_adapters::store::AnyLog::open_embedded(dir.path())?;
    let result = crate::scenario::run(&scenario, &log).await?;
    print!(
        "{}",
        crate::scenario::render(&result, output == RecordOutput::Json)
    );
    Ok(())
}

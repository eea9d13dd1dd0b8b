//! The timeline: one human line per input event and per decision, keyed by the event's sequence
//! number in the log.
//!
//! Event line: `#<seq> <time> <who> <input kind> <what it is about>`: who is the caller the hub
//! authenticated (`token/NAME`, `agent/CLUSTER`) or else the event's source, the time is RFC 3339
//! UTC with fractional seconds only when the event has them. Decision line: `#<seq> -> <what
//! was decided>`, where `<seq>` is the input that caused it. Both are single lines (newlines in
//! messages are shown as `\n`) and depend only on their arguments.

use chrono::SecondsFormat;
use flotilla_core::{Decision, Envelope, Heartbeat, Input, ObjectRef, Principal, WorkReport};
use serde_json::Value;

/// Characters of an approver's message a timeline line shows (a condition's message may hold
/// 32,768 bytes; `replay state` shows it whole).
const MESSAGE_SHOWN: usize = 200;

/// `text` cut to its first `max` characters, with `…` when it was longer.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// One line describing input event number `seq`.
#[must_use]
pub fn event_line(seq: u64, envelope: &Envelope) -> String {
    let time = envelope.time.to_rfc3339_opts(SecondsFormat::AutoSi, true);
    let kind = envelope.payload.kind_name();
    let subject = match &envelope.payload {
        Input::Apply { manifest } => manifest_subject(manifest),
        Input::Delete { target } => target_subject(target),
        Input::Heartbeat(beat) => heartbeat_subject(beat),
        Input::WorkReport(report) => report_subject(report),
        Input::Approve {
            name,
            namespace,
            message,
            ..
        } => {
            let request = match namespace {
                Some(namespace) => format!("ApprovalRequest/{namespace}/{name}"),
                None => format!("ClusterApprovalRequest/{name}"),
            };
            match message {
                Some(message) => format!("{request} {:?}", cut(message, MESSAGE_SHOWN)),
                None => request,
            }
        }
        Input::Tick => String::new(),
        Input::Leave { cluster } => cluster.clone(),
        Input::AnalysisResult(result) => {
            let run = match &result.namespace {
                Some(namespace) => format!("StagedUpdateRun/{namespace}/{}", result.run),
                None => format!("ClusterStagedUpdateRun/{}", result.run),
            };
            let value = match (&result.value, &result.error) {
                (Some(value), _) => format!("value {value}"),
                (None, Some(error)) => format!("error {error}"),
                (None, None) => String::new(),
            };
            format!("{run} stage {} {} {value}", result.stage, result.task)
        }
    };
    let line = format!("#{seq} {time} {} {kind} {subject}", actor(envelope));
    one_line(line.trim_end())
}

/// Who sent an input: the caller the hub authenticated — a token by its name, an agent on its
/// own NATS subjects by its cluster — with the source the poster wrote in brackets when that
/// says something else; where the hub authenticated no one (an open hub, its own inputs, a
/// record older than principals) the source as written.
#[must_use]
pub fn actor(envelope: &Envelope) -> String {
    let known = match &envelope.principal {
        Principal::Token { name, .. } => format!("token/{name}"),
        Principal::Agent { cluster } => format!("agent/{cluster}"),
        _ => return envelope.source.clone(),
    };
    if envelope.source == known || envelope.source.is_empty() {
        known
    } else {
        format!("{known}[{}]", envelope.source)
    }
}

/// One line describing a decision caused by input event number `input_seq`.
#[must_use]
pub fn decision_line(input_seq: u64, decision: &Decision) -> String {
    let what = match decision {
        Decision::Rejected { code, message } => format!("rejected {}: {message}", code.as_str()),
        Decision::ObjectStored {
            object,
            resource_version,
            generation,
            created,
        } => {
            let verb = if *created { "created" } else { "updated" };
            format!("{verb} {object} (resourceVersion {resource_version}, generation {generation})")
        }
        Decision::ObjectUnchanged { object } => format!("unchanged {object}"),
        Decision::ObjectDeleted { object } => format!("deleted {object}"),
        Decision::ClusterJoined { cluster } => format!("cluster {cluster} joined"),
        Decision::ClusterHealthChanged {
            cluster,
            healthy,
            reason,
        } => {
            let health = if *healthy { "healthy" } else { "unhealthy" };
            format!("cluster {cluster} {health} ({reason})")
        }
        Decision::ClusterLeft { cluster } => format!("cluster {cluster} left"),
        Decision::WorkReported {
            cluster,
            placement,
            resource_index,
        } => {
            format!("work report from {cluster} on {placement} at resource index {resource_index}")
        }
        Decision::OverrideSnapshotTaken {
            override_object,
            index,
        } => {
            format!("{override_object}: override snapshot {index} taken")
        }
        Decision::EvictionReconciled { .. } => eviction_line(decision),
        Decision::RolloutClusterFailed { .. }
        | Decision::RolloutHalted { .. }
        | Decision::ClusterRolledBack { .. }
        | Decision::RollbackFinished { .. } => safety_line(decision),
        Decision::PolicySnapshotTaken { .. }
        | Decision::ResourceSnapshotTaken { .. }
        | Decision::ClusterScheduled { .. }
        | Decision::ClusterUnscheduled { .. }
        | Decision::SchedulingChanged { .. }
        | Decision::RolloutStarted { .. }
        | Decision::BindingRemoved { .. } => placement_line(decision),
        Decision::UpdateRunInitialized { .. }
        | Decision::UpdateRunStageChanged { .. }
        | Decision::ApprovalRequested { .. }
        | Decision::ApprovalGranted { .. }
        | Decision::UpdateRunClusterUpdated { .. }
        | Decision::UpdateRunStateChanged { .. }
        | Decision::UpdateRunFinished { .. }
        | Decision::UpdateRunClusterChanged { .. }
        | Decision::AnalysisMeasured { .. }
        | Decision::AnalysisGate { .. } => run_line(decision),
    };
    one_line(&format!("#{input_seq} -> {what}"))
}

/// What a placement's scheduling or rollout decided; empty for any other decision.
fn placement_line(decision: &Decision) -> String {
    match decision {
        Decision::PolicySnapshotTaken { placement, index } => {
            format!("{placement}: scheduling policy snapshot {index} taken")
        }
        Decision::ResourceSnapshotTaken {
            placement,
            index,
            resource_hash,
        } => {
            let short = resource_hash.get(..12).unwrap_or(resource_hash);
            format!("{placement}: resource snapshot {index} taken (hash {short})")
        }
        Decision::ClusterScheduled { placement, cluster } => {
            format!("{placement}: cluster {cluster} scheduled")
        }
        Decision::ClusterUnscheduled {
            placement,
            cluster,
            reason,
        } => {
            format!("{placement}: cluster {cluster} unscheduled ({reason})")
        }
        Decision::SchedulingChanged {
            placement,
            fulfilled,
            message,
        } => {
            let verdict = if *fulfilled {
                "fulfilled"
            } else {
                "unfulfilled"
            };
            format!("{placement}: scheduling policy {verdict}: {message}")
        }
        Decision::RolloutStarted {
            placement,
            cluster,
            resource_index,
        } => {
            format!("{placement}: cluster {cluster} rolled out to resource index {resource_index}")
        }
        Decision::BindingRemoved { placement, cluster } => {
            format!("{placement}: binding to cluster {cluster} removed")
        }
        _ => String::new(),
    }
}

/// What a staged update run decided; empty for any other decision.
fn run_line(decision: &Decision) -> String {
    match decision {
        Decision::UpdateRunInitialized { run, failure } => match failure {
            None => format!("{run}: initialized"),
            Some(message) => format!("{run}: initialization failed: {message}"),
        },
        Decision::UpdateRunStageChanged { run, stage, reason } => {
            format!("{run}: stage {stage} {reason}")
        }
        Decision::ApprovalRequested { run, request } => {
            format!("{run}: waiting for approval {request}")
        }
        Decision::ApprovalGranted { request } => format!("{request} approved"),
        Decision::UpdateRunClusterUpdated {
            run,
            cluster,
            succeeded,
        } => {
            let verdict = if *succeeded { "succeeded" } else { "failed" };
            format!("{run}: cluster {cluster} {verdict}")
        }
        Decision::UpdateRunStateChanged { run, reason } => format!("{run}: {reason}"),
        Decision::AnalysisMeasured {
            run,
            stage,
            task,
            value,
            outcome,
            message,
        } => {
            let what = value.as_deref().unwrap_or(message);
            format!("{run}: stage {stage} analysis {task} measured {what}: {outcome}")
        }
        Decision::AnalysisGate {
            run,
            stage,
            task,
            phase,
            message,
        } => {
            let line = format!("{run}: stage {stage} analysis {task} {phase}");
            if message.is_empty() {
                line
            } else {
                format!("{line}: {message}")
            }
        }
        Decision::UpdateRunClusterChanged {
            run,
            cluster,
            stage,
            change,
        } => match stage {
            Some(stage) => format!("{run}: cluster {cluster} {change} (stage {stage})"),
            None => format!("{run}: cluster {cluster} {change} to the next run"),
        },
        Decision::UpdateRunFinished {
            run,
            succeeded,
            message,
        } => {
            if *succeeded {
                format!("{run}: succeeded")
            } else {
                format!("{run}: failed: {message}")
            }
        }
        _ => String::new(),
    }
}

/// What a guarded rollout (`docs/rollout-safety.md`) decided; empty for any other decision.
fn safety_line(decision: &Decision) -> String {
    match decision {
        Decision::RolloutClusterFailed {
            placement,
            cluster,
            resource_index,
            failures,
            tolerated,
        } => format!(
            "{placement}: cluster {cluster} failed on resource index {resource_index} \
             ({failures} failed, maxFailures tolerates {tolerated})"
        ),
        Decision::RolloutHalted {
            placement,
            resource_index,
            reason,
            action,
            message,
        } => format!(
            "{placement}: rollout to resource index {resource_index} stopped ({reason}, \
             onFailure {action}): {message}"
        ),
        Decision::ClusterRolledBack {
            placement,
            cluster,
            from_index,
            to_index,
        } => format!(
            "{placement}: cluster {cluster} rolled back from resource index {from_index} to \
             {to_index}"
        ),
        Decision::RollbackFinished {
            placement,
            resource_index,
            succeeded,
            message,
        } => {
            let verdict = if *succeeded {
                "RolledBack"
            } else {
                "RollbackFailed"
            };
            format!(
                "{placement}: rollback of resource index {resource_index}: {verdict}: {message}"
            )
        }
        _ => String::new(),
    }
}

/// What an eviction's reconciliation decided; empty for any other decision.
fn eviction_line(decision: &Decision) -> String {
    let Decision::EvictionReconciled {
        eviction,
        placement,
        cluster,
        valid,
        executed,
        message,
    } = decision
    else {
        return String::new();
    };
    let verdict = match (valid, executed) {
        (false, _) => "invalid",
        (true, false) => "not executed",
        (true, true) => "executed",
    };
    format!("{eviction}: eviction of {placement} from cluster {cluster} {verdict}: {message}")
}

/// `Kind/name` or `Kind/namespace/name` of an applied manifest, read leniently: the line is
/// written for rejected manifests too.
fn manifest_subject(manifest: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(manifest) else {
        return "(manifest is not valid JSON)".to_owned();
    };
    let text = |path: &str| {
        value
            .pointer(path)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let kind = match text("/kind") {
        "" => "(no kind)",
        kind => kind,
    };
    let name = match text("/metadata/name") {
        "" => "(no name)",
        name => name,
    };
    match text("/metadata/namespace") {
        "" => format!("{kind}/{name}"),
        namespace => format!("{kind}/{namespace}/{name}"),
    }
}

fn target_subject(target: &ObjectRef) -> String {
    let kind = match &target.group {
        Some(group) if !group.is_empty() => format!("{}.{group}", target.kind),
        _ => target.kind.clone(),
    };
    match &target.namespace {
        Some(namespace) => format!("{kind}/{namespace}/{}", target.name),
        None => format!("{kind}/{}", target.name),
    }
}

fn heartbeat_subject(beat: &Heartbeat) -> String {
    let mut extras = Vec::new();
    match beat.properties.len() {
        0 => {}
        1 => extras.push("1 property".to_owned()),
        count => extras.push(format!("{count} properties")),
    }
    if beat.resource_usage.is_some() {
        extras.push("resource usage".to_owned());
    }
    if extras.is_empty() {
        beat.cluster.clone()
    } else {
        format!("{} ({})", beat.cluster, extras.join(", "))
    }
}

fn report_subject(report: &WorkReport) -> String {
    let placement = match &report.namespace {
        Some(namespace) => format!("ResourcePlacement/{namespace}/{}", report.placement),
        None => format!("ClusterResourcePlacement/{}", report.placement),
    };
    let applied = match report.applied {
        Some(true) => "applied",
        Some(false) => "apply failed",
        None => "not applied yet",
    };
    let available = match (report.trackable, report.available) {
        (false, _) => "not trackable",
        (true, Some(true)) => "available",
        (true, Some(false)) => "not available",
        (true, None) => "availability unknown",
    };
    let index = if report.resource_index == flotilla_core::RESOURCE_INDEX_CURRENT {
        "its current work".to_owned()
    } else {
        format!("resource index {}", report.resource_index)
    };
    let outcome = match report.differences.diff_reported {
        Some(true) => "diff reported".to_owned(),
        Some(false) => "diff incomplete".to_owned(),
        None => format!("{applied}, {available}"),
    };
    let mut line = format!("{} on {placement} at {index}: {outcome}", report.cluster);
    for (count, what) in [
        (report.differences.diffed_manifests.len(), "diffed"),
        (report.differences.drifted_manifests.len(), "drifted"),
    ] {
        if count > 0 {
            line.push_str(&format!(", {count} {what}"));
        }
    }
    if report.message.is_empty() {
        line
    } else {
        format!("{line} ({})", report.message)
    }
}

fn one_line(text: &str) -> String {
    text.replace('\r', "\\r").replace('\n', "\\n")
}

//! What an input or a decision names — a placement, a member cluster, a staged run, an
//! approval request — and how runs relate to placements and requests to runs, which decisions
//! alone do not say.

use std::collections::BTreeMap;

use flotilla_core::model::{CLUSTER_GROUP, MEMBER_CLUSTER, ObjectKey, PLACEMENT_GROUP};
use flotilla_core::staged::{self, Scope};
use flotilla_core::{Decision, Input, State};
use serde_json::Value;

use super::PlacementRef;
use super::inputs::LoggedInput;

/// What one payload or decision names.
#[derive(Debug, Default)]
pub(crate) struct About {
    pub(crate) placement: Option<ObjectKey>,
    pub(crate) cluster: Option<String>,
    pub(crate) run: Option<ObjectKey>,
    pub(crate) request: Option<ObjectKey>,
}

impl About {
    fn of_object(key: &ObjectKey) -> Self {
        let mut about = About::default();
        let unknown_group = key.group.is_empty();
        if key.kind == MEMBER_CLUSTER
            && key.namespace.is_empty()
            && (key.group == CLUSTER_GROUP || unknown_group)
        {
            about.cluster = Some(key.name.to_string());
        } else if key.group == PLACEMENT_GROUP || unknown_group {
            let placement_group = in_group(key, PLACEMENT_GROUP);
            if is_placement(&placement_group) {
                about.placement = Some(placement_group);
            } else if staged::is_run(&placement_group) {
                about.run = Some(placement_group);
            } else if is_request(&placement_group) {
                about.request = Some(placement_group);
            }
        }
        about
    }

    pub(crate) fn of_input(input: &Input) -> Self {
        match input {
            Input::Apply { manifest } => manifest_key(manifest)
                .map(|key| About::of_object(&key))
                .unwrap_or_default(),
            Input::Delete { target } => {
                let group = target.group.clone().unwrap_or_default();
                let key = ObjectKey {
                    group: group.into(),
                    kind: target.kind.as_str().into(),
                    namespace: target.namespace.as_deref().unwrap_or_default().into(),
                    name: target.name.as_str().into(),
                };
                About::of_object(&key)
            }
            Input::Heartbeat(beat) => About {
                cluster: Some(beat.cluster.clone()),
                ..About::default()
            },
            Input::Leave { cluster } => About {
                cluster: Some(cluster.clone()),
                ..About::default()
            },
            Input::WorkReport(report) => About {
                cluster: Some(report.cluster.clone()),
                placement: Some(
                    PlacementRef {
                        namespace: report.namespace.clone(),
                        name: report.placement.clone(),
                    }
                    .key(),
                ),
                ..About::default()
            },
            Input::Approve { name, namespace } => About {
                request: Some(request_key(namespace.as_deref(), name)),
                ..About::default()
            },
            Input::Tick => About::default(),
            Input::AnalysisResult(result) => {
                let scope = staged::Scope {
                    namespace: result.namespace.as_deref().unwrap_or_default().into(),
                    run_name: result.run.as_str().into(),
                };
                About {
                    run: Some(scope.run_key()),
                    ..About::default()
                }
            }
        }
    }

    pub(crate) fn of_decision(decision: &Decision) -> Self {
        let placed = |placement: &ObjectKey, cluster: Option<&String>| About {
            placement: Some(placement.clone()),
            cluster: cluster.cloned(),
            ..About::default()
        };
        let of_run = |run: &ObjectKey, cluster: Option<&String>| About {
            run: Some(run.clone()),
            cluster: cluster.cloned(),
            ..About::default()
        };
        match decision {
            Decision::Rejected { .. } | Decision::OverrideSnapshotTaken { .. } => About::default(),
            Decision::ObjectStored { object, .. }
            | Decision::ObjectUnchanged { object }
            | Decision::ObjectDeleted { object } => About::of_object(object),
            Decision::ClusterJoined { cluster }
            | Decision::ClusterHealthChanged { cluster, .. }
            | Decision::ClusterLeft { cluster } => About {
                cluster: Some(cluster.clone()),
                ..About::default()
            },
            Decision::WorkReported {
                cluster, placement, ..
            }
            | Decision::ClusterScheduled { placement, cluster }
            | Decision::ClusterUnscheduled {
                placement, cluster, ..
            }
            | Decision::RolloutStarted {
                placement, cluster, ..
            }
            | Decision::BindingRemoved { placement, cluster }
            | Decision::EvictionReconciled {
                placement, cluster, ..
            }
            | Decision::RolloutClusterFailed {
                placement, cluster, ..
            }
            | Decision::ClusterRolledBack {
                placement, cluster, ..
            } => placed(placement, Some(cluster)),
            Decision::RolloutHalted { placement, .. }
            | Decision::RollbackFinished { placement, .. }
            | Decision::PolicySnapshotTaken { placement, .. }
            | Decision::ResourceSnapshotTaken { placement, .. }
            | Decision::SchedulingChanged { placement, .. } => placed(placement, None),
            Decision::UpdateRunInitialized { run, .. }
            | Decision::UpdateRunStageChanged { run, .. }
            | Decision::UpdateRunStateChanged { run, .. }
            | Decision::UpdateRunFinished { run, .. }
            | Decision::AnalysisMeasured { run, .. }
            | Decision::AnalysisGate { run, .. } => of_run(run, None),
            Decision::UpdateRunClusterUpdated { run, cluster, .. }
            | Decision::UpdateRunClusterChanged { run, cluster, .. } => of_run(run, Some(cluster)),
            Decision::ApprovalRequested { run, request } => About {
                run: Some(run.clone()),
                request: Some(request.clone()),
                ..About::default()
            },
            Decision::ApprovalGranted { request } => About {
                request: Some(request.clone()),
                ..About::default()
            },
        }
    }
}

/// The same key in `group` (a delete may leave the group to the kind).
fn in_group(key: &ObjectKey, group: &str) -> ObjectKey {
    ObjectKey {
        group: group.into(),
        ..key.clone()
    }
}

fn is_placement(key: &ObjectKey) -> bool {
    let scope = Scope {
        namespace: key.namespace.clone(),
        run_name: "".into(),
    };
    scope.placement_key(&key.name) == *key
}

fn is_request(key: &ObjectKey) -> bool {
    request_key(
        Some(key.namespace.as_str()).filter(|n| !n.is_empty()),
        &key.name,
    ) == *key
}

fn request_key(namespace: Option<&str>, name: &str) -> ObjectKey {
    Scope {
        namespace: namespace.unwrap_or_default().into(),
        run_name: "".into(),
    }
    .approval_key(name)
}

/// The key an applied manifest names (its group from `apiVersion`), read leniently.
fn manifest_key(manifest: &str) -> Option<ObjectKey> {
    let value: Value = serde_json::from_str(manifest).ok()?;
    let text = |pointer: &str| value.pointer(pointer).and_then(Value::as_str);
    Some(ObjectKey {
        group: flotilla_core::model::group_of(text("/apiVersion").unwrap_or_default()).into(),
        kind: text("/kind")?.into(),
        namespace: text("/metadata/namespace").unwrap_or_default().into(),
        name: text("/metadata/name")?.into(),
    })
}

/// Which run rolls out which placement, and which run each approval request belongs to: from
/// the state where the span starts, then learned from the inputs read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Relations {
    runs: BTreeMap<ObjectKey, ObjectKey>,
    requests: BTreeMap<ObjectKey, ObjectKey>,
}

impl Relations {
    pub(crate) fn of(state: &State) -> Self {
        let mut relations = Relations::default();
        for (key, run) in state.update_runs() {
            let scope = Scope::of(key);
            let placement = scope.placement_key(&run.spec.placement_name);
            relations.runs.insert(key.clone(), placement);
        }
        for (key, request) in state.approvals() {
            let scope = Scope {
                namespace: key.namespace.clone(),
                run_name: request.run.as_str().into(),
            };
            relations.requests.insert(key.clone(), scope.run_key());
        }
        relations
    }

    /// Learns from an applied run (its placement) and from requests its decisions created.
    pub(crate) fn learn(&mut self, input: &LoggedInput) {
        if let Some(Input::Apply { manifest }) = input.envelope.as_ref().map(|e| &e.payload)
            && let Some(key) = manifest_key(manifest).filter(|k| k.group == PLACEMENT_GROUP)
            && staged::is_run(&key)
            && let Ok(value) = serde_json::from_str::<Value>(manifest)
            && let Some(placement) = value.pointer("/spec/placementName").and_then(Value::as_str)
        {
            let placement = Scope::of(&key).placement_key(placement);
            self.runs.insert(key, placement);
        }
        for decision in &input.decisions {
            if let Decision::ApprovalRequested { run, request } = decision {
                self.requests.insert(request.clone(), run.clone());
            }
        }
    }

    /// The placement a run rolls out.
    pub(crate) fn placement_of_run(&self, run: &ObjectKey) -> Option<&ObjectKey> {
        self.runs.get(run)
    }

    /// The run a request belongs to: as created, or by its name (`<run>-before-<stage>`,
    /// `<run>-after-<stage>`) for an approval of a request that does not exist (yet).
    pub(crate) fn run_of_request(&self, request: &ObjectKey) -> Option<ObjectKey> {
        if let Some(run) = self.requests.get(request) {
            return Some(run.clone());
        }
        self.runs
            .keys()
            .filter(|run| run.namespace == request.namespace)
            .find(|run| {
                ["before", "after"]
                    .iter()
                    .any(|at| request.name.starts_with(&format!("{}-{at}-", run.name)))
            })
            .cloned()
    }
}

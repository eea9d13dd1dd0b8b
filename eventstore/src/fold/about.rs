//! What an input or a decision names — a placement, a member cluster, a staged run, an
//! approval request: the fields of the fold's trace spans, and what replay's timeline and
//! explanations follow. It lives with the fold so the hub's writer names what it folds without
//! depending on replay.

use flotilla_core::model::{CLUSTER_GROUP, MEMBER_CLUSTER, ObjectKey, PLACEMENT_GROUP};
use flotilla_core::query::staged::{self, Scope};
use flotilla_core::{Decision, Input};
use serde_json::Value;

/// What one payload or decision names.
#[derive(Debug, Default)]
pub struct About {
    /// A placement (`ClusterResourcePlacement` or `ResourcePlacement`).
    pub placement: Option<ObjectKey>,
    /// A member cluster, by name.
    pub cluster: Option<String>,
    /// A staged update run.
    pub run: Option<ObjectKey>,
    /// An approval request.
    pub request: Option<ObjectKey>,
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

    /// What an input names.
    #[must_use]
    pub fn of_input(input: &Input) -> Self {
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
                    Scope {
                        namespace: report.namespace.as_deref().unwrap_or_default().into(),
                        run_name: "".into(),
                    }
                    .placement_key(&report.placement),
                ),
                ..About::default()
            },
            Input::Approve {
                name, namespace, ..
            } => About {
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

    /// What a decision names.
    #[must_use]
    pub fn of_decision(decision: &Decision) -> Self {
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
#[must_use]
pub fn manifest_key(manifest: &str) -> Option<ObjectKey> {
    let value: Value = serde_json::from_str(manifest).ok()?;
    let text = |pointer: &str| value.pointer(pointer).and_then(Value::as_str);
    Some(ObjectKey {
        group: flotilla_core::model::group_of(text("/apiVersion").unwrap_or_default()).into(),
        kind: text("/kind")?.into(),
        namespace: text("/metadata/namespace").unwrap_or_default().into(),
        name: text("/metadata/name")?.into(),
    })
}

//! Staged update strategies, runs and approval requests in KubeFleet's shape: the run's status
//! field for field as KubeFleet's staged-update `kubectl describe csur` samples show it.

use flotilla_core::State;
use flotilla_core::condition::Condition;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::staged::analysis::AnalysisStatus;
use flotilla_core::query::staged::model::{StageTask, StrategySpec, TaskType};
use flotilla_core::query::staged::run::{
    ApprovalRequest, ClusterStatus, StageStatus, TaskStatus, UpdateRun,
};
use flotilla_core::query::staged::{self, Strategy};
use serde_json::Value;

use crate::derived::condition;
use crate::json;
use crate::objects::metadata;

/// Whether the key is one of the staged kinds this module renders.
pub(crate) fn is_staged(key: &ObjectKey) -> bool {
    key.group == flotilla_core::model::PLACEMENT_GROUP
        && matches!(
            key.kind.as_str(),
            staged::CLUSTER_STAGED_UPDATE_STRATEGY
                | staged::STAGED_UPDATE_STRATEGY
                | staged::CLUSTER_STAGED_UPDATE_RUN
                | staged::STAGED_UPDATE_RUN
                | staged::CLUSTER_APPROVAL_REQUEST
                | staged::APPROVAL_REQUEST
        )
}

/// Renders one staged object, if it exists.
pub(crate) fn render(state: &State, key: &ObjectKey) -> Option<Value> {
    match key.kind.as_str() {
        staged::CLUSTER_STAGED_UPDATE_STRATEGY | staged::STAGED_UPDATE_STRATEGY => {
            Some(strategy(key, state.strategies().get(key)?))
        }
        staged::CLUSTER_STAGED_UPDATE_RUN | staged::STAGED_UPDATE_RUN => {
            Some(run(key, state.update_runs().get(key)?, None))
        }
        _ => Some(approval(key, state.approvals().get(key)?)),
    }
}

/// Every stored staged object's key: strategies, runs, then approval requests.
pub(crate) fn keys(state: &State) -> Vec<ObjectKey> {
    state
        .strategies()
        .keys()
        .chain(state.update_runs().keys())
        .chain(state.approvals().keys())
        .cloned()
        .collect()
}

fn strategy(key: &ObjectKey, stored: &Strategy) -> Value {
    obj([
        ("apiVersion", Value::from(stored.meta.api_version.as_str())),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", metadata(key, &stored.meta)),
        ("spec", strategy_spec(&stored.spec)),
    ])
}

/// A strategy spec as KubeFleet serializes it. An Approval task carries no `waitTime`: KubeFleet's
/// CRD refuses one ("AfterStageTaskType is Approval, waitTime is not allowed"), though an older
/// KubeFleet showed `0s` there.
fn strategy_spec(spec: &StrategySpec) -> Value {
    let stages = spec
        .stages
        .iter()
        .map(|stage| {
            let mut fields = vec![("name", Value::from(stage.name.as_str()))];
            if let Some(selector) = &stage.label_selector {
                fields.push((
                    "labelSelector",
                    json::omit_empty(serde_json::to_value(selector).unwrap_or_default()),
                ));
            }
            if let Some(key) = &stage.sorting_label_key {
                fields.push(("sortingLabelKey", Value::from(key.as_str())));
            }
            if let Some(value) = stage.max_concurrency {
                fields.push(("maxConcurrency", value.to_json()));
            }
            if !stage.before_stage_tasks.is_empty() {
                let tasks = stage.before_stage_tasks.iter().map(task).collect();
                fields.push(("beforeStageTasks", Value::Array(tasks)));
            }
            if !stage.after_stage_tasks.is_empty() {
                let tasks = stage.after_stage_tasks.iter().map(task).collect();
                fields.push(("afterStageTasks", Value::Array(tasks)));
            }
            // Rollout safety (`docs/rollout-safety.md`), shown only when written.
            if let Some(seconds) = stage.progress_deadline_seconds {
                fields.push(("progressDeadlineSeconds", Value::from(seconds)));
            }
            if let Some(value) = stage.max_failures {
                fields.push(("maxFailures", value.to_json()));
            }
            if let Some(action) = stage.on_failure {
                fields.push(("onFailure", Value::from(action.as_str())));
            }
            obj(fields)
        })
        .collect();
    let mut fields = vec![("stages", Value::Array(stages))];
    if let Some(change) = spec.on_cluster_change {
        fields.push(("onClusterChange", Value::from(change.as_str())));
    }
    obj(fields)
}

fn task(task: &StageTask) -> Value {
    let mut fields = vec![("type", Value::from(task.task_type.as_str()))];
    if let Some(wait) = task.wait_time {
        fields.push(("waitTime", Value::from(wait.to_string())));
    }
    if let Some(prometheus) = &task.prometheus {
        fields.push((
            "prometheus",
            serde_json::to_value(prometheus).unwrap_or_default(),
        ));
    }
    if let Some(interval) = task.interval {
        fields.push(("interval", Value::from(interval.to_string())));
    }
    if let Some(count) = task.count {
        fields.push(("count", Value::from(count)));
    }
    if let Some(limit) = task.failure_limit {
        fields.push(("failureLimit", Value::from(limit)));
    }
    obj(fields)
}

/// Every update run of both kinds (cluster-scoped first), each in key order, with each stage's
/// `clusters` cut to the first `keep` and `clustersOmitted` saying how many were left out: a
/// run over a whole fleet in a bounded size, without rendering the clusters left out.
#[must_use]
pub fn runs_cut(state: &State, keep: usize) -> Vec<Value> {
    let mut runs = Vec::new();
    for kind in [staged::CLUSTER_STAGED_UPDATE_RUN, staged::STAGED_UPDATE_RUN] {
        runs.extend(
            state
                .update_runs()
                .iter()
                .filter(|(key, _)| key.kind.as_str() == kind)
                .map(|(key, stored)| json::canonical(run(key, stored, Some(keep)))),
        );
    }
    runs
}

fn run(key: &ObjectKey, stored: &UpdateRun, keep: Option<usize>) -> Value {
    let mut spec = vec![
        (
            "placementName",
            Value::from(stored.spec.placement_name.as_str()),
        ),
        (
            "stagedRolloutStrategyName",
            Value::from(stored.spec.staged_rollout_strategy_name.as_str()),
        ),
        ("state", Value::from(stored.spec.state.as_str())),
    ];
    if let Some(index) = &stored.spec.resource_snapshot_index {
        spec.push(("resourceSnapshotIndex", Value::from(index.as_str())));
    }
    obj([
        ("apiVersion", Value::from(stored.meta.api_version.as_str())),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", metadata(key, &stored.meta)),
        ("spec", obj(spec)),
        ("status", run_status(stored, keep)),
    ])
}

fn run_status(stored: &UpdateRun, keep: Option<usize>) -> Value {
    let status = &stored.status;
    let conditions: Vec<Value> = [&status.initialized, &status.progressing, &status.succeeded]
        .into_iter()
        .flatten()
        .map(condition)
        .collect();
    let mut fields = vec![("conditions", Value::Array(conditions))];
    if let Some(index) = status.policy_snapshot_index_used {
        fields.push(("policySnapshotIndexUsed", Value::from(index.to_string())));
    }
    if let Some(count) = status.policy_observed_cluster_count {
        fields.push(("policyObservedClusterCount", Value::from(count)));
    }
    if let Some(index) = status.resource_snapshot_index_used {
        fields.push(("resourceSnapshotIndexUsed", Value::from(index.to_string())));
    }
    if let Some(snapshot) = &status.strategy_snapshot {
        fields.push(("stagedUpdateStrategySnapshot", strategy_spec(snapshot)));
    }
    if !status.stages.is_empty() {
        fields.push((
            "stagesStatus",
            Value::Array(status.stages.iter().map(|s| stage(s, keep)).collect()),
        ));
    }
    if let Some(deletion) = &status.deletion {
        fields.push(("deletionStageStatus", stage(deletion, keep)));
    }
    obj(fields)
}

/// A stage's status; with `keep`, only its first `keep` clusters and how many were omitted.
fn stage(stage: &StageStatus, keep: Option<usize>) -> Value {
    let conditions: Vec<Value> = [&stage.progressing, &stage.succeeded]
        .into_iter()
        .flatten()
        .map(condition)
        .collect();
    let shown = keep.unwrap_or(usize::MAX);
    let mut fields = vec![
        ("stageName", Value::from(stage.name.as_str())),
        (
            "clusters",
            Value::Array(
                stage
                    .clusters
                    .iter()
                    .take(shown)
                    .map(|c| cluster(c))
                    .collect(),
            ),
        ),
    ];
    if keep.is_some() {
        let omitted = stage.clusters.len().saturating_sub(shown);
        fields.push(("clustersOmitted", Value::from(omitted)));
    }
    if !conditions.is_empty() {
        fields.push(("conditions", Value::Array(conditions)));
    }
    if !stage.before_tasks.is_empty() {
        fields.push((
            "beforeStageTaskStatus",
            Value::Array(stage.before_tasks.iter().map(task_status).collect()),
        ));
    }
    if !stage.after_tasks.is_empty() {
        fields.push((
            "afterStageTaskStatus",
            Value::Array(stage.after_tasks.iter().map(task_status).collect()),
        ));
    }
    if let Some(at) = stage.start_time {
        fields.push(("startTime", Value::from(json::timestamp(at))));
    }
    if let Some(at) = stage.end_time {
        fields.push(("endTime", Value::from(json::timestamp(at))));
    }
    obj(fields)
}

fn cluster(status: &ClusterStatus) -> Value {
    let conditions: Vec<Value> = [status.started.as_deref(), status.succeeded.as_deref()]
        .into_iter()
        .flatten()
        .map(condition)
        .collect();
    let mut fields = vec![("clusterName", Value::from(status.cluster.as_str()))];
    if !conditions.is_empty() {
        fields.push(("conditions", Value::Array(conditions)));
    }
    if !status.cluster_resource_overrides.is_empty() {
        let names = status
            .cluster_resource_overrides
            .iter()
            .map(|n| Value::from(n.as_str()))
            .collect();
        fields.push(("clusterResourceOverrideSnapshots", Value::Array(names)));
    }
    if !status.resource_overrides.is_empty() {
        let names = status
            .resource_overrides
            .iter()
            .map(|(ns, name)| {
                obj([
                    ("name", Value::from(name.as_str())),
                    ("namespace", Value::from(ns.as_str())),
                ])
            })
            .collect();
        fields.push(("resourceOverrideSnapshots", Value::Array(names)));
    }
    obj(fields)
}

fn task_status(status: &TaskStatus) -> Value {
    let mut fields = vec![("type", Value::from(status.task_type.as_str()))];
    if let (TaskType::Approval, Some(name)) = (status.task_type, &status.approval_request_name) {
        fields.push(("approvalRequestName", Value::from(name.as_str())));
    }
    if let Some(analysis) = &status.analysis {
        fields.push(("analysis", analysis_status(analysis)));
    }
    if !status.conditions.is_empty() {
        let conditions = status.conditions.iter().map(condition).collect();
        fields.push(("conditions", Value::Array(conditions)));
    }
    obj(fields)
}

/// An Analysis task's measurements, as Argo Rollouts counts them.
fn analysis_status(analysis: &AnalysisStatus) -> Value {
    let mut fields = vec![
        ("successful", Value::from(analysis.successful)),
        ("failed", Value::from(analysis.failed)),
        ("error", Value::from(analysis.errors)),
        ("consecutiveError", Value::from(analysis.consecutive_errors)),
    ];
    if let Some(value) = &analysis.last_value {
        fields.push(("lastValue", Value::from(value.as_str())));
    }
    if let Some(error) = &analysis.last_error {
        fields.push(("lastError", Value::from(error.as_str())));
    }
    if let Some(at) = analysis.last_measured {
        fields.push(("lastMeasuredTime", Value::from(json::timestamp(at))));
    }
    obj(fields)
}

fn approval(key: &ObjectKey, stored: &ApprovalRequest) -> Value {
    let conditions: Vec<Value> = [&stored.approved, &stored.accepted]
        .into_iter()
        .flatten()
        .map(|c: &Condition| condition(c))
        .collect();
    // The hub names a request it makes after its run and stage; served, that name becomes a
    // UUID-shaped uid like every other object's.
    let mut meta = metadata(key, &stored.meta);
    let uid = crate::derived::derived_uid(&stored.meta.uid.to_string(), &key.kind, &key.name);
    json::insert(&mut meta, "uid", Value::from(uid));
    let mut object = vec![
        ("apiVersion", Value::from(stored.meta.api_version.as_str())),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", meta),
        (
            "spec",
            obj([
                ("parentStageRollout", Value::from(stored.run.as_str())),
                ("targetStage", Value::from(stored.stage.as_str())),
            ]),
        ),
    ];
    if !conditions.is_empty() {
        object.push(("status", obj([("conditions", Value::Array(conditions))])));
    }
    obj(object)
}

/// A JSON object from its members (the key order is canonicalized by the caller).
fn obj<'a>(members: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(field, value)| (field.to_owned(), value))
            .collect(),
    )
}

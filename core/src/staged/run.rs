//! An update run as the hub keeps it: its spec and the status KubeFleet's updaterun controller
//! writes (conditions, the strategy snapshot, the stages with their clusters and tasks, the
//! delete stage). Status lives here, in state, because every condition carries the event time
//! it changed at — the projections only render it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use thin_vec::ThinVec;

use super::analysis::AnalysisStatus;
use super::model::{RunSpec, StrategySpec, TaskType};
use crate::condition::Condition;
use crate::model::ClusterName;
use crate::model::ObjectMeta;
use crate::placement::OverrideSnapshots;

/// A `ClusterStagedUpdateRun` or `StagedUpdateRun`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateRun {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Spec (only `state` ever changes).
    pub spec: RunSpec,
    /// What the hub made of it.
    pub status: RunStatus,
    /// Conditions its recent passes made, for its clusters to share (not state).
    #[serde(skip)]
    pub(crate) shared: super::shared::SharedConditions,
    /// Its name as the bindings it binds hold it (not state).
    #[serde(skip)]
    pub(crate) binding_name: BindingRunName,
}

/// An update run's name as it binds clusters ([`crate::placement::Binding::update_run`]):
/// made at its first bind and shared by every later one, so binding a cluster allocates no
/// name (a placement's bindings keep each run's name once, in their tables). Never encoded,
/// equal to any other.
#[derive(Debug, Clone, Default)]
pub struct BindingRunName(Option<std::sync::Arc<str>>);

crate::derived::derived_cache!(BindingRunName);

impl BindingRunName {
    /// The shared copy of `name`, made the first time.
    pub(crate) fn get(&mut self, name: &str) -> std::sync::Arc<str> {
        match &self.0 {
            Some(shared) if **shared == *name => shared.clone(),
            _ => self.0.insert(std::sync::Arc::from(name)).clone(),
        }
    }
}

impl UpdateRun {
    /// Whether the run has reached Succeeded (True or False): nothing changes it any more.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.status.succeeded.is_some()
            || self
                .status
                .initialized
                .as_ref()
                .is_some_and(|c| c.status != crate::condition::ConditionStatus::True)
    }
}

/// `status` of an update run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStatus {
    /// `Initialized`.
    pub initialized: Option<Condition>,
    /// `Progressing`.
    pub progressing: Option<Condition>,
    /// `Succeeded`.
    pub succeeded: Option<Condition>,
    /// `policySnapshotIndexUsed`.
    pub policy_snapshot_index_used: Option<u64>,
    /// `policyObservedClusterCount`.
    pub policy_observed_cluster_count: Option<i64>,
    /// `resourceSnapshotIndexUsed`.
    pub resource_snapshot_index_used: Option<u64>,
    /// `stagedUpdateStrategySnapshot`: the strategy as it was at initialization.
    pub strategy_snapshot: Option<StrategySpec>,
    /// `stagesStatus`.
    pub stages: Vec<StageStatus>,
    /// `deletionStageStatus`.
    pub deletion: Option<StageStatus>,
    /// A scheduling change on the placement since the run last checked that its clusters still
    /// match (the run fails when they do not).
    pub needs_validation: bool,
    /// Where each cluster of the plan is: `(stage, position)`. Names are kept inline
    /// ([`crate::model::ClusterName`]): a checkpoint's snapshot copies them without allocating.
    #[serde(deserialize_with = "crate::model::bulk::map")]
    pub positions: BTreeMap<crate::model::ClusterName, (usize, usize)>,
    /// Clusters that joined an `onClusterChange: Adapt` run and were left for the next run.
    pub deferred: BTreeSet<ClusterName>,
    /// The rollback a stage with `onFailure: Rollback` started when it tripped
    /// (`docs/rollout-safety.md`).
    pub rollback: Option<RunRollback>,
}

/// A run moving the clusters it updated back to their prior work, after a stage with
/// `onFailure: Rollback` tripped. Kept in state so each pass is a function of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRollback {
    /// The stage that tripped: its `maxConcurrency` bounds the rollback.
    pub stage: usize,
    /// The trip's reason (`ProgressDeadlineExceeded`, `FailureThresholdExceeded`, …).
    pub reason: String,
    /// The trip's message: the field that fired and the clusters it names.
    pub message: String,
    /// Clusters given their prior work back.
    pub moved: BTreeSet<String>,
    /// Moved clusters reported ready on their prior work.
    pub ready: BTreeSet<String>,
    /// The trip, or the latest moved cluster becoming ready: the stage's
    /// `progressDeadlineSeconds` counts from here.
    pub last_progress: DateTime<Utc>,
    /// What it still waits for: derived, never encoded.
    #[serde(skip)]
    pub watch: super::rollback_watch::RollbackWatch,
}

/// One stage's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageStatus {
    /// `stageName`.
    pub name: String,
    /// Its clusters, in update order. Each is behind a pointer so that a checkpoint's
    /// snapshot ([`crate::State::snapshot`]) shares a large run's clusters instead of copying
    /// them; the fold copies one only when it changes it while a snapshot lives.
    pub clusters: Vec<Arc<ClusterStatus>>,
    /// `beforeStageTaskStatus`.
    pub before_tasks: Vec<TaskStatus>,
    /// `afterStageTaskStatus`.
    pub after_tasks: Vec<TaskStatus>,
    /// `Progressing`.
    pub progressing: Option<Condition>,
    /// `Succeeded`.
    pub succeeded: Option<Condition>,
    /// `startTime`.
    pub start_time: Option<DateTime<Utc>>,
    /// `endTime`.
    pub end_time: Option<DateTime<Utc>>,
    /// Its clusters all finished and its after-stage tasks are being waited on.
    pub after_waiting: bool,
    /// Position of the first cluster that has not succeeded (all before it have).
    pub first_unfinished: usize,
    /// Position of the first cluster not started yet (all before it have started).
    pub next_unstarted: usize,
    /// Positions of the clusters started and not finished.
    pub updating: BTreeSet<usize>,
    /// When a cluster of the stage last succeeded: derived from `clusters`, never encoded.
    #[serde(skip)]
    pub latest_success: LatestSuccess,
    /// How many of its clusters failed: derived from `clusters`, never encoded.
    #[serde(skip)]
    pub failures: FailureCount,
}

/// When a stage's latest cluster success happened, kept beside the stage: its
/// `progressDeadlineSeconds` asks on every pass, and a scan of the stage's clusters per work
/// report made a large stage's fold quadratic. Unknown (after a checkpoint's decoding) until
/// asked, then one scan and kept up by each success. Equal to any other, so state comparisons
/// see only real state; `invariants::staged` checks it against the scan.
#[derive(Debug, Clone, Default)]
pub struct LatestSuccess(Option<Option<DateTime<Utc>>>);

crate::derived::derived_cache!(LatestSuccess);

impl LatestSuccess {
    /// The latest success among `clusters` (the stage's own), scanning them only the first time.
    pub fn get(&mut self, clusters: &[Arc<ClusterStatus>]) -> Option<DateTime<Utc>> {
        *self.0.get_or_insert_with(|| latest_success(clusters))
    }

    /// What it holds without scanning: `None` while unknown.
    #[must_use]
    pub fn known(&self) -> Option<Option<DateTime<Utc>>> {
        self.0
    }

    /// A cluster of the stage succeeded at `at`.
    pub fn record(&mut self, at: DateTime<Utc>) {
        if let Some(known) = &mut self.0 {
            *known = Some(known.map_or(at, |latest| latest.max(at)));
        }
    }
}

/// How many of a stage's clusters failed, kept beside the stage: its `maxFailures` asks at each
/// failure, and a scan of the stage's clusters per failure made a mass failure in a large stage
/// quadratic. Unknown (after a checkpoint's decoding) until asked, then one scan and kept up by
/// each failure and each failed cluster dropped. Equal to any other, like [`LatestSuccess`];
/// `invariants::staged` checks it against the scan.
#[derive(Debug, Clone, Default)]
pub struct FailureCount(Option<u64>);

crate::derived::derived_cache!(FailureCount);

impl FailureCount {
    /// The failed clusters among `clusters` (the stage's own), scanning them only the first time.
    pub fn get(&mut self, clusters: &[Arc<ClusterStatus>]) -> u64 {
        *self
            .0
            .get_or_insert_with(|| failed_clusters(clusters).count() as u64)
    }

    /// What it holds without scanning: `None` while unknown.
    #[must_use]
    pub fn known(&self) -> Option<u64> {
        self.0
    }

    /// A cluster of the stage failed.
    pub fn record(&mut self) {
        if let Some(known) = &mut self.0 {
            *known += 1;
        }
    }

    /// A failed cluster of the stage was dropped: it no longer counts.
    pub fn forget(&mut self) {
        if let Some(known) = &mut self.0 {
            *known = known.saturating_sub(1);
        }
    }
}

/// Whether a cluster counts as failed: its `Succeeded` is `False`, and it was not dropped.
#[must_use]
pub fn is_failed(cluster: &ClusterStatus) -> bool {
    !cluster.dropped
        && cluster
            .succeeded
            .as_ref()
            .is_some_and(|s| s.status == crate::condition::ConditionStatus::False)
}

/// The stage's failed clusters, in stage order.
pub fn failed_clusters(clusters: &[Arc<ClusterStatus>]) -> impl Iterator<Item = &ClusterStatus> {
    clusters.iter().map(|c| &**c).filter(|c| is_failed(c))
}

/// The latest `lastTransitionTime` of the clusters' `Succeeded: True` conditions.
#[must_use]
pub fn latest_success(clusters: &[Arc<ClusterStatus>]) -> Option<DateTime<Utc>> {
    clusters
        .iter()
        .filter_map(|c| c.succeeded.as_ref())
        .filter(|s| s.status == crate::condition::ConditionStatus::True)
        .map(|s| s.last_transition_time)
        .max()
}

impl StageStatus {
    /// A stage not started yet. Each cluster's status goes straight into its `Arc`: a
    /// million-cluster run builds no intermediate vector of statuses.
    #[must_use]
    pub fn new(name: String, clusters: impl IntoIterator<Item = ClusterStatus>) -> Self {
        Self {
            name,
            clusters: clusters.into_iter().map(Arc::new).collect(),
            before_tasks: Vec::new(),
            after_tasks: Vec::new(),
            progressing: None,
            succeeded: None,
            start_time: None,
            end_time: None,
            after_waiting: false,
            first_unfinished: 0,
            next_unstarted: 0,
            updating: BTreeSet::new(),
            latest_success: LatestSuccess::default(),
            failures: FailureCount::default(),
        }
    }
}

/// One cluster's status within a stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterStatus {
    /// `clusterName`.
    pub cluster: ClusterName,
    /// `Started`. Behind a pointer, like `succeeded`: a run creates a status for each of up to
    /// a million clusters, none of them started yet, and the clusters one pass starts share one
    /// condition ([`super::shared::SharedConditions`]).
    pub started: Option<Arc<Condition>>,
    /// `Succeeded`.
    pub succeeded: Option<Arc<Condition>>,
    /// `clusterResourceOverrideSnapshots` (thin: nearly always empty).
    pub cluster_resource_overrides: ThinVec<String>,
    /// `resourceOverrideSnapshots` (`namespace`, `name`).
    pub resource_overrides: ThinVec<(String, String)>,
    /// It left the placement during an `onClusterChange: Adapt` run and is skipped
    /// (`docs/rollout-safety.md`).
    pub dropped: bool,
    /// The work its binding carried before this run gave it different work (resource
    /// snapshot index, override snapshots): what a rollback gives back. `None` when it had no
    /// work, or already had the run's.
    /// Boxed: most clusters of a run have none.
    pub prior: Option<Box<(u64, OverrideSnapshots)>>,
}

impl ClusterStatus {
    /// A cluster not started yet.
    #[must_use]
    pub fn new(cluster: ClusterName) -> Self {
        Self {
            cluster,
            started: None,
            succeeded: None,
            cluster_resource_overrides: ThinVec::new(),
            resource_overrides: ThinVec::new(),
            dropped: false,
            prior: None,
        }
    }

    /// Started and not finished.
    #[must_use]
    pub fn is_updating(&self) -> bool {
        self.started.is_some() && self.succeeded.is_none()
    }
}

/// A before- or after-stage task's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// `type`.
    pub task_type: TaskType,
    /// `approvalRequestName` (Approval tasks).
    pub approval_request_name: Option<String>,
    /// Its conditions, in the order they were set.
    pub conditions: Vec<Condition>,
    /// An Analysis task's measurements (`docs/rollout-safety.md`).
    pub analysis: Option<AnalysisStatus>,
}

impl TaskStatus {
    /// Whether a condition of this type is set.
    #[must_use]
    pub fn has(&self, condition_type: &str) -> bool {
        self.conditions
            .iter()
            .any(|c| c.condition_type == condition_type)
    }
}

/// Where an approval request gates a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskPosition {
    /// Before the stage starts.
    Before,
    /// After its clusters finished, before the next stage.
    After,
}

impl TaskPosition {
    /// `before` / `after`, as in request names and labels.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TaskPosition::Before => "before",
            TaskPosition::After => "after",
        }
    }
}

/// A `ClusterApprovalRequest` or `ApprovalRequest` the run created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Metadata.
    pub meta: ObjectMeta,
    /// `spec.parentStageRollout`: the run's name.
    pub run: String,
    /// `spec.targetStage`.
    pub stage: String,
    /// Before or after the stage.
    pub position: TaskPosition,
    /// `Approved` (set by `approve`).
    pub approved: Option<Condition>,
    /// `ApprovalAccepted` (set by the run once it saw the approval).
    pub accepted: Option<Condition>,
}

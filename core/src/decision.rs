//! Decisions: what the fold concluded from one input. Recorded with the input's sequence, so
//! replaying the inputs must reproduce them exactly.
//!
//! Decisions are the record users read, not the core's internal bus (that is
//! [`crate::change`]). They name objects by typed [`ObjectKey`]s (group included); text shows a
//! key by its [`std::fmt::Display`] form (`kind/name`, `kind/namespace/name`), and JSON as an
//! object of its four fields. Decisions recorded before keys were typed decode as
//! [`crate::wire::decision_v1::Decision`] and upcast.

use serde::{Deserialize, Serialize};

use crate::model::ObjectKey;

/// Everything one input caused, in the order it was decided.
pub type Decisions = Vec<Decision>;

/// One conclusion of the fold. Variants are only ever appended: their order is part of the
/// stored format of decision records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    /// The input was refused and changed nothing.
    Rejected {
        /// Stable code.
        code: RejectCode,
        /// Human-readable reason naming what was wrong and where.
        message: String,
    },
    /// An object was created or changed.
    ObjectStored {
        /// The object.
        object: ObjectKey,
        /// Its new resource version.
        resource_version: u64,
        /// Its generation.
        generation: u64,
        /// Whether it was created (not updated).
        created: bool,
    },
    /// An apply carried exactly what is stored already.
    ObjectUnchanged {
        /// The object.
        object: ObjectKey,
    },
    /// An object was deleted.
    ObjectDeleted {
        /// The object.
        object: ObjectKey,
    },
    /// A member cluster's agent joined (first heartbeat).
    ClusterJoined {
        /// Cluster name.
        cluster: String,
    },
    /// A member cluster became healthy (eligible) or unhealthy (ineligible).
    ClusterHealthChanged {
        /// Cluster name.
        cluster: String,
        /// New health.
        healthy: bool,
        /// Why (stable reason text).
        reason: String,
    },
    /// A member cluster left the fleet (its MemberCluster was deleted).
    ClusterLeft {
        /// Cluster name.
        cluster: String,
    },
    /// A work report was recorded.
    WorkReported {
        /// Cluster.
        cluster: String,
        /// The placement.
        placement: ObjectKey,
        /// Resource index reported on.
        resource_index: u64,
    },
    /// A new scheduling policy snapshot was taken.
    PolicySnapshotTaken {
        /// The placement.
        placement: ObjectKey,
        /// Its index.
        index: u64,
    },
    /// A new resource snapshot was taken.
    ResourceSnapshotTaken {
        /// The placement.
        placement: ObjectKey,
        /// Its index.
        index: u64,
        /// Its resource hash.
        resource_hash: String,
    },
    /// The scheduler picked a cluster (a new binding, or an unscheduled one restored).
    ClusterScheduled {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: String,
    },
    /// The scheduler released a cluster (its binding became Unscheduled).
    ClusterUnscheduled {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: String,
        /// Why.
        reason: String,
    },
    /// The placement's Scheduled condition changed.
    SchedulingChanged {
        /// The placement.
        placement: ObjectKey,
        /// Whether the policy is fulfilled.
        fulfilled: bool,
        /// The condition's message.
        message: String,
    },
    /// The rollout bound a cluster to a resource snapshot (first bind or in-place update).
    RolloutStarted {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: String,
        /// The resource snapshot index it now carries.
        resource_index: u64,
    },
    /// The rollout removed an unscheduled binding (and so its work).
    BindingRemoved {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: String,
    },
    /// A new override snapshot was taken (an override was created or its spec changed).
    OverrideSnapshotTaken {
        /// The override.
        override_object: ObjectKey,
        /// Its index; the snapshot is named `<name>-<index>`.
        index: u64,
    },
    /// A staged update run was initialized (once), or failed to.
    UpdateRunInitialized {
        /// The run.
        run: ObjectKey,
        /// Why initialization failed, when it did.
        failure: Option<String>,
    },
    /// A stage of a run changed its Progressing or Succeeded condition.
    UpdateRunStageChanged {
        /// The run.
        run: ObjectKey,
        /// The stage.
        stage: String,
        /// The condition reason (`StageUpdatingStarted`, `StageUpdatingWaiting`, …).
        reason: String,
    },
    /// A run created an approval request.
    ApprovalRequested {
        /// The run.
        run: ObjectKey,
        /// The request.
        request: ObjectKey,
    },
    /// Someone approved an approval request.
    ApprovalGranted {
        /// The request.
        request: ObjectKey,
    },
    /// A cluster of a run finished updating.
    UpdateRunClusterUpdated {
        /// The run.
        run: ObjectKey,
        /// The cluster.
        cluster: String,
        /// Succeeded, or failed.
        succeeded: bool,
    },
    /// A run's Progressing condition changed reason (started, stuck, stopping, stopped).
    UpdateRunStateChanged {
        /// The run.
        run: ObjectKey,
        /// The new reason.
        reason: String,
    },
    /// A run succeeded or failed.
    UpdateRunFinished {
        /// The run.
        run: ObjectKey,
        /// Whether it succeeded.
        succeeded: bool,
        /// Why it failed (empty on success).
        message: String,
    },
    /// An eviction was reconciled, once, to its terminal state.
    EvictionReconciled {
        /// The eviction.
        eviction: ObjectKey,
        /// The placement it targets (a `ClusterResourcePlacement`).
        placement: ObjectKey,
        /// The cluster it targets.
        cluster: String,
        /// Whether it was valid (`Valid=True`).
        valid: bool,
        /// Whether it was executed (`Executed=True`: the binding was removed).
        executed: bool,
        /// The message of its last condition: why.
        message: String,
    },
    /// A guarded rollout (`docs/rollout-safety.md`) counted a cluster as failed on its new work:
    /// the apply failed, or the work became unavailable after being reported available.
    RolloutClusterFailed {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: String,
        /// The resource snapshot the rollout moves clusters to.
        resource_index: u64,
        /// Clusters failed so far, this one included.
        failures: u64,
        /// How many `maxFailures` tolerates.
        tolerated: i64,
    },
    /// A guarded rollout tripped: the rule that fired and what it does now (`Halt`,
    /// `Rollback`).
    RolloutHalted {
        /// The placement.
        placement: ObjectKey,
        /// The resource snapshot the rollout no longer moves clusters to.
        resource_index: u64,
        /// `ProgressDeadlineExceeded` or `FailureThresholdExceeded`.
        reason: String,
        /// `Halt` or `Rollback`.
        action: String,
        /// Which rule fired and the clusters it names.
        message: String,
    },
    /// A rollback moved a cluster back to the resource snapshot it had before the rollout.
    ClusterRolledBack {
        /// The placement.
        placement: ObjectKey,
        /// The cluster.
        cluster: String,
        /// The snapshot it is taken off.
        from_index: u64,
        /// The snapshot it is given back.
        to_index: u64,
    },
    /// A rollback finished: every rolled-back cluster has its old work available
    /// (`RolledBack`), or one failed (`RollbackFailed`).
    RollbackFinished {
        /// The placement.
        placement: ObjectKey,
        /// The resource snapshot that was rolled back.
        resource_index: u64,
        /// Whether it succeeded.
        succeeded: bool,
        /// The condition's message.
        message: String,
    },
    /// An `onClusterChange: Adapt` run (`docs/rollout-safety.md`) took a cluster change in: a
    /// joining cluster `Added` to a stage, or `Deferred` to the next run (it matches only finished
    /// stages, or none); a leaving one `Dropped`.
    UpdateRunClusterChanged {
        /// The run.
        run: ObjectKey,
        /// The cluster.
        cluster: String,
        /// The stage it was added to or dropped from (`None` when deferred).
        stage: Option<String>,
        /// `Added`, `Deferred` or `Dropped`.
        change: String,
    },
    /// An Analysis task's measurement was folded (`docs/rollout-safety.md`).
    AnalysisMeasured {
        /// The run.
        run: ObjectKey,
        /// The stage.
        stage: String,
        /// The task (`afterStageTasks[1]`).
        task: String,
        /// The value, if one was measured.
        value: Option<String>,
        /// `Successful`, `Failed` or `Error`.
        outcome: String,
        /// The error, for an `Error`.
        message: String,
    },
    /// An Analysis task started measuring, passed or failed its stage's gate.
    AnalysisGate {
        /// The run.
        run: ObjectKey,
        /// The stage.
        stage: String,
        /// The task (`afterStageTasks[1]`).
        task: String,
        /// `Started`, `Successful` or `Failed`.
        phase: String,
        /// What the measurements came to.
        message: String,
    },
}

impl Decision {
    /// Whether this decision refused the input.
    #[must_use]
    pub fn is_rejection(&self) -> bool {
        matches!(self, Decision::Rejected { .. })
    }

    /// The variant's name, stable as the stored format's (metrics and traces group by it).
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self {
            Decision::Rejected { .. } => "Rejected",
            Decision::ObjectStored { .. } => "ObjectStored",
            Decision::ObjectUnchanged { .. } => "ObjectUnchanged",
            Decision::ObjectDeleted { .. } => "ObjectDeleted",
            Decision::ClusterJoined { .. } => "ClusterJoined",
            Decision::ClusterHealthChanged { .. } => "ClusterHealthChanged",
            Decision::ClusterLeft { .. } => "ClusterLeft",
            Decision::WorkReported { .. } => "WorkReported",
            Decision::PolicySnapshotTaken { .. } => "PolicySnapshotTaken",
            Decision::ResourceSnapshotTaken { .. } => "ResourceSnapshotTaken",
            Decision::ClusterScheduled { .. } => "ClusterScheduled",
            Decision::ClusterUnscheduled { .. } => "ClusterUnscheduled",
            Decision::SchedulingChanged { .. } => "SchedulingChanged",
            Decision::RolloutStarted { .. } => "RolloutStarted",
            Decision::BindingRemoved { .. } => "BindingRemoved",
            Decision::OverrideSnapshotTaken { .. } => "OverrideSnapshotTaken",
            Decision::UpdateRunInitialized { .. } => "UpdateRunInitialized",
            Decision::UpdateRunStageChanged { .. } => "UpdateRunStageChanged",
            Decision::ApprovalRequested { .. } => "ApprovalRequested",
            Decision::ApprovalGranted { .. } => "ApprovalGranted",
            Decision::UpdateRunClusterUpdated { .. } => "UpdateRunClusterUpdated",
            Decision::UpdateRunStateChanged { .. } => "UpdateRunStateChanged",
            Decision::UpdateRunFinished { .. } => "UpdateRunFinished",
            Decision::EvictionReconciled { .. } => "EvictionReconciled",
            Decision::RolloutClusterFailed { .. } => "RolloutClusterFailed",
            Decision::RolloutHalted { .. } => "RolloutHalted",
            Decision::ClusterRolledBack { .. } => "ClusterRolledBack",
            Decision::RollbackFinished { .. } => "RollbackFinished",
            Decision::UpdateRunClusterChanged { .. } => "UpdateRunClusterChanged",
            Decision::AnalysisMeasured { .. } => "AnalysisMeasured",
            Decision::AnalysisGate { .. } => "AnalysisGate",
        }
    }
}

/// Why an input was refused. The names are stable: publishers match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RejectCode {
    /// The manifest failed parsing or validation.
    InvalidObject,
    /// An update changed a field that cannot change.
    ImmutableField,
    /// The named object does not exist.
    NotFound,
    /// The cluster is not a member of the fleet.
    UnknownCluster,
    /// The placement named in a report does not exist.
    UnknownPlacement,
    /// No approval request of that name exists.
    ApprovalRequestNotFound,
    /// The envelope's schema version is newer than this build.
    UnsupportedSchemaVersion,
    /// The stored record is not an input this build can decode (garbage, a malformed JSON
    /// form, or a body that contradicts its subject).
    Undecodable,
    /// A work report about a resource index its binding does not target now.
    StaleReport,
    /// An event id the fold has already folded (a retry, however late).
    DuplicateEvent,
    /// A leave confirmation from a member cluster that is not leaving (its `MemberCluster`
    /// was not deleted).
    NotLeaving,
    /// An analysis result for a task that is not measuring now (not started, or decided).
    AnalysisNotRunning,
}

impl RejectCode {
    /// Every code, in declaration order.
    pub const ALL: [RejectCode; 12] = [
        RejectCode::InvalidObject,
        RejectCode::ImmutableField,
        RejectCode::NotFound,
        RejectCode::UnknownCluster,
        RejectCode::UnknownPlacement,
        RejectCode::ApprovalRequestNotFound,
        RejectCode::UnsupportedSchemaVersion,
        RejectCode::Undecodable,
        RejectCode::StaleReport,
        RejectCode::DuplicateEvent,
        RejectCode::NotLeaving,
        RejectCode::AnalysisNotRunning,
    ];

    /// The code of this stable text form, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<RejectCode> {
        RejectCode::ALL
            .into_iter()
            .find(|code| code.as_str() == name)
    }

    /// The stable text form.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            RejectCode::InvalidObject => "InvalidObject",
            RejectCode::ImmutableField => "ImmutableField",
            RejectCode::NotFound => "NotFound",
            RejectCode::UnknownCluster => "UnknownCluster",
            RejectCode::UnknownPlacement => "UnknownPlacement",
            RejectCode::ApprovalRequestNotFound => "ApprovalRequestNotFound",
            RejectCode::UnsupportedSchemaVersion => "UnsupportedSchemaVersion",
            RejectCode::Undecodable => "Undecodable",
            RejectCode::StaleReport => "StaleReport",
            RejectCode::DuplicateEvent => "DuplicateEvent",
            RejectCode::NotLeaving => "NotLeaving",
            RejectCode::AnalysisNotRunning => "AnalysisNotRunning",
        }
    }
}

/// Shorthand for a rejection.
#[must_use]
pub fn rejected(code: RejectCode, message: impl Into<String>) -> Decision {
    Decision::Rejected {
        code,
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::RejectCode;

    /// Exhaustive on purpose: a new code fails to compile here until it is in `ALL`.
    fn listed(code: RejectCode) -> bool {
        match code {
            RejectCode::InvalidObject
            | RejectCode::ImmutableField
            | RejectCode::NotFound
            | RejectCode::UnknownCluster
            | RejectCode::UnknownPlacement
            | RejectCode::ApprovalRequestNotFound
            | RejectCode::UnsupportedSchemaVersion
            | RejectCode::Undecodable
            | RejectCode::StaleReport
            | RejectCode::DuplicateEvent
            | RejectCode::NotLeaving
            | RejectCode::AnalysisNotRunning => RejectCode::ALL.contains(&code),
        }
    }

    #[test]
    fn a_kind_name_is_the_stored_tag() -> Result<(), String> {
        let decision = super::rejected(RejectCode::NotFound, "gone");
        let stored = serde_json::to_value(&decision).map_err(|e| e.to_string())?;
        assert!(stored.get(decision.kind_name()).is_some(), "{stored}");
        Ok(())
    }

    #[test]
    fn every_code_is_listed_and_found_by_its_name() {
        for code in RejectCode::ALL {
            assert!(listed(code));
            assert_eq!(RejectCode::from_name(code.as_str()), Some(code));
        }
        assert_eq!(RejectCode::from_name("invalidobject"), None);
    }
}

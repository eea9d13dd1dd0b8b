//! Input events: the only thing that changes flotilla's state.
//!
//! Every input is wrapped in an [`Envelope`] carrying a UUID, the time the log assigned it (UTC),
//! what its publisher claimed about time, the publisher and a schema version. These types are the
//! **current** wire schema (version [`SCHEMA_VERSION`]; older ones are frozen in [`crate::wire`]):
//! they are encoded with bincode by [`crate::codec`], so they must only grow in ways the
//! upcasting rules in `docs/schema-evolution.md` allow. Kubernetes manifests travel as canonical JSON text, since
//! bincode cannot carry `serde_json::Value`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::model::StringMap;
use crate::principal::Principal;

/// The schema version this build writes; readers upcast anything older (`crate::wire`).
/// Version 2 added per-manifest failures to work reports; version 3 added
/// [`Envelope::claimed_time`] and made [`Envelope::time`] the log's; version 4 added
/// [`Input::Leave`], [`ManifestFailure::reason`] and [`WorkReport::differences`]; version 5
/// added [`Input::AnalysisResult`] (a new variant only: version 4 bodies decode as they are);
/// version 6 added [`Envelope::principal`]; version 7 added the reason and message of an
/// [`Input::Approve`].
pub const SCHEMA_VERSION: u16 = 7;

/// One input event as it sits in the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Globally unique id; the log deduplicates on it.
    pub id: Uuid,
    /// The time the log assigned at append (redb: the hub's clock, never earlier than the
    /// previous event's; NATS: the JetStream timestamp). The fold's only notion of time.
    /// Events of schema versions 1 and 2 keep the time stored with them.
    #[serde(with = "crate::time_text")]
    pub time: DateTime<Utc>,
    /// What the publisher said about time (e.g. when a heartbeat was observed), if anything.
    /// Kept for readers; it never drives a deadline (version 3).
    #[serde(default, with = "crate::time_text::option")]
    pub claimed_time: Option<DateTime<Utc>>,
    /// Who published it (`cli`, `clock`, `agent/member1`, `scenario`, …).
    pub source: String,
    /// Schema version the payload was written with.
    pub schema_version: u16,
    /// What happened.
    pub payload: Input,
    /// Who it came from, as the hub authenticated it (version 6): unlike `source`, never taken
    /// from what the publisher says (`docs/security.md`). Older events are
    /// [`Principal::Unrecorded`]. The fold never reads it.
    pub principal: Principal,
}

impl Envelope {
    /// Wraps a payload in an envelope of the current schema version, with no claimed time,
    /// from the hub itself ([`Principal::Hub`]); inputs from outside name theirs with
    /// [`Envelope::with_principal`].
    #[must_use]
    pub fn new(id: Uuid, time: DateTime<Utc>, source: impl Into<String>, payload: Input) -> Self {
        Self {
            id,
            time,
            claimed_time: None,
            source: source.into(),
            schema_version: SCHEMA_VERSION,
            payload,
            principal: Principal::Hub,
        }
    }

    /// The same envelope from `principal`.
    #[must_use]
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = principal;
        self
    }
}

/// The kinds of input the hub accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Input {
    /// An object was applied (created or updated): one manifest as canonical JSON text.
    Apply {
        /// The manifest (`apiVersion`, `kind`, `metadata`, …) as JSON text.
        manifest: String,
    },
    /// An object was deleted.
    Delete {
        /// Which object.
        target: ObjectRef,
    },
    /// A member cluster's agent is alive, optionally with its properties.
    Heartbeat(Heartbeat),
    /// A member cluster reports how its work for one placement went.
    WorkReport(WorkReport),
    /// Someone approved an approval request.
    Approve {
        /// Approval request name (`<run>-before-<stage>` / `<run>-after-<stage>`).
        name: String,
        /// Namespace for namespaced `ApprovalRequest`s; `None` for `ClusterApprovalRequest`.
        namespace: Option<String>,
        /// The `Approved` condition's reason, as the approver wrote it (KubeFleet: the
        /// `reason` of the condition patched into the request's status); `None`: `approved`
        /// (version 7).
        reason: Option<String>,
        /// The condition's message, as the approver wrote it (`lgtm`); `None`: `approved`
        /// (version 7).
        message: Option<String>,
    },
    /// Event time passes; nothing else happened.
    Tick,
    /// A leaving member's agent removed everything it placed and left the fleet (version 4).
    Leave {
        /// The member cluster that left.
        cluster: String,
    },
    /// One measurement of an update run's Analysis task (version 5).
    AnalysisResult(AnalysisResult),
}

impl Input {
    /// The member cluster whose agent owns the subject this input is published on on NATS
    /// (`flotilla.in.{heartbeat,report,leave}.<cluster>`, `crate::wire::subject`); `None` for
    /// the subjects no cluster owns.
    #[must_use]
    pub fn agent_subject_cluster(&self) -> Option<&str> {
        match self {
            Input::Heartbeat(beat) => Some(&beat.cluster),
            Input::WorkReport(report) => Some(&report.cluster),
            Input::Leave { cluster } => Some(cluster),
            _ => None,
        }
    }

    /// A short stable name for the input kind (used in subjects, logs and the timeline).
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self {
            Input::Apply { .. } => "apply",
            Input::Delete { .. } => "delete",
            Input::Heartbeat(_) => "heartbeat",
            Input::WorkReport(_) => "report",
            Input::Approve { .. } => "approve",
            Input::Tick => "tick",
            Input::Leave { .. } => "leave",
            Input::AnalysisResult(_) => "analysisResult",
        }
    }
}

/// One measurement of an Analysis stage task, as the analysis adapter took it (version 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalysisResult {
    /// The update run.
    pub run: String,
    /// Namespace of a `StagedUpdateRun`; `None` for a `ClusterStagedUpdateRun`.
    pub namespace: Option<String>,
    /// The stage's name.
    pub stage: String,
    /// Which task: `beforeStageTasks[i]` / `afterStageTasks[i]`, `before` / `after` (the
    /// Analysis task there), or empty (the Analysis task the stage is waiting on).
    pub task: String,
    /// The query's value as Prometheus wrote it (`"0.0042"`, `"NaN"`); `None` when the
    /// measurement could not be taken.
    pub value: Option<String>,
    /// Why the measurement could not be taken (the query failed, or returned no sample).
    pub error: Option<String>,
}

/// Names one object by kind, optional namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectRef {
    /// The object's kind (`ClusterResourcePlacement`, `ConfigMap`, …).
    pub kind: String,
    /// API group; empty for the core group. `None` means "the group this kind is known under".
    pub group: Option<String>,
    /// Namespace for namespaced objects.
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
}

/// A member agent's heartbeat, with the optional properties of KubeFleet's property-based
/// scheduling.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// The member cluster speaking.
    pub cluster: String,
    /// Non-resource properties, e.g. `kubernetes-fleet.io/node-count: "3"` (quantities as text).
    pub properties: StringMap,
    /// Resource properties (capacity, allocatable, available), if reported.
    pub resource_usage: Option<ResourceUsage>,
}

/// Resource usage of a member cluster, each a map of resource name → quantity text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Total installed capacity (`cpu: "40"`, `memory: "20Gi"`).
    pub capacity: StringMap,
    /// Capacity usable by workloads.
    pub allocatable: StringMap,
    /// Capacity free right now.
    pub available: StringMap,
}

/// A work report's resource index that names no snapshot: the report is about the work the
/// cluster carries now, and the fold reads it as its binding's resource index. The JSON form
/// without `resourceIndex` stores it; no snapshot index ever reaches it.
pub const RESOURCE_INDEX_CURRENT: u64 = u64::MAX;

/// A member cluster's report on the work of one placement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkReport {
    /// Reporting member cluster.
    pub cluster: String,
    /// Placement name.
    pub placement: String,
    /// Namespace of a `ResourcePlacement`; `None` for a `ClusterResourcePlacement`.
    pub namespace: Option<String>,
    /// The resource snapshot index the report is about ([`RESOURCE_INDEX_CURRENT`]: the work
    /// the cluster carries now).
    pub resource_index: u64,
    /// Apply outcome: `Some(true)` applied, `Some(false)` failed, `None` not attempted yet.
    pub applied: Option<bool>,
    /// Availability: `Some(true)` available, `Some(false)` not available, `None` unknown.
    pub available: Option<bool>,
    /// `false` when the applied objects cannot be tracked for availability.
    pub trackable: bool,
    /// Free-form detail from the member (an apply error, a reason).
    pub message: String,
    /// The manifests that failed to apply or are not available yet, with why (version 2).
    pub failed_manifests: Vec<ManifestFailure>,
    /// What the member found different from the hub's manifests (version 4).
    pub differences: Differences,
}

impl WorkReport {
    /// `cluster`'s report that its work of the cluster-scoped placement `placement` at
    /// `resource_index` is applied and available: what a healthy member says once it is up.
    #[must_use]
    pub fn available(
        cluster: impl Into<String>,
        placement: impl Into<String>,
        resource_index: u64,
    ) -> Self {
        Self {
            cluster: cluster.into(),
            placement: placement.into(),
            namespace: None,
            resource_index,
            applied: Some(true),
            available: Some(true),
            trackable: true,
            message: String::new(),
            failed_manifests: Vec::new(),
            differences: Differences::default(),
        }
    }
}

/// Which condition of a manifest failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ManifestCondition {
    /// It could not be applied.
    Applied,
    /// It is applied but not available.
    Available,
}

impl ManifestCondition {
    /// The condition type KubeFleet writes.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ManifestCondition::Applied => "Applied",
            ManifestCondition::Available => "Available",
        }
    }
}

/// One manifest of a work that failed on the member: its identity and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFailure {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (`""` for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The condition that failed.
    pub condition: ManifestCondition,
    /// The member's message.
    pub message: String,
    /// Why, in KubeFleet's words (`FoundDrifts`, `NotTakenOver`, `FailedToTakeOver`,
    /// `ApplyConflictWithOtherApplier`, …); `None`: the hub's generic reason (version 4).
    pub reason: Option<String>,
}

/// What a member found different between the hub's manifests and the objects on the member
/// (version 4). Empty for members that apply without drift detection or takeover checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Differences {
    /// Set by a member whose apply strategy is `ReportDiff`: `Some(true)` when the diff of every
    /// manifest was computed, `Some(false)` when some could not be (those are listed as failed
    /// manifests); `None` from a member that applies.
    pub diff_reported: Option<bool>,
    /// Manifests whose object differs from the hub's: in `ReportDiff` mode, or found by a
    /// takeover with `whenToTakeOver: IfNoDiff`.
    pub diffed_manifests: Vec<ManifestDifference>,
    /// Manifests whose object drifted from what was applied (`whenToApply: IfNotDrifted`).
    pub drifted_manifests: Vec<ManifestDifference>,
}

impl Differences {
    /// Whether the member found nothing and reported no diff outcome.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.diff_reported.is_none()
            && self.diffed_manifests.is_empty()
            && self.drifted_manifests.is_empty()
    }
}

/// One manifest whose object on the member differs from the hub's, field by field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestDifference {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (`""` for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.generation` of the object on the member; `None` when it does not exist there.
    pub observed_generation: Option<i64>,
    /// The fields that differ.
    pub details: Vec<PatchDetail>,
}

impl ManifestDifference {
    /// The resource's identity: group, version, kind, namespace, name.
    #[must_use]
    pub fn identity(&self) -> [&str; 5] {
        [
            &self.group,
            &self.version,
            &self.kind,
            &self.namespace,
            &self.name,
        ]
    }
}

/// One field that differs (KubeFleet's `PatchDetail`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchDetail {
    /// A JSON pointer to the field, e.g. `/spec/replicas`.
    pub path: String,
    /// Its value on the member; `None` when the member's object lacks the field.
    pub value_in_member: Option<String>,
    /// Its value in the hub's manifest; `None` when the manifest lacks the field.
    pub value_in_hub: Option<String>,
}

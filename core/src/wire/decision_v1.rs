//! Decisions as flotilla 19da42c and earlier recorded them (unversioned bincode): frozen, never
//! changed. Objects and placements were named by display strings (`kind/name`,
//! `kind/namespace/name`) that dropped the API group. [`From`] upcasts a record to the current
//! [`crate::decision::Decision`], whose keys are typed.
//!
//! The upcast is the only place in `core` allowed to parse those display strings: the old
//! records carry nothing else. A fleet kind gets its group back (it has exactly one); any other
//! kind's group was never recorded and upcasts as the core group (`""`), so an upcast key is
//! for reading, and old and new decisions compare in their display form.

use serde::{Deserialize, Serialize};

use crate::decision as current;
use crate::model::cluster_group::{CLUSTER_GROUP_KIND, FLEET_GROUP};
use crate::model::{
    CLUSTER_GROUP, CLUSTER_RESOURCE_OVERRIDE, CLUSTER_RESOURCE_PLACEMENT,
    CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET, CLUSTER_RESOURCE_PLACEMENT_EVICTION,
    MEMBER_CLUSTER, ObjectKey, PLACEMENT_GROUP, RESOURCE_OVERRIDE, RESOURCE_PLACEMENT,
};
use crate::staged;

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
        /// `kind/name` or `kind/namespace/name`.
        object: String,
        /// Its new resource version.
        resource_version: u64,
        /// Its generation.
        generation: u64,
        /// Whether it was created (not updated).
        created: bool,
    },
    /// An apply carried exactly what is stored already.
    ObjectUnchanged {
        /// `kind/name` or `kind/namespace/name`.
        object: String,
    },
    /// An object was deleted.
    ObjectDeleted {
        /// `kind/name` or `kind/namespace/name`.
        object: String,
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
        /// `ClusterResourcePlacement/name` or `ResourcePlacement/ns/name`.
        placement: String,
        /// Resource index reported on.
        resource_index: u64,
    },
    /// A new scheduling policy snapshot was taken.
    PolicySnapshotTaken {
        /// `ClusterResourcePlacement/name` or `ResourcePlacement/ns/name`.
        placement: String,
        /// Its index.
        index: u64,
    },
    /// A new resource snapshot was taken.
    ResourceSnapshotTaken {
        /// The placement.
        placement: String,
        /// Its index.
        index: u64,
        /// Its resource hash.
        resource_hash: String,
    },
    /// The scheduler picked a cluster (a new binding, or an unscheduled one restored).
    ClusterScheduled {
        /// The placement.
        placement: String,
        /// The cluster.
        cluster: String,
    },
    /// The scheduler released a cluster (its binding became Unscheduled).
    ClusterUnscheduled {
        /// The placement.
        placement: String,
        /// The cluster.
        cluster: String,
        /// Why.
        reason: String,
    },
    /// The placement's Scheduled condition changed.
    SchedulingChanged {
        /// The placement.
        placement: String,
        /// Whether the policy is fulfilled.
        fulfilled: bool,
        /// The condition's message.
        message: String,
    },
    /// The rollout bound a cluster to a resource snapshot (first bind or in-place update).
    RolloutStarted {
        /// The placement.
        placement: String,
        /// The cluster.
        cluster: String,
        /// The resource snapshot index it now carries.
        resource_index: u64,
    },
    /// The rollout removed an unscheduled binding (and so its work).
    BindingRemoved {
        /// The placement.
        placement: String,
        /// The cluster.
        cluster: String,
    },
    /// A new override snapshot was taken (an override was created or its spec changed).
    OverrideSnapshotTaken {
        /// `ClusterResourceOverride/name` or `ResourceOverride/namespace/name`.
        override_object: String,
        /// Its index; the snapshot is named `<name>-<index>`.
        index: u64,
    },
    /// A staged update run was initialized (once), or failed to.
    UpdateRunInitialized {
        /// `ClusterStagedUpdateRun/name` or `StagedUpdateRun/ns/name`.
        run: String,
        /// Why initialization failed, when it did.
        failure: Option<String>,
    },
    /// A stage of a run changed its Progressing or Succeeded condition.
    UpdateRunStageChanged {
        /// The run.
        run: String,
        /// The stage.
        stage: String,
        /// The condition reason (`StageUpdatingStarted`, `StageUpdatingWaiting`, …).
        reason: String,
    },
    /// A run created an approval request.
    ApprovalRequested {
        /// The run.
        run: String,
        /// `ClusterApprovalRequest/name` or `ApprovalRequest/ns/name`.
        request: String,
    },
    /// Someone approved an approval request.
    ApprovalGranted {
        /// The request.
        request: String,
    },
    /// A cluster of a run finished updating.
    UpdateRunClusterUpdated {
        /// The run.
        run: String,
        /// The cluster.
        cluster: String,
        /// Succeeded, or failed.
        succeeded: bool,
    },
    /// A run's Progressing condition changed reason (started, stuck, stopping, stopped).
    UpdateRunStateChanged {
        /// The run.
        run: String,
        /// The new reason.
        reason: String,
    },
    /// A run succeeded or failed.
    UpdateRunFinished {
        /// The run.
        run: String,
        /// Whether it succeeded.
        succeeded: bool,
        /// Why it failed (empty on success).
        message: String,
    },
    /// An eviction was reconciled, once, to its terminal state.
    EvictionReconciled {
        /// `ClusterResourcePlacementEviction/name`.
        eviction: String,
        /// The placement it targets: `ClusterResourcePlacement/name`.
        placement: String,
        /// The cluster it targets.
        cluster: String,
        /// Whether it was valid (`Valid=True`).
        valid: bool,
        /// Whether it was executed (`Executed=True`: the binding was removed).
        executed: bool,
        /// The message of its last condition: why.
        message: String,
    },
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
}

impl From<RejectCode> for current::RejectCode {
    fn from(code: RejectCode) -> Self {
        match code {
            RejectCode::InvalidObject => Self::InvalidObject,
            RejectCode::ImmutableField => Self::ImmutableField,
            RejectCode::NotFound => Self::NotFound,
            RejectCode::UnknownCluster => Self::UnknownCluster,
            RejectCode::UnknownPlacement => Self::UnknownPlacement,
            RejectCode::ApprovalRequestNotFound => Self::ApprovalRequestNotFound,
            RejectCode::UnsupportedSchemaVersion => Self::UnsupportedSchemaVersion,
        }
    }
}

/// The group a kind recorded without one belongs to: the fleet kinds have exactly one; any
/// other kind's group was not recorded.
fn group_of_kind(kind: &str) -> &'static str {
    match kind {
        MEMBER_CLUSTER => CLUSTER_GROUP,
        CLUSTER_GROUP_KIND => FLEET_GROUP,
        CLUSTER_RESOURCE_PLACEMENT
        | RESOURCE_PLACEMENT
        | CLUSTER_RESOURCE_OVERRIDE
        | RESOURCE_OVERRIDE
        | CLUSTER_RESOURCE_PLACEMENT_EVICTION
        | CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET
        | staged::CLUSTER_STAGED_UPDATE_STRATEGY
        | staged::STAGED_UPDATE_STRATEGY
        | staged::CLUSTER_STAGED_UPDATE_RUN
        | staged::STAGED_UPDATE_RUN
        | staged::CLUSTER_APPROVAL_REQUEST
        | staged::APPROVAL_REQUEST => PLACEMENT_GROUP,
        _ => "",
    }
}

/// Parses a recorded display string (`kind/name` or `kind/namespace/name`). Names and
/// namespaces never contain `/`; anything else is kept whole as the name, so no record is lost.
fn key(display: &str) -> ObjectKey {
    let mut parts = display.splitn(3, '/');
    let (kind, first, second) = (parts.next(), parts.next(), parts.next());
    let (kind, namespace, name) = match (kind, first, second) {
        (Some(kind), Some(name), None) => (kind, "", name),
        (Some(kind), Some(namespace), Some(name)) => (kind, namespace, name),
        _ => ("", "", display),
    };
    ObjectKey {
        group: group_of_kind(kind).into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name: name.into(),
    }
}

impl From<Decision> for current::Decision {
    fn from(decision: Decision) -> Self {
        use current::Decision as New;
        match decision {
            decision @ (Decision::Rejected { .. }
            | Decision::ObjectStored { .. }
            | Decision::ObjectUnchanged { .. }
            | Decision::ObjectDeleted { .. }
            | Decision::ClusterJoined { .. }
            | Decision::ClusterHealthChanged { .. }
            | Decision::ClusterLeft { .. }) => upcast_object_or_cluster(decision),
            decision @ (Decision::WorkReported { .. }
            | Decision::PolicySnapshotTaken { .. }
            | Decision::ResourceSnapshotTaken { .. }
            | Decision::ClusterScheduled { .. }
            | Decision::ClusterUnscheduled { .. }
            | Decision::SchedulingChanged { .. }
            | Decision::RolloutStarted { .. }
            | Decision::BindingRemoved { .. }
            | Decision::OverrideSnapshotTaken { .. }) => upcast_placement(decision),
            decision @ (Decision::UpdateRunInitialized { .. }
            | Decision::UpdateRunStageChanged { .. }
            | Decision::ApprovalRequested { .. }
            | Decision::ApprovalGranted { .. }
            | Decision::UpdateRunClusterUpdated { .. }
            | Decision::UpdateRunStateChanged { .. }
            | Decision::UpdateRunFinished { .. }) => upcast_update_run(decision),
            Decision::EvictionReconciled {
                eviction,
                placement,
                cluster,
                valid,
                executed,
                message,
            } => New::EvictionReconciled {
                eviction: key(&eviction),
                placement: key(&placement),
                cluster,
                valid,
                executed,
                message,
            },
        }
    }
}

/// Upcasts a recorded decision about objects and member clusters (the only variants
/// [`From`] passes here).
fn upcast_object_or_cluster(decision: Decision) -> current::Decision {
    use current::Decision as New;
    match decision {
        Decision::Rejected { code, message } => New::Rejected {
            code: code.into(),
            message,
        },
        Decision::ObjectStored {
            object,
            resource_version,
            generation,
            created,
        } => New::ObjectStored {
            object: key(&object),
            resource_version,
            generation,
            created,
        },
        Decision::ObjectUnchanged { object } => New::ObjectUnchanged {
            object: key(&object),
        },
        Decision::ObjectDeleted { object } => New::ObjectDeleted {
            object: key(&object),
        },
        Decision::ClusterJoined { cluster } => New::ClusterJoined { cluster },
        Decision::ClusterHealthChanged {
            cluster,
            healthy,
            reason,
        } => New::ClusterHealthChanged {
            cluster,
            healthy,
            reason,
        },
        Decision::ClusterLeft { cluster } => New::ClusterLeft { cluster },
        other => unreachable!("not an object or cluster decision: {other:?}"),
    }
}

/// Upcasts a recorded decision about a placement: its snapshots, scheduling, rollout and
/// bindings (the only variants [`From`] passes here).
fn upcast_placement(decision: Decision) -> current::Decision {
    use current::Decision as New;
    match decision {
        Decision::WorkReported {
            cluster,
            placement,
            resource_index,
        } => New::WorkReported {
            cluster,
            placement: key(&placement),
            resource_index,
        },
        Decision::PolicySnapshotTaken { placement, index } => New::PolicySnapshotTaken {
            placement: key(&placement),
            index,
        },
        Decision::ResourceSnapshotTaken {
            placement,
            index,
            resource_hash,
        } => New::ResourceSnapshotTaken {
            placement: key(&placement),
            index,
            resource_hash,
        },
        Decision::ClusterScheduled { placement, cluster } => New::ClusterScheduled {
            placement: key(&placement),
            cluster,
        },
        Decision::ClusterUnscheduled {
            placement,
            cluster,
            reason,
        } => New::ClusterUnscheduled {
            placement: key(&placement),
            cluster,
            reason,
        },
        Decision::SchedulingChanged {
            placement,
            fulfilled,
            message,
        } => New::SchedulingChanged {
            placement: key(&placement),
            fulfilled,
            message,
        },
        Decision::RolloutStarted {
            placement,
            cluster,
            resource_index,
        } => New::RolloutStarted {
            placement: key(&placement),
            cluster,
            resource_index,
        },
        Decision::BindingRemoved { placement, cluster } => New::BindingRemoved {
            placement: key(&placement),
            cluster,
        },
        Decision::OverrideSnapshotTaken {
            override_object,
            index,
        } => New::OverrideSnapshotTaken {
            override_object: key(&override_object),
            index,
        },
        other => unreachable!("not a placement decision: {other:?}"),
    }
}

/// Upcasts a recorded decision about staged update runs and their approvals (the only
/// variants [`From`] passes here).
fn upcast_update_run(decision: Decision) -> current::Decision {
    use current::Decision as New;
    match decision {
        Decision::UpdateRunInitialized { run, failure } => New::UpdateRunInitialized {
            run: key(&run),
            failure,
        },
        Decision::UpdateRunStageChanged { run, stage, reason } => New::UpdateRunStageChanged {
            run: key(&run),
            stage,
            reason,
        },
        Decision::ApprovalRequested { run, request } => New::ApprovalRequested {
            run: key(&run),
            request: key(&request),
        },
        Decision::ApprovalGranted { request } => New::ApprovalGranted {
            request: key(&request),
        },
        Decision::UpdateRunClusterUpdated {
            run,
            cluster,
            succeeded,
        } => New::UpdateRunClusterUpdated {
            run: key(&run),
            cluster,
            succeeded,
        },
        Decision::UpdateRunStateChanged { run, reason } => New::UpdateRunStateChanged {
            run: key(&run),
            reason,
        },
        Decision::UpdateRunFinished {
            run,
            succeeded,
            message,
        } => New::UpdateRunFinished {
            run: key(&run),
            succeeded,
            message,
        },
        other => {
            unreachable!("not an update run decision: {other:?}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of `[ObjectStored { "ConfigMap/default/app", 7, 2, false }, RolloutStarted {
    /// "ResourcePlacement/default/web", "member-1", 3 }]` as 19da42c encoded a decision batch.
    fn recorded() -> Vec<u8> {
        let batch = vec![
            Decision::ObjectStored {
                object: "ConfigMap/default/app".into(),
                resource_version: 7,
                generation: 2,
                created: false,
            },
            Decision::RolloutStarted {
                placement: "ResourcePlacement/default/web".into(),
                cluster: "member-1".into(),
                resource_index: 3,
            },
            Decision::Rejected {
                code: RejectCode::UnknownCluster,
                message: "no".into(),
            },
        ];
        crate::codec::encode_decisions(&batch).unwrap_or_default()
    }

    #[test]
    fn a_recorded_batch_upcasts_to_typed_keys_with_the_same_display() {
        let Ok(old) = crate::codec::decode_decisions::<Vec<Decision>>(&recorded()) else {
            panic!("the frozen type must decode what it encoded");
        };
        let new: Vec<current::Decision> = old.into_iter().map(Into::into).collect();
        let config_map = ObjectKey {
            group: "".into(),
            kind: "ConfigMap".into(),
            namespace: "default".into(),
            name: "app".into(),
        };
        let web = ObjectKey {
            group: PLACEMENT_GROUP.into(),
            kind: RESOURCE_PLACEMENT.into(),
            namespace: "default".into(),
            name: "web".into(),
        };
        assert_eq!(
            new,
            vec![
                current::Decision::ObjectStored {
                    object: config_map,
                    resource_version: 7,
                    generation: 2,
                    created: false,
                },
                current::Decision::RolloutStarted {
                    placement: web.clone(),
                    cluster: "member-1".into(),
                    resource_index: 3,
                },
                current::Decision::Rejected {
                    code: current::RejectCode::UnknownCluster,
                    message: "no".into(),
                },
            ]
        );
        assert_eq!(web.display(), "ResourcePlacement/default/web");
    }

    /// The batch of [`recorded`] as 19da42c's `encode_decisions` wrote it (the frozen types
    /// are that release's definitions, verbatim).
    const GOLDEN: &str = "0300000000000000010000001500000000000000436f6e6669674d61702f64656661756c742f61707007000000000000000200000000000000000d0000001d000000000000005265736f75726365506c6163656d656e742f64656661756c742f77656208000000000000006d656d6265722d310300000000000000000000000300000002000000000000006e6f";

    #[test]
    fn the_frozen_types_encode_as_19da42c_did() {
        assert_eq!(hex::encode(recorded()), GOLDEN);
        let Ok(bytes) = hex::decode(GOLDEN) else {
            panic!("the golden bytes are hex");
        };
        let Ok(old) = crate::codec::decode_decisions::<Vec<Decision>>(&bytes) else {
            panic!("19da42c's bytes must decode");
        };
        assert_eq!(old.len(), 3);
    }

    #[test]
    fn fleet_kinds_get_their_group_back() {
        assert_eq!(key("MemberCluster/member-1").group, CLUSTER_GROUP);
        assert_eq!(key("ClusterResourcePlacement/crp").group, PLACEMENT_GROUP);
        assert_eq!(key("ClusterApprovalRequest/r").group, PLACEMENT_GROUP);
        assert_eq!(key("Deployment/ns/web").group, "");
        assert_eq!(key("odd").name, "odd");
    }
}

//! The member-cluster aggregate: join, heartbeats, health in event time, leave.
//!
//! A cluster joins when its agent sends the first heartbeat after its `MemberCluster` exists.
//! It stays healthy while heartbeats keep coming; once no heartbeat has arrived for
//! [`HEARTBEAT_TIMEOUT_PERIODS`] × `heartbeatPeriodSeconds` of event time it becomes unhealthy
//! and is no longer eligible for scheduling; its next heartbeat makes it healthy again.
//! With the default period of 60 s that is KubeFleet's five minutes.
//!
//! Leaving (KubeFleet's `membercluster_controller.go` `handleDelete`): deleting a member whose
//! agent never connected removes it at once. A member whose agent did connect is marked leaving
//! (its `deletionTimestamp`) and stays until its agent confirms it left; from the moment it is
//! marked it is ineligible ("cluster has left the fleet", KubeFleet's eligibility checker) and
//! its bindings are released, as for a cluster that is gone. When its agent has removed
//! everything it placed it confirms with a leave input ([`crate::event::Input::Leave`]), and the
//! member is removed: the `MemberCluster` is gone (`ObjectDeleted`), with its heartbeat deadline,
//! properties and status, and with it the cluster's namespace of Works (KubeFleet deletes
//! `fleet-member-<cluster>`; flotilla derives Works from bindings, which were removed when it
//! started leaving). A leave from a member that is not leaving is refused (`NotLeaving`).

use chrono::{DateTime, Duration, Utc};
use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::change::{Change, Changes};
use crate::decision::{Decision, RejectCode, rejected};
use crate::event::{Heartbeat, ResourceUsage};
use crate::model::{
    CLUSTER_GROUP, MEMBER_CLUSTER, MemberClusterSpec, ObjectKey, ObjectMeta, VecMap,
};
use crate::revision::{Applied, Revision, previous_of, revise};

crate::revision::stored_objects!(Member => MemberClusterSpec);

/// Member clusters by name. Each member is behind a pointer, for two reasons: a map node holds
/// eleven entries inline and is about half full when names arrive in order, so an inline
/// 256-byte member would leave about as much room empty as it uses
/// (`core/benches/state_memory.rs`); and a checkpoint's snapshot (`State::snapshot`) shares
/// the members instead of copying them, the fold copying only those it changes while the
/// snapshot lives (`Arc::make_mut`).
pub type Members = std::collections::BTreeMap<crate::model::ClusterName, std::sync::Arc<Member>>;

/// The member store a verb changes, borrowed from the state: the members, when their map last
/// grew, their heartbeat deadlines, and the hub's resource version counter (a new revision
/// takes the next one).
pub(crate) struct Store<'a> {
    /// Member clusters by name.
    pub members: &'a mut Members,
    /// When `members` was last rebuilt with full nodes.
    pub growth: &'a mut crate::growth::Growth,
    /// When each joined cluster's heartbeat times out: `(deadline, cluster)`, earliest first.
    pub heartbeat_deadlines: &'a mut std::collections::BTreeSet<(DateTime<Utc>, ClusterName)>,
    /// The last resource version handed out.
    pub resource_version: &'a mut u64,
}

use crate::model::ClusterName;

/// How many missed heartbeat periods make a cluster unhealthy.
pub const HEARTBEAT_TIMEOUT_PERIODS: i64 = 5;

/// Reason recorded when a cluster's heartbeats stop.
pub const REASON_HEARTBEAT_TIMEOUT: &str = "HeartbeatTimeout";
/// Reason recorded when heartbeats resume.
pub const REASON_HEARTBEAT_RESUMED: &str = "HeartbeatResumed";

/// A member cluster as the hub knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Metadata of the `MemberCluster` object.
    pub meta: ObjectMeta,
    /// Its spec.
    pub spec: MemberClusterSpec,
    /// The agent's status; `None` until the first heartbeat.
    pub agent: Option<AgentStatus>,
    /// Non-resource properties with their observation time.
    pub properties: VecMap<Property>,
    /// Resource usage, as last reported. Boxed, like the spec's identity, to keep the inline
    /// member small for the members that report none.
    pub resource_usage: Option<Box<ObservedUsage>>,
    /// Event time of the delete that made it leave (its `deletionTimestamp`); `None` while it
    /// is a member in good standing.
    #[serde(with = "crate::time_text::option")]
    pub leaving_since: Option<DateTime<Utc>>,
}

/// The member agent's liveness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentStatus {
    /// Event time of the first heartbeat.
    #[serde(with = "crate::time_text")]
    pub joined_at: DateTime<Utc>,
    /// Event time of the latest heartbeat.
    #[serde(with = "crate::time_text")]
    pub last_heartbeat: DateTime<Utc>,
    /// Whether heartbeats are fresh.
    pub healthy: bool,
    /// When `healthy` last changed.
    #[serde(with = "crate::time_text")]
    pub health_changed_at: DateTime<Utc>,
}

/// One non-resource property value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Property {
    /// Quantity text.
    pub value: CompactString,
    /// When it was observed.
    #[serde(with = "crate::time_text")]
    pub observation_time: DateTime<Utc>,
}

/// Resource usage with its observation time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedUsage {
    /// The usage.
    pub usage: ResourceUsage,
    /// When it was observed.
    #[serde(with = "crate::time_text")]
    pub observation_time: DateTime<Utc>,
}

impl Member {
    /// A newly registered member with no agent yet.
    #[must_use]
    pub fn new(meta: ObjectMeta, spec: MemberClusterSpec) -> Self {
        Self {
            meta,
            spec,
            agent: None,
            properties: VecMap::new(),
            resource_usage: None,
            leaving_since: None,
        }
    }

    /// Joined, heartbeating and not leaving: the scheduler may pick it.
    #[must_use]
    pub fn is_eligible(&self) -> bool {
        !self.is_leaving() && self.agent.as_ref().is_some_and(|agent| agent.healthy)
    }

    /// Deleted, and waiting for its agent to confirm that it left.
    #[must_use]
    pub fn is_leaving(&self) -> bool {
        self.leaving_since.is_some()
    }

    /// How long without a heartbeat makes this cluster unhealthy.
    #[must_use]
    pub fn heartbeat_timeout(&self) -> Duration {
        Duration::seconds(HEARTBEAT_TIMEOUT_PERIODS * i64::from(self.spec.heartbeat_period_seconds))
    }

    fn deadline(&self) -> Option<DateTime<Utc>> {
        self.agent
            .as_ref()
            .map(|agent| agent.last_heartbeat + self.heartbeat_timeout())
    }
}

/// Stores a `MemberCluster`: a new one waits for its agent's first heartbeat; a changed one
/// re-arms its heartbeat deadline (the period may have changed). Returns its `ObjectStored`,
/// or `ObjectUnchanged` as the error; the caller schedules the stored cluster again.
pub(crate) fn apply(
    store: &mut Store<'_>,
    key: &ObjectKey,
    spec: MemberClusterSpec,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Result<Decision, Box<Decision>> {
    let existing = store.members.get(key.name.as_str()).map(|m| &**m);
    let old_period = existing.map(|m| m.spec.heartbeat_period_seconds);
    let previous = previous_of(existing, &spec);
    let Revision { meta, decision, .. } =
        revise(store.resource_version, key, previous, applied, changes)?;
    match store
        .members
        .get_mut(key.name.as_str())
        .map(std::sync::Arc::make_mut)
    {
        Some(member) => {
            member.meta = meta;
            member.spec = spec;
        }
        None => {
            store.members.insert(
                key.name.as_str().into(),
                std::sync::Arc::new(Member::new(meta, spec)),
            );
            store.growth.note_insert(store.members);
        }
    }
    if let Some(period) = old_period {
        rearm_deadline(store, &key.name, period);
    }
    Ok(decision)
}

/// Marks a connected member leaving at `now`: a new resource version (its `deletionTimestamp`
/// is set) and, for placements, the cluster has left.
pub(crate) fn start_leaving(
    store: &mut Store<'_>,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let resource_version = crate::revision::next_version(store.resource_version);
    let Some(member) = store
        .members
        .get_mut(key.name.as_str())
        .map(std::sync::Arc::make_mut)
    else {
        return Vec::new();
    };
    member.leaving_since = Some(now);
    member.meta.resource_version = resource_version;
    let stored = crate::revision::stored(key, &member.meta, false, changes);
    changes.push(Change::ClusterLeft {
        cluster: key.name.as_str().into(),
    });
    vec![
        stored,
        Decision::ClusterLeft {
            cluster: key.name.to_string(),
        },
    ]
}

/// What a heartbeat did to its member.
pub(crate) struct Beat {
    /// `ClusterJoined` or `ClusterHealthChanged` when the cluster joined or recovered.
    pub decisions: Vec<Decision>,
    /// Whether a property value changed.
    pub properties_changed: bool,
}

/// Records a heartbeat at `now`: joins, revives, refreshes properties and the deadline. A
/// heartbeat from a cluster that is not a member is refused (the error).
pub(crate) fn heartbeat(
    store: &mut Store<'_>,
    beat: &Heartbeat,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Result<Beat, Vec<Decision>> {
    let Some(member) = store
        .members
        .get_mut(beat.cluster.as_str())
        .map(std::sync::Arc::make_mut)
    else {
        return Err(vec![rejected(
            RejectCode::UnknownCluster,
            format!(
                "heartbeat from {:?}, which is not a member cluster",
                beat.cluster
            ),
        )]);
    };
    if let Some(old) = member.deadline() {
        store
            .heartbeat_deadlines
            .remove(&(old, beat.cluster.as_str().into()));
    }
    let decisions: Vec<Decision> = join_or_revive(member, &beat.cluster, now, changes)
        .into_iter()
        .collect();
    let properties_changed = record_properties(member, beat, now);
    if let Some(deadline) = member.deadline() {
        store
            .heartbeat_deadlines
            .insert((deadline, beat.cluster.as_str().into()));
    }
    Ok(Beat {
        decisions,
        properties_changed,
    })
}

/// A heartbeat's effect on the member's agent at `now`: the first one joins the cluster, one
/// after the agent went silent makes it healthy again, any other only refreshes the last
/// heartbeat. Returns the decision when the cluster joined or recovered.
fn join_or_revive(
    member: &mut Member,
    cluster: &str,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Option<Decision> {
    let Some(agent) = &mut member.agent else {
        member.agent = Some(AgentStatus {
            joined_at: now,
            last_heartbeat: now,
            healthy: true,
            health_changed_at: now,
        });
        changes.push(Change::ClusterJoined {
            cluster: cluster.into(),
        });
        return Some(Decision::ClusterJoined {
            cluster: cluster.to_owned(),
        });
    };
    agent.last_heartbeat = agent.last_heartbeat.max(now);
    if agent.healthy {
        return None;
    }
    agent.healthy = true;
    agent.health_changed_at = now;
    changes.push(Change::ClusterHealthChanged {
        cluster: cluster.into(),
    });
    Some(Decision::ClusterHealthChanged {
        cluster: cluster.to_owned(),
        healthy: true,
        reason: REASON_HEARTBEAT_RESUMED.into(),
    })
}

/// An empty report keeps what was known; a non-empty one replaces it. Returns whether any
/// value (not just its observation time) changed. A report like the last one — the steady
/// state, since agents send their properties with every heartbeat — only moves observation
/// times: nothing is allocated.
fn record_properties(member: &mut Member, beat: &Heartbeat, now: DateTime<Utc>) -> bool {
    let mut changed = false;
    if !beat.properties.is_empty() {
        let same_names = beat.properties.len() == member.properties.len()
            && beat.properties.keys().eq(member.properties.keys());
        if same_names {
            for (value, property) in beat.properties.values().zip(member.properties.values_mut()) {
                if property.value != *value {
                    property.value.clone_from(value);
                    changed = true;
                }
                property.observation_time = now;
            }
        } else {
            changed = true;
            member.properties = beat
                .properties
                .iter()
                .map(|(name, value)| {
                    let property = Property {
                        value: value.clone(),
                        observation_time: now,
                    };
                    (name, property)
                })
                .collect();
        }
    }
    if let Some(usage) = &beat.resource_usage {
        match &mut member.resource_usage {
            Some(observed) if &observed.usage == usage => observed.observation_time = now,
            slot => {
                changed = true;
                *slot = Some(Box::new(ObservedUsage {
                    usage: usage.clone(),
                    observation_time: now,
                }));
            }
        }
    }
    changed
}

/// Marks every cluster whose heartbeat deadline is at or before `now` unhealthy.
pub(crate) fn expire_heartbeats(
    store: &mut Store<'_>,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    expire_heartbeats_reversibly(store, now, changes).decisions
}

/// Heartbeat timeouts taken by one step, with what they replaced, so that a step whose input
/// is refused can take them back (a refused input changes nothing, not even the fold's clock;
/// the step's changes are dropped with it).
#[derive(Debug, Default)]
pub(crate) struct Expiry {
    /// What the expiry decided.
    pub decisions: Vec<Decision>,
    /// Each popped deadline with the agent status it replaced.
    undo: Vec<Expired>,
}

/// One popped heartbeat deadline `(deadline, cluster)` and the agent status it replaced.
type Expired = (
    (DateTime<Utc>, crate::model::ClusterName),
    Option<AgentStatus>,
);

impl Expiry {
    /// Puts back every deadline and agent status this expiry changed.
    pub(crate) fn revert(self, store: &mut Store<'_>) {
        for ((deadline, cluster), agent) in self.undo.into_iter().rev() {
            if let (Some(member), Some(agent)) = (
                store
                    .members
                    .get_mut(cluster.as_str())
                    .map(std::sync::Arc::make_mut),
                agent,
            ) {
                member.agent = Some(agent);
            }
            store.heartbeat_deadlines.insert((deadline, cluster));
        }
    }
}

/// As [`expire_heartbeats`], remembering what it changed ([`Expiry::revert`]).
pub(crate) fn expire_heartbeats_reversibly(
    store: &mut Store<'_>,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Expiry {
    let mut expiry = Expiry::default();
    while let Some(first) = store.heartbeat_deadlines.first() {
        if first.0 > now {
            break;
        }
        let Some((deadline, cluster)) = store.heartbeat_deadlines.pop_first() else {
            break;
        };
        let agent = store
            .members
            .get_mut(&cluster)
            .map(std::sync::Arc::make_mut)
            .and_then(|m| m.agent.as_mut());
        let before = agent.as_deref().cloned();
        if let Some(agent) = agent.filter(|agent| agent.healthy) {
            agent.healthy = false;
            agent.health_changed_at = deadline;
            changes.record(
                Change::ClusterHealthChanged {
                    cluster: cluster.clone(),
                },
                &mut expiry.decisions,
                Decision::ClusterHealthChanged {
                    cluster: cluster.as_str().to_owned(),
                    healthy: false,
                    reason: REASON_HEARTBEAT_TIMEOUT.into(),
                },
            );
        }
        expiry.undo.push(((deadline, cluster), before));
    }
    expiry
}

/// Re-arms a cluster's deadline after its heartbeat period changed.
fn rearm_deadline(store: &mut Store<'_>, name: &str, old_period_secs: u32) {
    let Some(member) = store.members.get(name) else {
        return;
    };
    let Some(agent) = &member.agent else { return };
    let old = agent.last_heartbeat
        + Duration::seconds(HEARTBEAT_TIMEOUT_PERIODS * i64::from(old_period_secs));
    store.heartbeat_deadlines.remove(&(old, name.into()));
    if agent.healthy
        && let Some(deadline) = member.deadline()
    {
        store.heartbeat_deadlines.insert((deadline, name.into()));
    }
}

/// Removes a member and everything keyed by it; the cluster leaves the fleet.
pub(crate) fn leave(store: &mut Store<'_>, name: &str, changes: &mut Changes) -> Vec<Decision> {
    if !remove(store, name, changes) {
        return Vec::new();
    }
    vec![Decision::ClusterLeft {
        cluster: name.to_owned(),
    }]
}

/// Removes a member and its heartbeat deadline; `false` when there was none.
fn remove(store: &mut Store<'_>, name: &str, changes: &mut Changes) -> bool {
    let Some(member) = store.members.remove(name) else {
        return false;
    };
    if let Some(deadline) = member.deadline() {
        store.heartbeat_deadlines.remove(&(deadline, name.into()));
    }
    changes.push(Change::ClusterLeft {
        cluster: name.into(),
    });
    true
}

/// A leaving member's agent confirms it left: the member is removed (`ObjectDeleted`; it was
/// recorded as `ClusterLeft` when it started leaving). Refused (the error) for an unknown
/// cluster (`UnknownCluster`) and for a member that is not leaving (`NotLeaving`).
pub(crate) fn confirm_leave(
    store: &mut Store<'_>,
    cluster: &str,
    changes: &mut Changes,
) -> Result<Vec<Decision>, Vec<Decision>> {
    let Some(member) = store.members.get(cluster) else {
        return Err(vec![rejected(
            RejectCode::UnknownCluster,
            format!("leave from {cluster:?}, which is not a member cluster"),
        )]);
    };
    if !member.is_leaving() {
        return Err(vec![rejected(
            RejectCode::NotLeaving,
            format!(
                "leave from cluster {cluster:?}, which is not leaving the fleet: its \
                 MemberCluster must be deleted first"
            ),
        )]);
    }
    let key = ObjectKey::cluster_scoped(CLUSTER_GROUP, MEMBER_CLUSTER, cluster);
    let decisions = vec![changes.object_deleted(&key)];
    remove(store, cluster, changes);
    Ok(decisions)
}

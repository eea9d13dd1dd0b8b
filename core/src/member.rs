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
    CLUSTER_GROUP, MEMBER_CLUSTER, MemberClusterSpec, ObjectKey, ObjectMeta, UserMeta, VecMap,
};
use crate::placement::lifecycle;
use crate::revision::{Origin, Previous, Revision, revise};
use crate::state::State;

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
    pub leaving_since: Option<DateTime<Utc>>,
}

/// The member agent's liveness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentStatus {
    /// Event time of the first heartbeat.
    pub joined_at: DateTime<Utc>,
    /// Event time of the latest heartbeat.
    pub last_heartbeat: DateTime<Utc>,
    /// Whether heartbeats are fresh.
    pub healthy: bool,
    /// When `healthy` last changed.
    pub health_changed_at: DateTime<Utc>,
}

/// One non-resource property value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Property {
    /// Quantity text.
    pub value: CompactString,
    /// When it was observed.
    pub observation_time: DateTime<Utc>,
}

/// Resource usage with its observation time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedUsage {
    /// The usage.
    pub usage: ResourceUsage,
    /// When it was observed.
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
/// re-arms its heartbeat deadline (the period may have changed) and is scheduled again.
pub(crate) fn apply(
    state: &mut State,
    key: &ObjectKey,
    api_version: &str,
    user: UserMeta,
    spec: MemberClusterSpec,
    origin: &Origin,
    changes: &mut Changes,
) -> Vec<Decision> {
    let existing = state.members.get(key.name.as_str());
    let old_period = existing.map(|m| m.spec.heartbeat_period_seconds);
    let previous = existing.map(|m| Previous {
        meta: m.meta.clone(),
        same_spec: m.spec == spec,
    });
    let Revision { meta, decision, .. } = match revise(
        &mut state.resource_version,
        key,
        previous,
        api_version,
        user,
        origin,
        changes,
    ) {
        Ok(revision) => revision,
        Err(unchanged) => return vec![*unchanged],
    };
    match state
        .members
        .get_mut(key.name.as_str())
        .map(std::sync::Arc::make_mut)
    {
        Some(member) => {
            member.meta = meta;
            member.spec = spec;
        }
        None => {
            state.members.insert(
                key.name.as_str().into(),
                std::sync::Arc::new(Member::new(meta, spec)),
            );
            state.members_growth.note_insert(&mut state.members);
        }
    }
    if let Some(period) = old_period {
        rearm_deadline(state, &key.name, period);
    }
    let mut decisions = vec![decision];
    decisions.extend(lifecycle::member_changed(
        state, &key.name, origin.now, changes,
    ));
    decisions
}

/// Deletes a `MemberCluster`: one whose agent never connected leaves at once; one whose agent
/// did is marked leaving until the agent confirms. Either way its bindings are released at
/// once. Deleting a leaving member again changes nothing. `None` when no such member exists.
pub(crate) fn delete(
    state: &mut State,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Option<Vec<Decision>> {
    let member = state.members.get(key.name.as_str())?;
    if member.is_leaving() {
        return Some(vec![Decision::ObjectUnchanged {
            object: key.clone(),
        }]);
    }
    let mut decisions = if member.agent.is_none() {
        let mut decisions = vec![changes.object_deleted(key)];
        decisions.extend(leave(state, &key.name, changes));
        decisions
    } else {
        start_leaving(state, key, now, changes)
    };
    decisions.extend(lifecycle::member_left(state, &key.name, now, changes));
    decisions.extend(remove_bindings(state, &key.name, changes));
    Some(decisions)
}

/// Removes the bindings the scheduler released from a cluster that left: KubeFleet deletes a
/// deleted cluster's bindings and Works at once, without waiting for the rollout's budget
/// (there is nothing left to keep available there).
fn remove_bindings(state: &mut State, cluster: &str, changes: &mut Changes) -> Vec<Decision> {
    state
        .placements
        .iter_mut()
        .filter_map(|(key, placement)| {
            let released = placement.bindings.get(cluster).is_some_and(|binding| {
                binding.state == crate::placement::BindingState::Unscheduled
            });
            if released {
                placement.remove_binding(key, cluster, changes)
            } else {
                None
            }
        })
        .collect()
}

/// Marks a connected member leaving at `now`: a new resource version (its `deletionTimestamp`
/// is set) and, for placements, the cluster has left.
fn start_leaving(
    state: &mut State,
    key: &ObjectKey,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let resource_version = state.next_resource_version();
    let Some(member) = state
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

/// Records a heartbeat at `now`: joins, revives, refreshes properties and the deadline.
pub(crate) fn heartbeat(
    state: &mut State,
    beat: &Heartbeat,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Some(member) = state
        .members
        .get_mut(beat.cluster.as_str())
        .map(std::sync::Arc::make_mut)
    else {
        return vec![rejected(
            RejectCode::UnknownCluster,
            format!(
                "heartbeat from {:?}, which is not a member cluster",
                beat.cluster
            ),
        )];
    };
    if let Some(old) = member.deadline() {
        state
            .heartbeat_deadlines
            .remove(&(old, beat.cluster.as_str().into()));
    }
    let mut decisions: Vec<Decision> = join_or_revive(member, &beat.cluster, now, changes)
        .into_iter()
        .collect();
    let properties_changed = record_properties(member, beat, now);
    if let Some(deadline) = member.deadline() {
        state
            .heartbeat_deadlines
            .insert((deadline, beat.cluster.as_str().into()));
    }
    // Joining, recovering, or new property values can make the cluster eligible for more.
    if !decisions.is_empty() {
        decisions.extend(lifecycle::member_changed(
            state,
            &beat.cluster,
            now,
            changes,
        ));
    } else if properties_changed {
        decisions.extend(lifecycle::member_properties_changed(
            state,
            &beat.cluster,
            now,
            changes,
        ));
    }
    decisions
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
    state: &mut State,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    expire_heartbeats_reversibly(state, now, changes).decisions
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
    pub(crate) fn revert(self, state: &mut State) {
        for ((deadline, cluster), agent) in self.undo.into_iter().rev() {
            if let (Some(member), Some(agent)) = (
                state
                    .members
                    .get_mut(cluster.as_str())
                    .map(std::sync::Arc::make_mut),
                agent,
            ) {
                member.agent = Some(agent);
            }
            state.heartbeat_deadlines.insert((deadline, cluster));
        }
    }
}

/// As [`expire_heartbeats`], remembering what it changed ([`Expiry::revert`]).
pub(crate) fn expire_heartbeats_reversibly(
    state: &mut State,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Expiry {
    let mut expiry = Expiry::default();
    while let Some(first) = state.heartbeat_deadlines.first() {
        if first.0 > now {
            break;
        }
        let Some((deadline, cluster)) = state.heartbeat_deadlines.pop_first() else {
            break;
        };
        let agent = state
            .members
            .get_mut(&cluster)
            .map(std::sync::Arc::make_mut)
            .and_then(|m| m.agent.as_mut());
        let before = agent.as_deref().cloned();
        if let Some(agent) = agent.filter(|agent| agent.healthy) {
            agent.healthy = false;
            agent.health_changed_at = deadline;
            changes.push(Change::ClusterHealthChanged {
                cluster: cluster.clone(),
            });
            expiry.decisions.push(Decision::ClusterHealthChanged {
                cluster: cluster.as_str().to_owned(),
                healthy: false,
                reason: REASON_HEARTBEAT_TIMEOUT.into(),
            });
        }
        expiry.undo.push(((deadline, cluster), before));
    }
    expiry
}

/// Re-arms a cluster's deadline after its heartbeat period changed.
pub(crate) fn rearm_deadline(state: &mut State, name: &str, old_period_secs: u32) {
    let Some(member) = state.members.get(name) else {
        return;
    };
    let Some(agent) = &member.agent else { return };
    let old = agent.last_heartbeat
        + Duration::seconds(HEARTBEAT_TIMEOUT_PERIODS * i64::from(old_period_secs));
    state.heartbeat_deadlines.remove(&(old, name.into()));
    if agent.healthy
        && let Some(deadline) = member.deadline()
    {
        state.heartbeat_deadlines.insert((deadline, name.into()));
    }
}

/// Removes a member and everything keyed by it; the cluster leaves the fleet.
pub(crate) fn leave(state: &mut State, name: &str, changes: &mut Changes) -> Vec<Decision> {
    if !remove(state, name, changes) {
        return Vec::new();
    }
    vec![Decision::ClusterLeft {
        cluster: name.to_owned(),
    }]
}

/// Removes a member and its heartbeat deadline; `false` when there was none.
fn remove(state: &mut State, name: &str, changes: &mut Changes) -> bool {
    let Some(member) = state.members.remove(name) else {
        return false;
    };
    if let Some(deadline) = member.deadline() {
        state.heartbeat_deadlines.remove(&(deadline, name.into()));
    }
    changes.push(Change::ClusterLeft {
        cluster: name.into(),
    });
    true
}

/// A leaving member's agent confirms it left: the member is removed (`ObjectDeleted`; it was
/// recorded as `ClusterLeft` when it started leaving). Refused for an unknown cluster
/// (`UnknownCluster`) and for a member that is not leaving (`NotLeaving`).
pub(crate) fn confirm_leave(
    state: &mut State,
    cluster: &str,
    now: DateTime<Utc>,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Some(member) = state.members.get(cluster) else {
        return vec![rejected(
            RejectCode::UnknownCluster,
            format!("leave from {cluster:?}, which is not a member cluster"),
        )];
    };
    if !member.is_leaving() {
        return vec![rejected(
            RejectCode::NotLeaving,
            format!(
                "leave from cluster {cluster:?}, which is not leaving the fleet: its \
                 MemberCluster must be deleted first"
            ),
        )];
    }
    let key = ObjectKey::cluster_scoped(CLUSTER_GROUP, MEMBER_CLUSTER, cluster);
    let mut decisions = vec![changes.object_deleted(&key)];
    remove(state, cluster, changes);
    // Nothing should be left on the cluster since it started leaving; whatever is (a binding a
    // later change made) goes with it.
    decisions.extend(lifecycle::member_left(state, cluster, now, changes));
    decisions.extend(remove_bindings(state, cluster, changes));
    decisions
}

//! `MemberCluster` (`cluster.kubernetes-fleet.io/v1beta1`) with a status shaped like KubeFleet's.
//!
//! KubeFleet builds this status in two places: the hub's MemberCluster controller
//! (`pkg/controllers/membercluster/v1beta1/membercluster_controller.go`) sets `ReadyToJoin` and
//! aggregates `Joined` from the agents, and the member agent's InternalMemberCluster controller
//! (`pkg/controllers/internalmembercluster/v1beta1/member_controller.go`) reports the
//! `MemberAgent` agent status (`Joined`, `Healthy`, `lastReceivedHeartbeat`), the properties and
//! the resource usage. The condition types, reasons and messages below are theirs, except where
//! a comment says flotilla differs.
//!
//! Where flotilla's model differs:
//! - The hub has no namespace, role or InternalMemberCluster to create, so `ReadyToJoin` is
//!   `True` from the moment the `MemberCluster` exists (KubeFleet sets it once those exist).
//! - In KubeFleet a silent agent is noticed only by the scheduler's eligibility check; the
//!   `MemberCluster` keeps its last reported conditions. flotilla's fold judges heartbeat health
//!   itself, and shows that judgement as the top-level `Healthy` condition, a type KubeFleet's API
//!   defines but leaves unused. Its reasons are flotilla's. The agent status keeps what the agent
//!   last said, as in KubeFleet.
//! - A leaving member (deleted after its agent connected; see `flotilla_core::query::member`) shows its
//!   `deletionTimestamp` and KubeFleet's finalizer, and `ReadyToJoin=False` with the reason and
//!   message of KubeFleet's `markMemberClusterLeft`: the hub has told the agent to leave. `Joined`
//!   stays as the agent last said until the agent confirms, as in KubeFleet, whose
//!   `markMemberClusterLeft` sets `Joined=False` (`MemberClusterLeft`) only then.

use flotilla_core::State;
use flotilla_core::model::MemberClusterSpec;
use flotilla_core::query::member::{
    AgentStatus, Member, REASON_HEARTBEAT_RESUMED, REASON_HEARTBEAT_TIMEOUT,
};
use serde_json::Value;

use crate::derived::metav1_condition;
use crate::json;
use crate::objects;

/// Condition type: the hub is ready for the member to join (KubeFleet).
pub const CONDITION_READY_TO_JOIN: &str = "ReadyToJoin";
/// Condition type: every agent of the member has joined (KubeFleet).
pub const CONDITION_JOINED: &str = "Joined";
/// Condition type: the member is healthy (defined by KubeFleet; set by flotilla, see module docs).
pub const CONDITION_HEALTHY: &str = "Healthy";
/// The only agent type flotilla has: KubeFleet's member agent.
pub const AGENT_MEMBER: &str = "MemberAgent";

/// KubeFleet's reason for `ReadyToJoin=True` (membercluster_controller.go).
pub const REASON_READY_TO_JOIN: &str = "MemberClusterReadyToJoin";
/// KubeFleet's reason for `ReadyToJoin=False` once the member leaves (membercluster_controller.go).
pub const REASON_NOT_READY_TO_JOIN: &str = "MemberClusterNotReadyToJoin";
/// KubeFleet's finalizer on a `MemberCluster` (`MemberClusterFinalizer`): it holds a deleted
/// member until its agent has left.
pub const FINALIZER_MEMBER_CLUSTER: &str = "kubernetes-fleet.io/membercluster-finalizer";
/// KubeFleet's reason for `Joined=True` (membercluster_controller.go).
pub const REASON_JOINED: &str = "MemberClusterJoined";
/// KubeFleet's reason for `Joined=Unknown`, e.g. before any agent reported
/// (membercluster_controller.go).
pub const REASON_JOIN_STATE_UNKNOWN: &str = "MemberClusterJoinStateUnknown";
/// KubeFleet's reason for the agent's `Joined=True` (member_controller.go).
pub const REASON_AGENT_JOINED: &str = "InternalMemberClusterJoined";
/// KubeFleet's reason for the agent's `Healthy=True` (member_controller.go).
pub const REASON_AGENT_HEALTHY: &str = "InternalMemberClusterHealthy";
/// flotilla's reason for `Healthy=Unknown` before the first heartbeat.
pub const REASON_HEARTBEAT_NOT_RECEIVED: &str = "HeartbeatNotReceived";
/// flotilla's reason for `Healthy=True` while heartbeats keep arriving since the join.
pub const REASON_HEARTBEAT_RECEIVED: &str = "HeartbeatReceived";

/// KubeFleet's `ReadyToJoin=True` message.
const MESSAGE_READY_TO_JOIN: &str = "Member cluster is ready to join the fleet";
/// KubeFleet's `ReadyToJoin=False` message (`markMemberClusterLeft`).
const MESSAGE_NOT_READY_TO_JOIN: &str = "Member cluster is not ready to join the fleet";
/// KubeFleet's `Joined=True` message.
const MESSAGE_JOINED: &str = "Member cluster has successfully joined the fleet";
/// How many agents flotilla expects per member (KubeFleet's count without networking agents).
const AGENTS_EXPECTED: usize = 1;

/// The `MemberCluster` named `name`, or `None` if there is none.
pub(crate) fn render(state: &State, name: &str) -> Option<Value> {
    let member = state.members().get(name)?;
    let key = objects::member_key(name);
    Some(json::object([
        ("apiVersion", Value::from(member.meta.api_version.as_str())),
        ("kind", Value::from(key.kind.as_str())),
        ("metadata", metadata(&key, member)),
        ("spec", spec(&member.spec)),
        ("status", status(name, member)),
    ]))
}

/// The object's metadata; a leaving member's carries its `deletionTimestamp` and finalizer.
fn metadata(key: &flotilla_core::model::ObjectKey, member: &Member) -> Value {
    let mut metadata = objects::metadata(key, &member.meta);
    if let Some(since) = member.leaving_since {
        json::insert(
            &mut metadata,
            "deletionTimestamp",
            Value::from(json::timestamp(since)),
        );
        json::insert(
            &mut metadata,
            "finalizers",
            Value::Array(vec![Value::from(FINALIZER_MEMBER_CLUSTER)]),
        );
    }
    metadata
}

/// The spec as typed, without the fields Go would omit: absent identity or taints, and the empty
/// strings `rbacv1.Subject` and `Taint` mark `omitempty`.
fn spec(spec: &MemberClusterSpec) -> Value {
    let mut value = json::omit_empty(serde_json::to_value(spec).unwrap_or(Value::Null));
    if let Some(identity) = value.get_mut("identity") {
        json::remove_empty_strings(identity, &["apiGroup", "namespace"]);
    }
    if let Some(Value::Array(taints)) = value.get_mut("taints") {
        for taint in taints {
            json::remove_empty_strings(taint, &["value"]);
        }
    }
    value
}

fn status(name: &str, member: &Member) -> Value {
    let generation = member.meta.generation;
    let ready_to_join = match member.leaving_since {
        None => metav1_condition(
            CONDITION_READY_TO_JOIN,
            "True",
            REASON_READY_TO_JOIN,
            MESSAGE_READY_TO_JOIN,
            member.meta.creation_timestamp,
            generation,
        ),
        Some(since) => metav1_condition(
            CONDITION_READY_TO_JOIN,
            "False",
            REASON_NOT_READY_TO_JOIN,
            MESSAGE_NOT_READY_TO_JOIN,
            since,
            generation,
        ),
    };
    let mut conditions = vec![ready_to_join];
    conditions.extend(match &member.agent {
        None => not_joined_conditions(name, member),
        Some(agent) => joined_conditions(member, agent),
    });
    let mut status = json::object([
        ("conditions", Value::Array(conditions)),
        ("resourceUsage", resource_usage(member)),
    ]);
    if let Some(agent) = &member.agent {
        json::insert(
            &mut status,
            "agentStatus",
            Value::Array(vec![agent_status(agent, generation)]),
        );
    }
    if !member.properties.is_empty() {
        let properties = member
            .properties
            .iter()
            .map(|(name, property)| {
                let value = json::object([
                    ("value", Value::from(property.value.as_str())),
                    (
                        "observationTime",
                        Value::from(json::timestamp(property.observation_time)),
                    ),
                ]);
                (name.to_owned(), value)
            })
            .collect();
        json::insert(&mut status, "properties", Value::Object(properties));
    }
    status
}

/// Before the first heartbeat no agent has reported: KubeFleet shows `Joined=Unknown` with the
/// "has not reported all the expected agents" message.
fn not_joined_conditions(name: &str, member: &Member) -> Vec<Value> {
    let since = member.meta.creation_timestamp;
    let generation = member.meta.generation;
    let joined_message = format!(
        "Member cluster {name} has not reported all the expected agents, expected \
         {AGENTS_EXPECTED}, got 0"
    );
    vec![
        metav1_condition(
            CONDITION_JOINED,
            "Unknown",
            REASON_JOIN_STATE_UNKNOWN,
            &joined_message,
            since,
            generation,
        ),
        metav1_condition(
            CONDITION_HEALTHY,
            "Unknown",
            REASON_HEARTBEAT_NOT_RECEIVED,
            // The words of KubeFleet's cluster eligibility checker for the same situation.
            "cluster is not connected to the fleet: member agent not online yet",
            since,
            generation,
        ),
    ]
}

fn joined_conditions(member: &Member, agent: &AgentStatus) -> Vec<Value> {
    let generation = member.meta.generation;
    let timeout_secs = member.heartbeat_timeout().num_seconds();
    let healthy = if agent.healthy {
        // Healthy since the join, or again after a timeout.
        let reason = if agent.health_changed_at > agent.joined_at {
            REASON_HEARTBEAT_RESUMED
        } else {
            REASON_HEARTBEAT_RECEIVED
        };
        let message = format!("heartbeats from the member agent arrive within {timeout_secs}s");
        metav1_condition(
            CONDITION_HEALTHY,
            "True",
            reason,
            &message,
            agent.health_changed_at,
            generation,
        )
    } else {
        let message = format!(
            "cluster is not connected to the fleet: no heartbeat for {timeout_secs}s (last \
             received {})",
            json::timestamp(agent.last_heartbeat)
        );
        metav1_condition(
            CONDITION_HEALTHY,
            "False",
            REASON_HEARTBEAT_TIMEOUT,
            &message,
            agent.health_changed_at,
            generation,
        )
    };
    vec![
        metav1_condition(
            CONDITION_JOINED,
            "True",
            REASON_JOINED,
            MESSAGE_JOINED,
            agent.joined_at,
            generation,
        ),
        healthy,
    ]
}

/// What the member agent last said about itself. The hub stamps the member's generation on the
/// agent's conditions, as KubeFleet's MemberCluster controller does; the agent's conditions
/// carry no message, which `metav1.Condition` still serializes as `""`.
fn agent_status(agent: &AgentStatus, generation: u64) -> Value {
    let conditions = vec![
        metav1_condition(
            CONDITION_JOINED,
            "True",
            REASON_AGENT_JOINED,
            "",
            agent.joined_at,
            generation,
        ),
        metav1_condition(
            CONDITION_HEALTHY,
            "True",
            REASON_AGENT_HEALTHY,
            "",
            agent.joined_at,
            generation,
        ),
    ];
    json::object([
        ("type", Value::from(AGENT_MEMBER)),
        ("conditions", Value::Array(conditions)),
        (
            "lastReceivedHeartbeat",
            Value::from(json::timestamp(agent.last_heartbeat)),
        ),
    ])
}

/// `resourceUsage` is a struct in KubeFleet's API, so it shows as `{}` until the first report.
fn resource_usage(member: &Member) -> Value {
    let Some(observed) = &member.resource_usage else {
        return json::empty_object();
    };
    let mut usage = json::object([(
        "observationTime",
        Value::from(json::timestamp(observed.observation_time)),
    )]);
    let lists = [
        ("capacity", &observed.usage.capacity),
        ("allocatable", &observed.usage.allocatable),
        ("available", &observed.usage.available),
    ];
    for (field, list) in lists {
        if !list.is_empty() {
            json::insert(&mut usage, field, json::string_map(list));
        }
    }
    usage
}

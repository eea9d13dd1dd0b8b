//! Proves a `MemberCluster` renders with KubeFleet's status through its life: registered, joined
//! with properties, timed out, and back.

use flotilla_core::model::ObjectKey;
use serde_json::{Value, json};

use super::{Hub, sample_heartbeat, uid};
use crate::render_object;

fn member_manifest() -> Value {
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": "member1", "labels": {"environment": "staging"}},
        "spec": {
            "identity": {
                "kind": "ServiceAccount",
                "name": "fleet-member-agent-member1",
                "namespace": "fleet-system",
                "apiGroup": ""
            },
            "heartbeatPeriodSeconds": 60
        }
    })
}

fn key() -> ObjectKey {
    ObjectKey::cluster_scoped("cluster.kubernetes-fleet.io", "MemberCluster", "member1")
}

fn render(hub: &Hub) -> Value {
    render_object(&hub.state, &key()).expect("member1 exists")
}

/// Object fields every state of member1 shares.
fn with_status(status: &Value) -> Value {
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {
            "creationTimestamp": "2024-04-29T09:58:20Z",
            "generation": 1,
            "labels": {"environment": "staging"},
            "name": "member1",
            "resourceVersion": "1",
            "uid": uid(1)
        },
        "spec": {
            "heartbeatPeriodSeconds": 60,
            "identity": {
                "kind": "ServiceAccount",
                "name": "fleet-member-agent-member1",
                "namespace": "fleet-system"
            }
        },
        "status": status
    })
}

fn ready_to_join() -> Value {
    json!({
        "type": "ReadyToJoin",
        "status": "True",
        "reason": "MemberClusterReadyToJoin",
        "message": "Member cluster is ready to join the fleet",
        "lastTransitionTime": "2024-04-29T09:58:20Z",
        "observedGeneration": 1
    })
}

fn joined() -> Value {
    json!({
        "type": "Joined",
        "status": "True",
        "reason": "MemberClusterJoined",
        "message": "Member cluster has successfully joined the fleet",
        "lastTransitionTime": "2024-04-29T09:58:50Z",
        "observedGeneration": 1
    })
}

/// The agent's own report, unchanged by the hub's judgement of its heartbeats.
fn agent_status(last_heartbeat: &str) -> Value {
    json!([{
        "type": "MemberAgent",
        "conditions": [
            {
                "type": "Joined",
                "status": "True",
                "reason": "InternalMemberClusterJoined",
                "message": "",
                "lastTransitionTime": "2024-04-29T09:58:50Z",
                "observedGeneration": 1
            },
            {
                "type": "Healthy",
                "status": "True",
                "reason": "InternalMemberClusterHealthy",
                "message": "",
                "lastTransitionTime": "2024-04-29T09:58:50Z",
                "observedGeneration": 1
            }
        ],
        "lastReceivedHeartbeat": last_heartbeat
    }])
}

fn properties() -> Value {
    json!({
        "kubernetes-fleet.io/node-count": {
            "observationTime": "2024-04-29T09:58:50Z",
            "value": "2"
        }
    })
}

fn resource_usage() -> Value {
    json!({
        "allocatable": {"cpu": "32", "memory": "16Gi"},
        "available": {"cpu": "2", "memory": "800Mi"},
        "capacity": {"cpu": "40", "memory": "20Gi"},
        "observationTime": "2024-04-29T09:58:50Z"
    })
}

/// Registered at t=0, first heartbeat (with the seed's properties) at t=30.
fn joined_hub() -> Hub {
    let mut hub = Hub::new();
    hub.apply(0, &member_manifest());
    hub.heartbeat(30, sample_heartbeat("member1"));
    hub
}

#[test]
fn before_the_first_heartbeat_the_cluster_is_ready_but_not_joined() {
    let mut hub = Hub::new();
    hub.apply(0, &member_manifest());
    let expected = with_status(&json!({
        "conditions": [
            ready_to_join(),
            {
                "type": "Joined",
                "status": "Unknown",
                "reason": "MemberClusterJoinStateUnknown",
                "message": "Member cluster member1 has not reported all the expected agents, \
                            expected 1, got 0",
                "lastTransitionTime": "2024-04-29T09:58:20Z",
                "observedGeneration": 1
            },
            {
                "type": "Healthy",
                "status": "Unknown",
                "reason": "HeartbeatNotReceived",
                "message": "cluster is not connected to the fleet: member agent not online yet",
                "lastTransitionTime": "2024-04-29T09:58:20Z",
                "observedGeneration": 1
            }
        ],
        "resourceUsage": {}
    }));
    assert_eq!(render(&hub), expected);
}

/// The member joined by its first heartbeat at t=30s, with `healthy` as its Healthy condition.
fn joined_with_health(healthy: &Value) -> Value {
    with_status(&json!({
        "agentStatus": agent_status("2024-04-29T09:58:50Z"),
        "conditions": [ready_to_join(), joined(), healthy],
        "properties": properties(),
        "resourceUsage": resource_usage()
    }))
}

#[test]
fn the_first_heartbeat_joins_and_reports_properties() {
    let hub = joined_hub();
    let expected = joined_with_health(&json!({
        "type": "Healthy",
        "status": "True",
        "reason": "HeartbeatReceived",
        "message": "heartbeats from the member agent arrive within 300s",
        "lastTransitionTime": "2024-04-29T09:58:50Z",
        "observedGeneration": 1
    }));
    assert_eq!(render(&hub), expected);
}

#[test]
fn a_heartbeat_timeout_makes_the_cluster_unhealthy_but_still_joined() {
    let mut hub = joined_hub();
    // 5 × 60 s after the heartbeat at t=30.
    hub.tick(330);
    let expected = joined_with_health(&json!({
        "type": "Healthy",
        "status": "False",
        "reason": "HeartbeatTimeout",
        "message": "cluster is not connected to the fleet: no heartbeat for 300s \
                    (last received 2024-04-29T09:58:50Z)",
        "lastTransitionTime": "2024-04-29T10:03:50Z",
        "observedGeneration": 1
    }));
    assert_eq!(render(&hub), expected);
}

#[test]
fn a_resumed_heartbeat_makes_it_healthy_again() {
    let mut hub = joined_hub();
    hub.tick(330);
    hub.heartbeat(
        400,
        flotilla_core::Heartbeat {
            cluster: "member1".into(),
            ..Default::default()
        },
    );
    let object = render(&hub);
    let healthy = &object["status"]["conditions"][2];
    assert_eq!(healthy["status"], "True");
    assert_eq!(healthy["reason"], "HeartbeatResumed");
    assert_eq!(healthy["lastTransitionTime"], "2024-04-29T10:05:00Z");
    assert_eq!(
        object["status"]["agentStatus"][0]["lastReceivedHeartbeat"],
        "2024-04-29T10:05:00Z"
    );
    // An empty heartbeat keeps the properties last reported.
    assert_eq!(object["status"]["properties"], properties());
}

#[test]
fn json_text_has_sorted_keys_like_kubectl() {
    let mut hub = Hub::new();
    hub.apply(0, &member_manifest());
    let text = serde_json::to_string(&render(&hub)).expect("json");
    assert!(text.starts_with(
        r#"{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{"creationTimestamp":"2024-04-29T09:58:20Z","generation":1,"labels":{"environment":"staging"},"name":"member1","resourceVersion":"1","uid":"#
    ));
    assert!(text.contains(
        r#"{"lastTransitionTime":"2024-04-29T09:58:20Z","message":"Member cluster is ready to join the fleet","observedGeneration":1,"reason":"MemberClusterReadyToJoin","status":"True","type":"ReadyToJoin"}"#
    ));
}

#[test]
fn taints_render_as_written_and_unknown_names_are_absent() {
    let mut hub = Hub::new();
    let mut manifest = member_manifest();
    manifest["spec"]["taints"] = json!([
        {"key": "maintenance", "effect": "NoSchedule"},
        {"key": "tier", "value": "gold", "effect": "NoSchedule"}
    ]);
    hub.apply(0, &manifest);
    assert_eq!(
        render(&hub)["spec"]["taints"],
        json!([
            {"effect": "NoSchedule", "key": "maintenance"},
            {"effect": "NoSchedule", "key": "tier", "value": "gold"}
        ])
    );
    let other = ObjectKey::cluster_scoped("cluster.kubernetes-fleet.io", "MemberCluster", "nope");
    assert_eq!(render_object(&hub.state, &other), None);
}

fn delete_member(hub: &mut Hub, seconds: i64) {
    hub.fold(
        seconds,
        "test",
        flotilla_core::Input::Delete {
            target: flotilla_core::ObjectRef {
                kind: "MemberCluster".into(),
                group: None,
                namespace: None,
                name: "member1".into(),
            },
        },
    );
}

#[test]
fn a_deleted_joined_member_shows_it_is_leaving_until_its_agent_confirms() {
    let mut hub = joined_hub();
    delete_member(&mut hub, 60);
    let object = render(&hub);
    assert_eq!(
        object["metadata"]["deletionTimestamp"],
        "2024-04-29T09:59:20Z"
    );
    assert_eq!(
        object["metadata"]["finalizers"],
        json!(["kubernetes-fleet.io/membercluster-finalizer"])
    );
    assert_eq!(
        object["status"]["conditions"][0],
        json!({
            "type": "ReadyToJoin",
            "status": "False",
            "reason": "MemberClusterNotReadyToJoin",
            "message": "Member cluster is not ready to join the fleet",
            "lastTransitionTime": "2024-04-29T09:59:20Z",
            "observedGeneration": 1
        })
    );
    // The agent has not confirmed: Joined stays as it said.
    assert_eq!(object["status"]["conditions"][1], joined());
}

#[test]
fn a_deleted_member_whose_agent_never_connected_is_gone() {
    let mut hub = Hub::new();
    hub.apply(0, &member_manifest());
    delete_member(&mut hub, 60);
    assert!(render_object(&hub.state, &key()).is_none());
}

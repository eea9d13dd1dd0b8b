//! Given/when/then tests of the member-cluster aggregate and of object storage: join on the
//! first heartbeat, health in event time (5 × heartbeatPeriodSeconds), leave, rejections that
//! change nothing, and placement immutability.

mod common;

use chrono::Duration;
use flotilla_core::decision::Decision;
use flotilla_core::model::ObjectKey;
use flotilla_core::{Input, ObjectRef, RejectCode, next_deadline};

use common::Hub;

const MEMBER1: &str = r#"{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{"name":"member1","labels":{"environment":"staging"}},"spec":{"heartbeatPeriodSeconds":60}}"#;

fn rejected_with(decisions: &[Decision]) -> Option<RejectCode> {
    match decisions {
        [Decision::Rejected { code, .. }] => Some(*code),
        _ => None,
    }
}

#[test]
fn a_cluster_joins_on_its_first_heartbeat() {
    let mut hub = Hub::new();
    let stored = hub.apply(MEMBER1);
    assert!(matches!(
        stored.as_slice(),
        [Decision::ObjectStored {
            created: true,
            generation: 1,
            ..
        }]
    ));
    assert_eq!(
        hub.healthy("member1"),
        None,
        "not joined before the agent speaks"
    );
    assert_eq!(next_deadline(&hub.state), None);
    assert_eq!(
        hub.beat("member1"),
        vec![Decision::ClusterJoined {
            cluster: "member1".into()
        }]
    );
    assert_eq!(hub.healthy("member1"), Some(true));
    assert_eq!(
        next_deadline(&hub.state),
        Some(hub.now + Duration::seconds(300))
    );
}

#[test]
fn heartbeats_stopping_for_five_periods_make_a_cluster_unhealthy_until_the_next_one() {
    let mut hub = Hub::new();
    hub.apply(MEMBER1);
    hub.beat("member1");
    assert!(hub.advance(299).is_empty(), "still within 5 × 60 s");
    assert_eq!(hub.healthy("member1"), Some(true));
    assert_eq!(
        hub.advance(1),
        vec![Decision::ClusterHealthChanged {
            cluster: "member1".into(),
            healthy: false,
            reason: "HeartbeatTimeout".into()
        }]
    );
    assert!(!hub.state.members()["member1"].is_eligible());
    assert_eq!(next_deadline(&hub.state), None);
    assert_eq!(
        hub.beat("member1"),
        vec![Decision::ClusterHealthChanged {
            cluster: "member1".into(),
            healthy: true,
            reason: "HeartbeatResumed".into()
        }]
    );
    assert!(hub.state.members()["member1"].is_eligible());
}

#[test]
fn regular_heartbeats_keep_a_cluster_healthy() {
    let mut hub = Hub::new();
    hub.apply(MEMBER1);
    for _ in 0..20 {
        hub.beat("member1");
        assert!(hub.advance(60).is_empty());
    }
    assert_eq!(hub.healthy("member1"), Some(true));
}

#[test]
fn a_heartbeat_from_a_stranger_is_rejected_and_changes_nothing() {
    let mut hub = Hub::new();
    hub.apply(MEMBER1);
    let before = hub.state.hash().expect("hash");
    assert_eq!(
        rejected_with(&hub.beat("stranger")),
        Some(RejectCode::UnknownCluster)
    );
    assert_eq!(before, hub.state.hash().expect("hash"));
}

#[test]
fn deleting_a_member_whose_agent_never_connected_removes_it_at_once() {
    let mut hub = Hub::new();
    hub.apply(MEMBER1);
    let target = ObjectRef {
        kind: "MemberCluster".into(),
        group: None,
        namespace: None,
        name: "member1".into(),
    };
    let decisions = hub.send(Input::Delete {
        target: target.clone(),
    });
    assert_eq!(
        decisions,
        vec![
            Decision::ObjectDeleted {
                object: ObjectKey::cluster_scoped(
                    "cluster.kubernetes-fleet.io",
                    "MemberCluster",
                    "member1"
                )
            },
            Decision::ClusterLeft {
                cluster: "member1".into()
            }
        ]
    );
    assert!(hub.state.members().is_empty());
    assert_eq!(next_deadline(&hub.state), None);
    assert_eq!(
        rejected_with(&hub.send(Input::Delete { target })),
        Some(RejectCode::NotFound)
    );
}

#[test]
fn labels_bump_the_resource_version_but_not_the_generation() {
    let mut hub = Hub::new();
    hub.apply(MEMBER1);
    assert!(matches!(
        hub.apply(MEMBER1).as_slice(),
        [Decision::ObjectUnchanged { .. }]
    ));
    let relabelled = MEMBER1.replace("staging", "production");
    let decisions = hub.apply(&relabelled);
    assert!(matches!(
        decisions.as_slice(),
        [Decision::ObjectStored {
            created: false,
            generation: 1,
            resource_version: 2,
            ..
        }]
    ));
    let slower = relabelled.replace("60", "120");
    assert!(matches!(
        hub.apply(&slower).as_slice(),
        [Decision::ObjectStored {
            generation: 2,
            resource_version: 3,
            ..
        }]
    ));
}

#[test]
fn a_longer_heartbeat_period_moves_the_deadline() {
    let mut hub = Hub::new();
    hub.apply(MEMBER1);
    hub.beat("member1");
    hub.apply(&MEMBER1.replace("60", "120"));
    assert_eq!(
        next_deadline(&hub.state),
        Some(hub.now + Duration::seconds(600))
    );
}

#[test]
fn an_invalid_member_cluster_is_rejected_with_its_field() {
    let mut hub = Hub::new();
    let decisions = hub.apply(&MEMBER1.replace("60", "0"));
    let [
        Decision::Rejected {
            code: RejectCode::InvalidObject,
            message,
        },
    ] = decisions.as_slice()
    else {
        panic!("expected a rejection, got {decisions:?}");
    };
    assert!(
        message.starts_with("spec.heartbeatPeriodSeconds:"),
        "{message}"
    );
    assert!(hub.state.members().is_empty());
}

const CRP: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourcePlacement","metadata":{"name":"example-placement"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","name":"test-namespace","version":"v1"}],"policy":{"placementType":"PickAll","tolerations":[{"key":"gpu-workload","operator":"Exists"}]},"strategy":{"type":"External"}}}"#;

#[test]
fn tolerations_can_be_added_but_not_removed() {
    let mut hub = Hub::new();
    assert!(matches!(
        hub.apply(CRP).first(),
        Some(Decision::ObjectStored { created: true, .. })
    ));
    let added = CRP.replace(
        r#"{"key":"gpu-workload","operator":"Exists"}"#,
        r#"{"key":"gpu-workload","operator":"Exists"},{"key":"zone","operator":"Exists"}"#,
    );
    assert!(matches!(
        hub.apply(&added).first(),
        Some(Decision::ObjectStored { generation: 2, .. })
    ));
    let removed = CRP.replace(r#"{"key":"gpu-workload","operator":"Exists"}"#, "");
    assert_eq!(
        rejected_with(&hub.apply(&removed)),
        Some(RejectCode::ImmutableField)
    );
}

#[test]
fn the_placement_type_cannot_change() {
    let mut hub = Hub::new();
    hub.apply(CRP);
    let pick_n = CRP.replace(
        r#""placementType":"PickAll""#,
        r#""placementType":"PickN","numberOfClusters":2"#,
    );
    assert_eq!(
        rejected_with(&hub.apply(&pick_n)),
        Some(RejectCode::ImmutableField)
    );
}

#[test]
fn approvals_without_a_request_are_rejected() {
    let mut hub = Hub::new();
    let decisions = hub.send(Input::Approve {
        name: "example-run-after-canary".into(),
        namespace: None,
        reason: None,
        message: None,
    });
    assert_eq!(
        rejected_with(&decisions),
        Some(RejectCode::ApprovalRequestNotFound)
    );
}

#[test]
fn a_cluster_applied_as_yaml_joins_on_its_first_heartbeat() {
    let mut hub = Hub::new();
    let stored = hub.apply_yaml(
        "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: member1\nspec:\n  heartbeatPeriodSeconds: 60\n",
    );
    assert!(matches!(
        stored.as_slice(),
        [Decision::ObjectStored { created: true, .. }]
    ));
    hub.beat("member1");
    assert_eq!(hub.healthy("member1"), Some(true));
}

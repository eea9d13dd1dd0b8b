//! Proves the timeline gives one stable line per event and per decision.

use flotilla_core::model::ObjectKey;
use flotilla_core::{Decision, Envelope, Heartbeat, Input, ObjectRef, RejectCode, WorkReport};
use serde_json::json;
use uuid::Uuid;

use super::{Hub, at, member_cluster, sample_heartbeat};
use crate::{decision_line, event_line};

fn envelope(source: &str, input: Input) -> Envelope {
    Envelope::new(Uuid::from_u128(7), at(0), source, input)
}

#[test]
fn event_lines_name_the_time_source_kind_and_subject() {
    let manifest = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "test-1", "namespace": "test"}
    });
    let cases = [
        (
            envelope(
                "cli",
                Input::Apply {
                    manifest: manifest.to_string(),
                },
            ),
            "#1 2024-04-29T09:58:20Z cli apply ConfigMap/test/test-1",
        ),
        (
            envelope(
                "cli",
                Input::Apply {
                    manifest: "{not json".into(),
                },
            ),
            "#1 2024-04-29T09:58:20Z cli apply (manifest is not valid JSON)",
        ),
        (
            envelope(
                "cli",
                Input::Delete {
                    target: ObjectRef {
                        kind: "Deployment".into(),
                        group: Some("apps".into()),
                        namespace: Some("web".into()),
                        name: "front".into(),
                    },
                },
            ),
            "#1 2024-04-29T09:58:20Z cli delete Deployment.apps/web/front",
        ),
        (
            envelope(
                "agent/member1",
                Input::Heartbeat(sample_heartbeat("member1")),
            ),
            "#1 2024-04-29T09:58:20Z agent/member1 heartbeat member1 (1 property, resource usage)",
        ),
        (
            envelope(
                "agent/member2",
                Input::Heartbeat(Heartbeat {
                    cluster: "member2".into(),
                    ..Default::default()
                }),
            ),
            "#1 2024-04-29T09:58:20Z agent/member2 heartbeat member2",
        ),
        (
            envelope(
                "agent/member1",
                Input::WorkReport(WorkReport {
                    cluster: "member1".into(),
                    placement: "crp-1".into(),
                    namespace: None,
                    resource_index: 4,
                    applied: Some(false),
                    available: None,
                    trackable: true,
                    message: "conflict\nwith owner".into(),
                    failed_manifests: Vec::new(),
                    differences: Default::default(),
                }),
            ),
            "#1 2024-04-29T09:58:20Z agent/member1 report member1 on \
             ClusterResourcePlacement/crp-1 at resource index 4: apply failed, availability \
             unknown (conflict\\nwith owner)",
        ),
        (
            envelope(
                "cli",
                Input::Approve {
                    name: "run-after-canary".into(),
                    namespace: None,
                    reason: None,
                    message: None,
                },
            ),
            "#1 2024-04-29T09:58:20Z cli approve ClusterApprovalRequest/run-after-canary",
        ),
        (
            envelope("clock", Input::Tick),
            "#1 2024-04-29T09:58:20Z clock tick",
        ),
    ];
    for (envelope, expected) in cases {
        assert_eq!(event_line(1, &envelope), expected);
    }
}

#[test]
fn sub_second_event_times_keep_their_fraction() {
    let mut envelope = envelope("clock", Input::Tick);
    envelope.time += chrono::Duration::milliseconds(250);
    assert_eq!(
        event_line(42, &envelope),
        "#42 2024-04-29T09:58:20.250Z clock tick"
    );
}

#[test]
fn decision_lines_say_what_was_decided() {
    let cases = [
        (
            Decision::Rejected {
                code: RejectCode::InvalidObject,
                message: "metadata.name: is required".into(),
            },
            "#3 -> rejected InvalidObject: metadata.name: is required",
        ),
        (
            Decision::ObjectStored {
                object: ObjectKey::cluster_scoped(
                    "placement.kubernetes-fleet.io",
                    "ClusterResourcePlacement",
                    "crp-1",
                ),
                resource_version: 5,
                generation: 1,
                created: true,
            },
            "#3 -> created ClusterResourcePlacement/crp-1 (resourceVersion 5, generation 1)",
        ),
        (
            Decision::ObjectUnchanged {
                object: ObjectKey::namespaced("", "ConfigMap", "test", "test-1"),
            },
            "#3 -> unchanged ConfigMap/test/test-1",
        ),
        (
            Decision::ObjectDeleted {
                object: ObjectKey::cluster_scoped("", "Namespace", "test"),
            },
            "#3 -> deleted Namespace/test",
        ),
        (
            Decision::ClusterJoined {
                cluster: "member1".into(),
            },
            "#3 -> cluster member1 joined",
        ),
        (
            Decision::ClusterHealthChanged {
                cluster: "member1".into(),
                healthy: false,
                reason: "HeartbeatTimeout".into(),
            },
            "#3 -> cluster member1 unhealthy (HeartbeatTimeout)",
        ),
        (
            Decision::ClusterLeft {
                cluster: "member1".into(),
            },
            "#3 -> cluster member1 left",
        ),
        (
            Decision::WorkReported {
                cluster: "member1".into(),
                placement: ObjectKey::cluster_scoped(
                    "placement.kubernetes-fleet.io",
                    "ClusterResourcePlacement",
                    "crp-1",
                ),
                resource_index: 4,
            },
            "#3 -> work report from member1 on ClusterResourcePlacement/crp-1 at resource index 4",
        ),
    ];
    for (decision, expected) in cases {
        assert_eq!(decision_line(3, &decision), expected);
    }
}

#[test]
fn folded_decisions_render_in_order() {
    let mut hub = Hub::new();
    hub.apply(0, &member_cluster("member1"));
    hub.heartbeat(10, sample_heartbeat("member1"));
    let lines: Vec<String> = hub
        .tick(400)
        .iter()
        .map(|decision| decision_line(3, decision))
        .collect();
    assert_eq!(
        lines,
        ["#3 -> cluster member1 unhealthy (HeartbeatTimeout)"]
    );
}

#[test]
fn leave_and_diff_reports_have_their_own_lines() {
    let leave = envelope(
        "agent/member1",
        Input::Leave {
            cluster: "member1".into(),
        },
    );
    assert_eq!(
        event_line(1, &leave),
        "#1 2024-04-29T09:58:20Z agent/member1 leave member1"
    );
    let difference = flotilla_core::ManifestDifference {
        group: String::new(),
        version: "v1".into(),
        kind: "Namespace".into(),
        namespace: String::new(),
        name: "app".into(),
        observed_generation: None,
        details: Vec::new(),
    };
    let report = envelope(
        "agent/member1",
        Input::WorkReport(WorkReport {
            cluster: "member1".into(),
            placement: "crp-1".into(),
            namespace: None,
            resource_index: 2,
            applied: None,
            available: None,
            trackable: true,
            message: String::new(),
            failed_manifests: Vec::new(),
            differences: flotilla_core::Differences {
                diff_reported: Some(true),
                diffed_manifests: vec![difference.clone(), difference],
                drifted_manifests: Vec::new(),
            },
        }),
    );
    assert_eq!(
        event_line(1, &report),
        "#1 2024-04-29T09:58:20Z agent/member1 report member1 on \
         ClusterResourcePlacement/crp-1 at resource index 2: diff reported, 2 diffed"
    );
    let refused = Decision::Rejected {
        code: RejectCode::NotLeaving,
        message: "not leaving".into(),
    };
    assert_eq!(
        decision_line(1, &refused),
        "#1 -> rejected NotLeaving: not leaving"
    );
}

#[test]
fn an_event_line_names_the_authenticated_caller_before_the_source_it_claims() {
    let approve = Input::Approve {
        name: "run-after-staging".into(),
        namespace: None,
        reason: None,
        message: None,
    };
    let mut by_token = envelope("kube-api", approve.clone());
    by_token.principal = flotilla_core::Principal::Token {
        name: "release-manager".into(),
        role: flotilla_core::TokenRole::Admin,
    };
    assert_eq!(
        event_line(3, &by_token),
        "#3 2024-04-29T09:58:20Z token/release-manager[kube-api] approve ClusterApprovalRequest/run-after-staging"
    );
    let mut agent = envelope(
        "agent/member-1",
        Input::Leave {
            cluster: "member-1".into(),
        },
    );
    agent.principal = flotilla_core::Principal::Agent {
        cluster: "member-1".into(),
    };
    assert_eq!(
        event_line(4, &agent),
        "#4 2024-04-29T09:58:20Z agent/member-1 leave member-1"
    );
    // An open hub authenticated no one: the source as written.
    let mut open = envelope("cli", approve);
    open.principal = flotilla_core::Principal::Local;
    assert!(event_line(5, &open).contains(" cli approve "));
}

#[test]
fn an_approval_line_quotes_the_approvers_message_cut_to_a_line() {
    let approve = |message: &str| Input::Approve {
        name: "run-after-staging".into(),
        namespace: Some("team-a".into()),
        reason: Some("Soaked".into()),
        message: Some(message.into()),
    };
    assert_eq!(
        event_line(3, &envelope("kube-api", approve("lgtm\ncanary ok"))),
        "#3 2024-04-29T09:58:20Z kube-api approve ApprovalRequest/team-a/run-after-staging \"lgtm\\ncanary ok\""
    );
    let long = event_line(4, &envelope("kube-api", approve(&"é".repeat(300))));
    let shown = format!("\"{}…\"", "é".repeat(200));
    assert!(long.ends_with(&shown), "{long}");
}

//! A deleted MemberCluster leaves as KubeFleet's does (`membercluster_controller.go`
//! `handleDelete`, the scheduler's eligibility checker): one whose agent connected is marked
//! leaving and stays until its agent confirms; its bindings go at once, and no placement picks it
//! again, whatever its policy. The agent's leave confirmation removes a leaving member entirely;
//! from a member that is not leaving, or a cluster that is not a member, it is refused and
//! changes nothing.

mod common;

use common::{Hub, crp, member, names, namespace};
use flotilla_core::decision::{Decision, RejectCode};
use flotilla_core::model::ObjectKey;
use flotilla_core::{Input, WorkReport, next_deadline};
use serde_json::json;

fn member_key(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped("cluster.kubernetes-fleet.io", "MemberCluster", name)
}

/// Three joined members and a PickAll placement bound on all of them.
fn three_bound() -> Hub {
    let mut hub = Hub::new();
    for name in ["c1", "c2", "c3"] {
        hub.join(name, json!({}), json!([]));
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&crp("crp", json!({"placementType": "PickAll"})));
    hub
}

#[test]
fn a_connected_member_is_marked_leaving_and_its_bindings_go_at_once() {
    let mut hub = three_bound();
    assert_eq!(hub.placement("crp").bindings.len(), 3);
    let before = hub.state.members()["c2"].meta.resource_version;
    let decisions = hub.delete("MemberCluster", "c2");
    let Some(Decision::ObjectStored {
        object,
        resource_version,
        created: false,
        ..
    }) = decisions.first()
    else {
        panic!("expected the member stored with its deletion mark: {decisions:?}");
    };
    assert_eq!(object, &member_key("c2"));
    assert!(*resource_version > before);
    assert!(decisions.contains(&Decision::ClusterLeft {
        cluster: "c2".into()
    }));
    let leaving = &hub.state.members()["c2"];
    assert_eq!(leaving.leaving_since, hub.state.now());
    assert!(!leaving.is_eligible());
    assert!(
        !hub.placement("crp").bindings.contains_key("c2"),
        "the leaving member's binding is removed at once"
    );
    assert_eq!(hub.selected("crp"), names(&["c1", "c3"]));
}

#[test]
fn a_leaving_member_is_never_picked_again() {
    let mut hub = three_bound();
    hub.delete("MemberCluster", "c3");
    // Heartbeats keep coming until the agent confirms; they do not bring it back.
    hub.advance(30);
    hub.beat("c3");
    hub.apply(&member("c3", json!({"env": "prod"}), json!([])));
    hub.apply(&crp(
        "fixed",
        json!({"placementType": "PickFixed", "clusterNames": ["c3", "c1"]}),
    ));
    hub.apply(&crp(
        "pick-n",
        json!({"placementType": "PickN", "numberOfClusters": 3}),
    ));
    assert_eq!(hub.selected("crp"), names(&["c1", "c2"]));
    assert_eq!(hub.selected("fixed"), names(&["c1"]));
    assert_eq!(hub.selected("pick-n"), names(&["c1", "c2"]));
    assert!(hub.state.members()["c3"].is_leaving(), "it stays leaving");
}

#[test]
fn deleting_a_leaving_member_again_changes_nothing() {
    let mut hub = three_bound();
    hub.delete("MemberCluster", "c1");
    let version = hub.state.resource_version();
    assert_eq!(
        hub.delete("MemberCluster", "c1"),
        vec![Decision::ObjectUnchanged {
            object: member_key("c1")
        }]
    );
    assert_eq!(hub.state.resource_version(), version);
}

#[test]
fn a_member_that_never_connected_leaves_at_once_and_holds_nothing() {
    let mut hub = three_bound();
    hub.apply(&member("quiet", json!({}), json!([])));
    let decisions = hub.delete("MemberCluster", "quiet");
    assert_eq!(
        decisions[..2],
        [
            Decision::ObjectDeleted {
                object: member_key("quiet")
            },
            Decision::ClusterLeft {
                cluster: "quiet".into()
            }
        ]
    );
    assert!(!hub.state.members().contains_key("quiet"));
    assert_eq!(hub.selected("crp"), names(&["c1", "c2", "c3"]));
}

fn leave(hub: &mut Hub, cluster: &str) -> Vec<Decision> {
    hub.send(Input::Leave {
        cluster: cluster.into(),
    })
}

fn rejection_code(decisions: &[Decision]) -> Option<RejectCode> {
    match decisions {
        [Decision::Rejected { code, .. }] => Some(*code),
        _ => None,
    }
}

#[test]
fn the_agents_leave_removes_a_leaving_member_entirely() {
    let mut hub = three_bound();
    hub.delete("MemberCluster", "c2");
    hub.advance(30);
    hub.beat("c2");
    let decisions = leave(&mut hub, "c2");
    assert_eq!(
        decisions,
        vec![Decision::ObjectDeleted {
            object: member_key("c2")
        }]
    );
    assert!(
        !hub.state.members().contains_key("c2"),
        "the member is gone"
    );
    assert!(
        hub.state
            .heartbeat_deadlines()
            .iter()
            .all(|(_, c)| c != "c2"),
        "with its heartbeat deadline"
    );
    assert!(
        hub.state
            .placements()
            .values()
            .all(|p| !p.bindings.contains_key("c2"))
    );
    assert_eq!(hub.selected("crp"), names(&["c1", "c3"]));
    // A heartbeat from it now is one from a stranger.
    assert_eq!(
        rejection_code(&hub.beat("c2")),
        Some(RejectCode::UnknownCluster)
    );
    // It may join again as a new member.
    hub.join("c2", json!({}), json!([]));
    assert_eq!(hub.selected("crp"), names(&["c1", "c2", "c3"]));
}

#[test]
fn a_leave_from_a_member_that_is_not_leaving_is_refused_and_changes_nothing() {
    let mut hub = three_bound();
    hub.advance(10);
    let before = hub.state.clone();
    let hash = before.hash().expect("hashes");
    let decisions = leave(&mut hub, "c1");
    assert_eq!(rejection_code(&decisions), Some(RejectCode::NotLeaving));
    assert!(
        matches!(&decisions[0], Decision::Rejected { message, .. } if message.contains("c1")),
        "{decisions:?}"
    );
    assert_eq!(hub.state.hash().expect("hashes"), hash, "nothing changed");
    assert_eq!(next_deadline(&hub.state), next_deadline(&before));
}

#[test]
fn a_leave_from_a_stranger_or_a_member_that_already_left_is_refused_as_unknown() {
    let mut hub = three_bound();
    assert_eq!(
        rejection_code(&leave(&mut hub, "stranger")),
        Some(RejectCode::UnknownCluster)
    );
    hub.delete("MemberCluster", "c3");
    leave(&mut hub, "c3");
    let hash = hub.state.hash().expect("hashes");
    assert_eq!(
        rejection_code(&leave(&mut hub, "c3")),
        Some(RejectCode::UnknownCluster),
        "a retried leave of a member that is gone"
    );
    assert_eq!(hub.state.hash().expect("hashes"), hash);
}

/// A report is searched by its binding first (the search a report needs anyway), so these pin
/// the refusals that come from membership: a member's report while it leaves finds no work, and
/// one after it left, or from a cluster that never joined, comes from a stranger.
#[test]
fn a_work_report_from_a_leaving_member_finds_no_work_and_from_one_gone_a_stranger() {
    let mut hub = three_bound();
    hub.delete("MemberCluster", "c2");
    let hash = hub.state.hash().expect("hashes");
    assert_eq!(
        rejection_code(&hub.report("crp", "c2", true, true)),
        Some(RejectCode::NotFound),
        "still a member, but its binding went when it began to leave"
    );
    assert_eq!(hub.state.hash().expect("hashes"), hash, "nothing changed");
    leave(&mut hub, "c2");
    let gone = hub.state.hash().expect("hashes");
    for cluster in ["c2", "stranger"] {
        assert_eq!(
            rejection_code(&hub.report("crp", cluster, true, true)),
            Some(RejectCode::UnknownCluster),
            "{cluster}"
        );
        assert_eq!(
            rejection_code(&hub.send(Input::WorkReport(report_on("missing", cluster)))),
            Some(RejectCode::UnknownCluster),
            "membership is judged before the placement: {cluster}"
        );
    }
    assert_eq!(hub.state.hash().expect("hashes"), gone, "nothing changed");
}

/// An applied and available report on a ClusterResourcePlacement's work at index 0.
fn report_on(placement: &str, cluster: &str) -> WorkReport {
    WorkReport {
        cluster: cluster.into(),
        placement: placement.into(),
        namespace: None,
        resource_index: 0,
        applied: Some(true),
        available: Some(true),
        trackable: true,
        message: String::new(),
        failed_manifests: Vec::new(),
        differences: Default::default(),
    }
}

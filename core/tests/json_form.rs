//! The JSON event form as publishers write it, folded: a heartbeat's properties in KubeFleet's
//! `{value, observationTime}` shape and as bare quantities give the same member properties, a
//! work report without `resourceIndex` is about the work the cluster carries now, a schema 4
//! report's diffs, drifts and failure reasons and the leave input round-trip through the stored
//! form under the names member agents write, and misspelt fields are refused.

mod common;

use common::{Hub, crp, namespace};
use flotilla_core::decision::{Decision, RejectCode};
use flotilla_core::wire::json::{JsonDefaults, parse_event};
use flotilla_core::{Envelope, RESOURCE_INDEX_CURRENT};
use serde_json::{Value, json};
use uuid::Uuid;

fn parse(hub: &Hub, event: &Value) -> Envelope {
    let defaults = JsonDefaults {
        id: Uuid::from_u128(0xfeed),
        time: hub.now,
        source: "test",
    };
    parse_event(event.to_string().as_bytes(), &defaults).expect("the JSON form")
}

fn send(hub: &mut Hub, event: &Value) -> Vec<Decision> {
    let envelope = parse(hub, event);
    hub.send(envelope.payload)
}

fn property(hub: &Hub, cluster: &str, name: &str) -> Option<String> {
    let member = hub.state.members().get(cluster)?;
    member.properties.get(name).map(|p| p.value.to_string())
}

#[test]
fn kubefleet_shaped_and_bare_properties_give_the_same_quantity() {
    let mut hub = Hub::new();
    for cluster in ["kubefleet", "bare", "number"] {
        hub.apply(&common::member(cluster, json!({}), json!([])));
    }
    send(
        &mut hub,
        &json!({"type": "heartbeat", "cluster": "kubefleet", "properties": {
            "kubernetes-fleet.io/node-count": {"value": "3", "observationTime": "2025-03-12T22:59:00Z"}}}),
    );
    send(
        &mut hub,
        &json!({"type": "heartbeat", "cluster": "bare",
            "properties": {"kubernetes-fleet.io/node-count": "3"}}),
    );
    send(
        &mut hub,
        &json!({"type": "heartbeat", "cluster": "number",
            "properties": {"kubernetes-fleet.io/node-count": 3}}),
    );
    for cluster in ["kubefleet", "bare", "number"] {
        assert_eq!(
            property(&hub, cluster, "kubernetes-fleet.io/node-count").as_deref(),
            Some("3"),
            "{cluster}"
        );
    }
}

#[test]
fn a_property_in_neither_shape_is_not_the_json_form() {
    let hub = Hub::new();
    let defaults = JsonDefaults {
        id: Uuid::from_u128(1),
        time: hub.now,
        source: "test",
    };
    let event = json!({"type": "heartbeat", "cluster": "m",
        "properties": {"kubernetes-fleet.io/node-count": {"observationTime": "2025-03-12T22:59:00Z"}}});
    let error = parse_event(event.to_string().as_bytes(), &defaults)
        .expect_err("no value")
        .to_string();
    assert!(error.contains("observationTime"), "{error}");
}

#[test]
fn a_report_without_resource_index_is_about_the_work_the_cluster_carries() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({}), json!([]));
    hub.apply(&namespace("test-ns"));
    hub.apply(&crp("crp", json!({"placementType": "PickAll"})));
    let report = json!({"type": "report", "cluster": "member-1", "placement": "crp",
        "applied": true, "available": true});
    let envelope = parse(&hub, &report);
    let flotilla_core::Input::WorkReport(stored) = &envelope.payload else {
        panic!("a work report");
    };
    assert_eq!(
        stored.resource_index, RESOURCE_INDEX_CURRENT,
        "kept as said"
    );
    let carried = hub
        .placement("crp")
        .bindings
        .get("member-1")
        .and_then(|b| b.resource_index)
        .expect("member-1 has work");
    let decisions = send(&mut hub, &report);
    assert!(
        decisions.iter().any(|d| matches!(d,
            Decision::WorkReported { resource_index, .. } if *resource_index == carried)),
        "{decisions:?}"
    );
    let recorded = member_1_report(&hub);
    assert_eq!(recorded.map(|r| r.resource_index), Some(carried));
    // The listing gives it back without the index, as it was published.
    let listed = flotilla_core::wire::json::JsonEnvelope::from_envelope(&envelope);
    let listed = serde_json::to_value(&listed).expect("serializes");
    assert_eq!(listed.get("resourceIndex"), None, "{listed}");
}

#[test]
fn a_report_without_resource_index_from_a_cluster_without_work_is_stale() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({}), json!([]));
    hub.apply(&namespace("test-ns"));
    // External: the cluster is scheduled, but only an update run would give it work.
    let mut placement = crp("crp", json!({"placementType": "PickAll"}));
    placement["spec"]["strategy"] = json!({"type": "External"});
    hub.apply(&placement);
    let binding = hub.placement("crp").bindings.get("member-1");
    assert_eq!(
        binding.map(|b| b.resource_index),
        Some(None),
        "scheduled, no work"
    );
    let decisions = send(
        &mut hub,
        &json!({"type": "report", "cluster": "member-1", "placement": "crp"}),
    );
    let rejection = decisions.iter().find_map(|d| match d {
        Decision::Rejected { code, message } => Some((*code, message.clone())),
        _ => None,
    });
    let (code, message) = rejection.expect("rejected");
    assert_eq!(code, RejectCode::StaleReport);
    assert!(message.contains("names no resource index"), "{message}");
}

/// A member agent's schema 4 report, with every new field, as the `kube` applier writes it.
fn differing_report() -> Value {
    json!({
        "type": "report", "cluster": "member-1", "placement": "crp", "resourceIndex": 0,
        "diffReported": false,
        "failedManifests": [{"group": "", "version": "v1", "kind": "ConfigMap",
            "namespace": "app", "name": "settings", "condition": "Applied",
            "message": "cannot read it", "reason": "FailedToTakeOver"}],
        "diffedManifests": [{"group": "apps", "version": "v1", "kind": "Deployment",
            "namespace": "app", "name": "web", "observedInMemberClusterGeneration": 7,
            "observedDiffs": [
                {"path": "/spec/replicas", "valueInMember": "2", "valueInHub": "3"},
                {"path": "/metadata/labels/team", "valueInHub": "web"}
            ]},
            {"version": "v1", "kind": "Secret", "namespace": "app", "name": "absent",
             "observedDiffs": [{"path": "/"}]}],
        "driftedManifests": [{"group": "apps", "version": "v1", "kind": "Deployment",
            "namespace": "app", "name": "web", "observedInMemberClusterGeneration": 8,
            "observedDrifts": [{"path": "/spec/paused", "valueInMember": "true"}]}]
    })
}

#[test]
fn a_schema_4_report_round_trips_under_the_agents_field_names() {
    let hub = Hub::new();
    let published = differing_report();
    let envelope = parse(&hub, &published);
    assert_eq!(
        envelope.schema_version,
        flotilla_core::SCHEMA_VERSION,
        "the default schema version"
    );
    let flotilla_core::Input::WorkReport(stored) = &envelope.payload else {
        panic!("a work report");
    };
    let differences = &stored.differences;
    assert_eq!(differences.diff_reported, Some(false));
    assert_eq!(differences.diffed_manifests.len(), 2);
    assert_eq!(differences.diffed_manifests[0].observed_generation, Some(7));
    assert_eq!(differences.diffed_manifests[1].observed_generation, None);
    assert_eq!(
        differences.diffed_manifests[0].details[1].value_in_member, None,
        "absent on the member"
    );
    assert_eq!(
        differences.drifted_manifests[0].details[0].value_in_hub,
        None
    );
    assert_eq!(
        stored.failed_manifests[0].reason.as_deref(),
        Some("FailedToTakeOver")
    );
    let listed = flotilla_core::wire::json::JsonEnvelope::from_envelope(&envelope);
    let mut listed = serde_json::to_value(&listed).expect("serializes");
    for field in ["id", "time", "source", "schemaVersion", "principal"] {
        listed.as_object_mut().map(|o| o.remove(field));
    }
    // Listed with the defaults spelled out: the core group, trackable.
    let mut expected = published;
    expected["diffedManifests"][1]["group"] = json!("");
    expected["trackable"] = json!(true);
    assert_eq!(listed, expected);
}

#[test]
fn the_leave_input_round_trips_and_older_schema_versions_are_still_accepted() {
    let hub = Hub::new();
    let leave = parse(&hub, &json!({"type": "leave", "cluster": "member-1"}));
    assert_eq!(leave.payload.kind_name(), "leave");
    assert_eq!(
        flotilla_core::wire::subject::input_subject(&leave),
        "flotilla.in.leave.member-1"
    );
    let listed = flotilla_core::wire::json::JsonEnvelope::from_envelope(&leave);
    let listed = serde_json::to_value(&listed).expect("serializes");
    assert_eq!(
        (listed["type"].clone(), listed["cluster"].clone()),
        (json!("leave"), json!("member-1"))
    );
    for version in 1..=3 {
        let old = parse(
            &hub,
            &json!({"schemaVersion": version, "type": "heartbeat", "cluster": "m"}),
        );
        assert_eq!(old.schema_version, version);
    }
}

#[test]
fn misspelt_difference_fields_are_not_the_json_form() {
    let hub = Hub::new();
    let defaults = JsonDefaults {
        id: Uuid::from_u128(1),
        time: hub.now,
        source: "test",
    };
    let mut drift_named_as_diff = differing_report();
    drift_named_as_diff["driftedManifests"][0]["observedDiffs"] = json!([]);
    let mut bad_detail = differing_report();
    bad_detail["diffedManifests"][0]["observedDiffs"][0]["valueOnMember"] = json!("2");
    for (event, field) in [
        (drift_named_as_diff, "observedDiffs"),
        (bad_detail, "valueOnMember"),
    ] {
        let error = parse_event(event.to_string().as_bytes(), &defaults)
            .expect_err("refused")
            .to_string();
        assert!(error.contains(field), "{error}");
    }
}

#[test]
fn a_report_diff_member_reports_through_the_json_form() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({}), json!([]));
    hub.apply(&namespace("test-ns"));
    let mut placement = crp("crp", json!({"placementType": "PickAll"}));
    placement["spec"]["strategy"] = json!({"applyStrategy": {"type": "ReportDiff"}});
    hub.apply(&placement);
    let decisions = send(&mut hub, &differing_report());
    assert!(
        decisions
            .iter()
            .any(|d| matches!(d, Decision::WorkReported { .. })),
        "{decisions:?}"
    );
    let kept = member_1_report(&hub);
    let kept = kept.expect("kept");
    assert_eq!(kept.diff_reported, Some(false));
    assert_eq!(kept.diffed().len(), 2);
    assert_eq!(kept.diffed()[0].first_observed, hub.now);
    assert_eq!(
        kept.failed_manifests()[0].reason.as_deref(),
        Some("FailedToTakeOver")
    );
}

/// What the hub keeps of member-1's last report on `crp`.
fn member_1_report(hub: &Hub) -> Option<flotilla_core::state::WorkStatus> {
    let binding = hub.placement("crp").bindings.get("member-1");
    binding.expect("a binding").report
}

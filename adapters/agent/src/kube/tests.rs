//! The `kube` applier against recorded API objects: what it sends (method, path, query,
//! content type, body) for each strategy, and what it reports, without an API server. These
//! prove request building and the ReportDiff comparisons; `tests_strategy.rs` proves drift,
//! takeover, ownership, availability, retries and properties. That a real API server accepts the
//! requests is `tests/tests/kube_applier.rs`'s job.

use serde_json::{Value, json};

use super::marks::{self, ANNOTATION_LAST_APPLIED, ANNOTATION_MEMBER, ANNOTATION_WORK};
use super::tests_support::{
    SETTINGS_PATH, applied_by_us, echo, fake, fixture, not_found, one, sent, serving, settings,
    strategy, work, writes_of,
};
use crate::applier::{Applied, Applier, ApplierError};
use crate::report::{WorkReport, report_event};
use crate::work::{ApplyStrategy, ApplyType, Comparison};
use flotilla_core::query::availability::Availability;

// ---- client-side apply ----

#[tokio::test]
async fn client_side_apply_creates_an_absent_object_marked_with_its_last_applied_configuration()
-> Result<(), ApplierError> {
    let (mut applier, requests) = fake(|r| match r.method.as_str() {
        "GET" => not_found(),
        _ => echo(r),
    });
    let outcomes = applier
        .apply(&work(vec![settings("blue")], ApplyStrategy::default()))
        .await?;
    let outcome = one(&outcomes);
    assert_eq!(outcome.applied, Applied::Applied);
    assert_eq!(outcome.availability, Availability::Available);
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    let post = &writes[0];
    assert_eq!(post.method, "POST");
    assert_eq!(post.path, "/api/v1/namespaces/shop/configmaps");
    assert!(
        post.has_query("fieldManager=work-api-agent"),
        "{}",
        post.query
    );
    let annotations = &post.body["metadata"]["annotations"];
    assert_eq!(annotations[ANNOTATION_MEMBER], "member-1");
    assert_eq!(annotations[ANNOTATION_WORK], "shop-work");
    let last: Value = serde_json::from_str(
        annotations[ANNOTATION_LAST_APPLIED]
            .as_str()
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(last["data"], post.body["data"]);
    assert!(last["metadata"]["annotations"][ANNOTATION_LAST_APPLIED].is_null());
    Ok(())
}

#[tokio::test]
async fn client_side_apply_of_an_unchanged_manifest_sends_no_request() -> Result<(), ApplierError> {
    let live = applied_by_us("configmap-settings.json", &settings("blue"));
    let (mut applier, requests) = fake(serving(live, None));
    let the_work = work(vec![settings("blue")], ApplyStrategy::default());
    for _ in 0..2 {
        let outcomes = applier.apply(&the_work).await?;
        assert_eq!(one(&outcomes).applied, Applied::Applied);
    }
    assert_eq!(writes_of(&requests).len(), 0);
    assert_eq!(sent(&requests).len(), 2);
    Ok(())
}

#[tokio::test]
async fn client_side_apply_patches_a_changed_field_and_nulls_a_removed_one()
-> Result<(), ApplierError> {
    let live = applied_by_us("configmap-settings.json", &settings("blue"));
    let (mut applier, requests) = fake(serving(live.clone(), Some(live)));
    let mut manifest = settings("red");
    manifest["data"]
        .as_object_mut()
        .map(|data| data.remove("size"));
    applier
        .apply(&work(vec![manifest], ApplyStrategy::default()))
        .await?;
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    let patch = &writes[0];
    assert_eq!(patch.method, "PATCH");
    assert_eq!(patch.path, SETTINGS_PATH);
    assert_eq!(patch.content_type, "application/strategic-merge-patch+json");
    assert!(patch.has_query("fieldManager=work-api-agent"));
    assert_eq!(patch.body["data"], json!({"colour": "red", "size": null}));
    let annotations = &patch.body["metadata"]["annotations"];
    assert!(annotations[ANNOTATION_LAST_APPLIED].is_string());
    assert!(annotations[marks::ANNOTATION_SPEC_HASH].is_string());
    // Marks already on the object are not sent again.
    assert!(annotations[ANNOTATION_MEMBER].is_null());
    // Without IfNotDrifted there is no optimistic lock.
    assert!(patch.body["metadata"]["resourceVersion"].is_null());
    Ok(())
}

#[tokio::test]
async fn a_strategic_patch_merges_containers_by_name_on_a_recorded_statefulset()
-> Result<(), ApplierError> {
    let mut live = fixture("statefulset-redis.json");
    let mut manifest = marks::last_applied(&live).unwrap_or_default();
    manifest["apiVersion"] = json!("apps/v1");
    for (key, value) in [
        (ANNOTATION_MEMBER, "member-1"),
        (ANNOTATION_WORK, "shop-work"),
    ] {
        live["metadata"]["annotations"][key] = json!(value);
    }
    let container = &mut manifest["spec"]["template"]["spec"]["containers"][0];
    container["image"] = json!("docker.io/bitnami/redis:4.0.11-debian-9");
    if let Some(env) = container["env"].as_array_mut() {
        env.retain(|e| e["name"] != "REDIS_DISABLE_COMMANDS");
    }
    let (mut applier, requests) = fake(serving(live.clone(), Some(live)));
    applier
        .apply(&work(vec![manifest], ApplyStrategy::default()))
        .await?;
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    assert_eq!(
        writes[0].path,
        "/apis/apps/v1/namespaces/default/statefulsets/redis-master"
    );
    assert_eq!(
        writes[0].content_type,
        "application/strategic-merge-patch+json"
    );
    assert_eq!(
        writes[0].body["spec"]["template"]["spec"]["containers"],
        json!([{"name": "redis", "image": "docker.io/bitnami/redis:4.0.11-debian-9",
            "env": [{"$patch": "delete", "name": "REDIS_DISABLE_COMMANDS"}]}])
    );
    Ok(())
}

#[tokio::test]
async fn a_custom_resource_gets_a_json_merge_patch_after_discovery() -> Result<(), ApplierError> {
    let mut live = fixture("foobar-created.json");
    let manifest = json!({"apiVersion": "k8s-openapi-tests-custom-resource-definition.com/v1",
        "kind": "FooBar", "metadata": {"name": "fb1", "namespace": "default"},
        "spec": {"prop1": "value2", "prop2": [true], "prop4": 6, "prop5": "7"}});
    for (key, value) in [
        (ANNOTATION_MEMBER, "member-1"),
        (ANNOTATION_WORK, "shop-work"),
    ] {
        live["metadata"]["annotations"][key] = json!(value);
    }
    let discovery = fixture("foobars-discovery.json");
    let answer = live.clone();
    let (mut applier, requests) = fake(move |r| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/apis/k8s-openapi-tests-custom-resource-definition.com/v1") => {
            (200, discovery.clone())
        }
        _ => (200, answer.clone()),
    });
    applier
        .apply(&work(vec![manifest], ApplyStrategy::default()))
        .await?;
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    assert_eq!(
        writes[0].path,
        "/apis/k8s-openapi-tests-custom-resource-definition.com/v1/namespaces/default/foobars/fb1"
    );
    assert_eq!(writes[0].content_type, "application/merge-patch+json");
    assert_eq!(writes[0].body["spec"]["prop1"], "value2");
    // A JSON merge patch replaces a list whole.
    assert_eq!(writes[0].body["spec"]["prop2"], json!([true]));
    Ok(())
}

/// The member's discovery says `ClusterIssuer` is cluster-scoped (`namespaced: false`); the hub
/// stored it under a namespace, so nothing is written and the manifest is reported failed.
#[tokio::test]
async fn a_kind_the_member_serves_cluster_scoped_is_not_applied_under_a_namespace()
-> Result<(), ApplierError> {
    let discovery = json!({"kind": "APIResourceList", "apiVersion": "v1",
        "groupVersion": "cert-manager.io/v1",
        "resources": [{"name": "clusterissuers", "singularName": "clusterissuer",
            "namespaced": false, "kind": "ClusterIssuer",
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}]});
    let (mut applier, requests) = fake(move |r| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/apis/cert-manager.io/v1") => (200, discovery.clone()),
        ("GET", _) => not_found(),
        _ => echo(r),
    });
    let issuer = json!({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer",
        "metadata": {"name": "ca", "namespace": "team-a"}, "spec": {}});
    let outcomes = applier
        .apply(&work(vec![issuer], ApplyStrategy::default()))
        .await?;
    assert!(writes_of(&requests).is_empty());
    assert!(
        matches!(&outcomes[0].applied, Applied::Failed(why) if why.contains("cluster-scoped")),
        "{:?}",
        outcomes[0].applied
    );
    Ok(())
}

// ---- server-side apply ----

#[tokio::test]
async fn server_side_apply_is_one_apply_patch_with_the_field_manager_and_force_as_configured()
-> Result<(), ApplierError> {
    for force in [false, true] {
        let (mut applier, requests) = fake(|r| match r.method.as_str() {
            "GET" => not_found(),
            _ => echo(r),
        });
        let ssa = ApplyStrategy {
            force_conflicts: force,
            ..strategy(ApplyType::ServerSideApply, Comparison::Partial)
        };
        let outcomes = applier.apply(&work(vec![settings("blue")], ssa)).await?;
        assert_eq!(one(&outcomes).applied, Applied::Applied);
        let writes = writes_of(&requests);
        assert_eq!(writes.len(), 1);
        let apply = &writes[0];
        assert_eq!(apply.method, "PATCH");
        assert_eq!(apply.path, SETTINGS_PATH);
        assert_eq!(apply.content_type, "application/apply-patch+yaml");
        assert!(apply.has_query("fieldManager=work-api-agent"));
        assert_eq!(apply.has_query("force=true"), force);
        assert!(!apply.has_query("dryRun=All"));
        let annotations = &apply.body["metadata"]["annotations"];
        assert_eq!(annotations[ANNOTATION_WORK], "shop-work");
        assert!(annotations[ANNOTATION_LAST_APPLIED].is_null());
    }
    Ok(())
}

#[tokio::test]
async fn a_server_side_apply_conflict_is_a_failed_manifest_with_the_apis_message()
-> Result<(), ApplierError> {
    let live = fixture("configmap-settings.json");
    let conflict = fixture("status-ssa-conflict.json");
    let (mut applier, requests) = fake(move |r| match r.method.as_str() {
        "GET" => (200, live.clone()),
        _ => (409, conflict.clone()),
    });
    let outcomes = applier
        .apply(&work(
            vec![settings("red")],
            strategy(ApplyType::ServerSideApply, Comparison::Partial),
        ))
        .await?;
    let outcome = one(&outcomes);
    assert!(
        matches!(&outcome.applied, Applied::Failed(m) if m.starts_with("Apply failed with 1 conflict")),
        "{outcome:?}"
    );
    assert_eq!(
        outcome.findings.reason.as_deref(),
        Some("ApplyConflictWithOtherApplier")
    );
    // A conflict is not transient: one attempt, not forced (kubectl manages fields too).
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    assert!(!writes[0].has_query("force=true"));
    Ok(())
}

#[tokio::test]
async fn server_side_apply_forces_when_only_this_applier_manages_the_object()
-> Result<(), ApplierError> {
    let mut live = applied_by_us("configmap-settings.json", &settings("blue"));
    live["metadata"]["managedFields"] = json!([{"manager": "work-api-agent",
        "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}}]);
    let (mut applier, requests) = fake(serving(live, None));
    applier
        .apply(&work(
            vec![settings("red")],
            strategy(ApplyType::ServerSideApply, Comparison::Partial),
        ))
        .await?;
    assert!(writes_of(&requests)[0].has_query("force=true"));
    Ok(())
}

// ---- ReportDiff ----

#[tokio::test]
async fn report_diff_partial_compares_a_dry_run_and_writes_nothing() -> Result<(), ApplierError> {
    let live = fixture("configmap-settings.json");
    let mut dry_run = live.clone();
    dry_run["data"]["colour"] = json!("red");
    let the_work = work(
        vec![settings("red")],
        strategy(ApplyType::ReportDiff, Comparison::Partial),
    );
    let (mut applier, requests) = fake(serving(live, Some(dry_run)));
    let outcomes = applier.apply(&the_work).await?;
    let outcome = one(&outcomes);
    assert_eq!(outcome.applied, Applied::DiffReported);
    let diffs = outcome
        .findings
        .diffs
        .clone()
        .unwrap_or_else(|| panic!("no diffs"));
    assert_eq!(diffs.generation, Some(0));
    assert_eq!(diffs.details.len(), 1);
    assert_eq!(diffs.details[0].path, "/data/colour");
    assert_eq!(diffs.details[0].value_in_member.as_deref(), Some("blue"));
    assert_eq!(diffs.details[0].value_in_hub.as_deref(), Some("red"));
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    assert!(writes[0].has_query("dryRun=All") && writes[0].has_query("force=true"));
    assert_eq!(writes[0].content_type, "application/apply-patch+yaml");

    let report = WorkReport::from_outcomes(&the_work, &outcomes);
    assert!(report.is_settled());
    let event = report_event("member-1", &the_work, &report);
    assert_eq!(event["schemaVersion"], 4);
    assert_eq!(event["diffReported"], true);
    assert!(event.get("applied").is_none() && event.get("available").is_none());
    let diffed = &event["diffedManifests"][0];
    assert_eq!(diffed["kind"], "ConfigMap");
    assert_eq!(diffed["observedInMemberClusterGeneration"], 0);
    assert_eq!(
        diffed["observedDiffs"],
        json!([{"path": "/data/colour", "valueInMember": "blue", "valueInHub": "red"}])
    );
    Ok(())
}

#[tokio::test]
async fn report_diff_full_also_reports_fields_only_the_member_has() -> Result<(), ApplierError> {
    let live = fixture("configmap-settings.json");
    let mut manifest = settings("red");
    manifest["metadata"]
        .as_object_mut()
        .map(|m| m.remove("labels"));
    let (mut applier, requests) = fake(serving(live, None));
    let outcomes = applier
        .apply(&work(
            vec![manifest],
            strategy(ApplyType::ReportDiff, Comparison::Full),
        ))
        .await?;
    let diffs = one(&outcomes)
        .findings
        .diffs
        .clone()
        .unwrap_or_else(|| panic!("no diffs"));
    let paths: Vec<&str> = diffs.details.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["/data/colour", "/metadata/labels"]);
    assert_eq!(
        diffs.details[1].value_in_member.as_deref(),
        Some("{\"app\":\"shop\"}")
    );
    assert!(diffs.details[1].value_in_hub.is_none());
    assert_eq!(writes_of(&requests).len(), 0);
    Ok(())
}

#[tokio::test]
async fn report_diff_of_an_absent_object_is_one_whole_object_difference() -> Result<(), ApplierError>
{
    let (mut applier, requests) = fake(|_| not_found());
    let the_work = work(
        vec![settings("red")],
        strategy(ApplyType::ReportDiff, Comparison::Partial),
    );
    let outcomes = applier.apply(&the_work).await?;
    let diffs = one(&outcomes)
        .findings
        .diffs
        .clone()
        .unwrap_or_else(|| panic!("no diffs"));
    assert_eq!(diffs.generation, None);
    assert_eq!(diffs.details[0].path, "/");
    assert_eq!(writes_of(&requests).len(), 0);
    let event = report_event(
        "member-1",
        &the_work,
        &WorkReport::from_outcomes(&the_work, &outcomes),
    );
    assert!(
        event["diffedManifests"][0]
            .get("observedInMemberClusterGeneration")
            .is_none()
    );
    Ok(())
}

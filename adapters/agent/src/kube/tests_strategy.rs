//! The `kube` applier's strategies against recorded API objects: drift (`whenToApply`),
//! takeover (`whenToTakeOver`, co-ownership), ownership on remove, availability per kind,
//! retries and heartbeat properties — without an API server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use flotilla_core::query::availability::{Availability, judge};
use serde_json::{Value, json};

use super::marks::ANNOTATION_WORK;
use super::properties::{self, summarize};
use super::tests_support::{
    SETTINGS_PATH, applied_by_us, echo, fake, fixture, not_found, one, sent, serving, settings,
    strategy, work, writes_of,
};
use crate::applier::{Applied, Applier, ApplierError};
use crate::report::{WorkReport, report_event};
use crate::work::{ApplyStrategy, ApplyType, Comparison, ManifestId, WhenToApply, WhenToTakeOver};

// ---- drift ----

/// An object this agent applied `settings("blue")` to, whose colour someone changed to green.
fn drifted() -> Value {
    let mut live = applied_by_us("configmap-settings.json", &settings("blue"));
    live["data"]["colour"] = json!("green");
    live
}

#[tokio::test]
async fn if_not_drifted_refuses_to_apply_over_a_drifted_object() -> Result<(), ApplierError> {
    let if_not_drifted = ApplyStrategy {
        when_to_apply: WhenToApply::IfNotDrifted,
        ..strategy(ApplyType::ClientSideApply, Comparison::Full)
    };
    let the_work = work(vec![settings("blue")], if_not_drifted);
    let (mut applier, requests) = fake(serving(drifted(), None));
    let outcomes = applier.apply(&the_work).await?;
    let outcome = one(&outcomes);
    assert!(matches!(outcome.applied, Applied::Failed(_)));
    assert_eq!(outcome.findings.reason.as_deref(), Some("FoundDrifts"));
    let drifts = outcome
        .findings
        .drifts
        .clone()
        .unwrap_or_else(|| panic!("no drifts"));
    assert_eq!(drifts.details[0].path, "/data/colour");
    assert_eq!(drifts.details[0].value_in_member.as_deref(), Some("green"));
    assert_eq!(writes_of(&requests).len(), 0);

    let event = report_event(
        "member-1",
        &the_work,
        &WorkReport::from_outcomes(&the_work, &outcomes),
    );
    assert_eq!(event["schemaVersion"], 4);
    assert_eq!(event["applied"], false);
    assert_eq!(event["failedManifests"][0]["reason"], "FoundDrifts");
    assert_eq!(
        event["driftedManifests"][0]["observedDrifts"][0]["valueInHub"],
        "blue"
    );

    // A partial comparison finds the same drift through a dry run, and still writes nothing.
    let partial = ApplyStrategy {
        comparison: Comparison::Partial,
        ..if_not_drifted
    };
    let mut dry_run = drifted();
    dry_run["data"]["colour"] = json!("blue");
    let (mut applier, requests) = fake(serving(drifted(), Some(dry_run)));
    let outcomes = applier
        .apply(&work(vec![settings("blue")], partial))
        .await?;
    assert_eq!(
        one(&outcomes).findings.reason.as_deref(),
        Some("FoundDrifts")
    );
    assert!(
        writes_of(&requests)
            .iter()
            .all(|w| w.has_query("dryRun=All"))
    );
    Ok(())
}

#[tokio::test]
async fn always_overwrites_a_drift_and_a_full_comparison_reports_what_stays_different()
-> Result<(), ApplierError> {
    let (mut applier, requests) = fake(serving(drifted(), None));
    let outcomes = applier
        .apply(&work(vec![settings("blue")], ApplyStrategy::default()))
        .await?;
    assert_eq!(one(&outcomes).applied, Applied::Applied);
    assert!(one(&outcomes).findings.drifts.is_none());
    assert_eq!(
        writes_of(&requests)[0].body["data"],
        json!({"colour": "blue"})
    );

    // After the apply, a field someone else added (not in the manifest) is a drift under a
    // full comparison, reported with the applied manifest.
    let mut after = applied_by_us("configmap-settings.json", &settings("blue"));
    after["data"]["extra"] = json!("x");
    let (mut applier, _) = fake(serving(drifted(), Some(after)));
    let outcomes = applier
        .apply(&work(
            vec![settings("blue")],
            strategy(ApplyType::ClientSideApply, Comparison::Full),
        ))
        .await?;
    let outcome = one(&outcomes);
    assert_eq!(outcome.applied, Applied::Applied);
    let drifts = outcome
        .findings
        .drifts
        .clone()
        .unwrap_or_else(|| panic!("no drifts"));
    assert_eq!(drifts.details[0].path, "/data/extra");
    Ok(())
}

#[tokio::test]
async fn if_not_drifted_applies_a_changed_manifest_under_an_optimistic_lock()
-> Result<(), ApplierError> {
    let live = applied_by_us("configmap-settings.json", &settings("blue"));
    let (mut applier, requests) = fake(serving(live, None));
    let if_not_drifted = ApplyStrategy {
        when_to_apply: WhenToApply::IfNotDrifted,
        ..ApplyStrategy::default()
    };
    applier
        .apply(&work(vec![settings("red")], if_not_drifted))
        .await?;
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].body["metadata"]["resourceVersion"], "1187");
    Ok(())
}

// ---- takeover ----

#[tokio::test]
async fn takeover_always_adopts_an_object_and_removes_nothing_of_its_last_applied()
-> Result<(), ApplierError> {
    let live = fixture("configmap-settings.json");
    let mut manifest = settings("blue");
    manifest["data"]
        .as_object_mut()
        .map(|data| data.remove("size"));
    let (mut applier, requests) = fake(serving(live, None));
    let outcomes = applier
        .apply(&work(vec![manifest], ApplyStrategy::default()))
        .await?;
    assert_eq!(one(&outcomes).applied, Applied::Applied);
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    // kubectl's last-applied configuration named `size`; it is not this agent's to delete.
    assert!(writes[0].body["data"].is_null());
    assert_eq!(
        writes[0].body["metadata"]["annotations"][ANNOTATION_WORK],
        "shop-work"
    );
    Ok(())
}

#[tokio::test]
async fn takeover_if_no_diff_adopts_only_an_identical_object() -> Result<(), ApplierError> {
    let if_no_diff = ApplyStrategy {
        when_to_take_over: WhenToTakeOver::IfNoDiff,
        ..strategy(ApplyType::ClientSideApply, Comparison::Full)
    };
    let (mut applier, requests) = fake(serving(fixture("configmap-settings.json"), None));
    let outcomes = applier
        .apply(&work(vec![settings("red")], if_no_diff))
        .await?;
    let outcome = one(&outcomes);
    assert_eq!(outcome.findings.reason.as_deref(), Some("FailedToTakeOver"));
    let diffs = outcome
        .findings
        .diffs
        .clone()
        .unwrap_or_else(|| panic!("no diffs"));
    assert_eq!(diffs.details[0].path, "/data/colour");
    assert_eq!(writes_of(&requests).len(), 0);

    let (mut applier, requests) = fake(serving(fixture("configmap-settings.json"), None));
    let outcomes = applier
        .apply(&work(vec![settings("blue")], if_no_diff))
        .await?;
    assert_eq!(one(&outcomes).applied, Applied::Applied);
    assert_eq!(writes_of(&requests).len(), 1);
    Ok(())
}

#[tokio::test]
async fn takeover_never_and_foreign_owners_refuse_without_writing() -> Result<(), ApplierError> {
    let never = ApplyStrategy {
        when_to_take_over: WhenToTakeOver::Never,
        ..ApplyStrategy::default()
    };
    let (mut applier, requests) = fake(serving(fixture("configmap-settings.json"), None));
    let outcomes = applier.apply(&work(vec![settings("blue")], never)).await?;
    assert_eq!(
        one(&outcomes).findings.reason.as_deref(),
        Some("NotTakenOver")
    );
    assert_eq!(writes_of(&requests).len(), 0);

    let mut owned_by_other = fixture("configmap-settings.json");
    owned_by_other["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
        "kind": "Deployment", "name": "web", "uid": "8b12e367-e9e3-4596-9a5c-b4884887923d"}]);
    let (mut applier, requests) = fake(serving(owned_by_other, None));
    let outcomes = applier
        .apply(&work(vec![settings("blue")], ApplyStrategy::default()))
        .await?;
    assert_eq!(
        one(&outcomes).findings.reason.as_deref(),
        Some("FailedToTakeOver")
    );
    assert_eq!(writes_of(&requests).len(), 0);

    // An object another Work of this agent placed is not taken over either.
    let mut other_work = applied_by_us("configmap-settings.json", &settings("blue"));
    other_work["metadata"]["annotations"][ANNOTATION_WORK] = json!("other-work");
    let (mut applier, requests) = fake(serving(other_work, None));
    let outcomes = applier
        .apply(&work(vec![settings("blue")], ApplyStrategy::default()))
        .await?;
    assert_eq!(
        one(&outcomes).findings.reason.as_deref(),
        Some("FailedToTakeOver")
    );
    assert_eq!(writes_of(&requests).len(), 0);
    Ok(())
}

// ---- remove ----

#[tokio::test]
async fn remove_deletes_only_objects_marked_as_this_works() -> Result<(), ApplierError> {
    let id = ManifestId::of(&settings("blue")).unwrap_or_else(|| panic!("no id"));
    let target = work(Vec::new(), ApplyStrategy::default()).target;

    let ours = applied_by_us("configmap-settings.json", &settings("blue"));
    let deleted = fixture("status-deleted.json");
    let (mut applier, requests) = fake(move |r| match r.method.as_str() {
        "GET" => (200, ours.clone()),
        _ => (200, deleted.clone()),
    });
    assert_eq!(applier.remove(&target, std::slice::from_ref(&id)).await?, 1);
    let writes = writes_of(&requests);
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].method, "DELETE");
    assert_eq!(writes[0].path, SETTINGS_PATH);
    assert_eq!(writes[0].body["propagationPolicy"], "Background");
    assert_eq!(
        writes[0].body["preconditions"]["uid"],
        "7d0e4b8a-3c2f-4a47-9d55-2b6f0f3f1c11"
    );

    // Someone else's object, and one that is gone, are left alone.
    let (mut applier, requests) = fake(serving(fixture("configmap-settings.json"), None));
    assert_eq!(applier.remove(&target, std::slice::from_ref(&id)).await?, 0);
    assert_eq!(super::tests_support::writes_of(&requests).len(), 0);
    let (mut applier, requests) = fake(|_| not_found());
    assert_eq!(applier.remove(&target, &[id]).await?, 0);
    assert_eq!(super::tests_support::writes_of(&requests).len(), 0);
    Ok(())
}

// ---- availability ----

#[test]
fn availability_is_judged_per_kind_on_recorded_objects() {
    let cases = [
        ("deployment-coredns.json", Availability::Available),
        // KubeFleet's availability rule (updated, ready and available equal the wanted replicas)
        // holds while an old pod still terminates; KubeFleet's tracker also wants
        // `unavailableReplicas: 0` and would say not yet. `availability::judge` (core) decides;
        // this records it.
        ("deployment-progressing.json", Availability::Available),
        (
            "deployment-kubectl-applied.json",
            Availability::NotYetAvailable,
        ),
        ("statefulset-redis.json", Availability::Available),
        // Its recorded status has no `updatedNumberScheduled`: not known to be updated.
        ("daemonset-fluentd.json", Availability::NotYetAvailable),
        ("job-created.json", Availability::NotYetAvailable),
        ("job-active.json", Availability::NotYetAvailable),
        ("job-backoff-exceeded.json", Availability::NotYetAvailable),
        ("job-succeeded.json", Availability::Available),
        ("service-clusterip.json", Availability::Available),
        ("service-loadbalancer.json", Availability::Available),
        (
            "service-loadbalancer-unassigned.json",
            Availability::NotYetAvailable,
        ),
        ("configmap-settings.json", Availability::Available),
        ("foobar-created.json", Availability::NotTrackable),
    ];
    for (name, expected) in cases {
        assert_eq!(judge(&fixture(name)), expected, "{name}");
    }
    let mut daemonset = fixture("daemonset-fluentd.json");
    daemonset["status"]["updatedNumberScheduled"] = json!(1);
    assert_eq!(judge(&daemonset), Availability::Available);
}

#[tokio::test]
async fn observe_judges_the_live_object() -> Result<(), ApplierError> {
    let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "coredns", "namespace": "kube-system"}});
    let live = applied_by_us("deployment-coredns.json", &manifest);
    let (mut applier, requests) = fake(serving(live, None));
    let outcomes = applier
        .observe(&work(vec![manifest.clone()], ApplyStrategy::default()))
        .await?;
    assert_eq!(one(&outcomes).availability, Availability::Available);
    assert_eq!(writes_of(&requests).len(), 0);
    // An object this agent does not own is not reported as applied.
    let (mut applier, _) = fake(serving(fixture("deployment-coredns.json"), None));
    let outcomes = applier
        .observe(&work(vec![manifest], ApplyStrategy::default()))
        .await?;
    assert!(matches!(one(&outcomes).applied, Applied::Failed(_)));
    Ok(())
}

// ---- retries ----

#[tokio::test]
async fn transient_failures_are_retried_and_persistent_ones_keep_the_work_pending()
-> Result<(), ApplierError> {
    let gets = Arc::new(AtomicUsize::new(0));
    let counter = gets.clone();
    let unavailable = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": "the server is currently unable to handle the request",
        "reason": "ServiceUnavailable", "code": 503});
    let answer = unavailable.clone();
    let (mut applier, requests) = fake(move |r| match r.method.as_str() {
        "GET" if counter.fetch_add(1, Ordering::SeqCst) < 2 => (503, answer.clone()),
        "GET" => not_found(),
        _ => echo(r),
    });
    let outcomes = applier
        .apply(&work(vec![settings("blue")], ApplyStrategy::default()))
        .await?;
    assert_eq!(one(&outcomes).applied, Applied::Applied);
    assert_eq!(gets.load(Ordering::SeqCst), 3);
    assert_eq!(writes_of(&requests).len(), 1);

    let (mut applier, _) = fake(move |_| (503, unavailable.clone()));
    let result = applier
        .apply(&work(vec![settings("blue")], ApplyStrategy::default()))
        .await;
    assert!(
        matches!(result, Err(ApplierError::Cluster(_))),
        "{result:?}"
    );
    // A refusal for good (422) is a failed manifest instead, with the API's message.
    let invalid = fixture("status-invalid.json");
    let (mut applier, _) = fake(move |r| match r.method.as_str() {
        "GET" => not_found(),
        _ => (422, invalid.clone()),
    });
    let outcomes = applier
        .apply(&work(vec![settings("blue")], ApplyStrategy::default()))
        .await?;
    assert!(
        matches!(&one(&outcomes).applied, Applied::Failed(m) if m.contains("is invalid")),
        "{outcomes:?}"
    );
    Ok(())
}

// ---- heartbeat properties ----

#[tokio::test]
async fn properties_sum_nodes_and_subtract_the_requests_of_running_pods() -> Result<(), ApplierError>
{
    let nodes = fixture("nodes.json");
    let pods = fixture("pods-kube-system.json");
    let expected = summarize(
        nodes["items"].as_array().map_or(&[][..], Vec::as_slice),
        pods["items"].as_array().map_or(&[][..], Vec::as_slice),
    );
    assert_eq!(expected.properties["kubernetes-fleet.io/node-count"], "2");
    assert_eq!(expected.usage["capacity"]["cpu"], "12");
    assert_eq!(expected.usage["capacity"]["memory"], "49594724Ki");
    assert_eq!(expected.usage["allocatable"]["cpu"], "11500m");
    assert_eq!(expected.usage["allocatable"]["memory"], "48546148Ki");
    // Seven running pods request 950m CPU and 290Mi of memory.
    assert_eq!(expected.usage["available"]["cpu"], "10550m");
    assert_eq!(expected.usage["available"]["memory"], "48249188Ki");

    let (client, requests) = super::tests_support::client(move |r| match r.path.as_str() {
        "/api/v1/nodes" => (200, nodes.clone()),
        _ => (200, pods.clone()),
    });
    let measured = properties::measure(&super::calls::Calls::new(client))
        .await
        .map_err(|e| ApplierError::Cluster(e.message))?;
    assert_eq!(measured, expected);
    let lists = sent(&requests);
    assert!(lists.iter().all(|r| r.has_query("limit=500")));
    Ok(())
}

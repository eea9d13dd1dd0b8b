//! KubeFleet's override docs as tests: every example gives exactly the manifests and applicable
//! override snapshots the seed shows, and the use cases it lists (per-cluster images, Delete,
//! per-region commands) behave as KubeFleet's semantics say.

mod common;

use common::{Hub, namespace};
use flotilla_core::decision::Decision;
use flotilla_core::model::{ObjectKey, PLACEMENT_GROUP};
use flotilla_core::query::overrides::{OverrideError, RenderedWork, render_for_cluster};
use flotilla_core::query::placement::SelectedResource;
use flotilla_core::{Input, ObjectRef};
use serde_json::{Value, json};

fn crp_key(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(PLACEMENT_GROUP, "ClusterResourcePlacement", name)
}

/// A PickAll placement selecting `selectors`.
fn crp_selecting(name: &str, selectors: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {"resourceSelectors": selectors}
    })
}

fn selected(hub: &Hub, placement: &str) -> Vec<SelectedResource> {
    hub.placement(placement)
        .latest_resources()
        .map(|s| s.resources.clone())
        .unwrap_or_default()
}

fn render(hub: &Hub, placement: &str, cluster: &str) -> Result<RenderedWork, OverrideError> {
    render_for_cluster(
        &hub.state,
        &crp_key(placement),
        &selected(hub, placement),
        cluster,
    )
}

fn manifests(work: &RenderedWork) -> Vec<Value> {
    work.manifests
        .iter()
        .map(|m| serde_json::from_str(m).expect("rendered manifests are JSON"))
        .collect()
}

fn assert_stored(decisions: &[Decision]) {
    assert!(
        decisions.iter().all(|d| !d.is_rejection()),
        "rejected: {decisions:?}"
    );
}

/// The application-1 namespace and its ConfigMap, exactly as the seed writes them.
fn seed_configmap(hub: &mut Hub) {
    hub.apply(&namespace("application-1"));
    assert_stored(&hub.apply(&json!({
        "apiVersion": "v1",
        "data": {"data": "test"},
        "kind": "ConfigMap",
        "metadata": {
            "creationTimestamp": "2024-05-07T08:06:27Z",
            "name": "app-config-1",
            "namespace": "application-1",
            "resourceVersion": "1434",
            "uid": "b4109de8-32f2-4ac8-9e1a-9cb715b3261d"
        }
    })));
}

fn three_clusters(hub: &mut Hub) {
    for name in ["kind-cluster-1", "kind-cluster-2", "kind-cluster-3"] {
        hub.join(name, json!({}), json!([]));
    }
}

fn seed_cro_1() -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ClusterResourceOverride",
        "metadata": {
            "creationTimestamp": "2024-05-07T08:06:27Z",
            "finalizers": ["kubernetes-fleet.io/override-cleanup"],
            "generation": 1, "name": "cro-1", "resourceVersion": "1436",
            "uid": "32237804-7eb2-4d5f-9996-ff4d8ce778e7"
        },
        "spec": {
            "placement": {"name": "crp-example"},
            "clusterResourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "application-1", "version": "v1"}
            ],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": []},
                "jsonPatchOverrides": [{
                    "op": "add", "path": "/metadata/annotations",
                    "value": {"cro-test-annotation": "cro-test-annotation-val"}
                }]
            }]}
        }
    })
}

fn seed_ro_1() -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ResourceOverride",
        "metadata": {
            "creationTimestamp": "2024-05-07T08:25:31Z",
            "finalizers": ["kubernetes-fleet.io/override-cleanup"],
            "generation": 1, "name": "ro-1", "namespace": "application-1",
            "resourceVersion": "3859", "uid": "b4117925-bc3c-438d-a4f6-067bc4577364"
        },
        "spec": {
            "placement": {"name": "crp-example"},
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": []},
                "jsonPatchOverrides": [{
                    "op": "add", "path": "/metadata/annotations",
                    "value": {"ro-test-annotation": "ro-test-annotation-val"}
                }]
            }]},
            "resourceSelectors": [
                {"group": "", "kind": "ConfigMap", "name": "app-config-1", "version": "v1"}
            ]
        }
    })
}

fn namespace_selector(name: &str) -> Value {
    json!([{"group": "", "version": "v1", "kind": "Namespace", "name": name}])
}

#[test]
fn secret_reader_cluster_role_gets_the_member_name_label_on_prod_clusters_only() {
    // KubeFleet's override docs, "Reserved Variables in the JSON Patch Override Value".
    let mut hub = Hub::new();
    hub.join("member-prod", json!({"env": "prod"}), json!([]));
    hub.join("member-dev", json!({"env": "dev"}), json!([]));
    let rules =
        json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "watch", "list"]}]);
    assert_stored(&hub.apply(&json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "secret-reader"}, "rules": rules
    })));
    hub.apply(&crp_selecting(
        "crp-example",
        json!([{"group": "rbac.authorization.k8s.io", "version": "v1", "kind": "ClusterRole", "name": "secret-reader"}]),
    ));
    let decisions = hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ClusterResourceOverride",
        "metadata": {"name": "example-cro"},
        "spec": {
            "placement": {"name": "crp-example"},
            "clusterResourceSelectors": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "version": "v1", "name": "secret-reader"}],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]},
                "jsonPatchOverrides": [{"op": "add", "path": "/metadata/labels", "value": {"cluster-name": "${MEMBER-CLUSTER-NAME}"}}]
            }]}
        }
    }));
    assert!(decisions.contains(&Decision::OverrideSnapshotTaken {
        override_object: ObjectKey::cluster_scoped(
            "placement.kubernetes-fleet.io",
            "ClusterResourceOverride",
            "example-cro"
        ),
        index: 0,
    }));

    let prod = render(&hub, "crp-example", "member-prod").expect("renders");
    assert_eq!(
        manifests(&prod),
        vec![json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "secret-reader", "labels": {"cluster-name": "member-prod"}},
            "rules": rules
        })]
    );
    assert_eq!(prod.cluster_resource_overrides, vec!["example-cro-0"]);
    assert!(prod.resource_overrides.is_empty());

    let dev = render(&hub, "crp-example", "member-dev").expect("renders");
    assert_eq!(
        manifests(&dev),
        vec![json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "secret-reader"}, "rules": rules
        })]
    );
    assert!(dev.cluster_resource_overrides.is_empty());
}

#[test]
fn cluster_resource_override_on_a_namespace_annotates_the_configmap_in_it_on_every_cluster() {
    // KubeFleet's override example "add annotations to the configmap by using
    // clusterResourceOverride".
    let mut hub = Hub::new();
    three_clusters(&mut hub);
    seed_configmap(&mut hub);
    hub.apply(&crp_selecting(
        "crp-example",
        namespace_selector("application-1"),
    ));
    assert_stored(&hub.apply(&seed_cro_1()));
    for cluster in ["kind-cluster-1", "kind-cluster-2", "kind-cluster-3"] {
        let work = render(&hub, "crp-example", cluster).expect("renders");
        let annotations = json!({"cro-test-annotation": "cro-test-annotation-val"});
        assert_eq!(
            manifests(&work),
            vec![
                json!({"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": "application-1", "annotations": annotations}}),
                json!({"apiVersion": "v1", "data": {"data": "test"}, "kind": "ConfigMap",
                       "metadata": {"annotations": annotations, "name": "app-config-1",
                                    "namespace": "application-1"}}),
            ]
        );
        // The seed's status: applicableClusterResourceOverrides: [cro-1-0].
        assert_eq!(work.cluster_resource_overrides, vec!["cro-1-0"]);
        assert!(work.resource_overrides.is_empty());
    }
}

#[test]
fn resource_override_annotates_only_the_configmap_it_names() {
    // KubeFleet's override example "add annotations to the configmap by using resourceOverride".
    let mut hub = Hub::new();
    three_clusters(&mut hub);
    seed_configmap(&mut hub);
    hub.apply(&crp_selecting(
        "crp-example",
        namespace_selector("application-1"),
    ));
    assert_stored(&hub.apply(&seed_ro_1()));
    let work = render(&hub, "crp-example", "kind-cluster-1").expect("renders");
    assert_eq!(
        manifests(&work),
        vec![
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "application-1"}}),
            json!({"apiVersion": "v1", "data": {"data": "test"}, "kind": "ConfigMap",
                   "metadata": {"annotations": {"ro-test-annotation": "ro-test-annotation-val"},
                                "name": "app-config-1", "namespace": "application-1"}}),
        ]
    );
    assert!(work.cluster_resource_overrides.is_empty());
    assert_eq!(
        work.resource_overrides,
        vec![("application-1".to_owned(), "ro-1-0".to_owned())]
    );
}

#[test]
fn a_resource_override_wins_over_a_cluster_resource_override() {
    // "If the resource is selected by both ClusterResourceOverride and ResourceOverride, the
    // ResourceOverride will win": the RO applies last.
    let mut hub = Hub::new();
    three_clusters(&mut hub);
    seed_configmap(&mut hub);
    hub.apply(&crp_selecting(
        "crp-example",
        namespace_selector("application-1"),
    ));
    assert_stored(&hub.apply(&seed_cro_1()));
    assert_stored(&hub.apply(&seed_ro_1()));
    let work = render(&hub, "crp-example", "kind-cluster-2").expect("renders");
    let rendered = manifests(&work);
    assert_eq!(
        rendered[0]["metadata"]["annotations"],
        json!({"cro-test-annotation": "cro-test-annotation-val"})
    );
    assert_eq!(
        rendered[1]["metadata"]["annotations"],
        json!({"ro-test-annotation": "ro-test-annotation-val"})
    );
    assert_eq!(work.cluster_resource_overrides, vec!["cro-1-0"]);
    assert_eq!(
        work.resource_overrides,
        vec![("application-1".to_owned(), "ro-1-0".to_owned())]
    );
}

fn deployment(hub: &mut Hub) {
    hub.apply(&namespace("app"));
    assert_stored(&hub.apply(&json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "app"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.19"}]}}}
    })));
    hub.apply(&crp_selecting("crp-app", namespace_selector("app")));
}

fn deployment_override(name: &str, rules: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ResourceOverride",
        "metadata": {"name": name, "namespace": "app"},
        "spec": {
            "resourceSelectors": [{"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}],
            "policy": {"overrideRules": rules}
        }
    })
}

fn labelled(key: &str, value: &str) -> Value {
    json!({"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {key: value}}}]})
}

fn image_of(work: &RenderedWork) -> Value {
    let deployment = manifests(work)
        .into_iter()
        .find(|m| m["kind"] == "Deployment")
        .expect("the deployment is placed");
    deployment["spec"]["template"]["spec"]["containers"][0]["image"].clone()
}

#[test]
fn staging_gets_the_latest_image_and_production_a_pinned_one() {
    // Use case: "always use the latest image in the staging cluster and a specific image in the
    // production cluster".
    let mut hub = Hub::new();
    hub.join("cluster-staging", json!({"env": "staging"}), json!([]));
    hub.join("cluster-production", json!({"env": "prod"}), json!([]));
    hub.join("cluster-other", json!({"env": "test"}), json!([]));
    deployment(&mut hub);
    let image = "/spec/template/spec/containers/0/image";
    assert_stored(&hub.apply(&deployment_override(
        "web-images",
        json!([
            {"clusterSelector": labelled("env", "staging"),
             "jsonPatchOverrides": [{"op": "replace", "path": image, "value": "nginx:latest"}]},
            {"clusterSelector": labelled("env", "prod"), "overrideType": "JSONPatch",
             "jsonPatchOverrides": [{"op": "replace", "path": image, "value": "nginx:1.20.0"}]}
        ]),
    )));
    let staging = render(&hub, "crp-app", "cluster-staging").expect("renders");
    assert_eq!(image_of(&staging), json!("nginx:latest"));
    let production = render(&hub, "crp-app", "cluster-production").expect("renders");
    assert_eq!(image_of(&production), json!("nginx:1.20.0"));
    let other = render(&hub, "crp-app", "cluster-other").expect("renders");
    assert_eq!(image_of(&other), json!("nginx:1.19"));
    assert!(other.resource_overrides.is_empty());
    assert_eq!(
        production.resource_overrides,
        vec![("app".to_owned(), "web-images-0".to_owned())]
    );
}

#[test]
fn later_rules_win_and_a_nil_cluster_selector_selects_no_cluster() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({"env": "prod"}), json!([]));
    deployment(&mut hub);
    let image = "/spec/template/spec/containers/0/image";
    assert_stored(&hub.apply(&deployment_override(
        "web-images",
        json!([
            {"clusterSelector": {}, "jsonPatchOverrides": [{"op": "replace", "path": image, "value": "first"}]},
            {"clusterSelector": labelled("env", "prod"),
             "jsonPatchOverrides": [{"op": "replace", "path": image, "value": "second"}]},
            {"jsonPatchOverrides": [{"op": "replace", "path": image, "value": "never"}]}
        ]),
    )));
    let work = render(&hub, "crp-app", "member-1").expect("renders");
    assert_eq!(image_of(&work), json!("second"));

    // An override whose only rule has a nil selector applies to no cluster at all.
    let mut hub = Hub::new();
    hub.join("member-1", json!({"env": "prod"}), json!([]));
    deployment(&mut hub);
    assert_stored(&hub.apply(&deployment_override(
        "nil-selector",
        json!([{"jsonPatchOverrides": [{"op": "replace", "path": image, "value": "never"}]}]),
    )));
    let work = render(&hub, "crp-app", "member-1").expect("renders");
    assert_eq!(image_of(&work), json!("nginx:1.19"));
    assert!(work.resource_overrides.is_empty());
}

#[test]
fn delete_leaves_the_resource_out_on_the_selected_clusters_and_ends_the_policy() {
    let mut hub = Hub::new();
    hub.join("member-prod", json!({"env": "prod"}), json!([]));
    hub.join("member-dev", json!({"env": "dev"}), json!([]));
    deployment(&mut hub);
    let image = "/spec/template/spec/containers/0/image";
    assert_stored(&hub.apply(&deployment_override(
        "no-web-in-prod",
        json!([
            {"clusterSelector": labelled("env", "prod"), "overrideType": "Delete"},
            {"clusterSelector": {}, "jsonPatchOverrides": [{"op": "replace", "path": image, "value": "after-delete"}]}
        ]),
    )));
    let prod = render(&hub, "crp-app", "member-prod").expect("renders");
    let kinds: Vec<Value> = manifests(&prod).iter().map(|m| m["kind"].clone()).collect();
    assert_eq!(kinds, vec![json!("Namespace")]);
    assert_eq!(
        prod.resource_overrides,
        vec![("app".to_owned(), "no-web-in-prod-0".to_owned())]
    );
    // On dev the Delete rule does not match; the next rule applies.
    let dev = render(&hub, "crp-app", "member-dev").expect("renders");
    assert_eq!(image_of(&dev), json!("after-delete"));
}

#[test]
fn a_cluster_resource_override_deleting_a_namespace_drops_what_it_holds_for_good() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({}), json!([]));
    deployment(&mut hub);
    assert_stored(&hub.apply(&json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourceOverride",
        "metadata": {"name": "drop-app"},
        "spec": {
            "clusterResourceSelectors": namespace_selector("app"),
            "policy": {"overrideRules": [{"clusterSelector": {}, "overrideType": "Delete"}]}
        }
    })));
    // A later RO JSONPatch on the deleted Deployment is a no-op: it stays deleted.
    assert_stored(&hub.apply(&deployment_override(
        "web-images",
        json!([{"clusterSelector": {}, "jsonPatchOverrides": [
            {"op": "replace", "path": "/spec/replicas", "value": 5}]}]),
    )));
    let work = render(&hub, "crp-app", "member-1").expect("renders");
    assert!(work.manifests.is_empty());
    assert_eq!(work.cluster_resource_overrides, vec!["drop-app-0"]);
    assert_eq!(
        work.resource_overrides,
        vec![("app".to_owned(), "web-images-0".to_owned())]
    );
}

#[test]
fn commands_differ_by_region_through_label_variables_substituted_in_values_only() {
    // Use case: "different commands for my container in different regions".
    let mut hub = Hub::new();
    hub.join("member-east", json!({"region": "east"}), json!([]));
    hub.join("member-west", json!({"region": "west"}), json!([]));
    hub.join("member-nowhere", json!({}), json!([]));
    deployment(&mut hub);
    assert_stored(&hub.apply(&deployment_override(
        "web-command",
        json!([{"clusterSelector": {}, "jsonPatchOverrides": [
            {"op": "add", "path": "/spec/template/spec/containers/0/command",
             "value": ["/bin/sh", "-c", "serve --region ${MEMBER-CLUSTER-LABEL-KEY-region} --as ${MEMBER-CLUSTER-NAME} $CLUSTER_NAME"]},
            {"op": "add", "path": "/metadata/labels", "value": {}},
            {"op": "add", "path": "/metadata/labels/${MEMBER-CLUSTER-NAME}", "value": "${Member-Cluster-Name}"}
        ]}]),
    )));
    for (cluster, region) in [("member-east", "east"), ("member-west", "west")] {
        let work = render(&hub, "crp-app", cluster).expect("renders");
        let deployment = manifests(&work)
            .into_iter()
            .find(|m| m["kind"] == "Deployment")
            .expect("placed");
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["command"],
            json!([
                "/bin/sh",
                "-c",
                format!("serve --region {region} --as {cluster} $CLUSTER_NAME")
            ])
        );
        // Paths are never substituted, and other spellings are left as they are.
        assert_eq!(
            deployment["metadata"]["labels"],
            json!({"${MEMBER-CLUSTER-NAME}": "${Member-Cluster-Name}"})
        );
    }
    let error = render(&hub, "crp-app", "member-nowhere").expect_err("no region label");
    let OverrideError::PatchFailed(failure) = error else {
        panic!("expected a patch failure, got {error:?}");
    };
    assert_eq!(failure.override_object, "ResourceOverride/app/web-command");
    assert_eq!(failure.snapshot, "web-command-0");
    assert_eq!((failure.rule, failure.patch), (0, 0));
    assert_eq!(failure.resource, "Deployment/app/web");
    assert!(failure.reason.contains("\"region\""), "{}", failure.reason);
}

#[test]
fn a_patch_that_cannot_apply_fails_naming_the_override_rule_and_patch() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({}), json!([]));
    deployment(&mut hub);
    assert_stored(&hub.apply(&deployment_override(
        "broken",
        json!([
            {"clusterSelector": {}, "jsonPatchOverrides": [{"op": "replace", "path": "/spec/replicas", "value": 3}]},
            {"clusterSelector": {}, "jsonPatchOverrides": [
                {"op": "add", "path": "/spec/paused", "value": true},
                {"op": "remove", "path": "/spec/strategy/rollingUpdate"}
            ]}
        ]),
    )));
    let error = render(&hub, "crp-app", "member-1").expect_err("no such path");
    assert_eq!(
        error.to_string(),
        "failed to apply the override rules of ResourceOverride/app/broken (snapshot broken-0) \
         on Deployment/app/web for cluster member-1: \
         spec.policy.overrideRules[1].jsonPatchOverrides[1]: \"/spec/strategy/rollingUpdate\": \
         path is invalid"
    );
}

#[test]
fn overrides_for_another_placement_or_another_resource_do_not_apply() {
    let mut hub = Hub::new();
    three_clusters(&mut hub);
    seed_configmap(&mut hub);
    hub.apply(&crp_selecting(
        "crp-other",
        namespace_selector("application-1"),
    ));
    assert_stored(&hub.apply(&seed_cro_1()));
    assert_stored(&hub.apply(&seed_ro_1()));
    let work = render(&hub, "crp-other", "kind-cluster-1").expect("renders");
    assert!(work.cluster_resource_overrides.is_empty() && work.resource_overrides.is_empty());
    assert_eq!(work.manifests, {
        let resources = selected(&hub, "crp-other");
        resources
            .into_iter()
            .map(|r| r.manifest)
            .collect::<Vec<_>>()
    });
    // Deleting the override removes it from the seed's placement too.
    let decisions = hub.send(Input::Delete {
        target: ObjectRef {
            kind: "ResourceOverride".into(),
            group: None,
            namespace: Some("application-1".into()),
            name: "ro-1".into(),
        },
    });
    assert_eq!(
        decisions.first(),
        Some(&Decision::ObjectDeleted {
            object: ObjectKey::namespaced(
                "placement.kubernetes-fleet.io",
                "ResourceOverride",
                "application-1",
                "ro-1"
            )
        })
    );
    hub.apply(&crp_selecting(
        "crp-example",
        namespace_selector("application-1"),
    ));
    let work = render(&hub, "crp-example", "kind-cluster-1").expect("renders");
    assert!(work.resource_overrides.is_empty());
    assert_eq!(work.cluster_resource_overrides, vec!["cro-1-0"]);
}

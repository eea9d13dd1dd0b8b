//! Invalid overrides are rejected with a message naming the field and the rule (KubeFleet's
//! override docs "Limits" and the notes on what cannot be patched; KubeFleet's validator for the
//! rest), and override snapshots follow every spec change and nothing else.

mod common;

use common::{Hub, namespace};
use flotilla_core::decision::{Decision, RejectCode};
use flotilla_core::model::{ObjectKey, PLACEMENT_GROUP};
use flotilla_core::query::overrides::{
    OVERRIDE_SNAPSHOTS_MAX, OVERRIDES_PER_KIND_MAX, OverrideError, render_with_snapshots,
};
use flotilla_core::query::placement::SelectedResource;
use serde_json::{Value, json};

fn cro(name: &str, selectors: Value, rules: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ClusterResourceOverride",
        "metadata": {"name": name},
        "spec": {"clusterResourceSelectors": selectors, "policy": {"overrideRules": rules}}
    })
}

fn ro(namespace: &str, name: &str, selectors: Value, rules: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ResourceOverride",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceSelectors": selectors, "policy": {"overrideRules": rules}}
    })
}

fn ns(name: &str) -> Value {
    json!([{"group": "", "version": "v1", "kind": "Namespace", "name": name}])
}

fn configmap(name: &str) -> Value {
    json!([{"group": "", "version": "v1", "kind": "ConfigMap", "name": name}])
}

fn patch_rule(patches: Value) -> Value {
    json!([{"clusterSelector": {}, "jsonPatchOverrides": patches}])
}

fn annotate() -> Value {
    patch_rule(json!([{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}]))
}

/// The single rejection an apply produced.
fn rejection(decisions: &[Decision]) -> (RejectCode, String) {
    match decisions {
        [Decision::Rejected { code, message }] => (*code, message.clone()),
        other => panic!("expected one rejection, got {other:?}"),
    }
}

fn stored(decisions: &[Decision]) -> bool {
    decisions
        .iter()
        .any(|d| matches!(d, Decision::ObjectStored { .. }))
}

fn invalid(hub: &mut Hub, manifest: &Value) -> String {
    let (code, message) = rejection(&hub.apply(manifest));
    assert_eq!(code, RejectCode::InvalidObject, "{message}");
    message
}

#[test]
fn patching_metadata_name_is_rejected_naming_the_patch() {
    let mut hub = Hub::new();
    let message = invalid(
        &mut hub,
        &cro(
            "cro-1",
            ns("app"),
            patch_rule(json!([
                {"op": "add", "path": "/metadata/labels/x", "value": "y"},
                {"op": "replace", "path": "/metadata/name", "value": "renamed"}
            ])),
        ),
    );
    assert_eq!(
        message,
        "spec.policy.overrideRules[0].jsonPatchOverrides[1].path: cannot patch \"/metadata/name\": \
         metadata fields other than labels and annotations cannot be overridden"
    );
    assert!(hub.state.overrides().is_empty());
}

#[test]
fn type_fields_status_and_malformed_paths_are_rejected() {
    let cases = [
        (
            "/kind",
            "the type fields (apiVersion, kind) cannot be overridden",
        ),
        (
            "/apiVersion",
            "the type fields (apiVersion, kind) cannot be overridden",
        ),
        (
            "/metadata",
            "metadata fields other than labels and annotations",
        ),
        (
            "/metadata/namespace",
            "metadata fields other than labels and annotations",
        ),
        ("/status/phase", "the status cannot be overridden"),
        ("/spec//replicas", "cannot contain an empty segment"),
        ("/", "cannot contain an empty segment"),
        ("spec/replicas", "must start with \"/\""),
        ("", "path cannot be empty"),
        ("/spec/a~2b", "\"~\" must be followed by 0 or 1"),
    ];
    let mut hub = Hub::new();
    for (path, expected) in cases {
        let message = invalid(
            &mut hub,
            &cro(
                "cro-1",
                ns("app"),
                patch_rule(json!([{"op": "add", "path": path, "value": 1}])),
            ),
        );
        assert!(
            message.starts_with("spec.policy.overrideRules[0].jsonPatchOverrides[0].path: ")
                && message.contains(expected),
            "{path}: {message}"
        );
    }
    // Labels and annotations, whole or one key, are fine.
    for path in ["/metadata/labels", "/metadata/annotations/a~1b", "/kind/x"] {
        let decisions = hub.apply(&cro(
            "cro-ok",
            ns("app"),
            patch_rule(json!([{"op": "add", "path": path, "value": {}}])),
        ));
        assert!(stored(&decisions), "{path}: {decisions:?}");
    }
}

#[test]
fn the_101st_override_of_a_kind_is_denied() {
    let mut hub = Hub::new();
    for i in 0..OVERRIDES_PER_KIND_MAX {
        let decisions = hub.apply(&cro(
            &format!("cro-{i}"),
            ns(&format!("ns-{i}")),
            annotate(),
        ));
        assert!(stored(&decisions), "{decisions:?}");
    }
    let message = invalid(&mut hub, &cro("cro-100", ns("ns-100"), annotate()));
    assert_eq!(
        message,
        "ClusterResourceOverride cro-100: at most 100 ClusterResourceOverrides can be created"
    );
    // Updating one of the hundred is still allowed, and ResourceOverrides count separately.
    let update = hub.apply(&cro(
        "cro-0",
        ns("ns-0"),
        patch_rule(json!([{"op": "remove", "path": "/x"}])),
    ));
    assert!(stored(&update), "{update:?}");
    assert!(stored(&hub.apply(&ro(
        "app",
        "ro-1",
        configmap("cfg"),
        annotate()
    ))));
    // Deleting one makes room again.
    hub.delete("ClusterResourceOverride", "cro-5");
    assert!(stored(&hub.apply(&cro(
        "cro-100",
        ns("ns-100"),
        annotate()
    ))));
}

#[test]
fn one_override_of_a_kind_per_resource() {
    let mut hub = Hub::new();
    assert!(stored(&hub.apply(&cro(
        "cro-1",
        ns("application-1"),
        annotate()
    ))));
    let selectors = json!([
        {"group": "", "version": "v1", "kind": "Namespace", "name": "other"},
        {"group": "", "version": "v1", "kind": "Namespace", "name": "application-1"}
    ]);
    let message = invalid(&mut hub, &cro("cro-2", selectors, annotate()));
    assert_eq!(
        message,
        "spec.clusterResourceSelectors[1]: one override per resource: Namespace/application-1 is \
         already selected by ClusterResourceOverride cro-1"
    );
    // ResourceOverrides conflict within a namespace only; a CRO and an RO may share a resource.
    assert!(stored(&hub.apply(&ro(
        "application-1",
        "ro-1",
        configmap("cfg"),
        annotate()
    ))));
    let message = invalid(
        &mut hub,
        &ro("application-1", "ro-2", configmap("cfg"), annotate()),
    );
    assert_eq!(
        message,
        "spec.resourceSelectors[0]: one override per resource: ConfigMap/application-1/cfg is \
         already selected by ResourceOverride ro-1"
    );
    assert!(stored(&hub.apply(&ro(
        "application-2",
        "ro-2",
        configmap("cfg"),
        annotate()
    ))));
    // Re-applying an override with its own selectors is not a conflict with itself.
    let update = hub.apply(&cro(
        "cro-1",
        ns("application-1"),
        patch_rule(json!([{"op": "remove", "path": "/x"}])),
    ));
    assert!(stored(&update), "{update:?}");
}

#[test]
fn rule_contents_are_checked() {
    let mut hub = Hub::new();
    let cases = [
        (
            json!([{"clusterSelector": {}, "overrideType": "Delete",
                    "jsonPatchOverrides": [{"op": "remove", "path": "/spec"}]}]),
            "spec.policy.overrideRules[0].jsonPatchOverrides: must be empty when the override type is Delete",
        ),
        (
            patch_rule(json!([{"op": "remove", "path": "/spec/replicas", "value": 3}])),
            "spec.policy.overrideRules[0].jsonPatchOverrides[0].value: a remove operation cannot have a value",
        ),
        (
            patch_rule(json!([{"op": "remove", "path": "/spec/replicas", "value": null}])),
            "spec.policy.overrideRules[0].jsonPatchOverrides[0].value: a remove operation cannot have a value",
        ),
        (
            json!([{"clusterSelector": {}}]),
            "spec.policy.overrideRules[0].jsonPatchOverrides: a JSONPatch rule needs between 1 and 20 JSON patch overrides",
        ),
        (
            patch_rule(Value::Array(vec![
                json!({"op": "remove", "path": "/x"});
                21
            ])),
            "spec.policy.overrideRules[0].jsonPatchOverrides: a JSONPatch rule needs between 1 and 20 JSON patch overrides",
        ),
        (
            json!([]),
            "spec.policy.overrideRules: between 1 and 20 override rules are required",
        ),
        (
            json!([{"clusterSelector": {"clusterSelectorTerms": [{"propertySelector": {"matchExpressions": []}}]},
                    "overrideType": "Delete"}]),
            "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerms[0]: only labelSelector is supported",
        ),
        (
            json!([{"clusterSelector": {"clusterSelectorTerms": [{}]}, "overrideType": "Delete"}]),
            "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerms[0].labelSelector: is required",
        ),
        (
            patch_rule(json!([{"op": "move", "path": "/x"}])),
            "spec.policy.overrideRules[0].jsonPatchOverrides[0].op: unknown variant `move`",
        ),
        (
            json!([{"overrideType": "Merge"}]),
            "spec.policy.overrideRules[0].overrideType: unknown variant `Merge`",
        ),
    ];
    for (rules, expected) in cases {
        let message = invalid(&mut hub, &cro("cro-1", ns("app"), rules));
        assert!(message.starts_with(expected), "{message}");
    }
}

#[test]
fn selectors_are_checked() {
    let mut hub = Hub::new();
    let cases = [
        (
            json!([{"group": "", "version": "v1", "kind": "Namespace", "labelSelector": {"matchLabels": {"a": "b"}}}]),
            "spec.clusterResourceSelectors[0].labelSelector: label selectors are not supported",
        ),
        (
            json!([{"group": "", "version": "v1", "kind": "Namespace"}]),
            "spec.clusterResourceSelectors[0].name: a resource name is required",
        ),
        (
            json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "a"},
                   {"group": "", "version": "v1", "kind": "Namespace", "name": "a"}]),
            "spec.clusterResourceSelectors[1]: duplicate resource selector",
        ),
        (json!([]), "spec.clusterResourceSelectors: between 1 and 20 selectors are required"),
        (
            Value::Array(
                (0..21)
                    .map(|i| json!({"group": "", "version": "v1", "kind": "Namespace", "name": format!("n{i}")}))
                    .collect(),
            ),
            "spec.clusterResourceSelectors: between 1 and 20 selectors are required",
        ),
    ];
    for (selectors, expected) in cases {
        let message = invalid(&mut hub, &cro("cro-1", selectors, annotate()));
        assert!(message.starts_with(expected), "{message}");
    }
    let mut wrong_field = cro("cro-1", ns("app"), annotate());
    wrong_field["spec"]["resourceSelectors"] = ns("app");
    assert!(
        invalid(&mut hub, &wrong_field)
            .starts_with("spec.resourceSelectors: is not a field of ClusterResourceOverride")
    );
    let mut no_policy = cro("cro-1", ns("app"), annotate());
    no_policy["spec"]
        .as_object_mut()
        .map(|spec| spec.remove("policy"));
    assert_eq!(invalid(&mut hub, &no_policy), "spec.policy: is required");
}

#[test]
fn scope_and_versions_are_checked() {
    let mut hub = Hub::new();
    let mut namespaced_cro = cro("cro-1", ns("app"), annotate());
    namespaced_cro["metadata"]["namespace"] = json!("app");
    assert_eq!(
        invalid(&mut hub, &namespaced_cro),
        "metadata.namespace: ClusterResourceOverride is cluster-scoped"
    );
    let mut cluster_ro = ro("app", "ro-1", configmap("cfg"), annotate());
    cluster_ro["metadata"]
        .as_object_mut()
        .map(|meta| meta.remove("namespace"));
    assert_eq!(
        invalid(&mut hub, &cluster_ro),
        "metadata.namespace: ResourceOverride needs a namespace"
    );
    let mut v1 = cro("cro-1", ns("app"), annotate());
    v1["apiVersion"] = json!("placement.kubernetes-fleet.io/v1");
    assert!(
        invalid(&mut hub, &v1)
            .starts_with("apiVersion: placement.kubernetes-fleet.io/v1 is not served")
    );
    let mut v1beta1 = cro("cro-1", ns("app"), annotate());
    v1beta1["apiVersion"] = json!("placement.kubernetes-fleet.io/v1beta1");
    assert!(stored(&hub.apply(&v1beta1)));
}

#[test]
fn the_placement_reference_is_immutable() {
    let mut hub = Hub::new();
    let with_placement = |name: Option<&str>| {
        let mut manifest = cro("cro-1", ns("app"), annotate());
        if let Some(name) = name {
            manifest["spec"]["placement"] = json!({"name": name});
        }
        manifest
    };
    assert!(stored(&hub.apply(&with_placement(Some("crp-a")))));
    let (code, message) = rejection(&hub.apply(&with_placement(Some("crp-b"))));
    assert_eq!(code, RejectCode::ImmutableField);
    assert_eq!(
        message,
        "spec.placement: the placement reference is immutable (was \"crp-a\", now \"crp-b\")"
    );
    let (code, _) = rejection(&hub.apply(&with_placement(None)));
    assert_eq!(code, RejectCode::ImmutableField);
}

fn cro_key(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(PLACEMENT_GROUP, "ClusterResourceOverride", name)
}

#[test]
fn snapshots_follow_spec_changes_only_and_are_pruned() {
    let mut hub = Hub::new();
    hub.join("member-1", json!({}), json!([]));
    hub.apply(&namespace("app"));
    let version = |i: usize| {
        cro(
            "cro-1",
            ns("app"),
            patch_rule(
                json!([{"op": "add", "path": "/metadata/labels", "value": {"v": i.to_string()}}]),
            ),
        )
    };
    assert!(
        hub.apply(&version(0))
            .contains(&Decision::OverrideSnapshotTaken {
                override_object: ObjectKey::cluster_scoped(
                    "placement.kubernetes-fleet.io",
                    "ClusterResourceOverride",
                    "cro-1"
                ),
                index: 0
            })
    );
    // The same spec again is a no-op; a label change stores metadata but takes no snapshot.
    assert_eq!(
        hub.apply(&version(0)),
        vec![Decision::ObjectUnchanged {
            object: ObjectKey::cluster_scoped(
                "placement.kubernetes-fleet.io",
                "ClusterResourceOverride",
                "cro-1"
            )
        }]
    );
    let mut labelled = version(0);
    labelled["metadata"]["labels"] = json!({"team": "a"});
    let decisions = hub.apply(&labelled);
    assert!(stored(&decisions));
    assert!(
        !decisions
            .iter()
            .any(|d| matches!(d, Decision::OverrideSnapshotTaken { .. }))
    );
    for i in 1..12 {
        let decisions = hub.apply(&version(i));
        assert!(decisions.contains(&Decision::OverrideSnapshotTaken {
            override_object: ObjectKey::cluster_scoped(
                "placement.kubernetes-fleet.io",
                "ClusterResourceOverride",
                "cro-1"
            ),
            index: u64::try_from(i).expect("small"),
        }));
    }
    let stored_override = &hub.state.overrides()[&cro_key("cro-1")];
    assert_eq!(stored_override.snapshots.len(), OVERRIDE_SNAPSHOTS_MAX);
    assert_eq!(stored_override.latest().map(|s| s.index), Some(11));
    assert_eq!(stored_override.snapshots[0].index, 2);
    assert_eq!(stored_override.meta.generation, 12);

    // A binding can still render with a kept snapshot, not with a pruned one.
    let namespace_resource = namespace_selected("app");
    let work = render_with_snapshots(
        &hub.state,
        &namespace_resource,
        "member-1",
        &["cro-1-5".to_owned()],
        &[],
    )
    .expect("kept");
    let manifest: Value = serde_json::from_str(&work.manifests[0]).expect("json");
    assert_eq!(manifest["metadata"]["labels"], json!({"v": "5"}));
    let error = render_with_snapshots(
        &hub.state,
        &namespace_resource,
        "member-1",
        &["cro-1-1".to_owned()],
        &[],
    )
    .expect_err("pruned");
    assert_eq!(
        error,
        OverrideError::SnapshotNotFound {
            kind: "ClusterResourceOverride",
            snapshot: "cro-1-1".into()
        }
    );
}

/// The Namespace `name` as a placement would select it.
fn namespace_selected(name: &str) -> Vec<SelectedResource> {
    vec![SelectedResource {
        key: ObjectKey::cluster_scoped("", "Namespace", name),
        api_version: "v1".into(),
        manifest: json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            .to_string(),
    }]
}

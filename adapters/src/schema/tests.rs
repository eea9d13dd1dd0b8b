//! The validator keyword by keyword, on KubeFleet's own schemas, with the API server's wording.

use serde_json::{Value, json};

use super::*;

const PLACEMENT: &str = "placement.kubernetes-fleet.io";

fn crp(spec: Value) -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "crp-1"}, "spec": spec})
}

fn selectors() -> Value {
    json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}])
}

fn checked(kind: &str, version: &str, object: &Value, old: Option<&Value>) -> Checked {
    check(PLACEMENT, kind, version, object, old).expect("a vendored kind")
}

fn messages(checked: &Checked) -> Vec<String> {
    checked.violations.iter().map(ToString::to_string).collect()
}

#[test]
fn every_vendored_crd_parses_and_every_rule_compiles() {
    let mut kinds = 0;
    let mut rules = Vec::new();
    for (group, kind, version) in crds::all() {
        kinds += 1;
        let schema = open_api_schema(group, kind, version).expect("listed");
        cel::all_rules(schema, &mut rules);
    }
    assert!(kinds >= 50, "{kinds} kind versions");
    assert!(rules.len() > 90, "{} rules", rules.len());
    for rule in &rules {
        assert_eq!(cel::compiles(rule), Ok(()), "{rule}");
    }
}

#[test]
fn a_valid_placement_has_no_violations_and_no_unknown_fields() {
    let object = crp(json!({"resourceSelectors": selectors(),
        "policy": {"placementType": "PickN", "numberOfClusters": 2}}));
    assert_eq!(
        checked("ClusterResourcePlacement", "v1beta1", &object, None),
        Checked::default()
    );
    assert!(
        validate(
            "ClusterResourcePlacement",
            "placement.kubernetes-fleet.io/v1",
            &object
        )
        .is_empty()
    );
}

#[test]
fn unknown_fields_are_reported_by_path_apart_from_violations() {
    let mut object = crp(json!({"resourceSelectors": [{"group": "", "version": "v1",
        "kind": "Namespace", "name": "app", "bogus": 1}],
        "policy": {"placementType": "PickAll", "afinity": {}}}));
    object["metadata"]["colour"] = json!("red");
    let found = checked("ClusterResourcePlacement", "v1beta1", &object, None);
    let paths: Vec<String> = found.unknown.iter().map(ToString::to_string).collect();
    assert_eq!(
        paths,
        [
            "metadata.colour",
            "spec.policy.afinity",
            "spec.resourceSelectors[0].bogus"
        ]
    );
    assert!(found.violations.is_empty(), "{:?}", found.violations);
    prune(&mut object, &found.unknown);
    assert_eq!(
        checked("ClusterResourcePlacement", "v1beta1", &object, None),
        Checked::default()
    );
}

#[test]
fn a_selector_term_in_the_singular_is_unknown() {
    let object = json!({"apiVersion": "placement.kubernetes-fleet.io/v1alpha1",
        "kind": "ClusterResourceOverride", "metadata": {"name": "cro"},
        "spec": {"clusterResourceSelectors": selectors(), "policy": {"overrideRules": [{
            "clusterSelector": {"clusterSelectorTerm": [{"labelSelector": {}}]},
            "jsonPatchOverrides": [{"op": "add", "path": "/metadata/labels/a", "value": "b"}]}]}}});
    let found = checked("ClusterResourceOverride", "v1alpha1", &object, None);
    let paths: Vec<String> = found.unknown.iter().map(ToString::to_string).collect();
    assert_eq!(
        paths,
        ["spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerm"]
    );
}

#[test]
fn enum_type_and_required_violations_read_as_the_api_server_words_them() {
    let object = crp(
        json!({"resourceSelectors": [{"group": "", "version": "v1", "name": "x"}],
        "policy": {"placementType": "PickAl", "numberOfClusters": "two"}}),
    );
    let found = checked("ClusterResourcePlacement", "v1beta1", &object, None);
    assert_eq!(
        messages(&found),
        [
            "spec.policy.numberOfClusters: Invalid value: \"string\": spec.policy.numberOfClusters \
         in body must be of type integer: \"string\"",
            "spec.policy.placementType: Unsupported value: \"PickAl\": supported values: \
         \"PickAll\", \"PickFixed\", \"PickN\"",
            "spec.resourceSelectors[0].kind: Required value",
            "<nil>: Invalid value: \"null\": some validation rules were not checked because the \
         object was invalid; correct the existing errors to complete validation",
        ]
    );
    assert_eq!(found.violations[1].reason.cause(), "FieldValueNotSupported");
}

#[test]
fn bounds_lengths_items_and_patterns() {
    let object = crp(
        json!({"resourceSelectors": selectors(), "revisionHistoryLimit": 0,
        "policy": {"placementType": "PickN", "numberOfClusters": -1}}),
    );
    let found = checked("ClusterResourcePlacement", "v1beta1", &object, None);
    let texts = messages(&found);
    assert!(
        texts.contains(
            &"spec.revisionHistoryLimit: Invalid value: 0: \
        spec.revisionHistoryLimit in body should be greater than or equal to 1"
                .to_owned()
        ),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("spec.policy.numberOfClusters: Invalid value: -1")),
        "{texts:?}"
    );
    let empty = crp(json!({"resourceSelectors": []}));
    let texts = messages(&checked(
        "ClusterResourcePlacement",
        "v1beta1",
        &empty,
        None,
    ));
    assert!(
        texts.contains(
            &"spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors \
        in body should have at least 1 items"
                .to_owned()
        ),
        "{texts:?}"
    );
    let budget = json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementDisruptionBudget", "metadata": {"name": "crp-1"},
        "spec": {"maxUnavailable": "150%"}});
    let texts = messages(&checked(
        "ClusterResourcePlacementDisruptionBudget",
        "v1beta1",
        &budget,
        None,
    ));
    assert!(
        texts.iter().any(|t| t.contains("spec.maxUnavailable")),
        "{texts:?}"
    );
}

#[test]
fn int_or_string_takes_both_and_nothing_else() {
    let budget = |value: Value| {
        json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementDisruptionBudget", "metadata": {"name": "b"},
        "spec": {"minAvailable": value}})
    };
    let kind = "ClusterResourcePlacementDisruptionBudget";
    assert_eq!(
        messages(&checked(kind, "v1beta1", &budget(json!(2)), None)),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&checked(kind, "v1beta1", &budget(json!("50%")), None)),
        Vec::<String>::new()
    );
    let texts = messages(&checked(kind, "v1beta1", &budget(json!(true)), None));
    assert_eq!(
        texts[0],
        "spec.minAvailable: Invalid value: \"boolean\": spec.minAvailable in \
        body must be of type integer,string: \"boolean\""
    );
}

#[test]
fn cel_rules_report_their_messages() {
    let both = json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacementDisruptionBudget", "metadata": {"name": "b"},
        "spec": {"minAvailable": 1, "maxUnavailable": 1}});
    let found = checked(
        "ClusterResourcePlacementDisruptionBudget",
        "v1beta1",
        &both,
        None,
    );
    assert_eq!(found.violations.len(), 1, "{:?}", found.violations);
    assert_eq!(found.violations[0].field, "spec");
    assert!(
        found.violations[0]
            .to_string()
            .starts_with("spec: Invalid value: \"object\": ")
    );
    let long = json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster", "metadata": {"name": "x".repeat(70)},
        "spec": {"identity": {"kind": "User", "name": "m"}}});
    let found = check(
        "cluster.kubernetes-fleet.io",
        "MemberCluster",
        "v1beta1",
        &long,
        None,
    );
    let texts = found.as_ref().map(messages).unwrap_or_default();
    assert_eq!(
        texts,
        ["<nil>: Invalid value: \"object\": metadata.name max length is 63"]
    );
}

#[test]
fn transition_rules_read_old_self_on_updates_only() {
    let pick_all = crp(json!({"resourceSelectors": selectors(),
        "policy": {"placementType": "PickAll"}}));
    let pick_n = crp(json!({"resourceSelectors": selectors(),
        "policy": {"placementType": "PickN", "numberOfClusters": 1}}));
    let kind = "ClusterResourcePlacement";
    assert!(
        checked(kind, "v1beta1", &pick_n, None)
            .violations
            .is_empty()
    );
    let texts = messages(&checked(kind, "v1beta1", &pick_n, Some(&pick_all)));
    assert_eq!(
        texts,
        ["spec.policy: Invalid value: \"object\": placement type is immutable"]
    );
    let run = |placement: &str| {
        json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun", "metadata": {"name": "run"},
        "spec": {"placementName": placement, "stagedRolloutStrategyName": "s"}})
    };
    let texts = messages(&checked(
        "ClusterStagedUpdateRun",
        "v1beta1",
        &run("b"),
        Some(&run("a")),
    ));
    assert!(texts.iter().any(|t| t.contains("immutable")), "{texts:?}");
}

#[test]
fn metadata_follows_object_meta_rules() {
    let mut object = crp(json!({"resourceSelectors": selectors()}));
    object["metadata"]["name"] = json!("Bad_Name");
    object["metadata"]["labels"] = json!({"ok": "fine", "bad key!": "v", "k": "bad value!"});
    let texts = messages(&checked(
        "ClusterResourcePlacement",
        "v1beta1",
        &object,
        None,
    ));
    assert!(
        texts[0].starts_with(
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC \
        1123 subdomain"
        ),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("metadata.labels: Invalid value: \"bad key!\""))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("metadata.labels: Invalid value: \"bad value!\""))
    );
}

#[test]
fn nulls_are_dropped_and_defaults_filled_before_validating() {
    let object = crp(json!({"resourceSelectors": selectors(), "policy": null,
        "strategy": {"type": null}}));
    assert_eq!(
        checked("ClusterResourcePlacement", "v1beta1", &object, None),
        Checked::default()
    );
}

#[test]
fn map_lists_refuse_duplicate_keys() {
    let object = json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "c"},
        "spec": {"resourceSelectors": selectors()},
        "status": {"conditions": [
            {"type": "A", "status": "True", "reason": "r", "message": "",
             "lastTransitionTime": "2024-01-01T00:00:00Z"},
            {"type": "A", "status": "True", "reason": "r", "message": "",
             "lastTransitionTime": "not a time"}]}});
    let texts: Vec<String> = validate(
        "ClusterResourcePlacement",
        "placement.kubernetes-fleet.io/v1beta1",
        &object,
    )
    .iter()
    .map(ToString::to_string)
    .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("status.conditions[1]: Duplicate value:")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("must be of type date-time")),
        "{texts:?}"
    );
}

#[test]
fn versions_kubefleet_does_not_publish_use_the_v1beta1_schema() {
    let object = crp(json!({"resourceSelectors": selectors(), "policy": {"afinity": {}}}));
    let found = checked("ClusterResourcePlacement", "v1alpha1", &object, None);
    assert_eq!(found.unknown.len(), 1);
    assert!(check("", "ConfigMap", "v1", &object, None).is_none());
}

#[test]
fn duplicate_fields_are_found_by_path() {
    let body = br#"{"spec": {"a": 1, "b": [{"x": 1, "x": 2}], "a": 3}, "kind": "K"}"#;
    let paths: Vec<String> = duplicate_fields(body)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(paths, ["spec.b[0].x", "spec.a"]);
    assert!(duplicate_fields(b"not json").is_empty());
}

#[test]
fn a_member_cluster_needs_no_identity_in_flotilla() {
    let member = json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster", "metadata": {"name": "m1"}, "spec": {"heartbeatPeriodSeconds": 2}});
    assert_eq!(
        validate(
            "MemberCluster",
            "cluster.kubernetes-fleet.io/v1beta1",
            &member
        ),
        []
    );
    let typo = json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster", "metadata": {"name": "m1"}, "spec": {"identity": {"kind": "User"}}});
    let texts: Vec<String> = validate(
        "MemberCluster",
        "cluster.kubernetes-fleet.io/v1beta1",
        &typo,
    )
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(texts, ["spec.identity.name: Required value"]);
}

#[test]
fn unchanged_values_are_not_checked_again_on_updates() {
    let strategy = |label: &str| {
        json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy", "metadata": {"name": "s", "labels": {"l": label}},
        "spec": {"stages": [{"name": "a", "afterStageTasks": [
            {"type": "Approval", "waitTime": "1h"}]}]}})
    };
    let kind = "ClusterStagedUpdateStrategy";
    let fresh = checked(kind, "v1beta1", &strategy("a"), None);
    assert_eq!(fresh.violations.len(), 1, "{:?}", fresh.violations);
    let relabelled = checked(kind, "v1beta1", &strategy("b"), Some(&strategy("a")));
    assert_eq!(relabelled.violations, []);
}

#[test]
fn a_partitioned_strategy_is_flotillas_extension() {
    let object = crp(
        json!({"resourceSelectors": selectors(), "strategy": {"type": "Partitioned",
        "rolloutStrategy": {"maxUnavailable": "10%"}}}),
    );
    assert_eq!(
        checked("ClusterResourcePlacement", "v1", &object, None),
        Checked::default()
    );
}

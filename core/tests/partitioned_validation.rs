//! Every validation error of the partitioned strategy and of `ClusterGroup`, with its message:
//! the field path and what is wrong.

use flotilla_core::query::manifest::parse_manifest;
use serde_json::{Value, json};

fn crp(strategy: &Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "app"}],
            "strategy": strategy
        }
    })
}

fn error(manifest: &Value) -> String {
    match parse_manifest(manifest) {
        Ok(_) => "valid".into(),
        Err(error) => error.to_string(),
    }
}

fn partitioned(rollout: &Value) -> String {
    error(&crp(
        &json!({"type": "Partitioned", "rolloutStrategy": rollout}),
    ))
}

#[test]
fn the_seeds_blocks_are_valid() {
    assert_eq!(partitioned(&json!({"maxUnavailable": "10%"})), "valid");
    assert_eq!(
        partitioned(
            &json!({"maxUnavailable": 0, "maxUnavailablePartitions": 0, "partitions": [
            {"name": "demoRollout", "clusterSelector": {"matchLabels": {"stage": "demoRollout"}}},
            {"name": "stable", "maxUnavailable": "5%", "clusterGroup": "prod"}]})
        ),
        "valid"
    );
    assert_eq!(error(&crp(&json!({"type": "Partitioned"}))), "valid");
}

#[test]
fn the_block_belongs_to_the_partitioned_type_only() {
    assert_eq!(
        error(&crp(&json!({"rolloutStrategy": {"maxUnavailable": 1}}))),
        "spec.strategy.rolloutStrategy: is only valid with strategy type Partitioned, not RollingUpdate"
    );
}

#[test]
fn negative_knobs_are_refused() {
    let field = "spec.strategy.rolloutStrategy";
    for knob in [
        "maxUnavailable",
        "maxUnavailablePartitions",
        "autoPartitionSize",
        "autoPartitionThreshold",
    ] {
        assert_eq!(
            partitioned(&json!({knob: -1})),
            format!("{field}.{knob}: must not be negative")
        );
    }
    assert_eq!(
        partitioned(&json!({"maxNew": 0})),
        format!("{field}.maxNew: must be at least 1")
    );
    assert_eq!(
        partitioned(&json!({"maxUnavailable": "150%"})),
        format!("{field}.maxUnavailable: \"150%\" is not a percentage between 0% and 100%")
    );
}

#[test]
fn manual_partitions_are_checked_one_by_one() {
    let at = "spec.strategy.rolloutStrategy.partitions";
    assert_eq!(
        partitioned(&json!({"partitions": [{"clusterName": "a"}]})),
        format!("{at}[0].name: is required")
    );
    assert_eq!(
        partitioned(
            &json!({"partitions": [{"name": "p", "clusterName": "a", "maxUnavailable": -2}]})
        ),
        format!("{at}[0].maxUnavailable: must not be negative")
    );
    assert_eq!(
        partitioned(&json!({"partitions": [{"name": "p"}]})),
        format!(
            "{at}[0]: needs clusterName, clusterSelector, clusterGroup or clusterGroupSelector"
        )
    );
    let bad = json!({"matchExpressions": [{"key": "env", "operator": "In"}]});
    assert_eq!(
        partitioned(&json!({"partitions": [{"name": "p", "clusterSelector": bad}]})),
        format!(
            "{at}[0].clusterSelector: matchExpressions[0]: operator In needs at least one value"
        )
    );
    assert_eq!(
        partitioned(&json!({"partitions": [{"name": "p", "clusterGroupSelector": bad}]})),
        format!(
            "{at}[0].clusterGroupSelector: matchExpressions[0]: operator In needs at least one value"
        )
    );
    assert_eq!(
        partitioned(&json!({"partitions": [{"name": "p", "clusterName": "a"},
            {"name": "p", "clusterName": "b"}]})),
        format!("{at}[1].name: duplicate partition name \"p\"")
    );
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"name": format!("p{i}"), "clusterName": "a"}))
        .collect();
    assert_eq!(
        partitioned(&json!({"partitions": many})),
        format!("{at}: at most 100 partitions, got 101")
    );
}

#[test]
fn cluster_groups_are_namespaced_and_their_selector_checked() {
    let group = |metadata: Value, spec: Value| {
        json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterGroup",
            "metadata": metadata, "spec": spec})
    };
    assert_eq!(
        error(&group(
            json!({"name": "east", "namespace": "fleet-default"}),
            json!({"selector": {"matchLabels": {"region": "east"}}})
        )),
        "valid"
    );
    assert_eq!(
        error(&group(json!({"name": "east"}), json!({}))),
        "metadata.namespace: ClusterGroup needs a namespace"
    );
    assert_eq!(
        error(&group(
            json!({"name": "east", "namespace": "fleet-default"}),
            json!({"selector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}})
        )),
        "spec.selector: matchExpressions[0]: operator Exists takes no values"
    );
    assert_eq!(
        error(&group(
            json!({"name": "east", "namespace": "fleet-default"}),
            json!({"selector": "everything"})
        ))
        .split(':')
        .next(),
        Some("spec.selector")
    );
    let mut old = group(
        json!({"name": "east", "namespace": "fleet-default"}),
        json!({}),
    );
    old["apiVersion"] = json!("fleet.cattle.io/v1");
    assert_eq!(
        error(&old),
        "apiVersion: fleet.cattle.io/v1 is not served (versions: v1alpha1)"
    );
}

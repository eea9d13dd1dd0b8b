//! flotilla's documented additions to KubeFleet's schemas, applied to the vendored CRDs when
//! they are loaded, so that validation and OpenAPI (`kubectl explain`) both know them:
//!
//! - a placement's `spec.strategy.type` may be `Partitioned`, configured by
//!   `spec.strategy.rolloutStrategy` — Rancher Fleet's rollout strategy block
//!   (`docs/partitioned-rollout.md`), which flotilla's own model validates when it is written;
//! - rollout safety (`docs/rollout-safety.md`): `progressDeadlineSeconds`, `maxFailures` and
//!   `onFailure` on a placement's `strategy.rollingUpdate` and on each stage of a staged update
//!   strategy, and a strategy's `onClusterChange`;
//! - the `Analysis` stage task (`prometheus`, `interval`, `count`, `failureLimit`), also in the
//!   strategy snapshot a staged update run's status holds.

use serde_json::{Value, json};

/// Adds flotilla's extensions to the `openAPIV3Schema` of `group`/`kind`.
pub fn extend(group: &str, kind: &str, schema: &mut Value) {
    if group != "placement.kubernetes-fleet.io" {
        return;
    }
    match kind {
        "ClusterResourcePlacement" | "ResourcePlacement" => extend_placement(schema),
        "ClusterStagedUpdateStrategy" | "StagedUpdateStrategy" => {
            let spec = &mut schema["properties"]["spec"];
            add_properties(
                spec,
                json!({"onClusterChange": {"type": "string",
                "enum": ["Fail", "Adapt"],
                "description": "flotilla: what a run does when its placement's clusters change."}}),
            );
            extend_stages(&mut spec["properties"]["stages"]["items"]);
        }
        "ClusterStagedUpdateRun" | "StagedUpdateRun" => {
            let snapshot =
                &mut schema["properties"]["status"]["properties"]["stagedUpdateStrategySnapshot"];
            add_properties(
                snapshot,
                json!({"onClusterChange": {"type": "string",
                "enum": ["Fail", "Adapt"]}}),
            );
            extend_stages(&mut snapshot["properties"]["stages"]["items"]);
        }
        _ => {}
    }
}

/// flotilla's rollout safety fields (`docs/rollout-safety.md`).
fn safety() -> Value {
    json!({
        "progressDeadlineSeconds": {"type": "integer", "format": "int64", "minimum": 1,
            "description": "flotilla: no cluster ready on its new work for this long trips \
                the rollout."},
        "maxFailures": {"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "description": "flotilla: failed clusters tolerated (a count or a percentage)."},
        "onFailure": {"type": "string", "enum": ["Halt", "Rollback"],
            "description": "flotilla: what a tripped rollout does."},
    })
}

/// Adds `properties` to an object schema (a schema that is not an object is left alone).
fn add_properties(schema: &mut Value, properties: Value) {
    let (Some(target), Value::Object(added)) = (
        schema.get_mut("properties").and_then(Value::as_object_mut),
        properties,
    ) else {
        return;
    };
    target.extend(added);
}

/// A stage's safety fields, and the `Analysis` task in its before- and after-stage tasks.
fn extend_stages(stage: &mut Value) {
    add_properties(stage, safety());
    for tasks in ["beforeStageTasks", "afterStageTasks"] {
        let task = &mut stage["properties"][tasks]["items"];
        if let Some(Value::Array(types)) = task["properties"]["type"].get_mut("enum") {
            types.push(Value::from("Analysis"));
        }
        add_properties(
            task,
            json!({
                "prometheus": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "description": "flotilla: the Prometheus query an Analysis task measures \
                        (docs/rollout-safety.md)."},
                "interval": {"type": "string"},
                "count": {"type": "integer", "minimum": 1},
                "failureLimit": {"type": "integer", "minimum": 0},
            }),
        );
    }
}

fn extend_placement(schema: &mut Value) {
    let strategy = &mut schema["properties"]["spec"]["properties"]["strategy"];
    if !strategy.is_object() {
        return;
    }
    if let Some(Value::Array(types)) = strategy["properties"]["type"].get_mut("enum") {
        types.push(Value::from("Partitioned"));
    }
    strategy["properties"]["rolloutStrategy"] = json!({
        "type": "object",
        "description": "flotilla: Rancher Fleet's rollout strategy block (maxUnavailable, \
            maxUnavailablePartitions, autoPartitionSize, partitions), used when type is \
            Partitioned. Not part of KubeFleet's API.",
        "x-kubernetes-preserve-unknown-fields": true,
    });
    add_properties(&mut strategy["properties"]["rollingUpdate"], safety());
}

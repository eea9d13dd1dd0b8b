//! flotilla's documented additions to KubeFleet's schemas, applied to the vendored CRDs when
//! they are loaded, so that validation and OpenAPI (`kubectl explain`) both know them:
//!
//! - a placement's `spec.strategy.type` may be `Partitioned`, configured by
//!   `spec.strategy.rolloutStrategy` — Rancher Fleet's rollout strategy block
//!   (`docs/partitioned-rollout.md`), which flotilla's own model validates when it is written.

use serde_json::{Value, json};

/// Adds flotilla's extensions to the `openAPIV3Schema` of `group`/`kind`.
pub fn extend(group: &str, kind: &str, schema: &mut Value) {
    let placement = group == "placement.kubernetes-fleet.io"
        && matches!(kind, "ClusterResourcePlacement" | "ResourcePlacement");
    if !placement {
        return;
    }
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
}

//! The manifests the generated inputs apply, one function per kind.

use flotilla_core::{Input, WorkReport};
use proptest::prelude::*;
use serde_json::{Value, json};

const PLACEMENT_API: &str = "placement.kubernetes-fleet.io/v1beta1";

/// A placement policy.
#[derive(Debug, Clone)]
pub enum Policy {
    /// Every eligible cluster.
    PickAll,
    /// `numberOfClusters`, optionally preferring more nodes.
    PickN(u8, bool),
    /// The clusters whose bit is set.
    PickFixed(u8),
}

/// A placement's rollout strategy.
#[derive(Debug, Clone)]
pub enum Rollout {
    /// RollingUpdate with maxUnavailable, maxSurge (0 means a percentage) and an unavailable
    /// period.
    Rolling(u8, u8, u8),
    /// Rancher's partitioned rollout: maxUnavailable, manual partitions or automatic, and which
    /// safety fields guard it (none, `maxFailures`, or a progress deadline rolling back).
    Partitioned(u8, bool, u8),
    /// Staged runs only.
    External,
    /// RollingUpdate with maxUnavailable, members only reporting diffs (`ReportDiff`).
    ReportDiff(u8),
}

/// Any policy.
pub fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::PickAll),
        (0..5u8, any::<bool>()).prop_map(|(n, sorted)| Policy::PickN(n, sorted)),
        (0..16u8).prop_map(Policy::PickFixed),
    ]
}

/// Any strategy a placement may switch between freely (External is fixed per placement name).
pub fn rollout() -> impl Strategy<Value = Rollout> {
    prop_oneof![
        3 => (0..3u8, 0..3u8, prop_oneof![Just(0u8), Just(1u8), Just(30u8)]).prop_map(|(u, s, p)| Rollout::Rolling(u, s, p)),
        2 => (0..3u8, any::<bool>(), 0..3u8).prop_map(|(u, manual, guard)| Rollout::Partitioned(u, manual, guard)),
        1 => (0..3u8).prop_map(Rollout::ReportDiff),
    ]
}

/// What can be deleted: `(kind, namespace, name)`; `?` picks a namespace, and the names `""`,
/// `#`, `cm`, `crp`, `run`, `evict`, `budget` are picked from the universe.
pub const DELETABLE: [(&str, &str, &str); 15] = [
    ("ResourcePlacement", "app", "rp-staged"),
    ("MemberCluster", "", ""),
    ("MemberCluster", "", ""),
    ("Namespace", "", "#"),
    ("ConfigMap", "?", "cm"),
    ("ClusterResourcePlacement", "", "crp"),
    ("ResourcePlacement", "app", "rp"),
    ("ClusterResourceOverride", "", "cro"),
    ("ResourceOverride", "app", "ro"),
    ("ClusterStagedUpdateStrategy", "", "strategy"),
    ("StagedUpdateStrategy", "app", "strategy"),
    ("ClusterStagedUpdateRun", "", "run"),
    ("StagedUpdateRun", "app", "run"),
    ("ClusterResourcePlacementEviction", "", "evict"),
    ("ClusterResourcePlacementDisruptionBudget", "", "budget"),
];

pub fn member(name: &str, period: u32, prod: bool, tainted: bool) -> Value {
    let taints = if tainted {
        json!([{"key": "maintenance", "value": "true", "effect": "NoSchedule"}])
    } else {
        json!([])
    };
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"env": if prod { "prod" } else { "staging" }}},
        "spec": {"heartbeatPeriodSeconds": period, "taints": taints}
    })
}

pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

pub fn configmap(namespace: &str, name: usize, value: u8) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("cm-{name}"), "namespace": namespace},
        "data": {"value": value.to_string()}
    })
}

fn policy_json(policy: &Policy) -> Value {
    match policy {
        Policy::PickAll => json!({"placementType": "PickAll"}),
        Policy::PickN(n, false) => json!({"placementType": "PickN", "numberOfClusters": n}),
        Policy::PickN(n, true) => json!({
            "placementType": "PickN", "numberOfClusters": n,
            "affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 20, "preference": {"propertySorter":
                    {"name": "kubernetes-fleet.io/node-count", "sortOrder": "Descending"}}}]}}
        }),
        Policy::PickFixed(bits) => {
            let names: Vec<String> = (0..4)
                .filter(|i| bits & (1 << i) != 0)
                .map(|i| format!("c{i}"))
                .collect();
            json!({"placementType": "PickFixed", "clusterNames": names})
        }
    }
}

fn count(value: u8) -> Value {
    if value == 0 {
        json!("25%")
    } else {
        json!(value)
    }
}

fn strategy_json(rollout: &Rollout) -> Value {
    match rollout {
        Rollout::Rolling(unavailable, surge, period) => {
            let mut rolling = json!({"maxUnavailable": count(*unavailable), "maxSurge": count(*surge), "unavailablePeriodSeconds": period});
            // Two thirds of the rolling updates are guarded (`docs/rollout-safety.md`), whose guard
            // judges only the bindings its index reclassified (checked against judging all in debug
            // builds).
            match surge % 3 {
                1 => rolling["maxFailures"] = json!(1),
                2 => {
                    rolling["progressDeadlineSeconds"] = json!(60);
                    rolling["onFailure"] = json!("Rollback");
                }
                _ => {}
            }
            json!({"type": "RollingUpdate", "rollingUpdate": rolling})
        }
        Rollout::Partitioned(unavailable, manual, guard) => {
            let mut rollout = if *manual {
                json!({"maxUnavailable": count(*unavailable), "partitions": [
                    {"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}},
                    {"name": "staging", "maxUnavailable": 1, "clusterSelector": {"matchLabels": {"env": "staging"}}}
                ]})
            } else {
                json!({"maxUnavailable": count(*unavailable), "autoPartitionThreshold": 2, "autoPartitionSize": 2})
            };
            // Two thirds are guarded (`docs/rollout-safety.md`): the guard judges only the clusters
            // reported on since the plan's last pass (checked against judging all in debug builds).
            match guard {
                1 if *manual => rollout["partitions"][1]["maxFailures"] = json!(0),
                1 => rollout["maxFailures"] = json!(1),
                2 => {
                    rollout["progressDeadlineSeconds"] = json!(60);
                    rollout["onFailure"] = json!("Rollback");
                    // Staging clusters in no partition: they never get work and hold the
                    // rollout's completion up.
                    if let Some(partitions) = rollout["partitions"].as_array_mut() {
                        partitions.truncate(1);
                    }
                }
                _ => {}
            }
            json!({"type": "Partitioned", "rolloutStrategy": rollout})
        }
        Rollout::External => json!({"type": "External"}),
        Rollout::ReportDiff(unavailable) => json!({
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": count(*unavailable), "unavailablePeriodSeconds": 0},
            "applyStrategy": {"type": "ReportDiff"}
        }),
    }
}

/// A short snapshot history, so that sequences prune often (snapshots in use must survive).
const HISTORY: u32 = 2;

pub fn crp(name: &str, namespace: &str, policy: &Policy, rollout: &Rollout) -> Value {
    json!({
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": namespace}],
            "policy": policy_json(policy),
            "strategy": strategy_json(rollout),
            "revisionHistoryLimit": HISTORY
        }
    })
}

pub fn rp(name: &str, policy: &Policy, rollout: &Rollout) -> Value {
    json!({
        "apiVersion": PLACEMENT_API,
        "kind": "ResourcePlacement",
        "metadata": {"name": name, "namespace": "app"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "ConfigMap", "version": "v1"}],
            "policy": policy_json(policy),
            "strategy": strategy_json(rollout),
            "revisionHistoryLimit": HISTORY
        }
    })
}

pub fn cro(prod: bool) -> Value {
    json!({
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourceOverride",
        "metadata": {"name": "cro"},
        "spec": {
            "clusterResourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "app"}],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": if prod { "prod" } else { "staging" }}}}]},
                "jsonPatchOverrides": [{"op": "add", "path": "/metadata/labels", "value": {"cluster": "${MEMBER-CLUSTER-NAME}"}}]
            }]}
        }
    })
}

pub fn ro(value: u8) -> Value {
    json!({
        "apiVersion": PLACEMENT_API,
        "kind": "ResourceOverride",
        "metadata": {"name": "ro", "namespace": "app"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "ConfigMap", "version": "v1", "name": "cm-0"}],
            "policy": {"overrideRules": [{
                "clusterSelector": {"clusterSelectorTerms": []},
                "jsonPatchOverrides": [{"op": "add", "path": "/metadata/annotations", "value": {"v": value.to_string()}}]
            }]}
        }
    })
}

fn scoped(kind: &str, namespaced: bool, name: &str) -> Value {
    let (kind, metadata) = if namespaced {
        (kind.to_owned(), json!({"name": name, "namespace": "app"}))
    } else {
        (format!("Cluster{kind}"), json!({"name": name}))
    };
    json!({"apiVersion": PLACEMENT_API, "kind": kind, "metadata": metadata})
}

pub fn strategy(namespaced: bool, gate_before: bool, gate_after: u8, concurrency: u8) -> Value {
    let after = match gate_after {
        0 => json!([]),
        1 => json!([{"type": "Approval"}]),
        2 => json!([{"type": "TimedWait", "waitTime": "60s"}]),
        _ => json!([analysis(2, 1), {"type": "TimedWait", "waitTime": "60s"}]),
    };
    let before = match (gate_before, gate_after >= 3) {
        (true, true) => json!([{"type": "Approval"}, analysis(1, 0)]),
        (true, false) => json!([{"type": "Approval"}]),
        (false, true) => json!([analysis(1, 0)]),
        (false, false) => json!([]),
    };
    let mut manifest = scoped("StagedUpdateStrategy", namespaced, "strategy");
    manifest["spec"] = json!({"stages": [
        {"name": "s0", "labelSelector": {"matchLabels": {"env": "staging"}}, "afterStageTasks": after},
        {"name": "s1", "labelSelector": {"matchLabels": {"env": "prod"}}, "maxConcurrency": count(concurrency),
         "beforeStageTasks": before}
    ]});
    // Half the strategies give the first stage a progress deadline (`docs/rollout-safety.md`),
    // which each pass checks against the stage's latest success, kept beside the stage and rebuilt
    // after a checkpoint.
    if concurrency % 2 == 1 {
        manifest["spec"]["stages"][0]["progressDeadlineSeconds"] = json!(120);
    }
    // A third tolerate one failed cluster in the second stage, and roll back beyond it.
    if concurrency % 3 == 1 {
        manifest["spec"]["stages"][1]["maxFailures"] = json!(1);
        manifest["spec"]["stages"][1]["onFailure"] = json!("Rollback");
    }
    manifest
}

/// An Analysis task (`docs/rollout-safety.md`) taking `count` measurements, tolerating
/// `failure_limit`.
fn analysis(count: u8, failure_limit: u8) -> Value {
    json!({"type": "Analysis", "prometheus": {"address": "http://127.0.0.1:9090",
        "query": "error_ratio", "successCondition": "result < 0.01"},
        "interval": "30s", "count": count, "failureLimit": failure_limit})
}

pub fn run(namespaced: bool, n: u8, state: u8) -> Value {
    let mut manifest = scoped("StagedUpdateRun", namespaced, &format!("run-{n}"));
    let placement = if namespaced { "rp-staged" } else { "crp-0" };
    let state = ["Initialize", "Run", "Stop"][usize::from(state % 3)];
    manifest["spec"] = json!({"placementName": placement, "stagedRolloutStrategyName": "strategy", "state": state});
    manifest
}

pub fn eviction(n: u8, cluster: &str, placement: &str) -> Value {
    json!({
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourcePlacementEviction",
        "metadata": {"name": format!("evict-{n}")},
        "spec": {"placementName": placement, "clusterName": cluster}
    })
}

pub fn budget(placement: &str, min: bool, value: u8) -> Value {
    let field = if min {
        "minAvailable"
    } else {
        "maxUnavailable"
    };
    let value = if value == 3 {
        json!("50%")
    } else {
        json!(value)
    };
    json!({
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourcePlacementDisruptionBudget",
        "metadata": {"name": placement},
        "spec": {field: value}
    })
}

/// Invalid inputs: undecodable, unknown kind, a custom kind named like a fleet kind, an
/// invalid placement, a report from a stranger, an approval nobody asked for.
pub fn invalid(which: u8) -> Input {
    let apply = |manifest: Value| Input::Apply {
        manifest: manifest.to_string(),
    };
    match which {
        0 => Input::Apply {
            manifest: "{\"kind\": 3".into(),
        },
        1 => apply(
            json!({"apiVersion": "example.com/v1", "kind": "MemberCluster", "metadata": {"name": "c0"}, "spec": {}}),
        ),
        2 => apply(json!({
            "apiVersion": PLACEMENT_API, "kind": "ClusterResourcePlacement", "metadata": {"name": "crp-0"},
            "spec": {"resourceSelectors": [], "policy": {"placementType": "PickN"}}
        })),
        3 => Input::WorkReport(WorkReport::available("stranger", "crp-0", 0)),
        4 => Input::Approve {
            name: "nobody-asked".into(),
            namespace: None,
            reason: None,
            message: None,
        },
        5 => Input::Leave {
            cluster: "stranger".into(),
        },
        _ => apply(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}),
        ),
    }
}

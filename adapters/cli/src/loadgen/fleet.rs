//! The simulated fleet's objects, fixed by the seed: member clusters with labels, and per
//! placement a namespace with a ConfigMap and a PickAll `ClusterResourcePlacement` whose
//! strategy is rolling, staged (a two-stage strategy and a run per change) or partitioned.

use serde_json::{Value, json};

use super::seeded::Seeded;

/// How the placements roll out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Strategy {
    /// `RollingUpdate`, maxUnavailable 25%.
    Rolling,
    /// `External`: a `ClusterStagedUpdateStrategy` (canary, then production after an
    /// approval) and a `ClusterStagedUpdateRun` per change.
    Staged,
    /// Rancher Fleet's partitioned rollout, automatic partitions of 25%.
    Partitioned,
}

/// Share of clusters labelled `environment: canary`, in per mille.
const CANARY_PER_MILLE: u64 = 10;
/// Zones the clusters spread over.
const ZONES: u64 = 10;

/// The name of cluster `index`.
#[must_use]
pub fn cluster_name(index: u64) -> String {
    format!("sim-{index:07}")
}

/// The `MemberCluster` of cluster `index`, with seeded labels.
#[must_use]
pub fn member(index: u64, heartbeat_seconds: u64, seeded: &mut Seeded) -> Value {
    let environment = if seeded.below(1_000) < CANARY_PER_MILLE {
        "canary"
    } else {
        "production"
    };
    let zone = format!("zone-{}", seeded.below(ZONES));
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": cluster_name(index),
                     "labels": {"environment": environment, "zone": zone}},
        "spec": {"heartbeatPeriodSeconds": heartbeat_seconds}
    })
}

/// The namespace placement `index` carries.
fn namespace(index: u64) -> String {
    format!("sim-app-{index}")
}

/// The ConfigMap of placement `index` at `version` (a change makes a new resource snapshot).
#[must_use]
pub fn config_map(index: u64, version: u64) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "app", "namespace": namespace(index)},
           "data": {"version": format!("v{version}")}})
}

/// The name of placement `index`.
#[must_use]
pub fn placement_name(index: u64) -> String {
    format!("sim-{index}")
}

/// Everything placement `index` needs before its first rollout: its namespace, ConfigMap,
/// strategy objects and the placement itself.
#[must_use]
pub fn placement_objects(index: u64, strategy: Strategy) -> Vec<Value> {
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": namespace(index)}}),
        config_map(index, 1),
    ];
    let rollout = match strategy {
        Strategy::Rolling => {
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}})
        }
        Strategy::Staged => {
            objects.push(staged_strategy(index));
            json!({"type": "External"})
        }
        Strategy::Partitioned => json!({"type": "Partitioned",
            "rolloutStrategy": {"maxUnavailable": "25%", "autoPartitionSize": "25%"}}),
    };
    objects.push(json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": placement_name(index)},
        "spec": {
            "policy": {"placementType": "PickAll"},
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace",
                                   "name": namespace(index)}],
            "strategy": rollout
        }
    }));
    objects
}

/// Canary first, 10% of it at a time, then production after an approval, 25% of it at a
/// time. The canary's concurrency is set: KubeFleet's default of one cluster at a time would
/// hold a large fleet's run in its canary stage for hours (10,000 canaries at a million
/// clusters), and the run would never reach production within a measurement.
fn staged_strategy(index: u64) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": placement_name(index)},
        "spec": {"stages": [
            {"name": "canary", "labelSelector": {"matchLabels": {"environment": "canary"}},
             "maxConcurrency": "10%", "afterStageTasks": [{"type": "Approval"}]},
            {"name": "production",
             "labelSelector": {"matchLabels": {"environment": "production"}},
             "maxConcurrency": "25%"}
        ]}
    })
}

/// The staged update run that rolls placement `index`'s resource snapshot `snapshot` out.
#[must_use]
pub fn update_run(index: u64, snapshot: u64) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": format!("{}-run-{snapshot}", placement_name(index))},
        "spec": {"placementName": placement_name(index),
                 "resourceSnapshotIndex": snapshot.to_string(),
                 "stagedRolloutStrategyName": placement_name(index), "state": "Run"}
    })
}

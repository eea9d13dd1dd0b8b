//! The Bundle-shaped status of a `Partitioned` placement (Rancher Fleet's `BundleStatus`), shown
//! beside KubeFleet's: `summary` (a count per state, `desiredReady`, the first 10
//! `nonReadyResources`), `partitions[]` (`name`, `count`, `maxUnavailable`, `unavailable`,
//! `summary`), `maxUnavailable`, `maxUnavailablePartitions`, `unavailablePartitions`, and
//! `display` (`readyClusters` as `<ready>/<desiredReady>`, `state`: the worst non-ready state,
//! `message`: why the rollout waits, e.g. `partition stable: 5 of 40 clusters NotReady,
//! maxUnavailable 4`). States are the deployment view (see
//! `flotilla_core::query::rollout::partitioned::status`).

use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::placement::Placement;
use flotilla_core::query::rollout::partitioned::status::{self, ClusterState, Summary};
use flotilla_core::query::rollout::partitioned::{self, Plan};
use serde_json::Value;

use crate::json;

/// States in the order Fleet's `BundleSummary` declares its counters, with their JSON names.
const COUNTERS: [(ClusterState, &str); 7] = [
    (ClusterState::NotReady, "notReady"),
    (ClusterState::WaitApplied, "waitApplied"),
    (ClusterState::ErrApplied, "errApplied"),
    (ClusterState::OutOfSync, "outOfSync"),
    (ClusterState::Modified, "modified"),
    (ClusterState::Ready, "ready"),
    (ClusterState::Pending, "pending"),
];

/// Adds the Bundle-shaped fields to a partitioned placement's `status`.
pub(crate) fn insert(state: &State, key: &ObjectKey, placement: &Placement, status: &mut Value) {
    // The plan the last pass left, which carries its pause reason; a fresh one when the last
    // pass kept none (no resource snapshot yet, or inputs changed without a pass).
    let kept = state
        .partitioned_rollouts()
        .get(key)
        .filter(|plan| plan.dirty.is_empty())
        .cloned();
    let Some(plan) = kept.or_else(|| {
        state
            .now()
            .and_then(|now| partitioned::fresh_plan(state, key, now))
    }) else {
        return;
    };
    let (whole, per_partition) = status::summarize(placement, &plan);
    json::insert(status, "summary", summary(&whole));
    let partitions = plan
        .partitions
        .iter()
        .zip(&plan.tallies)
        .zip(&per_partition)
        .map(|((partition, tally), summary_of)| {
            json::object([
                ("name", Value::from(partition.name.as_str())),
                ("count", Value::from(partition.count)),
                ("maxUnavailable", Value::from(partition.max_unavailable)),
                ("unavailable", Value::from(tally.unavailable())),
                ("summary", summary(summary_of)),
            ])
        })
        .collect();
    json::insert(status, "partitions", Value::Array(partitions));
    json::insert(status, "maxUnavailable", Value::from(plan.max_unavailable));
    json::insert(
        status,
        "maxUnavailablePartitions",
        Value::from(plan.max_unavailable_partitions),
    );
    json::insert(
        status,
        "unavailablePartitions",
        Value::from(plan.outcome.unavailable_partitions),
    );
    json::insert(status, "display", display(&plan, &whole));
}

fn summary(summary: &Summary) -> Value {
    let mut value = json::empty_object();
    for (state, name) in COUNTERS {
        json::insert(&mut value, name, Value::from(summary.count(state)));
    }
    json::insert(
        &mut value,
        "desiredReady",
        Value::from(summary.desired_ready),
    );
    if !summary.non_ready.is_empty() {
        let entries = summary
            .non_ready
            .iter()
            .map(|entry| {
                let mut value = json::object([
                    ("name", Value::from(entry.cluster.as_str())),
                    ("bundleState", Value::from(entry.state.as_str())),
                ]);
                if !entry.message.is_empty() {
                    json::insert(&mut value, "message", Value::from(entry.message.as_str()));
                }
                value
            })
            .collect();
        json::insert(&mut value, "nonReadyResources", Value::Array(entries));
    }
    value
}

fn display(plan: &Plan, whole: &Summary) -> Value {
    let mut value = json::object([(
        "readyClusters",
        Value::from(format!(
            "{}/{}",
            whole.count(ClusterState::Ready),
            whole.desired_ready
        )),
    )]);
    if let Some(worst) = whole.worst() {
        json::insert(&mut value, "state", Value::from(worst.as_str()));
    }
    if let Some(reason) = &plan.outcome.paused {
        json::insert(&mut value, "message", Value::from(reason.as_str()));
    }
    value
}

//! What the staged-run tests share: a fleet with an External PickAll placement, a strategy
//! and a run of KubeFleet's shapes, and readers of the run's status.

use flotilla_core::decision::Decision;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_core::{Input, WorkReport};
use serde_json::{Value, json};

use crate::common::{Hub, namespace};

pub(crate) fn strategy(stages: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "strategy"},
        "spec": {"stages": stages}
    })
}

pub(crate) fn run(name: &str, state: &str) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": name},
        "spec": {"placementName": "crp", "stagedRolloutStrategyName": "strategy", "state": state}
    })
}

pub(crate) fn external_crp() -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
            "policy": {"placementType": "PickAll"},
            "strategy": {"type": "External"}
        }
    })
}

/// A hub with `clusters` (name, env label, optional order label) joined and an External PickAll
/// placement scheduled on all of them.
pub(crate) fn fleet(clusters: &[(&str, &str)]) -> Hub {
    let mut hub = Hub::new();
    for (name, env) in clusters {
        hub.join(
            name,
            json!({"env": env, "order": name.trim_start_matches(|c: char| !c.is_ascii_digit())}),
            json!([]),
        );
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&external_crp());
    hub
}

pub(crate) fn rejection(decisions: &[Decision]) -> String {
    decisions
        .iter()
        .find_map(|d| match d {
            Decision::Rejected { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

pub(crate) fn the_run<'a>(hub: &'a Hub, name: &str) -> &'a UpdateRun {
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        name,
    );
    &hub.state.update_runs()[&key]
}

pub(crate) fn report(hub: &mut Hub, cluster: &str) -> Vec<Decision> {
    hub.send(Input::WorkReport(WorkReport::available(cluster, "crp", 0)))
}

/// An approval of request `name`, with the approver's reason and message if given.
pub(crate) fn approve(
    name: &str,
    namespace: Option<&str>,
    reason: Option<&str>,
    message: Option<&str>,
) -> Input {
    Input::Approve {
        name: name.into(),
        namespace: namespace.map(Into::into),
        reason: reason.map(Into::into),
        message: message.map(Into::into),
    }
}

/// Clusters of stage `stage` started and not finished.
pub(crate) fn updating(hub: &Hub, name: &str, stage: usize) -> Vec<String> {
    the_run(hub, name).status.stages[stage]
        .clusters
        .iter()
        .filter(|c| c.is_updating())
        .map(|c| c.cluster.to_string())
        .collect()
}

pub(crate) fn init_message(hub: &Hub, name: &str) -> String {
    the_run(hub, name)
        .status
        .initialized
        .as_ref()
        .map(|c| format!("{} {}", c.reason, c.message))
        .unwrap_or_default()
}

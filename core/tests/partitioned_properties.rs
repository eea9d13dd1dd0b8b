//! Partitioned-rollout invariants over random fleets, knobs, reports and resource changes:
//! no pass stages more than maxNew deployments (Fleet's per-pass limit), a pass that stopped
//! at maxNew with work left asks for a tick at its own event time (delivered here at once, as
//! the runtime does), no partition starts (gets its first work) while more of the partitions
//! before it are NotReady than `maxUnavailablePartitions` allows, and the plan kept step by
//! step always equals one built from scratch.

mod common;

use chrono::Duration;
use common::{Hub, member, namespace};
use flotilla_core::decision::Decision;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::placement::BindingState;
use flotilla_core::query::rollout::partitioned::{self, Plan};
use flotilla_core::{Input, WorkReport, next_deadline};
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Op {
    ChangeResources(u8),
    /// Reports on every owed work: cluster `i` is available unless `i % sick == 0`.
    Settle {
        sick: usize,
    },
    Report {
        cluster: usize,
        available: bool,
    },
    Advance,
}

fn op(size: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..20u8).prop_map(Op::ChangeResources),
        (2..12usize).prop_map(|sick| Op::Settle { sick }),
        (0..size, prop::bool::weighted(0.7))
            .prop_map(|(cluster, available)| Op::Report { cluster, available }),
        Just(Op::Advance),
    ]
}

fn knob() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0..6i64).prop_map(Value::from),
        (0..=100u32).prop_map(|p| Value::from(format!("{p}%"))),
    ]
}

fn rollout() -> impl Strategy<Value = Value> {
    (knob(), 0..3i64, (1..60u32), any::<bool>(), 40..260i64, prop::option::of(1..60i64)).prop_map(
        |(max_unavailable, partitions, size, manual, threshold, max_new)| {
            let mut block = json!({"maxUnavailable": max_unavailable,
                "maxUnavailablePartitions": partitions,
                "autoPartitionSize": format!("{size}%"),
                "autoPartitionThreshold": threshold});
            if let Some(max_new) = max_new {
                block["maxNew"] = json!(max_new);
            }
            if manual {
                block["partitions"] = json!([
                    {"name": "a", "clusterSelector": {"matchLabels": {"ring": "a"}}},
                    {"name": "b", "maxUnavailable": 1, "clusterSelector": {"matchLabels": {"ring": "b"}}},
                    {"name": "c", "clusterSelector": {"matchLabels": {"ring": "c"}}}]);
            }
            block
        },
    )
}

fn config(version: u8) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "test-ns"}, "data": {"version": version.to_string()}})
}

fn name(i: usize) -> String {
    format!("c{i}")
}

fn owed(hub: &Hub) -> Vec<(String, u64)> {
    hub.placement("crp")
        .bindings
        .values()
        .filter(|b| b.state == BindingState::Bound)
        .filter(|b| b.report.as_ref().map(|r| r.resource_index) != b.resource_index)
        .filter_map(|b| b.resource_index.map(|i| (b.cluster.to_string(), i)))
        .collect()
}

/// Most immediate ticks after one input: a pass staging at least one deployment each, so far
/// more than any fleet here needs.
const IMMEDIATE_TICKS_MAX: usize = 1_000;

/// Deployments one pass staged: the `RolloutStarted` decisions of one input.
fn staged(decisions: &[Decision]) -> u64 {
    decisions
        .iter()
        .filter(|d| matches!(d, Decision::RolloutStarted { .. }))
        .count() as u64
}

/// Folds one input, then the ticks the core asks for at the same event time, as the runtime
/// delivers them; checks that no pass staged more than maxNew and that a pass asking for a
/// tick had staged exactly maxNew.
fn send(hub: &mut Hub, key: &ObjectKey, input: Input) -> Result<(), TestCaseError> {
    let mut decisions = hub.send(input);
    for _ in 0..IMMEDIATE_TICKS_MAX {
        let max_new = hub
            .state
            .partitioned_rollouts()
            .get(key)
            .map_or(u64::MAX, |plan| plan.max_new);
        let count = staged(&decisions);
        prop_assert!(
            count <= max_new,
            "one pass staged {count}, maxNew {max_new}"
        );
        if next_deadline(&hub.state).is_none_or(|d| d > hub.now) {
            return Ok(());
        }
        prop_assert_eq!(
            count,
            max_new,
            "a tick asked for by a pass that was not at maxNew"
        );
        decisions = hub.send(Input::Tick);
    }
    Err(TestCaseError::fail("immediate ticks never stopped"))
}

fn report(
    hub: &mut Hub,
    key: &ObjectKey,
    cluster: String,
    resource_index: u64,
    available: bool,
) -> Result<(), TestCaseError> {
    send(
        hub,
        key,
        Input::WorkReport(WorkReport {
            cluster,
            placement: "crp".into(),
            namespace: None,
            resource_index,
            applied: Some(true),
            available: Some(available),
            trackable: true,
            message: String::new(),
            failed_manifests: Vec::new(),
            differences: Default::default(),
        }),
    )
}

/// Which partitions have any member with work.
fn started(plan: &Plan) -> Vec<bool> {
    let mut started = vec![false; plan.partitions.len()];
    for target in plan.targets.values().filter(|t| t.class.bound) {
        for index in &target.partitions {
            started[*index as usize] = true;
        }
    }
    started
}

fn check(hub: &Hub, key: &ObjectKey, before: &[bool]) -> Result<Vec<bool>, TestCaseError> {
    let Some(kept) = hub.state.partitioned_rollouts().get(key) else {
        return Ok(before.to_vec());
    };
    let unevaluated = hub
        .placement("crp")
        .bindings
        .values()
        .filter(|b| b.state == BindingState::Bound)
        .filter(|b| b.report.as_ref().map(|r| r.resource_index) != b.resource_index)
        .count() as u64;
    prop_assert_eq!(kept.unevaluated, unevaluated);
    let mut fresh = partitioned::fresh_plan(&hub.state, key, hub.now).expect("a plan");
    fresh.outcome = kept.outcome.clone();
    prop_assert_eq!(&fresh, kept, "incremental plan = fresh plan");
    let now = started(kept);
    if now.len() == before.len() {
        for (index, (&was, &is)) in before.iter().zip(&now).enumerate() {
            if is && !was {
                let not_ready = kept.partitions[..index]
                    .iter()
                    .zip(&kept.tallies)
                    .filter(|(p, t)| t.unavailable() > p.max_unavailable)
                    .count() as u64;
                prop_assert!(
                    not_ready <= kept.max_unavailable_partitions,
                    "partition {index} started with {not_ready} NotReady before it"
                );
            }
        }
    }
    Ok(now)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_pass_stages_more_than_max_new_and_no_partition_starts_over_the_limit(
        size in 1..140usize,
        block in rollout(),
        ops in prop::collection::vec(op(140), 1..25),
    ) {
        let mut hub = Hub::new();
        hub.apply(&namespace("test-ns"));
        hub.apply(&config(0));
        for i in 0..size {
            let ring = ["a", "b", "c", "none"][i % 4];
            hub.apply(&member(&name(i), json!({"ring": ring}), json!([])));
            hub.beat(&name(i));
        }
        let crp = json!({"apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement", "metadata": {"name": "crp"},
            "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                     "strategy": {"type": "Partitioned", "rolloutStrategy": block}}});
        let key = ObjectKey::cluster_scoped(
            "placement.kubernetes-fleet.io", "ClusterResourcePlacement", "crp");
        send(&mut hub, &key, Input::Apply { manifest: crp.to_string() })?;
        prop_assert!(hub.state.placements().contains_key(&key));
        let mut before = check(&hub, &key, &[])?;
        for op in ops {
            match op {
                Op::ChangeResources(version) => {
                    send(&mut hub, &key, Input::Apply { manifest: config(version).to_string() })?;
                }
                Op::Settle { sick } => {
                    for (cluster, index) in owed(&hub) {
                        let i: usize = cluster[1..].parse().unwrap_or(0);
                        report(&mut hub, &key, cluster, index, !i.is_multiple_of(sick))?;
                        before = check(&hub, &key, &before)?;
                    }
                }
                Op::Report { cluster, available } => {
                    let cluster = name(cluster % size);
                    let index = hub.placement("crp").bindings.get(cluster.as_str()).and_then(|b| b.resource_index);
                    if let Some(index) = index {
                        report(&mut hub, &key, cluster, index, available)?;
                    }
                }
                Op::Advance => {
                    hub.now += Duration::seconds(30);
                    send(&mut hub, &key, Input::Tick)?;
                }
            }
            before = check(&hub, &key, &before)?;
        }
    }
}

//! Every kind of input the hub accepts, as proptest strategies over a small fixed universe: four
//! member clusters, two namespaces with ConfigMaps, two ClusterResourcePlacements and one
//! ResourcePlacement (every policy and strategy type), overrides of both scopes, staged
//! strategies (with Analysis gates), runs, approvals and analysis results of both scopes,
//! evictions and budgets, work reports (current, stale and future indexes; with diffs, drifts,
//! ReportDiff outcomes and failure reasons), heartbeats with and without properties, ticks,
//! deletes of every kind, agents confirming they left, and invalid inputs.

#![allow(dead_code)]

pub mod manifests;

use flotilla_core::event::ResourceUsage;
use flotilla_core::{
    Differences, Heartbeat, Input, ManifestCondition, ManifestDifference, ManifestFailure,
    ObjectRef, PatchDetail, State, WorkReport,
};
use proptest::prelude::*;

pub use manifests::{Policy, Rollout};

/// Member cluster names.
pub const CLUSTERS: [&str; 4] = ["c0", "c1", "c2", "c3"];
/// Hub namespaces.
pub const NAMESPACES: [&str; 2] = ["app", "web"];
/// ClusterResourcePlacement names; the ResourcePlacement is `rp` in `app`.
pub const CRPS: [&str; 2] = ["crp-0", "crp-1"];

/// One generated input, resolved against the state when it is folded (reports name the
/// binding's current index plus a shift).
#[derive(Debug, Clone)]
pub enum Op {
    /// Apply (create or change) a member cluster.
    Member {
        cluster: usize,
        period: u32,
        prod: bool,
        tainted: bool,
    },
    /// A heartbeat, with node-count and resource usage when `properties` is set.
    Beat {
        cluster: usize,
        properties: Option<u8>,
    },
    /// Event time moves on by this many seconds and a tick is folded.
    Advance(i64),
    /// Apply a namespace.
    Namespace(usize),
    /// Apply a ConfigMap in a namespace.
    ConfigMap {
        namespace: usize,
        name: usize,
        value: u8,
    },
    /// Apply a ClusterResourcePlacement selecting a namespace.
    Crp {
        name: usize,
        namespace: usize,
        policy: Policy,
        rollout: Rollout,
    },
    /// Apply the ResourcePlacement `app/rp` selecting ConfigMaps.
    Rp {
        staged: bool,
        policy: Policy,
        rollout: Rollout,
    },
    /// Apply the ClusterResourceOverride (prod or staging clusters).
    Cro { prod: bool },
    /// Apply the ResourceOverride in `app`.
    Ro { value: u8 },
    /// Apply a staged strategy of either scope.
    Strategy {
        namespaced: bool,
        gate_before: bool,
        gate_after: u8,
        concurrency: u8,
    },
    /// Apply a staged run of either scope in state Initialize, Run or Stop.
    Run { namespaced: bool, n: u8, state: u8 },
    /// Approve a pending approval request (picked among those the state holds), or a run's
    /// before-`s1` / after-`s0` request by name when none is pending.
    Approve {
        pick: u8,
        namespaced: bool,
        after: bool,
    },
    /// One measurement of an Analysis task measuring now (picked among them), or of run
    /// `run-<pick % 4>`'s stage `s0` when none is; `value` 0 good, 1 bad, 2 an error, 3 `NaN`.
    Analysis { pick: u8, value: u8 },
    /// Apply an eviction.
    Evict {
        n: u8,
        cluster: usize,
        placement: usize,
    },
    /// Apply a disruption budget (`minAvailable` or `maxUnavailable`).
    Budget {
        placement: usize,
        min: bool,
        value: u8,
    },
    /// A work report about one binding (picked among those carrying work), on its index
    /// shifted by `shift`; from `c<pick % 4>` to `crp-0` when no binding carries work.
    Report {
        pick: u8,
        shift: i8,
        applied: Option<bool>,
        available: Option<bool>,
        trackable: bool,
        /// Which differences it carries (see [`differences`]).
        differences: u8,
    },
    /// A member's agent confirms it left (refused unless the member is leaving).
    Leave(usize),
    /// Delete one object of some kind.
    Delete { kind: usize, n: usize },
    /// An invalid input of some kind.
    Invalid(u8),
}

fn member_op() -> impl Strategy<Value = Op> {
    (
        0..4usize,
        prop_oneof![Just(60u32), 1..120u32],
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(cluster, period, prod, tainted)| Op::Member {
            cluster,
            period,
            prod,
            tainted,
        })
}

fn placement_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..2usize, 0..2usize, manifests::policy(), manifests::rollout())
            .prop_map(|(name, namespace, policy, rollout)| Op::Crp { name, namespace, policy, rollout }),
        1 => (any::<bool>(), manifests::policy(), manifests::rollout())
            .prop_map(|(staged, policy, rollout)| Op::Rp { staged, policy, rollout }),
    ]
}

fn staged_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (any::<bool>(), any::<bool>(), 0..4u8, 0..3u8).prop_map(
            |(namespaced, gate_before, gate_after, concurrency)| {
                Op::Strategy {
                    namespaced,
                    gate_before,
                    gate_after,
                    concurrency,
                }
            }
        ),
        2 => (any::<bool>(), 0..4u8, prop_oneof![1 => Just(0u8), 4 => Just(1u8), 1 => Just(2u8)])
            .prop_map(|(namespaced, n, state)| Op::Run { namespaced, n, state }),
        2 => (any::<u8>(), any::<bool>(), any::<bool>())
            .prop_map(|(pick, namespaced, after)| Op::Approve { pick, namespaced, after }),
        2 => (any::<u8>(), 0..4u8).prop_map(|(pick, value)| Op::Analysis { pick, value }),
    ]
}

fn report_op() -> impl Strategy<Value = Op> {
    (
        any::<u8>(),
        prop_oneof![6 => Just(0i8), 1 => Just(-1i8), 1 => Just(1i8)],
        prop_oneof![4 => Just(Some(true)), 1 => Just(Some(false)), 1 => Just(None)],
        prop_oneof![4 => Just(Some(true)), 1 => Just(Some(false)), 1 => Just(None)],
        prop::bool::weighted(0.8),
        prop_oneof![3 => Just(0u8), 2 => 1..6u8],
    )
        .prop_map(
            |(pick, shift, applied, available, trackable, differences)| Op::Report {
                pick,
                shift,
                applied,
                available,
                trackable,
                differences,
            },
        )
}

/// Any input, weighted so that fleets form and roll out within a short sequence.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => member_op(),
        5 => (0..4usize, prop::option::weighted(0.3, 0..4u8)).prop_map(|(cluster, properties)| Op::Beat { cluster, properties }),
        3 => prop_oneof![Just(0i64), 1..900i64].prop_map(Op::Advance),
        2 => (0..2usize).prop_map(Op::Namespace),
        3 => (0..2usize, 0..2usize, 0..3u8).prop_map(|(namespace, name, value)| Op::ConfigMap { namespace, name, value }),
        4 => placement_op(),
        1 => any::<bool>().prop_map(|prod| Op::Cro { prod }),
        1 => (0..3u8).prop_map(|value| Op::Ro { value }),
        4 => staged_op(),
        1 => (0..3u8, 0..4usize, 0..3usize).prop_map(|(n, cluster, placement)| Op::Evict { n, cluster, placement }),
        1 => (0..3usize, any::<bool>(), 0..4u8).prop_map(|(placement, min, value)| Op::Budget { placement, min, value }),
        8 => report_op(),
        2 => (0..manifests::DELETABLE.len(), 0..4usize).prop_map(|(kind, n)| Op::Delete { kind, n }),
        1 => (0..4usize).prop_map(Op::Leave),
        1 => (0..7u8).prop_map(Op::Invalid),
    ]
}

fn heartbeat(cluster: &str, properties: Option<u8>) -> Input {
    let Some(size) = properties else {
        return Input::Heartbeat(Heartbeat {
            cluster: cluster.into(),
            ..Heartbeat::default()
        });
    };
    let quantities = |n: u8| {
        [
            ("cpu".to_owned(), format!("{}", n * 4 + 4)),
            ("memory".to_owned(), format!("{}Gi", n * 8 + 8)),
        ]
        .into_iter()
        .collect()
    };
    Input::Heartbeat(Heartbeat {
        cluster: cluster.into(),
        properties: [(
            "kubernetes-fleet.io/node-count".to_owned(),
            (size + 1).to_string(),
        )]
        .into_iter()
        .collect(),
        resource_usage: Some(ResourceUsage {
            capacity: quantities(size + 1),
            allocatable: quantities(size),
            available: quantities(size / 2),
        }),
    })
}

/// The placement a report or eviction names: `crp-0`, `crp-1` or `app/rp`.
fn placement_ref(placement: usize) -> (String, Option<String>) {
    match placement {
        0 | 1 => (CRPS[placement].to_owned(), None),
        _ => ("rp".to_owned(), Some("app".to_owned())),
    }
}

fn report(state: &State, op: &Op) -> Input {
    let Op::Report {
        pick,
        shift,
        applied,
        available,
        trackable,
        differences: which,
    } = op
    else {
        return Input::Tick;
    };
    let carrying: Vec<(String, Option<String>, String, u64)> = state
        .placements()
        .iter()
        .flat_map(|(key, p)| {
            p.bindings.values().filter_map(move |b| {
                let namespace = (!key.namespace.is_empty()).then(|| key.namespace.to_string());
                b.resource_index
                    .map(|i| (key.name.to_string(), namespace, b.cluster.to_string(), i))
            })
        })
        .collect();
    let (placement, namespace, cluster, current) = match carrying.len() {
        0 => (
            CRPS[0].to_owned(),
            None,
            CLUSTERS[usize::from(*pick) % 4].to_owned(),
            0,
        ),
        n => carrying[usize::from(*pick) % n].clone(),
    };
    Input::WorkReport(WorkReport {
        cluster,
        placement,
        namespace,
        resource_index: current.saturating_add_signed(i64::from(*shift)),
        applied: *applied,
        available: *available,
        trackable: *trackable,
        message: if *applied == Some(false) {
            "apply failed".into()
        } else {
            String::new()
        },
        failed_manifests: if *which == 2 {
            vec![ManifestFailure {
                group: String::new(),
                version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "app".into(),
                name: "cm-0".into(),
                condition: ManifestCondition::Applied,
                message: "cannot compute the diff".into(),
                reason: Some("FailedToTakeOver".into()),
            }]
        } else {
            Vec::new()
        },
        differences: differences(*which),
    })
}

/// The differences of a generated report: 0 none; 1 a completed diff report with a diffed
/// manifest; 2 an incomplete one; 3 a drift; 4 a takeover diff; 5 a completed diff report
/// that found nothing.
fn differences(which: u8) -> Differences {
    let manifest = |details: usize| ManifestDifference {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: "app".into(),
        name: "cm-0".into(),
        observed_generation: (details > 1).then_some(2),
        details: (0..details)
            .map(|i| PatchDetail {
                path: format!("/data/key-{i}"),
                value_in_member: Some(i.to_string()),
                value_in_hub: (i % 2 == 0).then(|| "0".to_owned()),
            })
            .collect(),
    };
    match which {
        1 => Differences {
            diff_reported: Some(true),
            diffed_manifests: vec![manifest(2)],
            ..Differences::default()
        },
        2 => Differences {
            diff_reported: Some(false),
            ..Differences::default()
        },
        3 => Differences {
            drifted_manifests: vec![manifest(3)],
            ..Differences::default()
        },
        4 => Differences {
            diffed_manifests: vec![manifest(1)],
            ..Differences::default()
        },
        5 => Differences {
            diff_reported: Some(true),
            ..Differences::default()
        },
        _ => Differences::default(),
    }
}

fn approve(state: &State, pick: u8, namespaced: bool, after: bool) -> Input {
    let pending: Vec<_> = state
        .approvals()
        .iter()
        .filter(|(_, a)| a.approved.is_none())
        .collect();
    if pending.is_empty() {
        let n = pick % 4;
        return Input::Approve {
            name: if after {
                format!("run-{n}-after-s0")
            } else {
                format!("run-{n}-before-s1")
            },
            namespace: namespaced.then(|| "app".to_owned()),
            reason: None,
            message: None,
        };
    }
    let (key, _) = pending[usize::from(pick) % pending.len()];
    Input::Approve {
        name: key.name.to_string(),
        namespace: (!key.namespace.is_empty()).then(|| key.namespace.to_string()),
        reason: None,
        message: None,
    }
}

/// A measurement for an Analysis task measuring now, or for one that is not (refused).
fn analysis_result(state: &State, pick: u8, value: u8) -> Input {
    let measuring = flotilla_core::query::staged::analysis::measure::measuring(state);
    let (run, namespace, stage, task) =
        match measuring.get(usize::from(pick) % measuring.len().max(1)) {
            Some(m) => (
                m.run.name.to_string(),
                (!m.run.namespace.is_empty()).then(|| m.run.namespace.to_string()),
                m.stage.clone(),
                m.at.path(),
            ),
            None => (
                format!("run-{}", pick % 4),
                None,
                "s0".to_owned(),
                String::new(),
            ),
        };
    let (value, error) = match value {
        0 => (Some("0.001".to_owned()), None),
        1 => (Some("0.5".to_owned()), None),
        2 => (None, Some("the query returned no sample".to_owned())),
        _ => (Some("NaN".to_owned()), None),
    };
    Input::AnalysisResult(flotilla_core::AnalysisResult {
        run,
        namespace,
        stage,
        task,
        value,
        error,
    })
}

/// What every sequence starts from: four joined clusters (two staging, two prod), both
/// namespaces with a ConfigMap each, staged strategies of both scopes, External placements
/// `crp-0` and `app/rp`, and a run for each.
pub fn prelude() -> Vec<Op> {
    let mut ops = Vec::new();
    for cluster in 0..4 {
        ops.push(Op::Member {
            cluster,
            period: 60,
            prod: cluster % 2 == 1,
            tainted: false,
        });
        ops.push(Op::Beat {
            cluster,
            properties: Some(u8::try_from(cluster).unwrap_or(0)),
        });
    }
    for namespace in 0..2 {
        ops.push(Op::Namespace(namespace));
        ops.push(Op::ConfigMap {
            namespace,
            name: 0,
            value: 0,
        });
    }
    // The namespaced strategy's gates are Analysis tasks (with an Approval and a TimedWait).
    for (namespaced, gate_after) in [(false, 1), (true, 3)] {
        ops.push(Op::Strategy {
            namespaced,
            gate_before: true,
            gate_after,
            concurrency: 1,
        });
    }
    ops.push(Op::Crp {
        name: 0,
        namespace: 0,
        policy: Policy::PickAll,
        rollout: Rollout::External,
    });
    ops.push(Op::Rp {
        staged: true,
        policy: Policy::PickAll,
        rollout: Rollout::External,
    });
    for namespaced in [false, true] {
        ops.push(Op::Run {
            namespaced,
            n: 0,
            state: 1,
        });
    }
    ops
}

/// Resolves one op against the state it is folded into; returns the input and how far event
/// time moves before it.
pub fn input(state: &State, op: &Op) -> (Input, i64) {
    let apply = |manifest: serde_json::Value| Input::Apply {
        manifest: manifest.to_string(),
    };
    let input = match op {
        Op::Member {
            cluster,
            period,
            prod,
            tainted,
        } => apply(manifests::member(
            CLUSTERS[*cluster],
            *period,
            *prod,
            *tainted,
        )),
        Op::Beat {
            cluster,
            properties,
        } => heartbeat(CLUSTERS[*cluster], *properties),
        Op::Advance(secs) => return (Input::Tick, *secs),
        Op::Namespace(n) => apply(manifests::namespace(NAMESPACES[*n])),
        Op::ConfigMap {
            namespace,
            name,
            value,
        } => apply(manifests::configmap(NAMESPACES[*namespace], *name, *value)),
        Op::Crp {
            name,
            namespace,
            policy,
            rollout,
        } => apply(manifests::crp(
            CRPS[*name],
            NAMESPACES[*namespace],
            policy,
            // `crp-0` is the runs' placement: External, except that a partitioned apply
            // switches it away under its runs (which must then fail, not go on rebinding).
            match rollout {
                Rollout::Partitioned(..) => rollout,
                _ if *name == 0 => &Rollout::External,
                _ => rollout,
            },
        )),
        // `app/rp-staged` is always External (its runs' placement).
        Op::Rp {
            staged: true,
            policy,
            ..
        } => apply(manifests::rp("rp-staged", policy, &Rollout::External)),
        Op::Rp {
            policy, rollout, ..
        } => apply(manifests::rp("rp", policy, rollout)),
        Op::Cro { prod } => apply(manifests::cro(*prod)),
        Op::Ro { value } => apply(manifests::ro(*value)),
        Op::Strategy {
            namespaced,
            gate_before,
            gate_after,
            concurrency,
        } => apply(manifests::strategy(
            *namespaced,
            *gate_before,
            *gate_after,
            *concurrency,
        )),
        Op::Run {
            namespaced,
            n,
            state,
        } => apply(manifests::run(*namespaced, *n, *state)),
        Op::Approve {
            pick,
            namespaced,
            after,
        } => approve(state, *pick, *namespaced, *after),
        Op::Analysis { pick, value } => analysis_result(state, *pick, *value),
        Op::Evict {
            n,
            cluster,
            placement,
        } => apply(manifests::eviction(
            *n,
            CLUSTERS[*cluster],
            &placement_ref(*placement).0,
        )),
        Op::Budget {
            placement,
            min,
            value,
        } => apply(manifests::budget(
            &placement_ref(*placement).0,
            *min,
            *value,
        )),
        Op::Report { .. } => report(state, op),
        Op::Leave(cluster) => Input::Leave {
            cluster: CLUSTERS[*cluster].to_owned(),
        },
        Op::Delete { kind, n } => Input::Delete {
            target: delete_target(*kind, *n),
        },
        Op::Invalid(which) => manifests::invalid(*which),
    };
    (input, 0)
}

fn delete_target(kind: usize, n: usize) -> ObjectRef {
    let (kind, namespace, name) = manifests::DELETABLE[kind];
    let name = match name {
        "" => CLUSTERS[n].to_owned(),
        "#" => NAMESPACES[n % 2].to_owned(),
        "cm" => format!("cm-{}", n % 2),
        "crp" => CRPS[n % 2].to_owned(),
        "run" => format!("run-{n}"),
        "evict" => format!("evict-{}", n % 3),
        "budget" => placement_ref(n % 3).0,
        other => other.to_owned(),
    };
    let namespace = match (namespace, n) {
        ("?", n) => Some(NAMESPACES[n % 2].to_owned()),
        ("", _) => None,
        (ns, _) => Some(ns.to_owned()),
    };
    ObjectRef {
        kind: kind.into(),
        group: None,
        namespace,
        name,
    }
}

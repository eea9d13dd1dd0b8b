//! Proves the fold is deterministic: the same random event sequence folded twice gives the
//! same state hash and the same decisions, and so does folding it with a checkpoint (encode,
//! decode) taken at any point. Also checks the member-health invariants after every step.
//! Evictions and disruption budgets are among the random events.

use chrono::{DateTime, Duration, TimeZone, Utc};
use flotilla_core::codec::{decode_checkpoint, encode_checkpoint};
use flotilla_core::{Envelope, Heartbeat, Input, ObjectRef, State, WorkReport, step};
use proptest::prelude::*;
use uuid::Uuid;

const CLUSTERS: [&str; 4] = ["member1", "member2", "member3", "member4"];

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default()
}

fn member(name: &str, period: u32, env: &str) -> String {
    format!(
        r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}","labels":{{"environment":"{env}"}}}},"spec":{{"heartbeatPeriodSeconds":{period}}}}}"#
    )
}

const PLACEMENT: &str = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{"name":"crp-1"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","name":"test","version":"v1"}]}}"#;

/// An eviction named by `n` (so a later one may repeat or conflict with an earlier one).
fn eviction(n: u8, cluster: &str) -> String {
    format!(
        r#"{{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourcePlacementEviction","metadata":{{"name":"evict-{n}"}},"spec":{{"placementName":"crp-1","clusterName":"{cluster}"}}}}"#
    )
}

#[derive(Debug, Clone)]
enum Op {
    Join(usize, u32, bool),
    Beat(usize),
    Leave(usize),
    Report(usize, bool),
    Placement,
    Advance(i64),
    Garbage,
    Evict(usize, u8),
    Budget(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..4usize, 1..120u32, any::<bool>()).prop_map(|(c, p, e)| Op::Join(c, p, e)),
        (0..4usize).prop_map(Op::Beat),
        (0..4usize).prop_map(Op::Beat),
        (0..4usize).prop_map(Op::Leave),
        (0..4usize, any::<bool>()).prop_map(|(c, a)| Op::Report(c, a)),
        Just(Op::Placement),
        (1..900i64).prop_map(Op::Advance),
        Just(Op::Garbage),
        (0..4usize, 0..3u8).prop_map(|(c, n)| Op::Evict(c, n)),
        (0..3u8).prop_map(Op::Budget),
    ]
}

fn events(ops: &[Op]) -> Vec<Envelope> {
    let mut now = start();
    let mut out = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        let payload = match op {
            Op::Join(c, period, staging) => Input::Apply {
                manifest: member(
                    CLUSTERS[*c],
                    *period,
                    if *staging { "staging" } else { "prod" },
                ),
            },
            Op::Beat(c) => Input::Heartbeat(Heartbeat {
                cluster: CLUSTERS[*c].into(),
                ..Heartbeat::default()
            }),
            Op::Leave(c) => Input::Delete {
                target: ObjectRef {
                    kind: "MemberCluster".into(),
                    group: None,
                    namespace: None,
                    name: CLUSTERS[*c].into(),
                },
            },
            Op::Report(c, available) => Input::WorkReport(WorkReport {
                cluster: CLUSTERS[*c].into(),
                placement: "crp-1".into(),
                namespace: None,
                resource_index: 0,
                applied: Some(true),
                available: Some(*available),
                trackable: true,
                message: String::new(),
                failed_manifests: Vec::new(),
            }),
            Op::Placement => Input::Apply {
                manifest: PLACEMENT.into(),
            },
            Op::Advance(secs) => {
                now += Duration::seconds(*secs);
                Input::Tick
            }
            Op::Garbage => Input::Apply {
                manifest: "{\"kind\": 3}".into(),
            },
            Op::Evict(c, n) => Input::Apply {
                manifest: eviction(*n, CLUSTERS[*c]),
            },
            Op::Budget(min) => Input::Apply {
                manifest: format!(
                    r#"{{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourcePlacementDisruptionBudget","metadata":{{"name":"crp-1"}},"spec":{{"minAvailable":{min}}}}}"#
                ),
            },
        };
        let id = Uuid::from_u128(u128::try_from(index).unwrap_or_default() + 1);
        out.push(Envelope::new(id, now, "proptest", payload));
    }
    out
}

/// Heartbeat deadlines are exactly the healthy, joined members; nothing points at a missing one.
fn check_invariants(state: &State) {
    for (deadline, name) in &state.heartbeat_deadlines {
        let member = state
            .members
            .get(name)
            .expect("deadline of a missing member");
        let agent = member
            .agent
            .as_ref()
            .expect("deadline of a member that never joined");
        assert!(agent.healthy, "deadline of an unhealthy member {name}");
        assert_eq!(*deadline, agent.last_heartbeat + member.heartbeat_timeout());
        if let Some(now) = state.now {
            assert!(*deadline > now, "expired deadline left for {name}");
        }
    }
    let healthy = state.members.values().filter(|m| m.is_eligible()).count();
    assert_eq!(healthy, state.heartbeat_deadlines.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn same_log_same_state_and_decisions(ops in prop::collection::vec(op(), 1..80), cut in 0usize..80) {
        let log = events(&ops);
        let mut first = State::default();
        let mut second = State::default();
        let mut first_decisions = Vec::new();
        let mut second_decisions = Vec::new();
        for event in &log {
            first_decisions.push(step(&mut first, event));
            check_invariants(&first);
        }
        let cut = cut.min(log.len());
        for event in &log[..cut] {
            second_decisions.push(step(&mut second, event));
        }
        // Checkpoint and restore mid-way, then fold the tail.
        let bytes = encode_checkpoint(&second).expect("encodes");
        let mut restored: State = decode_checkpoint(&bytes).expect("decodes");
        prop_assert_eq!(&restored, &second);
        for event in &log[cut..] {
            second_decisions.push(step(&mut restored, event));
        }
        prop_assert_eq!(first.hash().expect("hash"), restored.hash().expect("hash"));
        prop_assert_eq!(first_decisions, second_decisions);
    }

    #[test]
    fn a_duplicate_event_changes_nothing(ops in prop::collection::vec(op(), 1..60), pick in 0usize..60) {
        let log = events(&ops);
        let pick = pick.min(log.len() - 1);
        let mut state = State::default();
        for event in &log[..=pick] {
            step(&mut state, event);
        }
        let before = state.hash().expect("hash");
        step(&mut state, &log[pick]);
        prop_assert_eq!(before, state.hash().expect("hash"));
    }
}

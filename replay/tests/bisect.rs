//! Bisect and scan find the first input after which a predicate holds at its exact sequence:
//! on a recorded rollout where one updated cluster fails and, later, a cluster still on the
//! old version becomes unavailable, the placement's unavailability exceeds `maxUnavailable`
//! first after that report — found by a bisection in a logarithmic number of probes, with
//! and without checkpoints, and by a linear scan.

mod common;

use common::{Checkpointed, History, memory_log, placement, settings};
use std::sync::atomic::Ordering;

use flotilla_eventstore::LogReader;
use flotilla_replay::bisect::{Answer, Probe, Search, bisect_with};
use flotilla_replay::{Predicate, SearchError, bisect, scan};
use serde_json::json;

const CLUSTERS: [&str; 4] = ["cluster-1", "cluster-2", "cluster-3", "cluster-4"];

/// The incident, and the sequence of the report after which the budget is exceeded.
fn incident() -> (History, u64) {
    let mut history = History::new();
    history.fleet(&CLUSTERS);
    history.apply(&placement(&json!(1)));
    for cluster in CLUSTERS {
        history.report(cluster, 0, true, true);
    }
    for _ in 0..3 {
        history.quiet(&CLUSTERS, 30);
    }
    history.advance(30);
    history.apply(&settings("2"));
    history.advance(10);
    history.report("cluster-1", 1, true, true);
    history.advance(10);
    history.report("cluster-2", 1, false, false);
    for _ in 0..10 {
        history.quiet(&CLUSTERS, 30);
    }
    history.advance(10);
    let violation = history.report("cluster-3", 0, true, false);
    for _ in 0..20 {
        history.quiet(&CLUSTERS, 30);
    }
    (history, violation)
}

fn budget() -> Predicate {
    "unavailable-exceeds-budget:crp-1".parse().expect("parses")
}

const WHY: &str = "2 of 4 clusters unavailable, maxUnavailable 1: \
    cluster-2 failed at index 1, cluster-3 not available at index 0";

/// ⌈log₂(n + 1)⌉ + 1.
fn probes_max(inputs: u64) -> u32 {
    (inputs + 1).next_power_of_two().trailing_zeros() + 1
}

fn first(search: &Search) -> &flotilla_replay::Hit {
    match &search.answer {
        Answer::First(hit) => hit,
        other => panic!("expected a first input, found {other:?}"),
    }
}

#[tokio::test]
async fn bisect_and_scan_find_the_first_budget_violation() -> Result<(), SearchError> {
    let (history, violation) = incident();
    assert_eq!(violation, 84);
    let log = memory_log(&history.events).await;
    let last = log
        .last_seq()
        .await
        .map_err(flotilla_replay::ReplayError::from)?;
    assert_eq!(last, 184);

    let bisected = bisect(&log, &budget(), 1..=last).await?;
    let hit = first(&bisected);
    assert_eq!(hit.seq, 84);
    assert_eq!(
        hit.event,
        "#84 2025-03-12T23:07:30Z test report cluster-3 on ClusterResourcePlacement/crp-1 \
         at resource index 0: applied, not available"
    );
    assert_eq!(hit.why, WHY);
    assert!(
        bisected.probes <= probes_max(last),
        "{} probes",
        bisected.probes
    );
    assert_eq!(
        bisected.to_string(),
        format!(
            "first after #84: {WHY}\n{}\n{} probes, {} inputs folded, 0 checkpoints used\n",
            hit.event, bisected.probes, bisected.inputs_folded
        )
    );

    assert_eq!(
        serde_json::to_value(&bisected).expect("serializes"),
        json!({
            "answer": "first",
            "seq": 84,
            "time": "2025-03-12T23:07:30Z",
            "event": hit.event,
            "why": WHY,
            "predicate": 0,
            "probes": bisected.probes,
            "inputsFolded": bisected.inputs_folded,
            "checkpointsUsed": 0
        })
    );

    let scanned = scan(&log, &[budget()], 1..=last).await?;
    assert_eq!(first(&scanned), hit);
    assert_eq!(scanned.inputs_folded, 84);
    Ok(())
}

#[tokio::test]
async fn probes_fold_from_the_nearest_checkpoint() -> Result<(), SearchError> {
    let (history, _) = incident();
    let inner = memory_log(&history.events).await;
    let log = Checkpointed::new(std::sync::Arc::new(inner), 16).await;
    let mut costs = Vec::new();
    for probe in [Probe::Nearest, Probe::Checkpoint, Probe::LowEnd] {
        let loads = log.loads.load(Ordering::Relaxed);
        let search = bisect_with(&log, &budget(), 1..=184, probe).await?;
        assert_eq!(first(&search).seq, 84, "{probe:?}");
        assert!(
            search.probes <= probes_max(184),
            "{probe:?}: {} probes",
            search.probes
        );
        let loads = log.loads.load(Ordering::Relaxed) - loads;
        costs.push((probe, search.inputs_folded, search.checkpoints_used, loads));
    }
    // From a checkpoint every 16 inputs a probe folds at most 15; from the low end alone the
    // folds add up to about the range; the nearest of both folds least, and loads a
    // checkpoint only when it cannot tell that the low end is nearer.
    assert_eq!(
        costs,
        [
            (Probe::Nearest, 41, 4, 6),
            (Probe::Checkpoint, 44, 7, 8),
            (Probe::LowEnd, 182, 0, 0)
        ]
    );
    Ok(())
}

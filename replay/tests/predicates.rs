//! Every built-in predicate, parsed from its text form, found at its exact input by both a
//! bisection and a scan; a predicate that held before the range or never holds says so; a
//! scan over several predicates names the one that held first.

mod common;

use common::staged;
use common::{History, memory_log, placement, settings};
use flotilla_eventstore::LogReader;
use flotilla_replay::{Answer, Predicate, ReplayError, Search, SearchError, bisect, scan};
use serde_json::json;

const CLUSTERS: [&str; 4] = ["cluster-1", "cluster-2", "cluster-3", "cluster-4"];

/// Version 2 of the ConfigMap (#31) reaches cluster-1, then cluster-2 after cluster-1's
/// report (#32); cluster-2 fails (#33); quiet afterwards.
fn rollout() -> History {
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
    history
}

fn parse(text: &str) -> Predicate {
    text.parse().expect("parses")
}

fn first_seq(search: &Search) -> Option<u64> {
    match &search.answer {
        Answer::First(hit) => Some(hit.seq),
        _ => None,
    }
}

/// Bisects and scans the whole log; both must agree; returns the hit's `(seq, why)`.
async fn found<L: LogReader>(log: &L, text: &str) -> Result<(u64, String), SearchError> {
    let last = log.last_seq().await.map_err(ReplayError::from)?;
    let predicate = parse(text);
    let bisected = bisect(log, &predicate, 1..=last).await?;
    let scanned = scan(log, std::slice::from_ref(&predicate), 1..=last).await?;
    assert_eq!(bisected.answer, scanned.answer, "{text}");
    match bisected.answer {
        Answer::First(hit) => Ok((hit.seq, hit.why)),
        other => panic!("{text}: expected a first input, found {other:?}"),
    }
}

#[tokio::test]
async fn each_predicate_is_found_at_its_input() -> Result<(), SearchError> {
    let log = memory_log(&rollout().events).await;
    assert_eq!(
        found(&log, "cluster-at-index:cluster-2:crp-1:1").await?,
        (
            32,
            "cluster-2 carries index 1 of ClusterResourcePlacement/crp-1 since \
             2025-03-12T23:02:10Z"
                .to_owned()
        )
    );
    assert_eq!(
        found(&log, "object:cm/app/settings:/data/version==2").await?,
        (
            31,
            "ConfigMap/app/settings /data/version is \"2\"".to_owned()
        )
    );
    assert_eq!(
        found(&log, "object:ConfigMap/app/settings:/data/version!=1")
            .await?
            .0,
        31
    );
    assert_eq!(
        found(
            &log,
            "object:crp/crp-1:/spec/strategy/rollingUpdate/maxUnavailable exists"
        )
        .await?,
        (
            11,
            "ClusterResourcePlacement/crp-1 /spec/strategy/rollingUpdate/maxUnavailable is 1"
                .to_owned()
        )
    );
    Ok(())
}

#[tokio::test]
async fn a_predicate_that_held_before_the_range_or_never_holds_says_so() -> Result<(), SearchError>
{
    let log = memory_log(&rollout().events).await;
    let exists = parse("object:cm/app/settings:/data/version exists");
    let held = bisect(&log, &exists, 20..=84).await?;
    assert_eq!(
        held.answer,
        Answer::AlreadyHeld {
            seq: 19,
            why: "ConfigMap/app/settings /data/version is \"1\"".into(),
            predicate: 0
        }
    );
    assert_eq!(held.probes, 1);
    let never = bisect(&log, &parse("cluster-at-index:cluster-4:crp-1:>=1"), 1..=84).await?;
    assert_eq!(never.answer, Answer::Never);
    // The start, ⌈log₂ 84⌉ = 7 probes (the log ends at #83), then — the predicate held at none
    // of them, and might have turned false again — the start once more and every input.
    assert_eq!(never.probes, 1 + 7 + 1 + 83);
    assert_eq!(never.inputs_folded, 83 + 83);
    assert!(never.held.is_empty());
    assert_eq!(
        never.to_string().lines().next(),
        Some("never holds in the range")
    );
    assert!(matches!(
        bisect(&log, &exists, 0..=10).await,
        Err(SearchError::EmptyRange { first: 0, last: 10 })
    ));
    Ok(())
}

#[tokio::test]
async fn a_scan_names_the_predicate_that_held_first() -> Result<(), SearchError> {
    let log = memory_log(&rollout().events).await;
    let predicates = [
        parse("cluster-at-index:cluster-4:crp-1:1"),
        parse("cluster-at-index:cluster-2:crp-1:>=1"),
        parse("object:cm/app/settings:/data/version==2"),
    ];
    let search = scan(&log, &predicates, 1..=84).await?;
    match &search.answer {
        Answer::First(hit) => assert_eq!((hit.seq, hit.predicate), (31, 2)),
        other => panic!("expected a first input, found {other:?}"),
    }
    assert_eq!(search.inputs_folded, 31);
    assert!(matches!(
        scan::<_, Predicate>(&log, &[], 1..=84).await,
        Err(SearchError::PredicateCount(0))
    ));
    Ok(())
}

#[tokio::test]
async fn staged_runs_start_production_after_the_canary_approval() -> Result<(), SearchError> {
    let log = memory_log(&staged::recording().events).await;
    // #14 approves release-after-canary: production starts at once.
    let started = found(
        &log,
        "object:csur/release:/status/stagesStatus/2/startTime exists",
    )
    .await?;
    assert_eq!(started.0, 14);
    let early = scan(&log, &[parse("stage-before-approval:release")], 1..=15).await?;
    assert_eq!(first_seq(&early), None);
    assert_eq!(early.answer, Answer::Never);
    Ok(())
}

/// cluster-4 goes silent until its heartbeat times out (five 60 s periods), then beats again:
/// unhealthy for a few inputs of a long log, healthy at its end.
fn a_silence() -> (History, u64) {
    let mut history = History::new();
    history.fleet(&CLUSTERS);
    for _ in 0..20 {
        history.quiet(&CLUSTERS, 30);
    }
    for _ in 0..11 {
        history.quiet(&CLUSTERS[..3], 30);
    }
    let back = history.heartbeat("cluster-4");
    for _ in 0..40 {
        history.quiet(&CLUSTERS, 30);
    }
    (history, back)
}

#[tokio::test]
async fn a_predicate_that_turns_false_again_is_found_not_answered_never() -> Result<(), SearchError>
{
    let (history, back) = a_silence();
    let log = memory_log(&history.events).await;
    let last = log.last_seq().await.map_err(ReplayError::from)?;
    let unhealthy = parse("condition:MemberCluster/cluster-4:Healthy=False");
    let scanned = scan(&log, std::slice::from_ref(&unhealthy), 1..=last).await?;
    let bisected = bisect(&log, &unhealthy, 1..=last).await?;
    assert_eq!(bisected.answer, scanned.answer);
    let Answer::First(hit) = &bisected.answer else {
        panic!("expected a first input, found {:?}", bisected.answer);
    };
    // Every probe of the bisection missed the short run, so it scanned: one run, ending
    // right before cluster-4's heartbeat.
    assert_eq!(
        bisected.held,
        [flotilla_replay::Held {
            from: hit.seq,
            to: back - 1
        }]
    );
    // The input after which it held is another cluster's heartbeat or a tick: the cause is
    // cluster-4's deadline, which the fold expires at the first input after it.
    assert!(!hit.event.contains("cluster-4"), "{}", hit.event);
    let cause = hit.cause.as_deref().unwrap_or_default();
    assert!(
        cause.starts_with("cluster-4's heartbeat deadline passed at "),
        "{cause}"
    );
    assert!(hit.why.contains("HeartbeatTimeout"), "{}", hit.why);
    let text = bisected.to_string();
    assert!(
        text.contains(&format!("held after #{}..=#{}", hit.seq, back - 1)),
        "{text}"
    );
    Ok(())
}

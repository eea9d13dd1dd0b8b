//! One resource change rolled out over a large PickAll placement (RollingUpdate, defaults:
//! maxUnavailable 25%, maxSurge 25%): the fleet starts with every cluster bound and available;
//! then a ConfigMap changes, and simulated members report their new work available as soon as
//! they get it, until every cluster carries the new resource snapshot. Prints the events
//! folded, events per second, and the time from the change to the last cluster's binding
//! moving to the new snapshot (its work rendered). A single timed run per size (criterion's
//! ten samples would take minutes here); `cargo bench -p flotilla-core --bench rollout [--
//! --clusters N] [--progress-deadline | --rollback]` (`--rollback` times a rollback instead).

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use chrono::{TimeZone, Utc};
use flotilla_core::query::placement::BindingState;
use flotilla_core::{Envelope, Input, State, step};
use uuid::Uuid;

struct Fold {
    state: State,
    id: u128,
    events: u64,
    /// Seconds after the start that events are folded at.
    seconds: i64,
    /// A cluster that never reports on the new snapshot (`--rollback`).
    silent: Option<String>,
}

impl Fold {
    /// A fleet of `size` joined clusters with placement `everywhere` (its `strategy` field, or
    /// nothing) rolled out and reported available on snapshot 0.
    fn placed(size: usize, strategy: &str, silent: Option<String>) -> Self {
        let mut fold = Fold {
            state: State::default(),
            id: 0,
            events: 0,
            seconds: 0,
            silent,
        };
        fold.send(Input::Apply {
            manifest: r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#.into(),
        });
        fold.config(0);
        for input in support::join_fleet(size, |_| "{}".to_owned()) {
            fold.send(input);
        }
        fold.send(Input::Apply {
            manifest: r#"{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{"name":"everywhere"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}]__STRATEGY__}}"#.replace("__STRATEGY__", strategy),
        });
        fold.settle();
        fold
    }

    fn send(&mut self, input: Input) {
        self.id += 1;
        self.events += 1;
        let time = Utc
            .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
            .single()
            .unwrap_or_default()
            + chrono::Duration::seconds(self.seconds);
        step(
            &mut self.state,
            &Envelope::new(Uuid::from_u128(self.id), time, "bench", input),
        );
    }

    fn config(&mut self, version: u32) {
        let manifest = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cfg","namespace":"app"}},"data":{{"version":"{version}"}}}}"#
        );
        self.send(Input::Apply { manifest });
    }

    /// Every bound cluster whose work at its index is unreported reports it available; repeats
    /// until nobody owes a report. Returns how many reports were sent.
    fn settle(&mut self) -> u64 {
        let mut sent = 0;
        loop {
            let owed: Vec<(String, u64)> = self
                .state
                .placements()
                .iter()
                .flat_map(|(key, p)| p.bindings.values().map(move |b| (key, b)))
                .filter(|(_, b)| b.state == BindingState::Bound)
                .filter_map(|(_, b)| {
                    // The binding at hand is the one the hub holds: its report says whether
                    // the work at its index was reported.
                    let index = b.resource_index?;
                    let reported = b.report.as_ref().is_some_and(|r| r.resource_index == index);
                    (!reported).then(|| (b.cluster.to_string(), index))
                })
                .filter(|(cluster, index)| *index == 0 || self.silent.as_ref() != Some(cluster))
                .collect();
            if owed.is_empty() {
                return sent;
            }
            for (cluster, resource_index) in owed {
                sent += 1;
                self.send(support::available(cluster, resource_index));
            }
        }
    }
}

/// `--rollback`: one cluster never reports on the new snapshot; once every other one has, 120
/// seconds pass and the progress deadline (60 s) rolls the rollout back, within
/// `maxUnavailable`, until every cluster has its old work available again. Times that.
fn rollback(size: usize) {
    let strategy = r#","strategy":{"type":"RollingUpdate","rollingUpdate":{"progressDeadlineSeconds":60,"onFailure":"Rollback"}}"#;
    let mut fold = Fold::placed(size, strategy, Some("member-000000".to_owned()));
    fold.config(1);
    fold.settle();
    fold.seconds = 120;
    let before = fold.events;
    // A benchmark measures wall time; the clock ban is for the fold itself.
    #[allow(clippy::disallowed_methods)]
    let started = Instant::now();
    fold.send(Input::Tick);
    let reports = fold.settle();
    let elapsed = started.elapsed();
    let events = fold.events - before;
    let phase = fold
        .state
        .placements()
        .values()
        .next()
        .and_then(|p| p.guard.as_ref())
        .map(|g| format!("{:?}", g.phase))
        .unwrap_or_default();
    println!(
        "rollback of one change over {size} clusters: {events} events ({reports} reports) in {:.3} s = {:.0} events/s; guard: {phase}",
        elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
    );
}

fn run(size: usize, progress_deadline: bool) {
    let strategy = if progress_deadline {
        r#","strategy":{"type":"RollingUpdate","rollingUpdate":{"progressDeadlineSeconds":600}}"#
    } else {
        ""
    };
    let mut fold = Fold::placed(size, strategy, None);
    let before = fold.events;
    // A benchmark measures wall time; the clock ban is for the fold itself.
    #[allow(clippy::disallowed_methods)]
    let started = Instant::now();
    fold.config(1);
    let reports = fold.settle();
    let elapsed = started.elapsed();
    let events = fold.events - before;
    let latest = fold
        .state
        .placements()
        .values()
        .next()
        .and_then(|p| p.latest_resources())
        .map(|s| s.index);
    let done = fold
        .state
        .placements()
        .values()
        .flat_map(|p| p.bindings.values())
        .all(|b| b.resource_index == latest);
    println!(
        "rollout of one change over {size} clusters: {events} events ({reports} reports) in {:.3} s = {:.0} events/s; all on the new snapshot: {done}",
        elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
    );
}

fn main() {
    // `--clusters N`: time one size only.
    let sizes = support::sizes(&[1_000, 10_000, 100_000], &[100]);
    // `--progress-deadline`: the placement's rollingUpdate has a `progressDeadlineSeconds`
    // (600 s, never reached here), so every pass keeps the rollout's safety guard.
    let progress_deadline = std::env::args().any(|a| a == "--progress-deadline");
    let rollback_only = std::env::args().any(|a| a == "--rollback");
    for size in sizes {
        if rollback_only {
            rollback(size);
        } else {
            run(size, progress_deadline);
        }
    }
}

//! A partitioned rollout (`docs/partitioned-rollout.md`) over 100,000 clusters: `maxUnavailable:
//! 10%`, `autoPartitionSize: 10%` (ten partitions of 10,000), batches of 50. Simulated members
//! report each work available as soon as they get it (the harness answers the `RolloutStarted`
//! decisions of every step, so it never scans the fleet). Prints, for the initial deployment
//! and for one resource change rolled out to everyone: events folded, events per second, and
//! the state's size (checkpoint encoding) and the process's resident memory at the end.
//! `CARGO_TARGET_DIR=/tmp/flotilla-bench-target-partitioned cargo bench -p flotilla-core --bench
//! partitioned [-- --clusters N] [--progress-deadline] [--failing] [--manual] [--rollback]` (a single timed run per phase;
//! criterion's samples would take minutes here).

#[path = "support/mod.rs"]
mod support;

use std::collections::VecDeque;
use std::time::Instant;

use chrono::{TimeZone, Utc};
use flotilla_core::query::placement::BindingState;
use flotilla_core::{Decision, Envelope, Input, State, codec, step};
use uuid::Uuid;

struct Fold {
    state: State,
    id: u128,
    events: u64,
    owed: VecDeque<(String, u64)>,
    /// One cluster in twenty reports its work failed (`--failing`).
    failing: bool,
    /// Seconds after the start that events are folded at.
    seconds: i64,
    /// A cluster that never reports on a changed snapshot (`--rollback`).
    silent: Option<String>,
}

impl Fold {
    fn send(&mut self, input: Input) {
        self.id += 1;
        self.events += 1;
        let time = Utc
            .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
            .single()
            .unwrap_or_default()
            + chrono::Duration::seconds(self.seconds);
        let decisions = step(
            &mut self.state,
            &Envelope::new(Uuid::from_u128(self.id), time, "bench", input),
        );
        for decision in decisions {
            if let Decision::RolloutStarted {
                cluster,
                resource_index,
                ..
            } = decision
            {
                self.owed.push_back((cluster, resource_index));
            }
        }
    }

    fn config(&mut self, version: u32) {
        let manifest = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cfg","namespace":"app"}},"data":{{"version":"{version}"}}}}"#
        );
        self.send(Input::Apply { manifest });
    }

    /// Members report every work they were given, available, until nothing is owed.
    fn settle(&mut self) {
        while let Some((cluster, resource_index)) = self.owed.pop_front() {
            if resource_index > 0 && self.silent.as_ref() == Some(&cluster) {
                continue;
            }
            let fails = self.failing
                && cluster
                    .strip_prefix("member-")
                    .and_then(|n| n.parse::<usize>().ok())
                    .is_some_and(|i| i % 20 == 19);
            let mut report = support::available(cluster, resource_index);
            if let (Input::WorkReport(report), true) = (&mut report, fails) {
                report.applied = Some(false);
                report.available = None;
            }
            self.send(report);
        }
    }

    fn on_latest(&self) -> usize {
        let Some(placement) = self.state.placements().values().next() else {
            return 0;
        };
        let latest = placement.latest_resources().map(|s| s.index);
        placement
            .bindings
            .values()
            .filter(|b| b.state == BindingState::Bound && b.resource_index == latest)
            .count()
    }
}

/// Resident memory of this process in KiB (Linux `/proc/self/status`), 0 elsewhere.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

fn timed(fold: &mut Fold, phase: &str, size: usize, start: impl FnOnce(&mut Fold)) {
    let before = fold.events;
    // A benchmark measures wall time; the clock ban is for the fold itself.
    #[allow(clippy::disallowed_methods)]
    let started = Instant::now();
    start(fold);
    fold.settle();
    let elapsed = started.elapsed().as_secs_f64();
    let events = fold.events - before;
    println!(
        "partitioned {phase}, {size} clusters: {events} events in {elapsed:.3} s = {:.0} events/s; on the latest snapshot: {}",
        events as f64 / elapsed.max(f64::EPSILON),
        fold.on_latest()
    );
}

/// What the flags of `main` ask for.
struct Options {
    progress_deadline: bool,
    failing: bool,
    manual: bool,
    rollback: bool,
}

fn run(size: usize, options: &Options) {
    let Options {
        progress_deadline,
        failing,
        manual,
        rollback,
    } = *options;
    let mut fold = Fold {
        state: State::default(),
        id: 0,
        events: 0,
        owed: VecDeque::new(),
        failing,
        seconds: 0,
        silent: rollback.then(|| "member-000000".to_owned()),
    };
    fold.send(Input::Apply {
        manifest: r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#.into(),
    });
    fold.config(0);
    let part = |i: usize| i * 10 / size.max(1);
    for input in support::join_fleet(size, |i| format!(r#"{{"part":"p{}"}}"#, part(i))) {
        fold.send(input);
    }
    let rss_fleet = rss_kib();
    let mut deadline = if progress_deadline {
        r#","progressDeadlineSeconds":600"#
    } else {
        ""
    }
    .to_owned();
    if rollback {
        deadline = r#","progressDeadlineSeconds":60,"onFailure":"Rollback""#.to_owned();
    }
    if failing && !manual {
        deadline.push_str(r#","maxFailures":"10%""#);
    }
    if manual {
        let own = if failing {
            r#","maxFailures":"10%""#
        } else {
            ""
        };
        let partitions: Vec<String> = (0..10)
            .map(|p| {
                format!(
                    r#"{{"name":"p{p}","clusterSelector":{{"matchLabels":{{"part":"p{p}"}}}}{own}}}"#
                )
            })
            .collect();
        deadline.push_str(&format!(r#","partitions":[{}]"#, partitions.join(",")));
    }
    let manifest = format!(
        r#"{{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{{"name":"everywhere"}},"spec":{{"resourceSelectors":[{{"group":"","kind":"Namespace","version":"v1","name":"app"}}],"strategy":{{"type":"Partitioned","rolloutStrategy":{{"maxUnavailable":"10%","autoPartitionSize":"10%"{deadline}}}}}}}}}"#
    );
    timed(&mut fold, "initial deployment", size, |fold| {
        fold.send(Input::Apply { manifest });
    });
    timed(&mut fold, "rollout of one change", size, |fold| {
        fold.config(1)
    });
    if rollback {
        // member-000000 never reported on the change: 120 s on, the deadline rolls it back.
        fold.seconds = 120;
        timed(&mut fold, "rollback of the change", size, |fold| {
            fold.send(Input::Tick);
        });
    }
    let state_bytes = codec::encode_checkpoint(&fold.state).map_or(0, |b| b.len());
    let plan_bytes = fold
        .state
        .partitioned_rollouts()
        .values()
        .next()
        .and_then(|plan| codec::encode_checkpoint(plan).ok())
        .map_or(0, |b| b.len());
    println!(
        "memory, {size} clusters: state {:.2} MiB encoded (of which the rollout plan {:.2} MiB); RSS {:.0} MiB after joining the fleet, {:.0} MiB at the end",
        state_bytes as f64 / 1_048_576.0,
        plan_bytes as f64 / 1_048_576.0,
        rss_fleet as f64 / 1024.0,
        rss_kib() as f64 / 1024.0,
    );
}

fn main() {
    // `--progress-deadline`: the rolloutStrategy has a `progressDeadlineSeconds` (600 s, never
    // reached here), so every pass keeps the rollout's safety guard.
    let progress_deadline = std::env::args().any(|a| a == "--progress-deadline");
    // `--failing`: the rollout tolerates `maxFailures: 10%`, and one cluster in twenty fails.
    let failing = std::env::args().any(|a| a == "--failing");
    // `--manual`: ten manual partitions by label instead of automatic ones; with `--failing`
    // each has its own `maxFailures: 10%`.
    let manual = std::env::args().any(|a| a == "--manual");
    // `--rollback`: `progressDeadlineSeconds: 60` with `onFailure: Rollback`; one cluster never
    // reports on the change, and a tick 120 s later rolls every other one back (timed too).
    let rollback = std::env::args().any(|a| a == "--rollback");
    let options = Options {
        progress_deadline,
        failing,
        manual,
        rollback,
    };
    for size in support::sizes(&[100_000], &[1_000]) {
        run(size, &options);
    }
}

//! A staged update run over a large External PickAll placement: staging (1% of the fleet, all
//! at once), canary (4%, half at a time, then an approval) and production (the rest, 25% at a
//! time). Simulated members report their work available as soon as they get it. Prints the
//! events folded from the run's creation to its success and events per second. A single timed
//! run per size; `cargo bench -p flotilla-core --bench staged`.

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use chrono::{Duration, TimeZone, Utc};
use flotilla_core::model::ObjectKey;
use flotilla_core::wire::checkpoint;
use flotilla_core::{Envelope, Input, State, step};
use uuid::Uuid;

struct Fold {
    state: State,
    id: u128,
    events: u64,
}

impl Fold {
    fn send(&mut self, input: Input) {
        self.id += 1;
        self.events += 1;
        let start = Utc
            .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
            .single()
            .unwrap_or_default();
        // One microsecond per event: neither a heartbeat's timeout nor the run's 5-minute stuck
        // deadline passes, even while a million clusters join.
        let time = start + Duration::microseconds(i64::try_from(self.id).unwrap_or(0));
        step(
            &mut self.state,
            &Envelope::new(Uuid::from_u128(self.id), time, "bench", input),
        );
    }

    /// Replaces the state with its checkpoint's decoding, as a hub restarted now would hold
    /// it: every map and member allocated afresh, in name order, not in the fold's order.
    fn restore(&mut self) {
        let encoded = checkpoint::encode_once_into(self.events, &self.state, Vec::new())
            .expect("the state encodes");
        self.state = checkpoint::decode(&encoded.record)
            .expect("its checkpoint decodes")
            .state;
    }

    fn apply(&mut self, manifest: String) {
        self.send(Input::Apply { manifest });
    }

    /// The clusters the run is updating, or rolling back (bound, not reported on at their
    /// index yet), with that index.
    fn owed(&self) -> Vec<(String, u64)> {
        self.state
            .placements()
            .values()
            .flat_map(|p| p.bindings.values())
            .filter(|b| b.update_run.is_some())
            .filter(|b| {
                b.report
                    .as_ref()
                    .is_none_or(|r| Some(r.resource_index) != b.resource_index)
            })
            .filter_map(|b| Some((b.cluster.to_string(), b.resource_index?)))
            .collect()
    }

    /// Creates run `name` and answers every work it gives (approving its canary once) until
    /// nothing is owed; `fails` says which reports are failures.
    fn drive(&mut self, name: &str, shuffled: bool, fails: &dyn Fn(&str, u64) -> bool) {
        // A benchmark measures wall time; the clock ban is for the fold itself.
        #[allow(clippy::disallowed_methods)]
        let created = Instant::now();
        self.apply(format!(
            r#"{{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterStagedUpdateRun","metadata":{{"name":"{name}"}},"spec":{{"placementName":"everywhere","stagedRolloutStrategyName":"s","state":"Run"}}}}"#
        ));
        println!(
            "run {name} created (one input) in {:.1} ms",
            created.elapsed().as_secs_f64() * 1e3
        );
        let mut approved = false;
        loop {
            let owed = self.owed();
            if owed.is_empty() {
                if approved {
                    return;
                }
                approved = true;
                self.send(Input::Approve {
                    name: format!("{name}-after-canary"),
                    namespace: None,
                    reason: None,
                    message: None,
                });
                continue;
            }
            for (cluster, index) in in_order(owed, shuffled) {
                let failed = fails(&cluster, index);
                let mut report = support::available(cluster, index);
                if let (Input::WorkReport(report), true) = (&mut report, failed) {
                    report.applied = Some(false);
                    report.available = None;
                }
                self.send(report);
            }
        }
    }
}

/// How the bench runs: the flags of `main`.
struct Options {
    shuffled: bool,
    restored: bool,
    progress_deadline: bool,
    failing: bool,
    rollback: bool,
}

fn run(size: usize, options: &Options) {
    let mut fold = Fold {
        state: State::default(),
        id: 0,
        events: 0,
    };
    fold.apply(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#.into());
    let staging = size / 100;
    let canary = size / 25;
    let env = |i: usize| {
        if i < staging {
            "staging"
        } else if i < staging + canary {
            "canary"
        } else {
            "production"
        }
    };
    for input in support::join_fleet(size, |i| format!(r#"{{"env":"{}"}}"#, env(i))) {
        fold.send(input);
    }
    if options.restored {
        fold.restore();
    }
    let mut deadline = if options.progress_deadline {
        r#","progressDeadlineSeconds":600"#
    } else {
        ""
    }
    .to_owned();
    if options.failing {
        deadline.push_str(r#","maxFailures":"10%""#);
    }
    // `--failing`: one production cluster in twenty fails to apply, within the stage's
    // tolerance.
    let fails = |cluster: &str| {
        let index = cluster
            .strip_prefix("member-")
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        options.failing && index >= staging + canary && index % 20 == 19
    };
    fold.apply(r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourcePlacement","metadata":{"name":"everywhere"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}],"strategy":{"type":"External"}}}"#.into());
    let strategy = r#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterStagedUpdateStrategy","metadata":{"name":"s"},"spec":{"stages":[
        {"name":"staging","labelSelector":{"matchLabels":{"env":"staging"}},"maxConcurrency":"100%"},
        {"name":"canary","labelSelector":{"matchLabels":{"env":"canary"}},"maxConcurrency":"50%","afterStageTasks":[{"type":"Approval"}]},
        {"name":"production","labelSelector":{"matchLabels":{"env":"production"}},"maxConcurrency":"25%"__DEADLINE__}]}}"#;
    fold.apply(strategy.replace("__DEADLINE__", &deadline));
    let mut name = "r";
    if options.rollback {
        // A first run gives every cluster snapshot 0; the timed run moves them to 1, and the
        // last production cluster fails there.
        fold.drive(name, options.shuffled, &|_, _| false);
        #[allow(clippy::disallowed_methods)]
        let changed = Instant::now();
        fold.apply(
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app","labels":{"v":"1"}}}"#
                .into(),
        );
        println!(
            "a new resource snapshot of a placement on every cluster folded in {:.1} ms",
            changed.elapsed().as_secs_f64() * 1e3
        );
        fold.apply(strategy.replace("__DEADLINE__", r#","maxFailures":0,"onFailure":"Rollback""#));
        name = "r2";
    }
    let last = format!("member-{:06}", size.saturating_sub(1));
    let fails = |cluster: &str, index: u64| {
        fails(cluster) || (options.rollback && index == 1 && cluster == last)
    };
    let before = fold.events;
    // A benchmark measures wall time; the clock ban is for the fold itself.
    #[allow(clippy::disallowed_methods)]
    let started = Instant::now();
    fold.drive(name, options.shuffled, &fails);
    let elapsed = started.elapsed();
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        name,
    );
    let succeeded = fold
        .state
        .update_runs()
        .get(&key)
        .and_then(|r| r.status.succeeded.as_ref())
        .map(|c| c.reason.clone());
    let events = fold.events - before;
    println!(
        "staged run over {size} clusters: {events} events in {:.3} s = {:.0} events/s; {}",
        elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
        succeeded.unwrap_or_default()
    );
}

/// The clusters in the order they report: by name, or (`shuffled`) by a fixed hash of it.
fn in_order(mut clusters: Vec<(String, u64)>, shuffled: bool) -> Vec<(String, u64)> {
    if shuffled {
        // One hash per cluster, not per comparison: the sort is inside the timed loop.
        clusters.sort_by_cached_key(|(name, _)| {
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(name, &mut hasher);
            std::hash::Hasher::finish(&hasher)
        });
    }
    clusters
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `--clusters N` times one size only (a million: about 15 s and 1.5 GB).
    let sizes = support::sizes(&[1_000, 10_000, 100_000], &[100]);
    // `--shuffled`: clusters report in an order unrelated to their names, as a fleet's do,
    // so the fold's searches do not walk the maps in key order.
    let shuffled = args.iter().any(|a| a == "--shuffled");
    // `--restored`: the fleet's state is restored from its checkpoint before the run, as after
    // a hub's restart.
    let restored = args.iter().any(|a| a == "--restored");
    // `--progress-deadline`: production has a `progressDeadlineSeconds` (600 s, never reached
    // here), which each pass checks.
    let progress_deadline = args.iter().any(|a| a == "--progress-deadline");
    // `--failing`: production tolerates `maxFailures: 10%`, and one of its clusters in twenty
    // fails; each failure is counted against the tolerance.
    let failing = args.iter().any(|a| a == "--failing");
    // `--rollback`: after a first run, a second one moves every cluster to a new snapshot;
    // production has `maxFailures: 0` with `onFailure: Rollback`, and its last cluster fails,
    // so the run rolls everything it moved back (timed: the second run).
    let rollback = args.iter().any(|a| a == "--rollback");
    let options = Options {
        rollback,
        shuffled,
        restored,
        progress_deadline,
        failing,
    };
    for size in sizes {
        run(size, &options);
    }
}

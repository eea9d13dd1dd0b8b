//! The seeded simulator (`flotilla_tests::simulation`): a fixed set of seeds, each a run of the
//! real fold, log and restart path under faults, then a liveness phase and the end checks; and
//! proof that one seed replays to the same trace. A failure names its seed and the command that
//! replays it.
//!
//! - `SEED=<seed>`: run only that seed (`SIM_TRACE=1` prints its trace).
//! - `SEEDS=<n> [FIRST_SEED=<f>]`: run seeds `f..f+n` (what `scripts/simulate-seeds` does).

use std::time::Instant;

use flotilla_tests::simulation::{Outcome, run_seed};

/// The seeds every `cargo test` runs; a seed that once found a bug stays here.
const CI_SEEDS: &[u64] = &[1, 2, 3, 4, 5, 6, 7, 8];

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Runs one seed; panics with the seed and the command that replays it.
fn run(seed: u64) -> Outcome {
    let trace = std::env::var("SIM_TRACE").is_ok_and(|v| v == "1");
    match run_seed(seed, trace) {
        Ok(outcome) => outcome,
        Err(failure) => panic!(
            "simulation seed {seed} failed: {failure}\n\
             replay it: SEED={seed} cargo test -p flotilla-tests --test simulation"
        ),
    }
}

fn summary(outcome: &Outcome, secs: f64) -> String {
    format!(
        "seed {} ok in {secs:.2}s: {} members, {} placements, {} steps, {} inputs, {:.0}s \
         simulated (settled {:.0}s after the faults); writer crashes {}, damaged checkpoints {}, \
         log faults {}, agent crashes {}, silences {}, dropped {}, duplicated {}, late copies \
         {}, copies stored {}; trace {}",
        outcome.seed,
        outcome.members,
        outcome.placements,
        outcome.steps,
        outcome.inputs,
        outcome.simulated_ms as f64 / 1000.0,
        outcome.settle_ms as f64 / 1000.0,
        outcome.writer_crashes,
        outcome.corrupt_checkpoints,
        outcome.log_faults,
        outcome.agent_crashes,
        outcome.silences,
        outcome.dropped,
        outcome.duplicated,
        outcome.late_duplicated,
        outcome.stored_copies,
        &outcome.trace_digest[..16.min(outcome.trace_digest.len())],
    )
}

#[test]
fn seeds_keep_every_promise_under_faults() {
    let seeds: Vec<u64> = match (env_u64("SEED"), env_u64("SEEDS")) {
        (Some(seed), _) => vec![seed],
        (None, Some(count)) => {
            let first = env_u64("FIRST_SEED").unwrap_or(1);
            (first..first.saturating_add(count)).collect()
        }
        (None, None) => CI_SEEDS.to_vec(),
    };
    let started = Instant::now();
    for (done, seed) in seeds.iter().enumerate() {
        let began = Instant::now();
        let outcome = run(*seed);
        let secs = began.elapsed().as_secs_f64();
        if seeds.len() <= CI_SEEDS.len() || std::env::var("SIM_VERBOSE").is_ok() {
            eprintln!("{}", summary(&outcome, secs));
        } else if (done + 1) % 100 == 0 {
            eprintln!(
                "{} seeds passed ({}..={seed}) in {:.0}s",
                done + 1,
                seeds[0],
                started.elapsed().as_secs_f64()
            );
        }
    }
    eprintln!(
        "{} seeds passed in {:.1}s",
        seeds.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn one_seed_replays_to_the_same_trace() {
    let seed = env_u64("SEED").unwrap_or(CI_SEEDS[0]);
    let first = run(seed);
    let second = run(seed);
    assert_eq!(
        first.trace_digest, second.trace_digest,
        "seed {seed} ran differently twice"
    );
    assert_eq!(first.trace_lines, second.trace_lines);
    assert!(first.trace_lines > 0 && first.inputs > 0);
}

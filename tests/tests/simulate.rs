//! `flotilla simulate` drives a real hub with a seeded simulated fleet: the fleet joins, the
//! members beat and report, a staged run passes its approval, the summary is printed, the log
//! it leaves verifies under `flotilla replay`, and one seed gives one fleet.

use std::path::{Path, PathBuf};

use flotilla_tests::support::run_ok;
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn run(args: &[&str]) -> Result<String, String> {
    run_ok(&binary(), args)
}

fn simulate(data: &Path, clusters: &str, duration: &str, seed: &str) -> Result<String, String> {
    let data = data.display().to_string();
    run(&[
        "simulate",
        "--clusters",
        clusters,
        "--heartbeat",
        "2s",
        "--duration",
        duration,
        "--strategy",
        "staged",
        "--data",
        &data,
        // Exercises the flag; a fleet this small needs little of the log's page cache.
        "--redb-cache-mib",
        "8",
        "--seed",
        seed,
    ])
}

fn labels(data: &Path) -> Result<Value, String> {
    let data = data.display().to_string();
    let members = run(&[
        "replay",
        "--data",
        &data,
        "state",
        "--at",
        "60",
        "membercluster",
        "-o",
        "json",
    ])?;
    let members: Value = serde_json::from_str(&members).map_err(|e| e.to_string())?;
    let items = members["items"].as_array().cloned().unwrap_or_default();
    Ok(items
        .iter()
        .map(|m| m["metadata"]["labels"].clone())
        .collect())
}

#[test]
fn a_simulated_fleet_joins_rolls_out_and_leaves_a_log_that_verifies() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = scratch.path().join("sim");
    // 30 s of wall clock: on a loaded machine the debug build's canary stage took longer
    // than 20 s to finish (a CI run on 2 cores shared with two builds).
    let out = simulate(&data, "200", "30s", "7")?;
    assert!(out.contains("fleet joined: 200 clusters"), "{out}");
    assert!(out.contains("fold lag over"), "{out}");
    assert!(out.contains("decision latency over"), "{out}");
    let path = data.display().to_string();
    let verified = run(&["replay", "--data", &path, "verify"])?;
    assert!(verified.contains("decisions as recorded"), "{verified}");
    // The canary stage finished and its approval was given by the simulator.
    let timeline = run(&[
        "replay",
        "--data",
        &path,
        "timeline",
        "--run",
        "sim-0-run-1",
    ])?;
    assert!(
        timeline.contains("ClusterApprovalRequest/sim-0-run-1-after-canary approved"),
        "{timeline}"
    );
    let heartbeats = run(&[
        "replay",
        "--data",
        &path,
        "timeline",
        "--cluster",
        "sim-0000199",
    ])?;
    // 30 s at one beat per 2 s, after the first: about fifteen more.
    let beats = heartbeats.matches("heartbeat sim-0000199").count();
    assert!(beats >= 5, "{heartbeats}");
    Ok(())
}

#[test]
fn one_seed_gives_one_fleet() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (a, b, c) = (
        scratch.path().join("a"),
        scratch.path().join("b"),
        scratch.path().join("c"),
    );
    simulate(&a, "50", "1s", "11")?;
    simulate(&b, "50", "1s", "11")?;
    simulate(&c, "50", "1s", "12")?;
    assert_eq!(labels(&a)?, labels(&b)?);
    assert_ne!(labels(&a)?, labels(&c)?);
    Ok(())
}

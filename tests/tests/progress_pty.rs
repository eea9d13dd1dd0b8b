//! The terminal progress view, end to end: a `flotilla serve` hub with four `sim` agents runs
//! the staged run `shop-run` (staging, an approval, production). `flotilla rollout status shop`
//! inside a pseudo-terminal draws indicatif bars per stage while the run moves, stops at the
//! approval printing the hub's explain reason and exits 3; piped, it prints plain lines. After
//! the approval, `flotilla get csur shop-run --watch` follows the run to the end and exits 0,
//! in a pty and piped alike.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_tests::agents::{Agent, get_json, items, ok, wait_for};
use flotilla_tests::pty::{PtyRun, run_in_pty, strip_escapes};
use flotilla_tests::support::{HubProcess, fixture};

/// How long one progress command may run.
const COMMAND_MAX: Duration = Duration::from_secs(60);
/// The approval the run waits for after its first stage.
const REQUEST: &str = "shop-run-after-staging";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// `binary args…` against the hub in a pty.
fn in_pty(hub: &HubProcess, args: &[&str]) -> Result<PtyRun, String> {
    let env = [("FLOTILLA_SERVER", hub.url.as_str()), ("NO_COLOR", "1")];
    let run = run_in_pty(&binary(), args, &env, COMMAND_MAX)?;
    println!("--- {args:?} in a pty ({}):\n{}", run.status, run.output);
    Ok(run)
}

/// `binary args…` against the hub with stdout a pipe; its exit code and stdout, within
/// [`COMMAND_MAX`] (killed after).
fn piped(hub: &HubProcess, args: &[&str]) -> Result<(Option<i32>, String), String> {
    let mut child = Command::new(binary())
        .args(args)
        .env("FLOTILLA_SERVER", &hub.url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if started.elapsed() >= COMMAND_MAX {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{args:?} did not exit in time"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    println!("--- {args:?} piped ({}):\n{text}", output.status);
    Ok((output.status.code(), text))
}

#[test]
fn rollout_status_draws_stages_stops_at_the_approval_and_finishes_after_it() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(&hub, &["apply", "-f", &fixture("agents-fleet.yaml")])?;
    let mut agents = Vec::new();
    for member in ["member-1", "member-2", "member-3", "gitops-1"] {
        let state = scratch.path().join(format!("state-{member}"));
        agents.push(Agent::start(
            &binary(),
            &["--hub", &hub.url],
            member,
            "sim",
            &state,
        )?);
    }
    wait_for("four bindings", || {
        Ok((items(&get_json(&hub, &["clusterresourcebindings"])?).len() == 4).then_some(()))
    })?;
    ok(&hub, &["apply", "-f", &fixture("agents-run.yaml")])?;
    ok(&hub, &["run", "start", "shop-run"])?;

    // Live from the start of the run until it waits for the approval.
    let waiting = in_pty(&hub, &["rollout", "status", "shop"])?;
    assert_eq!(waiting.status.code(), Some(3), "a wait exits 3");
    assert!(
        waiting.output.contains('\u{1b}'),
        "bars are drawn with escapes"
    );
    let screen = strip_escapes(&waiting.output);
    for expected in [
        "clusterstagedupdaterun/shop-run (placement shop",
        "stage staging",
        "1/1 clusters",
        "stage production",
        "0/3 clusters",
        &format!(
            "rollout waits: clusterstagedupdaterun/shop-run: stage staging waits for approval {REQUEST}"
        ),
        "why (the hub's explain at #",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} missing from:\n{screen}"
        );
    }
    assert!(
        screen.contains("approval"),
        "the explain reason names the approval:\n{screen}"
    );

    // Piped: plain lines, no escapes, the same wait.
    let (code, plain) = piped(&hub, &["rollout", "status", "shop"])?;
    assert_eq!(code, Some(3));
    assert!(!plain.contains('\u{1b}'), "no escapes when piped:\n{plain}");
    assert!(
        plain.lines().any(
            |l| l == "  stage staging: 1/1 clusters, waits for approval shop-run-after-staging"
        ),
        "{plain}"
    );
    assert!(
        plain
            .lines()
            .any(|l| l == "  stage production: 0/3 clusters, pending"),
        "{plain}"
    );

    ok(&hub, &["approve", REQUEST])?;
    let done = in_pty(&hub, &["get", "csur", "shop-run", "--watch"])?;
    assert_eq!(done.status.code(), Some(0), "a completed run exits 0");
    let screen = strip_escapes(&done.output);
    for expected in [
        "3/3 clusters",
        "rollout complete: clusterstagedupdaterun/shop-run succeeded: 4 clusters in 2 stages updated",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} missing from:\n{screen}"
        );
    }

    let (code, plain) = piped(&hub, &["rollout", "status", "shop"])?;
    assert_eq!(code, Some(0));
    assert!(
        plain
            .lines()
            .any(|l| l == "  stage production: 3/3 clusters, succeeded"),
        "{plain}"
    );
    assert!(plain.contains("rollout complete:"), "{plain}");
    drop(agents);
    hub.stop()
}

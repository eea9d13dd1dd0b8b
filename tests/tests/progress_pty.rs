//! The terminal progress view, end to end: a `flotilla serve` hub with four `sim` agents runs
//! the staged run `shop-run` (staging, an approval, production). `flotilla rollout status shop`
//! inside a pseudo-terminal draws indicatif bars per stage while the run moves, stops at the
//! approval printing the hub's explain reason and exits 3; piped, it prints plain lines. After
//! the approval, `flotilla get csur shop-run --watch` follows the run to the end and exits 0,
//! in a pty and piped alike. A `RollingUpdate` placement, on a hub whose clock the test holds
//! and whose members' heartbeats and reports the test posts, shows one line per cluster: it
//! completes (exit 0), fails on a member's apply failure (exit 1), and a placement that wants
//! more clusters than there are waits (exit 3) once its view has stood still, with the hub's
//! reason. A staged run that fails on a member's apply failure ends `rollout status` and
//! `get csur --watch` with the cluster and its message (exit 1).

use std::path::PathBuf;
use std::time::Duration;

use flotilla_tests::agents::{Agent, fail_staged_run_on_member_1, get_json, items, ok, wait_for};
use flotilla_tests::pty::{Ran, run_in_pty, run_piped, strip_escapes};
use flotilla_tests::support::{HubProcess, fixture};
use serde_json::{Value, json};

/// How long one progress command may run.
const COMMAND_MAX: Duration = Duration::from_secs(60);
/// The approval the run waits for after its first stage.
const REQUEST: &str = "shop-run-after-staging";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// `binary args…` against the hub in a pty.
fn in_pty(hub: &HubProcess, args: &[&str]) -> Result<Ran, String> {
    let env = [("FLOTILLA_SERVER", hub.url.as_str()), ("NO_COLOR", "1")];
    let run = run_in_pty(&binary(), args, &env, COMMAND_MAX)?;
    println!("--- {args:?} in a pty ({}):\n{}", run.status, run.output);
    Ok(run)
}

/// `binary args…` against the hub with stdout a pipe: its exit code and stdout.
fn piped(hub: &HubProcess, args: &[&str]) -> Result<(Option<i32>, String), String> {
    let run = run_piped(
        &binary(),
        args,
        &[("FLOTILLA_SERVER", &hub.url)],
        COMMAND_MAX,
    )?;
    println!("--- {args:?} piped ({}):\n{}", run.status, run.output);
    Ok((run.status.code(), run.output))
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

/// Posts `events` and checks that the hub refused none.
fn post(hub: &HubProcess, events: Vec<Value>) -> Result<(), String> {
    let answers = hub.post_events(&Value::Array(events))?;
    if answers.to_string().contains("Rejected") {
        return Err(format!("refused: {answers}"));
    }
    Ok(())
}

/// What an agent reports on `placement`'s work at resource index 0.
fn report(cluster: &str, placement: &str, applied: bool, message: &str) -> Value {
    json!({"type": "report", "cluster": cluster, "placement": placement, "resourceIndex": 0,
           "applied": applied, "available": applied, "message": message})
}

#[test]
fn a_rolling_update_completes_fails_and_waits_with_exit_codes_0_1_3() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let clock = ["--test-clock", "2026-03-12T23:00:00Z"];
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &clock)?;
    ok(&hub, &["apply", "-f", &fixture("progress-rolling.yaml")])?;
    let members = ["member-1", "member-2", "member-3"];
    post(
        &hub,
        members
            .iter()
            .map(|c| json!({"type": "heartbeat", "cluster": c}))
            .collect(),
    )?;
    wait_for("three bindings of shop", || {
        let bindings = items(&get_json(&hub, &["clusterresourcebindings"])?);
        let shop = bindings
            .iter()
            .filter(|b| {
                b["spec"]["resourceSnapshotName"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("shop-"))
            })
            .count();
        Ok((shop == 3).then_some(()))
    })?;
    post(
        &hub,
        members
            .iter()
            .map(|c| report(c, "shop", true, ""))
            .collect(),
    )?;

    let (code, plain) = piped(&hub, &["rollout", "status", "shop"])?;
    assert_eq!(code, Some(0), "{plain}");
    for member in members {
        let line = format!("  cluster {member}: 5/5 conditions, Available");
        assert!(
            plain.lines().any(|l| l == line),
            "{line:?} missing from:\n{plain}"
        );
    }
    assert!(
        plain.contains(
            "rollout complete: clusterresourceplacement/shop rolled out: 3 clusters are available"
        ),
        "{plain}"
    );

    post(
        &hub,
        vec![report("member-2", "shop", false, "quota exceeded")],
    )?;
    let (code, plain) = piped(&hub, &["rollout", "status", "shop"])?;
    assert_eq!(code, Some(1), "{plain}");
    assert!(
        plain.contains("rollout failed: clusterresourceplacement/shop:"),
        "{plain}"
    );
    assert!(
        plain.contains("- apply failed on member-2 at resource index 0: quota exceeded"),
        "{plain}"
    );

    // Nothing moves, so after a quiet spell the hub's explain says why.
    let waiting = in_pty(&hub, &["rollout", "status", "picky"])?;
    assert_eq!(waiting.status.code(), Some(3));
    let screen = strip_escapes(&waiting.output);
    assert!(
        screen.contains("clusterresourceplacement/picky (RollingUpdate"),
        "{screen}"
    );
    assert!(
        screen.contains("rollout waits: scheduling policy unfulfilled"),
        "{screen}"
    );
    hub.stop()
}

/// A staged run that fails on a cluster's apply failure: `rollout status` and
/// `get csur NAME --watch` end on the failure, naming the cluster and the agent's message, and
/// exit 1, never calling a failed run one that is "not waiting".
#[test]
fn a_failed_staged_run_names_its_cluster_and_message_and_exits_1() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let clock = ["--test-clock", "2026-03-12T23:00:00Z"];
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &clock)?;
    fail_staged_run_on_member_1(&hub, "quota exceeded")?;

    for command in [
        &["rollout", "status", "shop"][..],
        &["get", "csur", "shop-run", "--watch"][..],
    ] {
        let (code, plain) = piped(&hub, command)?;
        assert_eq!(
            code,
            Some(1),
            "{command:?} exits 1 on a failed run:\n{plain}"
        );
        let failure = "cluster `member-1` in stage `staging` failed to update: the work failed \
                       to apply: quota exceeded";
        for expected in [
            "  stage staging: 0/1 clusters, failed on member-1".to_owned(),
            format!(
                "rollout failed: clusterstagedupdaterun/shop-run failed (UpdateRunFailed): {failure}"
            ),
            format!(
                "- run ClusterStagedUpdateRun/shop-run failed at stage staging at 23:00:00: {failure}"
            ),
        ] {
            assert!(
                plain.lines().any(|line| line == expected),
                "{command:?}: {expected:?} missing from:\n{plain}"
            );
        }
        assert!(!plain.contains("not waiting"), "{command:?}:\n{plain}");
    }
    hub.stop()
}

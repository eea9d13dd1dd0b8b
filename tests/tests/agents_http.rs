//! Real member agents over HTTP, as separate processes: a `flotilla serve` hub, three `sim`
//! agents and one `dir` agent. A staged run with an approval after its first stage completes;
//! the `dir` agent's files equal its Works' manifests; a `sim` agent killed with `kill -9`
//! mid-rollout and restarted on the same `--state` re-applies nothing, and the run still
//! completes.

use std::path::{Path, PathBuf};

use flotilla_tests::agents::{
    Agent, check_dir_files, check_nothing_reapplied, get_json, items, ok, run_succeeded,
    sim_applies, wait_for,
};
use flotilla_tests::support::{HubProcess, fixture};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn start(hub: &HubProcess, cluster: &str, applier: &str, state: &Path) -> Result<Agent, String> {
    Agent::start(&binary(), &["--hub", &hub.url], cluster, applier, state)
}

#[test]
fn agents_apply_a_staged_run_over_http_and_a_killed_agent_reapplies_nothing() -> Result<(), String>
{
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(&hub, &["apply", "-f", &fixture("agents-fleet.yaml")])?;
    let state = |name: &str| scratch.path().join(format!("state-{name}"));
    let gitops = scratch.path().join("gitops");
    let mut agents = Vec::new();
    for member in ["member-1", "member-2", "member-3"] {
        agents.push(start(&hub, member, "sim", &state(member))?);
    }
    let dir_applier = format!("dir:{}", gitops.display());
    let dir_agent = start(&hub, "gitops-1", &dir_applier, &state("gitops-1"))?;

    wait_for("four bindings", || {
        Ok((items(&get_json(&hub, &["clusterresourcebindings"])?).len() == 4).then_some(()))
    })?;
    ok(&hub, &["apply", "-f", &fixture("agents-run.yaml")])?;
    ok(&hub, &["run", "start", "shop-run"])?;
    let request = wait_for("the approval request after staging", || {
        let requests = items(&get_json(&hub, &["careq"])?);
        Ok(requests
            .first()
            .and_then(|r| r["metadata"]["name"].as_str().map(str::to_owned)))
    })?;

    // member-1 (staging) has applied and reported; kill it hard mid-rollout and restart it.
    wait_for("member-1's acknowledged report", || {
        let lines = agents[0].output();
        let done = "reported work shop-work: index 0: applied, available";
        Ok(lines.iter().any(|l| l.ends_with(done)).then_some(()))
    })?;
    let applies_before = sim_applies(&state("member-1"))?;
    assert_eq!(
        applies_before,
        [1, 1, 1],
        "namespace, config map and deployment, once each"
    );
    agents.remove(0).kill_hard();
    let restarted = start(&hub, "member-1", "sim", &state("member-1"))?;
    wait_for("the restarted agent to rejoin", || {
        Ok(restarted
            .output()
            .iter()
            .any(|l| l.contains("joined"))
            .then_some(()))
    })?;

    ok(&hub, &["approve", &request])?;
    wait_for("the run to succeed", || {
        Ok(run_succeeded(&hub)?.then_some(()))
    })?;

    check_nothing_reapplied(&state("member-1"), &applies_before, &restarted)?;
    for member in ["member-2", "member-3"] {
        assert_eq!(sim_applies(&state(member))?, [1, 1, 1], "{member}");
    }
    assert!(
        agents[0]
            .output()
            .iter()
            .all(|l| l.starts_with("[sim member-2]"))
    );
    assert_eq!(check_dir_files(&hub, &gitops)?, 3);
    assert!(
        dir_agent
            .output()
            .iter()
            .any(|l| l.contains("reported work shop-work"))
    );

    // member-3 leaves the fleet: its agent removes what it placed and exits 0.
    ok(&hub, &["delete", "membercluster", "member-3"])?;
    assert_eq!(
        agents[1].wait_exit()?,
        Some(true),
        "the agent stops cleanly"
    );
    assert_eq!(sim_applies(&state("member-3"))?, Vec::<u64>::new());
    assert!(
        agents[1]
            .output()
            .iter()
            .any(|l| l.contains("left the fleet"))
    );
    // Its leave confirmation completes the deletion on the hub.
    wait_for("member-3 to be gone from the hub", || {
        Ok(get_json(&hub, &["membercluster", "member-3"])
            .is_err()
            .then_some(()))
    })?;
    drop(agents);
    drop(restarted);
    drop(dir_agent);
    hub.stop()
}

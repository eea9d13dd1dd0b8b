//! Real member agents over HTTP, as separate processes: a `flotilla serve` hub, three `sim`
//! agents and one `dir` agent. A staged run with an approval after its first stage completes;
//! the `dir` agent's files equal its Works' manifests; a `sim` agent killed with `kill -9`
//! mid-rollout and restarted on the same `--state` re-applies nothing, and the run still
//! completes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_adapters::agent::dir::file_name;
use flotilla_adapters::agent::work::ManifestId;
use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};
use serde_json::Value;

/// How long any one wait in this test may take.
const WAIT_MAX: Duration = Duration::from_secs(20);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// A running `flotilla agent`, its output collected line by line; killed (by pid) on drop.
struct Agent {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Agent {
    fn start(hub: &HubProcess, cluster: &str, applier: &str, state: &Path) -> Result<Self, String> {
        let mut child = Command::new(binary())
            .args([
                "agent",
                "--cluster",
                cluster,
                "--hub",
                &hub.url,
                "--applier",
                applier,
            ])
            .arg("--state")
            .arg(state)
            .args(["--seed", "7", "--max-seconds", "120"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the agent for {cluster}: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                println!("{line}");
                if let Ok(mut lines) = sink.lock() {
                    lines.push(line);
                }
            }
        });
        Ok(Self { child, lines })
    }

    fn output(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Waits (bounded) for the process to exit by itself; its success, or `None` if it did not.
    fn wait_exit(&mut self) -> Result<Option<bool>, String> {
        let started = Instant::now();
        while started.elapsed() < WAIT_MAX {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(Some(status.success()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(None)
    }

    fn kill_hard(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<String, String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(stdout(&output))
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

fn get_json(hub: &HubProcess, args: &[&str]) -> Result<Value, String> {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let text = ok(hub, &all)?;
    serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
}

/// Polls `check` every 100 ms until it gives a value, for at most [`WAIT_MAX`].
fn wait_for<T>(
    what: &str,
    mut check: impl FnMut() -> Result<Option<T>, String>,
) -> Result<T, String> {
    let started = Instant::now();
    while started.elapsed() < WAIT_MAX {
        if let Some(value) = check()? {
            return Ok(value);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("timed out waiting for {what}"))
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

fn run_succeeded(hub: &HubProcess) -> Result<bool, String> {
    let run = get_json(hub, &["csur", "shop-run"])?;
    Ok(run["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Succeeded" && c["status"] == "True"))
}

/// The `applies` counter of every object of a `sim` agent's simulated cluster.
fn sim_applies(state: &Path) -> Result<Vec<u64>, String> {
    let path = state.join("sim-cluster.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cluster: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(cluster["objects"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, o)| o["applies"].as_u64().unwrap_or(0))
        .collect())
}

/// Every manifest of the `dir` member's Works, read back from its file.
fn check_dir_files(hub: &HubProcess, root: &Path) -> Result<usize, String> {
    let works = items(&get_json(hub, &["works", "-n", "fleet-member-gitops-1"])?);
    let mut checked = 0;
    for work in &works {
        let placement = work["metadata"]["labels"]["kubernetes-fleet.io/parent-CRP"]
            .as_str()
            .ok_or("a work without its placement label")?;
        let directory = root.join("gitops-1").join(placement);
        let manifests = work["spec"]["workload"]["manifests"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let files = std::fs::read_dir(&directory)
            .map_err(|e| e.to_string())?
            .count();
        assert_eq!(files, manifests.len(), "one file per manifest, no others");
        for manifest in manifests {
            let id = ManifestId::of(&manifest).ok_or("a manifest without identity")?;
            let path = directory.join(file_name(&id));
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let written: Value = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
            assert_eq!(written, manifest, "{}", path.display());
            checked += 1;
        }
    }
    Ok(checked)
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
        agents.push(Agent::start(&hub, member, "sim", &state(member))?);
    }
    let dir_applier = format!("dir:{}", gitops.display());
    let dir_agent = Agent::start(&hub, "gitops-1", &dir_applier, &state("gitops-1"))?;

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
    let restarted = Agent::start(&hub, "member-1", "sim", &state("member-1"))?;
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

    assert_eq!(
        sim_applies(&state("member-1"))?,
        applies_before,
        "nothing re-applied"
    );
    let restarted_output = restarted.output();
    assert!(
        !restarted_output
            .iter()
            .any(|l| l.contains("applying work") || l.contains("reported work")),
        "{restarted_output:?}"
    );
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
    drop(agents);
    drop(restarted);
    drop(dir_agent);
    hub.stop()
}

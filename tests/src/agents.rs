//! Member agents as processes, for the end-to-end tests of `flotilla agent` over HTTP and NATS
//! (`tests/agents_http.rs`, `tests/agents_nats.rs`): an agent whose output is collected, and the
//! checks both tests make on the hub, the `sim` agents' simulated clusters and the `dir`
//! agent's files.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_agent::dir::file_name;
use flotilla_agent::work::ManifestId;
use serde_json::Value;

use crate::support::{HubProcess, stderr, stdout};

/// How long any one wait in this test may take.
pub const WAIT_MAX: Duration = Duration::from_secs(20);

/// A running `flotilla agent`, its output collected line by line; killed (by pid) on drop.
pub struct Agent {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Agent {
    /// Starts `binary agent --cluster CLUSTER HUB… --applier APPLIER --state STATE` (with a
    /// fixed seed and a two-minute limit); `hub` is `["--hub", URL]` or `["--nats", URL,
    /// "--creds", FILE]`.
    ///
    /// # Errors
    /// When the process cannot be started.
    pub fn start(
        binary: &Path,
        hub: &[&str],
        cluster: &str,
        applier: &str,
        state: &Path,
    ) -> Result<Self, String> {
        Self::start_with(binary, hub, cluster, applier, state, &[])
    }

    /// [`Agent::start`] with more flags (`--sim-apply-delay-ms-max 4000`, …).
    ///
    /// # Errors
    /// When the process cannot be started.
    pub fn start_with(
        binary: &Path,
        hub: &[&str],
        cluster: &str,
        applier: &str,
        state: &Path,
        extra: &[&str],
    ) -> Result<Self, String> {
        let mut child = Command::new(binary)
            .args(["agent", "--cluster", cluster])
            .args(hub)
            .args(["--applier", applier])
            .arg("--state")
            .arg(state)
            .args(["--seed", "7", "--max-seconds", "120"])
            .args(extra)
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

    /// The lines printed so far.
    #[must_use]
    pub fn output(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Waits (bounded) for the process to exit by itself; its success, or `None` if it did not.
    ///
    /// # Errors
    /// When the process cannot be polled.
    pub fn wait_exit(&mut self) -> Result<Option<bool>, String> {
        let started = Instant::now();
        while started.elapsed() < WAIT_MAX {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(Some(status.success()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(None)
    }

    /// `kill -9`.
    pub fn kill_hard(mut self) {
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

/// Runs a CLI command against `hub`; its stdout, or an error with its output.
///
/// # Errors
/// When the command fails.
pub fn ok(hub: &HubProcess, args: &[&str]) -> Result<String, String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(stdout(&output))
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

/// `get ARGS -o json`, parsed.
///
/// # Errors
/// When the command fails or prints no JSON.
pub fn get_json(hub: &HubProcess, args: &[&str]) -> Result<Value, String> {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let text = ok(hub, &all)?;
    serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
}

/// Polls `check` every 100 ms until it gives a value, for at most [`WAIT_MAX`].
///
/// # Errors
/// When `check` fails or time runs out.
pub fn wait_for<T>(
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

/// A list's `items`.
#[must_use]
pub fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

/// Whether the staged run `shop-run` has succeeded.
///
/// # Errors
/// When the hub cannot be asked.
pub fn run_succeeded(hub: &HubProcess) -> Result<bool, String> {
    let run = get_json(hub, &["csur", "shop-run"])?;
    Ok(run["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Succeeded" && c["status"] == "True"))
}

/// The `applies` counter of every object of a `sim` agent's simulated cluster.
///
/// # Errors
/// When its state cannot be read.
pub fn sim_applies(state: &Path) -> Result<Vec<u64>, String> {
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

/// Every manifest of the `dir` member `gitops-1`'s Works, read back from its file; how many.
///
/// # Errors
/// When a file is missing or differs.
pub fn check_dir_files(hub: &HubProcess, root: &Path) -> Result<usize, String> {
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

/// After a `sim` agent was killed and restarted on the same state: its simulated cluster holds
/// the apply counts it had before, and the restarted process applied and reported nothing.
///
/// # Errors
/// When the state cannot be read.
pub fn check_nothing_reapplied(
    state: &Path,
    applies_before: &[u64],
    restarted: &Agent,
) -> Result<(), String> {
    assert_eq!(sim_applies(state)?, applies_before, "nothing re-applied");
    let output = restarted.output();
    assert!(
        !output
            .iter()
            .any(|l| l.contains("applying work") || l.contains("reported work")),
        "{output:?}"
    );
    Ok(())
}

/// The members of `agents-fleet.yaml`.
pub const FLEET_MEMBERS: [&str; 4] = ["member-1", "member-2", "member-3", "gitops-1"];

/// On a hub with a test clock: applies `agents-fleet.yaml`, posts a heartbeat of each member,
/// starts `agents-run.yaml`'s `shop-run` and, once it bound `member-1` in its `staging` stage,
/// posts `member-1`'s report that its work failed to apply with `message`: the run fails there.
///
/// # Errors
/// When the hub refuses a step or the run does not bind `member-1`.
pub fn fail_staged_run_on_member_1(hub: &HubProcess, message: &str) -> Result<(), String> {
    ok(
        hub,
        &["apply", "-f", &crate::support::fixture("agents-fleet.yaml")],
    )?;
    let beats = FLEET_MEMBERS.map(|c| serde_json::json!({"type": "heartbeat", "cluster": c}));
    hub.post_events(&Value::Array(beats.to_vec()))?;
    wait_for("four bindings", || {
        Ok((items(&get_json(hub, &["clusterresourcebindings"])?).len() == 4).then_some(()))
    })?;
    ok(
        hub,
        &["apply", "-f", &crate::support::fixture("agents-run.yaml")],
    )?;
    ok(hub, &["run", "start", "shop-run"])?;
    wait_for("member-1 bound by the run", || {
        let bindings = items(&get_json(hub, &["clusterresourcebindings"])?);
        let bound = bindings
            .iter()
            .any(|b| b["spec"]["targetCluster"] == "member-1" && b["spec"]["state"] == "Bound");
        Ok(bound.then_some(()))
    })?;
    let failure = serde_json::json!({"type": "report", "cluster": "member-1", "placement": "shop",
        "resourceIndex": 0, "applied": false, "available": false, "message": message});
    hub.post_events(&Value::Array(vec![failure]))?;
    Ok(())
}

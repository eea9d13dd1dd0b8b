//! The `kube` applier against a real cluster: a `flotilla serve` hub places a namespace and a
//! ConfigMap on member `kube-1`, whose `flotilla agent --applier kube` applies them to the
//! cluster `FLOTILLA_TEST_KUBECONFIG` names and reports them applied and available; when the
//! member is deleted, the agent removes what it placed and exits 0.
//!
//! No API server can be installed on the machines this project builds on, so without
//! `FLOTILLA_TEST_KUBECONFIG` that test prints `skipped: no cluster` and passes; the request
//! building, diffing, drift, takeover and availability it would exercise are proven against
//! recorded API objects by the unit tests in `adapters/agent/src/kube/tests*.rs`. A second test
//! runs the same steps everywhere with a second hub's Kubernetes API standing in for the
//! cluster: it proves the agent's kubeconfig loading, HTTP calls and create, patch and delete
//! round trips, not a real API server's merge semantics.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_tests::support::{HubProcess, stderr, stdout};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long any one wait in this test may take (a real cluster is slower than `sim`).
const WAIT_MAX: Duration = Duration::from_secs(90);
/// The member cluster the agent serves.
const MEMBER: &str = "kube-1";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// The hub's objects: the member, a namespace with a ConfigMap, and a placement of both.
fn fleet_yaml(namespace: &str) -> String {
    format!(
        "apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {{name: {MEMBER}}}
spec: {{heartbeatPeriodSeconds: 2}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {namespace}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings, namespace: {namespace}}}
data: {{colour: blue}}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {{name: kube-test}}
spec:
  resourceSelectors:
    - {{group: \"\", kind: Namespace, name: {namespace}, version: v1}}
  policy: {{placementType: PickAll}}
"
    )
}

/// A running `flotilla agent --applier kube`, its output collected; killed (by pid) on drop.
struct Agent {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Agent {
    fn start(hub: &HubProcess, kubeconfig: &Path, state: &Path) -> Result<Self, String> {
        let mut child = Command::new(binary())
            .args(["agent", "--cluster", MEMBER, "--hub", &hub.url])
            .args(["--applier", "kube", "--max-seconds", "300"])
            .arg("--state")
            .arg(state)
            .env("KUBECONFIG", kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the agent: {e}"))?;
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

    fn said(&self, text: &str) -> bool {
        self.lines
            .lock()
            .map(|lines| lines.iter().any(|l| l.contains(text)))
            .unwrap_or(false)
    }

    fn wait_exit(&mut self) -> Result<Option<bool>, String> {
        let started = Instant::now();
        while started.elapsed() < WAIT_MAX {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(Some(status.success()));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(None)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(what: &str, mut check: impl FnMut() -> Result<bool, String>) -> Result<(), String> {
    let started = Instant::now();
    while started.elapsed() < WAIT_MAX {
        if check()? {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(format!("timed out waiting for {what}"))
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<String, String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(stdout(&output))
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

/// A kube-rs client of the test cluster, to check what the agent did there.
fn cluster_client(
    runtime: &tokio::runtime::Runtime,
    kubeconfig: &Path,
) -> Result<kube::Client, String> {
    flotilla_adapters::tls::install_crypto_provider();
    runtime.block_on(async {
        let file = Kubeconfig::read_from(kubeconfig).map_err(|e| e.to_string())?;
        let config = kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        kube::Client::try_from(config).map_err(|e| e.to_string())
    })
}

/// The whole check against the cluster of `kubeconfig`.
fn applies_reports_and_removes(kubeconfig: &Path) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let client = cluster_client(&runtime, kubeconfig)?;
    let namespace = format!("flotilla-kube-test-{}", std::process::id());
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let fleet = scratch.path().join("fleet.yaml");
    std::fs::write(&fleet, fleet_yaml(&namespace)).map_err(|e| e.to_string())?;

    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(&hub, &["apply", "-f", &fleet.display().to_string()])?;
    let mut agent = Agent::start(&hub, kubeconfig, &scratch.path().join("state"))?;
    wait_for("the work applied and available", || {
        Ok(agent.said("reported work kube-test-work: index 0: applied, available"))
    })?;

    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let placed = runtime
        .block_on(config_maps.get("settings"))
        .map_err(|e| e.to_string())?;
    let annotations = placed.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations
            .get("kubernetes-fleet.io/applied-by-member")
            .map(String::as_str),
        Some(MEMBER)
    );
    assert!(annotations.contains_key("kubectl.kubernetes.io/last-applied-configuration"));
    assert_eq!(
        placed
            .data
            .unwrap_or_default()
            .get("colour")
            .map(String::as_str),
        Some("blue")
    );

    // The member leaves: the agent removes what it placed and exits 0.
    ok(&hub, &["delete", "membercluster", MEMBER])?;
    assert_eq!(agent.wait_exit()?, Some(true), "the agent stops cleanly");
    assert!(agent.said("left the fleet"));
    let namespaces: Api<Namespace> = Api::all(client);
    wait_for("the namespace to be deleted", || {
        let found = runtime
            .block_on(namespaces.get_opt(&namespace))
            .map_err(|e| e.to_string())?;
        Ok(found.is_none_or(|n| n.metadata.deletion_timestamp.is_some()))
    })?;
    drop(agent);
    hub.stop()
}

#[test]
fn a_kube_agent_applies_reports_and_removes_a_work_on_a_real_cluster() -> Result<(), String> {
    let Some(kubeconfig) = std::env::var_os("FLOTILLA_TEST_KUBECONFIG").map(PathBuf::from) else {
        println!("skipped: no cluster");
        return Ok(());
    };
    applies_reports_and_removes(&kubeconfig)
}

#[test]
fn a_kube_agent_applies_reports_and_removes_a_work_on_a_hubs_kubernetes_api() -> Result<(), String>
{
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let stand_in = HubProcess::start(&binary(), &scratch.path().join("stand-in"), &[])?;
    let kubeconfig = scratch.path().join("kubeconfig");
    let text = format!(
        "apiVersion: v1
kind: Config
clusters: [{{name: stand-in, cluster: {{server: \"{}\"}}}}]
users: [{{name: anyone, user: {{}}}}]
contexts: [{{name: stand-in, context: {{cluster: stand-in, user: anyone}}}}]
current-context: stand-in
",
        stand_in.url
    );
    std::fs::write(&kubeconfig, text).map_err(|e| e.to_string())?;
    applies_reports_and_removes(&kubeconfig)?;
    stand_in.stop()
}

//! `flotilla serve --tokens`: real hub processes on free loopback ports. Without tokens a
//! loopback hub acts as today; with them every request needs a known bearer token (401), each
//! role does only what it may (403) — an agent its own cluster's heartbeats and works, an
//! application team its namespaces through kubectl — and a listener beyond loopback refuses to
//! start without tokens. The wildcard listener is only ever called on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HarnessResult, HubProcess, self_signed_certificate, stderr, stdout};
use serde_json::{Value, json};

const ADMIN: &str = "admin-token-0123456789";
const AGENT_EAST: &str = "agent-east-token-0123456789";
const TEAM: &str = "team-my-app-token-0123456789";
const PLACEMENT: &str = "placement.kubernetes-fleet.io/v1beta1";
/// How long a refused `serve` may take to exit.
const EXIT_TIMEOUT: Duration = Duration::from_secs(30);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// Writes the tokens file and one file per token (for `flotilla --token`); returns its path.
fn tokens_file(dir: &Path) -> HarnessResult<PathBuf> {
    let path = dir.join("tokens.yaml");
    let text = format!(
        "tokens:\n\
         - {{name: ops, token: {ADMIN}, role: admin}}\n\
         - {{name: east-agent, token: {AGENT_EAST}, role: agent, cluster: east}}\n\
         - {{name: app-team, token: {TEAM}, role: namespace, namespaces: [my-app]}}\n"
    );
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    for (name, token) in [("admin", ADMIN), ("team", TEAM)] {
        std::fs::write(dir.join(format!("{name}.token")), format!("{token}\n"))
            .map_err(|e| e.to_string())?;
    }
    Ok(path)
}

fn start_with_tokens(dir: &Path) -> HarnessResult<HubProcess> {
    let tokens = tokens_file(dir)?.display().to_string();
    HubProcess::start(&binary(), &dir.join("data"), &["--tokens", &tokens])
}

use flotilla_tests::adversary::call;

fn member_cluster(name: &str) -> Value {
    json!({"type": "apply", "manifest": {"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster", "metadata": {"name": name}, "spec": {}}})
}

fn heartbeat(cluster: &str) -> Value {
    json!({"type": "heartbeat", "cluster": cluster})
}

#[test]
fn without_tokens_a_loopback_hub_acts_as_admin() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    let body = json!([member_cluster("east"), heartbeat("east")]);
    assert_eq!(call("POST", &events, None, Some(&body))?.0, 200);
    assert_eq!(
        call("GET", &format!("{}/v1/log", hub.url), None, None)?.0,
        200
    );
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let listed = kubectl.ok(&["get", "memberclusters"])?;
    assert!(listed.contains("east"), "{listed}");
    hub.stop()
}

#[test]
fn with_tokens_every_request_but_healthz_needs_a_known_one() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start_with_tokens(dir.path())?;
    let status = format!("{}/v1/status", hub.url);
    let (code, body) = call("GET", &status, None, None)?;
    assert_eq!((code, body["error"].as_str()), (401, Some("Unauthorized")));
    assert_eq!(
        call("GET", &status, Some("not-a-known-token-000"), None)?.0,
        401
    );
    assert_eq!(call("GET", &status, Some(ADMIN), None)?.0, 200);
    assert_eq!(
        call("GET", &format!("{}/healthz", hub.url), None, None)?.0,
        200
    );
    let (code, body) = call("GET", &format!("{}/apis", hub.url), None, None)?;
    assert_eq!(
        (code, &body["kind"], &body["reason"]),
        (401, &json!("Status"), &json!("Unauthorized"))
    );
    let anonymous = Kubectl::for_hub(&hub, dir.path())?;
    let refused = anonymous.fails(&["get", "memberclusters"])?;
    assert!(
        refused.contains("error: You must be logged in to the server"),
        "{refused}"
    );
    let cli = hub.cli(&["get", "memberclusters"])?;
    assert!(!cli.status.success());
    assert!(
        stderr(&cli).contains("Unauthorized") && stderr(&cli).contains("--token"),
        "{}",
        stderr(&cli)
    );
    let admin = dir.path().join("admin.token").display().to_string();
    let listed = hub.cli(&["--token", &admin, "get", "memberclusters"])?;
    assert!(listed.status.success(), "{}", stderr(&listed));
    hub.stop()
}

#[test]
fn an_agent_token_reports_and_reads_only_for_its_own_cluster() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start_with_tokens(dir.path())?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    let members = json!([member_cluster("east"), member_cluster("west")]);
    assert_eq!(call("POST", &events, Some(ADMIN), Some(&members))?.0, 200);
    let agent = Some(AGENT_EAST);
    assert_eq!(
        call("POST", &events, agent, Some(&heartbeat("east")))?.0,
        200
    );
    let (code, body) = call("POST", &events, agent, Some(&heartbeat("west")))?;
    assert_eq!(code, 403);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("\"west\"")),
        "{body}"
    );
    let beat = json!([heartbeat("east"), member_cluster("south")]);
    assert_eq!(call("POST", &events, agent, Some(&beat))?.0, 403);
    let works = |cluster: &str| {
        format!(
            "{}/apis/{PLACEMENT}/namespaces/fleet-member-{cluster}/works",
            hub.url
        )
    };
    assert_eq!(call("GET", &works("east"), agent, None)?.0, 200);
    let (code, body) = call("GET", &works("west"), agent, None)?;
    assert_eq!((code, &body["reason"]), (403, &json!("Forbidden")));
    let member = |name: &str| {
        format!(
            "{}/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters/{name}",
            hub.url
        )
    };
    assert_eq!(call("GET", &member("east"), agent, None)?.0, 200);
    assert_eq!(call("GET", &member("west"), agent, None)?.0, 403);
    assert_eq!(call("DELETE", &member("east"), agent, None)?.0, 403);
    assert_eq!(
        call("GET", &format!("{}/v1/log", hub.url), agent, None)?.0,
        403
    );
    hub.stop()
}

/// A ResourcePlacement as KubeFleet's docs show it in `namespace`, written under `dir`; returns its
/// path.
fn resource_placement(dir: &Path, namespace: &str) -> HarnessResult<String> {
    let path = dir.join(format!("rp-{namespace}.yaml"));
    let text = format!(
        "apiVersion: {PLACEMENT}\nkind: ResourcePlacement\n\
         metadata: {{name: app-configs-rp, namespace: {namespace}}}\nspec:\n\
         \x20 resourceSelectors: [{{group: \"\", kind: ConfigMap, version: v1, \
         labelSelector: {{matchLabels: {{app: my-application}}}}}}]\n\
         \x20 policy: {{placementType: PickFixed, clusterNames: [prod-cluster-1]}}\n"
    );
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

/// The fleet admin's part of KubeFleet's ResourcePlacement example: the namespace and the CRP
/// placing it.
fn admin_setup(dir: &Path) -> HarnessResult<String> {
    let path = dir.join("admin.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: my-app}\n---\n\
         apiVersion: placement.kubernetes-fleet.io/v1\nkind: ClusterResourcePlacement\n\
         metadata: {name: app-namespace-crp}\nspec:\n  resourceSelectors:\n\
         \x20 - {group: \"\", kind: Namespace, name: my-app, version: v1, \
         selectionScope: NamespaceOnly}\n\
         \x20 policy: {placementType: PickAll}\n",
    )
    .map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

/// kubectl sends a kubeconfig's token only over HTTPS, so this hub serves TLS.
#[test]
fn a_namespace_token_places_in_its_namespace_with_kubectl_and_nowhere_else() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tokens = tokens_file(dir.path())?.display().to_string();
    let (cert, key) = self_signed_certificate(dir.path(), "hub")?;
    let (cert_arg, key_arg) = (cert.display().to_string(), key.display().to_string());
    let extra = [
        "--tokens",
        &tokens,
        "--tls-cert",
        &cert_arg,
        "--tls-key",
        &key_arg,
    ];
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &extra)?;
    assert!(hub.url.starts_with("https://127.0.0.1:"), "{}", hub.url);
    let admin = dir.path().join("admin.token").display().to_string();
    let setup = admin_setup(dir.path())?;
    let untrusted = hub.cli(&["--token", &admin, "apply", "-f", &setup])?;
    assert!(
        !untrusted.status.success(),
        "the CLI trusted an unknown certificate"
    );
    let applied = hub.cli(&["--ca", &cert_arg, "--token", &admin, "apply", "-f", &setup])?;
    assert!(applied.status.success(), "{}", stderr(&applied));
    let team_dir = dir.path().join("team");
    std::fs::create_dir_all(&team_dir).map_err(|e| e.to_string())?;
    let team = Kubectl::for_hub_as(&hub, &team_dir, Some(TEAM), Some(&cert))?;
    let created = team.ok(&["apply", "-f", &resource_placement(dir.path(), "my-app")?])?;
    assert!(
        created.contains("resourceplacement.placement.kubernetes-fleet.io/app-configs-rp created"),
        "{created}"
    );
    let listed = team.ok(&["get", "rp", "-n", "my-app"])?;
    assert!(listed.contains("app-configs-rp"), "{listed}");
    let elsewhere = team.fails(&["apply", "-f", &resource_placement(dir.path(), "other")?])?;
    assert!(
        elsewhere.contains("Error from server (Forbidden)") && elsewhere.contains("\"other\""),
        "{elsewhere}"
    );
    let crp = team.fails(&["apply", "-f", &setup])?;
    assert!(crp.contains("Error from server (Forbidden)"), "{crp}");
    let team_token = dir.path().join("team.token").display().to_string();
    let own = hub.cli(&[
        "--ca",
        &cert_arg,
        "--token",
        &team_token,
        "get",
        "rp",
        "-n",
        "my-app",
    ])?;
    assert!(
        own.status.success() && stdout(&own).contains("app-configs-rp"),
        "{}",
        stderr(&own)
    );
    let crps = hub.cli(&["--ca", &cert_arg, "--token", &team_token, "get", "crp"])?;
    assert!(
        !crps.status.success() && stderr(&crps).contains("Forbidden"),
        "{}",
        stderr(&crps)
    );
    hub.stop()
}

#[test]
fn beyond_loopback_tokens_are_required() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut open = Command::new(binary())
        .arg("serve")
        .arg("--data")
        .arg(dir.path().join("open"))
        .args(["--listen", "0.0.0.0:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + EXIT_TIMEOUT;
    let exited = loop {
        match open.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break Some(status),
            None if Instant::now() > deadline => break None,
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    if exited.is_none() {
        let _ = open.kill();
    }
    let output = open.wait_with_output().map_err(|e| e.to_string())?;
    assert!(
        exited.is_some_and(|s| !s.success()),
        "serve did not refuse to start"
    );
    assert!(
        stderr(&output).contains("refusing to serve on 0.0.0.0:0 without tokens"),
        "{}",
        stderr(&output)
    );
    assert!(
        !dir.path().join("open").exists(),
        "the refused start opened a log"
    );
    let tokens = tokens_file(dir.path())?.display().to_string();
    let hub = HubProcess::start_on(
        &binary(),
        &dir.path().join("data"),
        "0.0.0.0:0",
        &["--tokens", &tokens],
    )?;
    let port = hub
        .url
        .rsplit(':')
        .next()
        .ok_or("no port in the listening line")?;
    let status = format!("http://127.0.0.1:{port}/v1/status");
    assert_eq!(call("GET", &status, None, None)?.0, 401);
    assert_eq!(call("GET", &status, Some(ADMIN), None)?.0, 200);
    hub.stop()
}

#[test]
fn an_agent_process_joins_with_its_agent_token() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start_with_tokens(dir.path())?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    assert_eq!(
        call("POST", &events, Some(ADMIN), Some(&member_cluster("east")))?.0,
        200
    );
    let token = dir.path().join("east.token");
    std::fs::write(&token, AGENT_EAST).map_err(|e| e.to_string())?;
    let state = dir.path().join("agent");
    let mut agent = std::process::Command::new(binary())
        .args([
            "agent",
            "--cluster",
            "east",
            "--hub",
            &hub.url,
            "--applier",
            "sim",
        ])
        .args(["--max-seconds", "20", "--token"])
        .arg(&token)
        .arg("--state")
        .arg(&state)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let member = format!(
        "{}/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters/east",
        hub.url
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let mut joined = false;
    while !joined && std::time::Instant::now() < deadline {
        let (_, object) = call("GET", &member, Some(ADMIN), None)?;
        joined = object["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|x| x["type"] == "Joined" && x["status"] == "True")
        });
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = agent.kill();
    let _ = agent.wait();
    assert!(
        joined,
        "the agent's heartbeat, sent with its token, joined the member"
    );
    hub.stop()
}

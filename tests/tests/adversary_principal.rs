//! Who did it cannot be forged: real hub processes on free loopback ports record, with every
//! input, the principal the hub authenticated — a token's name and role, `local` on an open
//! loopback hub — whatever the body's free-text `source` says, and `flotilla events` shows it.
//! A body that names a principal itself is refused.

use std::path::{Path, PathBuf};

use flotilla_tests::support::{HarnessResult, HubProcess, stderr, stdout};
use serde_json::{Value, json};

const ADMIN: &str = "admin-token-0123456789";
const TEAM: &str = "team-my-app-token-0123456789";
const FORGED_SOURCE: &str = "user/alice@corp (admin)";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// The tokens file and the admin's token file (for `flotilla --token`).
fn start_with_tokens(dir: &Path) -> HarnessResult<HubProcess> {
    let path = dir.join("tokens.yaml");
    let text = format!(
        "tokens:\n\
         - {{name: ops, token: {ADMIN}, role: admin}}\n\
         - {{name: app-team, token: {TEAM}, role: namespace, namespaces: [my-app]}}\n"
    );
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("admin.token"), format!("{ADMIN}\n")).map_err(|e| e.to_string())?;
    let tokens = path.display().to_string();
    HubProcess::start(&binary(), &dir.join("data"), &["--tokens", &tokens])
}

/// One HTTP request with a JSON body.
fn call(method: &str, url: &str, token: Option<&str>, body: &Value) -> HarnessResult<(u16, Value)> {
    flotilla_tests::adversary::call(method, url, token, Some(body))
}

fn approval() -> Value {
    json!({"type": "approve", "name": "run-1-before-canary", "namespace": "my-app",
        "source": FORGED_SOURCE})
}

/// `flotilla events -o json`, one event a line.
fn listed(hub: &HubProcess, token: Option<&Path>) -> HarnessResult<Vec<Value>> {
    let token = token.map(|path| path.display().to_string());
    let mut args = Vec::new();
    if let Some(token) = &token {
        args.extend(["--token", token.as_str()]);
    }
    args.extend(["events", "-o", "json"]);
    let output = hub.cli(&args)?;
    if !output.status.success() {
        return Err(stderr(&output));
    }
    stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).map_err(|e| format!("{e}: {line}")))
        .collect()
}

/// The listed event of this kind, last of them.
fn last_of<'a>(events: &'a [Value], kind: &str) -> HarnessResult<&'a Value> {
    events
        .iter()
        .rev()
        .map(|line| &line["event"])
        .find(|event| event["type"] == kind)
        .ok_or_else(|| format!("no {kind} event in {events:?}"))
}

#[test]
fn a_namespace_tokens_approval_records_the_token_however_the_source_is_spelled() -> HarnessResult<()>
{
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start_with_tokens(dir.path())?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    let (code, body) = call("POST", &events, Some(TEAM), &approval())?;
    assert_eq!(code, 200, "{body}");

    let admin = dir.path().join("admin.token");
    let listed = listed(&hub, Some(&admin))?;
    let approve = last_of(&listed, "approve")?;
    assert_eq!(
        approve["source"], FORGED_SOURCE,
        "the claim is kept, as a claim"
    );
    assert_eq!(
        approve["principal"],
        json!({"kind": "token", "name": "app-team", "role": "namespace",
            "namespaces": ["my-app"]}),
        "{approve}"
    );
    let text = hub.cli(&["--token", &admin.display().to_string(), "events"])?;
    let text = stdout(&text);
    assert!(
        text.lines().any(|line| line.contains("approve")
            && line.contains("by token app-team (namespace my-app)")),
        "{text}"
    );
    hub.stop()
}

#[test]
fn a_kubernetes_api_write_records_the_token_that_made_it() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = start_with_tokens(dir.path())?;
    let url = format!("{}/api/v1/namespaces/my-app/configmaps", hub.url);
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "my-app"}, "data": {"a": "1"}});
    let (code, body) = call("POST", &url, Some(TEAM), &config)?;
    assert!(code == 201 || code == 200, "{code}: {body}");

    let listed = listed(&hub, Some(&dir.path().join("admin.token")))?;
    let apply = last_of(&listed, "apply")?;
    assert_eq!(apply["source"], "kube-api");
    assert_eq!(apply["principal"]["kind"], "token", "{apply}");
    assert_eq!(apply["principal"]["name"], "app-team", "{apply}");
    hub.stop()
}

#[test]
fn an_open_loopback_hub_records_local_and_a_body_principal_is_refused() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let events = format!("{}/v1/events?wait=true", hub.url);
    let (code, body) = call("POST", &events, None, &approval())?;
    assert_eq!(code, 200, "{body}");

    let mut forged = approval();
    forged["principal"] = json!({"kind": "token", "name": "ops", "role": "admin"});
    let (code, body) = call("POST", &events, None, &json!([approval(), forged]))?;
    assert_eq!(code, 400, "{body}");
    assert!(body.to_string().contains("principal"), "{body}");

    let listed = listed(&hub, None)?;
    let approvals: Vec<&Value> = listed
        .iter()
        .map(|line| &line["event"])
        .filter(|event| event["type"] == "approve")
        .collect();
    assert_eq!(
        approvals.len(),
        1,
        "nothing of the refused request: {listed:?}"
    );
    assert_eq!(approvals[0]["principal"], json!({"kind": "local"}));
    hub.stop()
}

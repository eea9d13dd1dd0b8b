//! A kubectl approval records the token that made it: a hub with bearer tokens serving TLS (so
//! kubectl sends its kubeconfig's token), a staged run brought to its approval by an admin, and
//! the seed's approval command (`kubectl patch clusterapprovalrequests … --subresource=status`)
//! run by a second token; `flotilla events` lists the approval with that token's name and role,
//! not the `kube-api` source every Kubernetes API write carries, and so do `replay timeline` and
//! `replay explain` afterwards, whose gate names the approver and quotes the message.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{
    HarnessResult, HubProcess, fixture, run_ok, self_signed_certificate, stderr, stdout,
};
use serde_json::{Value, json};

const OPS: &str = "ops-token-0123456789abcdef";
const RELEASE: &str = "release-manager-token-0123456789";
const APPROVED: &str = r#"{"status":{"conditions":[{"type":"Approved","status":"True","reason":"lgtm","message":"lgtm","lastTransitionTime":"2026-11-23T00:00:00Z","observedGeneration":1}]}}"#;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// A hub with two admin tokens (`ops`, `release-manager`) serving TLS; its certificate.
fn start(dir: &Path) -> HarnessResult<(HubProcess, PathBuf)> {
    let tokens = dir.join("tokens.yaml");
    let text = format!(
        "tokens:\n\
         - {{name: ops, token: {OPS}, role: admin}}\n\
         - {{name: release-manager, token: {RELEASE}, role: admin}}\n"
    );
    std::fs::write(&tokens, text).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("ops.token"), OPS).map_err(|e| e.to_string())?;
    let (cert, key) = self_signed_certificate(dir, "hub")?;
    let args = [
        "--tokens".to_owned(),
        tokens.display().to_string(),
        "--tls-cert".to_owned(),
        cert.display().to_string(),
        "--tls-key".to_owned(),
        key.display().to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let hub = HubProcess::start(&binary(), &dir.join("data"), &args)?;
    Ok((hub, cert))
}

/// Posts events over HTTPS with the `ops` token, trusting `cert`.
fn post(hub: &HubProcess, cert: &Path, events: &Value) -> HarnessResult<()> {
    let pem = std::fs::read(cert).map_err(|e| e.to_string())?;
    // reqwest is built without a crypto provider of its own (docs/decisions.md).
    flotilla_adapters::tls::install_crypto_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let root = reqwest::Certificate::from_pem(&pem).map_err(|e| e.to_string())?;
        let client = reqwest::Client::builder()
            .add_root_certificate(root)
            .timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| e.to_string())?;
        let response = client
            .post(format!("{}/v1/events?wait=true", hub.url))
            .bearer_auth(OPS)
            .json(events)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(format!(
                "{}: {:?}",
                response.status(),
                response.text().await
            ))
        }
    })
}

fn kubectl_as(
    hub: &HubProcess,
    dir: &Path,
    who: &str,
    token: &str,
    cert: &Path,
) -> HarnessResult<Kubectl> {
    let home = dir.join(who);
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
    Kubectl::for_hub_as(hub, &home, Some(token), Some(cert))
}

#[test]
fn a_kubectl_approval_records_the_token_that_made_it() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (hub, cert) = start(dir.path())?;
    let ops = kubectl_as(&hub, dir.path(), "ops", OPS, &cert)?;
    ops.ok(&["apply", "-f", &fixture("staged-fleet.yaml")])?;
    let beats: Vec<Value> = ["member1", "member2", "member3"]
        .iter()
        .map(|c| json!({"type": "heartbeat", "cluster": c}))
        .collect();
    post(&hub, &cert, &Value::Array(beats))?;
    ops.ok(&["apply", "-f", &fixture("staged-rollout.yaml")])?;
    ops.ok(&["apply", "-f", &fixture("staged-run.yaml")])?;
    ops.ok(&[
        "patch",
        "csur",
        "example-run",
        "--type=merge",
        "-p",
        r#"{"spec":{"state":"Run"}}"#,
    ])?;
    post(
        &hub,
        &cert,
        &json!({"type": "report", "cluster": "member1", "placement": "example-placement",
            "resourceIndex": 0, "applied": true, "available": true}),
    )?;

    let release = kubectl_as(&hub, dir.path(), "release", RELEASE, &cert)?;
    let approved = release.ok(&[
        "patch",
        "clusterapprovalrequests",
        "example-run-after-staging",
        "--type=merge",
        "-p",
        APPROVED,
        "--subresource=status",
    ])?;
    assert!(approved.contains("patched"), "{approved}");

    let token_file = dir.path().join("ops.token").display().to_string();
    let ca = cert.display().to_string();
    let listed = hub.cli(&["--ca", &ca, "--token", &token_file, "events", "-o", "json"])?;
    assert!(listed.status.success(), "{}", stderr(&listed));
    let approval = stdout(&listed)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|line| line["event"].clone())
        .rfind(|event| event["type"] == "approve")
        .ok_or("no approval listed")?;
    assert_eq!(approval["name"], "example-run-after-staging", "{approval}");
    assert_eq!(
        (&approval["reason"], &approval["message"]),
        (&json!("lgtm"), &json!("lgtm")),
        "{approval}"
    );
    assert_eq!(approval["principal"]["kind"], "token", "{approval}");
    assert_eq!(
        approval["principal"]["name"], "release-manager",
        "{approval}"
    );
    assert_eq!(approval["principal"]["role"], "admin", "{approval}");
    let table = hub.cli(&["--ca", &ca, "--token", &token_file, "events"])?;
    assert!(
        stdout(&table)
            .lines()
            .any(|line| line.contains("example-run-after-staging")
                && line.contains("by token release-manager")),
        "{}",
        stdout(&table)
    );
    hub.stop()?;

    // Looking back, the approval is the token's: in the timeline and in the history `explain`
    // shows of a cluster the run moved.
    let data = dir.path().join("data").display().to_string();
    let by_token =
        "token/release-manager[kube-api] approve ClusterApprovalRequest/example-run-after-staging";
    let timeline = run_ok(&binary(), &["replay", "--data", &data, "timeline"])?;
    assert!(
        timeline.contains(&format!("{by_token} \"lgtm\"")),
        "the approver's message too: {timeline}"
    );
    let explained = run_ok(
        &binary(),
        &[
            "replay",
            "--data",
            &data,
            "explain",
            "--placement",
            "example-placement",
            "--cluster",
            "member2",
        ],
    )?;
    assert!(explained.contains(by_token), "{explained}");
    // The run's gate names its approver, and flags an approval given with no soak after its
    // request.
    let gate = explained
        .lines()
        .find(|line| {
            line.trim_start()
                .starts_with("gate: approval example-run-after-staging")
        })
        .ok_or_else(|| format!("no approval gate: {explained}"))?;
    assert!(
        gate.contains(" by token/release-manager[kube-api]"),
        "{gate}"
    );
    assert!(gate.contains("under the 60 s soak"), "{gate}");
    assert!(
        gate.contains(": \"lgtm\""),
        "the approver's message: {gate}"
    );
    Ok(())
}

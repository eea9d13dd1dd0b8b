//! kubectl's everyday verbs with the machine's kubectl (1.32) against `flotilla serve` on a free
//! loopback port: `create namespace|configmap|secret|deployment` (protobuf bodies),
//! `generateName`, `get --chunk-size` paging at one point of the log with `410 Expired` for a
//! token too old, `delete --all` and `-l` and a collection DELETE, `auth can-i` and `auth whoami`
//! with an admin and a namespace token, the 3 MiB request and 256 KiB annotation limits worded as
//! a real API server words them, and AGE counted on the reader's wall clock.

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HarnessResult, HubProcess, self_signed_certificate};
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn json_of(text: &str) -> HarnessResult<Value> {
    serde_json::from_str(text).map_err(|e| format!("{e}: {text}"))
}

fn write(dir: &Path, name: &str, text: &str) -> HarnessResult<String> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

/// A ClusterResourcePlacement of namespace `x` to every cluster.
fn crp(name: &str, tier: &str) -> String {
    format!(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n\
         metadata: {{name: {name}, labels: {{tier: {tier}}}}}\nspec:\n  resourceSelectors:\n  \
         - {{group: \"\", version: v1, kind: Namespace, name: x}}\n  policy: {{placementType: \
         PickAll}}\n---\n"
    )
}

const CRPS: &str = "/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourceplacements";

#[test]
fn kubectl_creates_built_in_kinds_it_sends_as_protobuf() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    assert_eq!(
        kubectl.ok(&["create", "namespace", "x"])?,
        "namespace/x created\n"
    );
    kubectl.ok(&["create", "configmap", "c", "--from-literal=k=v"])?;
    kubectl.ok(&["create", "secret", "generic", "s", "--from-literal=k=v"])?;
    let created = kubectl.ok(&["create", "deployment", "d", "--image=nginx"])?;
    assert_eq!(created, "deployment.apps/d created\n");

    let namespace = json_of(&kubectl.ok(&["get", "namespace", "x", "-o", "json"])?)?;
    assert_eq!(namespace["metadata"]["name"], "x");
    let map = json_of(&kubectl.ok(&["get", "configmap", "c", "-o", "json"])?)?;
    assert_eq!(map["data"]["k"], "v", "{map}");
    assert_eq!(map["metadata"]["namespace"], "default", "{map}");
    let secret = json_of(&kubectl.ok(&["get", "secret", "s", "-o", "json"])?)?;
    assert_eq!(secret["data"]["k"], "dg==", "base64 of v: {secret}");
    let deployment = json_of(&kubectl.ok(&["get", "deployment", "d", "-o", "json"])?)?;
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 1, "{deployment}");
    assert_eq!(spec["selector"]["matchLabels"]["app"], "d", "{deployment}");
    let container = &spec["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx", "{deployment}");
    assert!(
        deployment["metadata"].get("generateName").is_none(),
        "empty strings Go's protobuf writes are not stored: {deployment}"
    );
    Ok(())
}

#[test]
fn generate_name_paging_and_collection_deletes() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let generated = write(
        dir.path(),
        "generated.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: web-, namespace: team}\n",
    )?;
    kubectl.ok(&["create", "namespace", "team"])?;
    let created = kubectl.ok(&["create", "-f", &generated, "-o", "name"])?;
    let name = created.trim().trim_start_matches("configmap/");
    assert!(name.starts_with("web-") && name.len() == 9, "{created}");
    kubectl.ok(&["get", "configmap", name, "-n", "team"])?;

    let all: String = (1..=5)
        .map(|i| crp(&format!("p{i}"), ["a", "b"][i % 2]))
        .collect();
    kubectl.ok(&["apply", "-f", &write(dir.path(), "crps.yaml", &all)?])?;
    let chunked = kubectl.ok(&["get", "crp", "--chunk-size=2", "-o", "name"])?;
    assert_eq!(chunked.lines().count(), 5, "{chunked}");

    let first = json_of(&kubectl.ok(&["get", "--raw", &format!("{CRPS}?limit=2")])?)?;
    let names = |page: &Value| -> Vec<String> {
        page["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(names(&first), ["p1", "p2"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 3, "{first}");
    let token = first["metadata"]["continue"]
        .as_str()
        .ok_or("no continue")?;
    // Created after the first page: a consistent list does not show it.
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir.path(), "p0.yaml", &crp("p0", "a"))?,
    ])?;
    kubectl.ok(&["delete", "crp", "p5"])?;
    let rest = json_of(&kubectl.ok(&["get", "--raw", &format!("{CRPS}?continue={token}")])?)?;
    assert_eq!(names(&rest), ["p3", "p4", "p5"], "{rest}");
    assert!(rest["metadata"].get("continue").is_none(), "{rest}");

    let stale = stale_token(token)?;
    let expired = kubectl.fails(&["get", "--raw", &format!("{CRPS}?continue={stale}")])?;
    assert!(
        expired.contains("Error from server (Expired): The provided continue parameter is too old"),
        "{expired}"
    );

    let deleted = kubectl.ok(&["delete", "crp", "-l", "tier=a"])?;
    assert_eq!(deleted.lines().count(), 3, "p0, p2, p4: {deleted}");
    let raw = kubectl.ok(&["delete", "--raw", &format!("{CRPS}?labelSelector=tier%3Db")])?;
    assert_eq!(names(&json_of(&raw)?), ["p1", "p3"], "{raw}");
    assert_eq!(kubectl.ok(&["get", "crp", "-o", "name"])?, "");
    kubectl.ok(&["create", "configmap", "other", "-n", "default"])?;
    kubectl.ok(&["delete", "configmap", "--all", "-n", "team"])?;
    assert_eq!(kubectl.ok(&["get", "cm", "-n", "team", "-o", "name"])?, "");
    assert_eq!(
        kubectl.ok(&["get", "cm", "-o", "name"])?,
        "configmap/other\n"
    );
    Ok(())
}

/// The same token, issued an hour earlier: past the hub's continue window.
fn stale_token(token: &str) -> HarnessResult<String> {
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|e| e.to_string())?;
    let mut value: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    let issued = value["issued"].as_i64().ok_or("no issue time")?;
    value["issued"] = Value::from(issued - 3600);
    Ok(URL_SAFE_NO_PAD.encode(value.to_string()))
}

#[test]
fn requests_over_the_servers_limits_are_refused_with_its_words() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let big = write(dir.path(), "big.txt", &"a".repeat(5_000_000))?;
    let refused = kubectl.fails(&["create", "configmap", "big", &format!("--from-file={big}")])?;
    assert!(
        refused.contains("Request entity too large: limit is 3145728"),
        "{refused}"
    );
    let annotated = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: noted\n  annotations: {{a: {}}}\n",
        "x".repeat(300_000)
    );
    let too_long = kubectl.fails(&[
        "create",
        "-f",
        &write(dir.path(), "noted.yaml", &annotated)?,
    ])?;
    assert!(
        too_long.contains(
            "ConfigMap \"noted\" is invalid: metadata.annotations: Too long: must have at most \
             262144 bytes"
        ),
        "{too_long}"
    );
    assert!(kubectl.fails(&["get", "cm", "noted"])?.contains("NotFound"));

    // AGE: counted on the reader's clock, not from the hub's last event.
    kubectl.ok(&["create", "configmap", "aged"])?;
    std::thread::sleep(std::time::Duration::from_millis(3_100));
    let listed = kubectl.ok(&["get", "cm", "aged", "--no-headers"])?;
    let age = listed.split_whitespace().last().unwrap_or("");
    let seconds: u64 = age
        .trim_end_matches('s')
        .parse()
        .map_err(|_| listed.clone())?;
    assert!(seconds >= 3, "{listed}");
    Ok(())
}

const ADMIN: &str = "admin-token-0123456789";
const TEAM: &str = "team-my-app-token-0123456789";

/// kubectl sends a kubeconfig's token only over HTTPS, so this hub serves TLS.
#[test]
fn auth_can_i_and_whoami_answer_from_the_callers_token() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tokens = write(
        dir.path(),
        "tokens.yaml",
        &format!(
            "tokens:\n- {{name: ops, token: {ADMIN}, role: admin}}\n\
             - {{name: app-team, token: {TEAM}, role: namespace, namespaces: [my-app]}}\n"
        ),
    )?;
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
    let (admin_dir, team_dir) = (dir.path().join("admin"), dir.path().join("team"));
    for path in [&admin_dir, &team_dir] {
        std::fs::create_dir_all(path).map_err(|e| e.to_string())?;
    }
    let admin = Kubectl::for_hub_as(&hub, &admin_dir, Some(ADMIN), Some(&cert))?;
    let team = Kubectl::for_hub_as(&hub, &team_dir, Some(TEAM), Some(&cert))?;

    assert_eq!(admin.ok(&["auth", "can-i", "create", "crp"])?, "yes\n");
    let whoami = json_of(&admin.ok(&["auth", "whoami", "-o", "json"])?)?;
    assert_eq!(whoami["status"]["userInfo"]["username"], "ops", "{whoami}");
    let everything = admin.ok(&["auth", "can-i", "--list"])?;
    assert!(everything.contains("*.*"), "{everything}");

    let cluster_wide = team.run(&["auth", "can-i", "create", "crp"])?;
    assert!(!cluster_wide.status.success());
    let said = String::from_utf8_lossy(&cluster_wide.stdout).into_owned();
    assert!(
        said.starts_with(
            "no - clusterresourceplacements.placement.kubernetes-fleet.io is forbidden"
        ),
        "the reason is the refusal the hub would answer: {said}"
    );
    assert_eq!(
        team.ok(&["auth", "can-i", "create", "rp", "-n", "my-app"])?,
        "yes\n"
    );
    assert_eq!(
        team.ok(&["auth", "can-i", "delete", "configmaps", "-n", "my-app"])?,
        "yes\n"
    );
    let elsewhere = team.run(&["auth", "can-i", "create", "configmaps", "-n", "other"])?;
    assert!(String::from_utf8_lossy(&elsewhere.stdout).starts_with("no - "));
    let whoami = json_of(&team.ok(&["auth", "whoami", "-o", "json"])?)?;
    let user = &whoami["status"]["userInfo"];
    assert_eq!(user["username"], "app-team", "{whoami}");
    assert_eq!(
        user["extra"]["flotilla/namespaces"][0], "my-app",
        "{whoami}"
    );
    let listed = team.ok(&["auth", "can-i", "--list", "-n", "my-app"])?;
    assert!(listed.contains("*.*"), "{listed}");
    let outside = team.ok(&["auth", "can-i", "--list", "-n", "other"])?;
    assert!(!outside.contains("*.*"), "{outside}");
    Ok(())
}

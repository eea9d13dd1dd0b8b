//! The machine's real `kubectl` (1.32) against `flotilla serve`, as a KubeFleet user drives a
//! hub: apply, get (KubeFleet's printer columns), describe, the seed's approval patch on the
//! `status` subresource, stopping a run with a merge patch, server-side apply with its
//! conflicts, delete, `get -w` following a rollout, and errors printed as a real server's.

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HubProcess, fixture};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn heartbeats(hub: &HubProcess, clusters: &[&str]) -> Result<(), String> {
    let beats: Vec<Value> = clusters
        .iter()
        .map(|c| json!({"schemaVersion": 1, "type": "heartbeat", "cluster": c}))
        .collect();
    hub.post_events(&Value::Array(beats)).map(|_| ())
}

fn report(hub: &HubProcess, cluster: &str, placement: &str) -> Result<(), String> {
    hub.post_events(
        &json!({"schemaVersion": 1, "type": "report", "cluster": cluster,
        "placement": placement, "resourceIndex": 0, "applied": true, "available": true}),
    )
    .map(|_| ())
}

fn json_of(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{e}: {text}"))
}

/// The approval command of KubeFleet's staged-update docs ("Approve manually"), for one request.
fn approve_args(request: &str, patch: &str) -> Vec<String> {
    [
        "patch",
        "clusterapprovalrequests",
        request,
        "--type=merge",
        "-p",
        patch,
        "--subresource=status",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

const APPROVED: &str = r#"{"status":{"conditions":[{"type":"Approved","status":"True","reason":"lgtm","message":"lgtm, staging soaked","lastTransitionTime":"2026-11-23T00:00:00Z","observedGeneration":1}]}}"#;
/// A reason `metav1.Condition` refuses (it must start with a letter, and holds no spaces).
const UNREASONABLE: &str = r#"{"status":{"conditions":[{"type":"Approved","status":"True","reason":"looks good","message":"lgtm","lastTransitionTime":"2026-11-23T00:00:00Z","observedGeneration":1}]}}"#;

#[test]
fn a_staged_run_is_started_approved_and_stopped_with_kubectl() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let applied = kubectl.ok(&["apply", "-f", &fixture("staged-fleet.yaml")])?;
    assert!(
        applied.contains("membercluster.cluster.kubernetes-fleet.io/member1 created"),
        "{applied}"
    );
    heartbeats(&hub, &["member1", "member2", "member3"])?;
    kubectl.ok(&["apply", "-f", &fixture("staged-rollout.yaml")])?;
    kubectl.ok(&["apply", "-f", &fixture("staged-run.yaml")])?;

    let started = kubectl.ok(&[
        "patch",
        "csur",
        "example-run",
        "--type=merge",
        "-p",
        r#"{"spec":{"state":"Run"}}"#,
    ])?;
    assert!(
        started
            .contains("clusterstagedupdaterun.placement.kubernetes-fleet.io/example-run patched"),
        "{started}"
    );
    report(&hub, "member1", "example-placement")?;

    let requests = kubectl.ok(&["get", "careq"])?;
    assert!(requests.starts_with("NAME"), "{requests}");
    assert!(requests.contains("example-run-after-staging"), "{requests}");
    let request =
        json_of(&kubectl.ok(&["get", "careq", "example-run-after-staging", "-o", "json"])?)?;
    assert_eq!(
        request["metadata"]["generation"], 1,
        "the seed's observedGeneration: 1 matches"
    );

    let args = approve_args("example-run-after-staging", UNREASONABLE);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let refused = kubectl.run(&args)?;
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("must start with a letter"),
        "a reason a Kubernetes condition refuses is refused: {said}"
    );
    let args = approve_args("example-run-after-staging", APPROVED);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let approved = kubectl.ok(&args)?;
    let request =
        json_of(&kubectl.ok(&["get", "careq", "example-run-after-staging", "-o", "json"])?)?;
    let condition = (request["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|c| c["type"] == "Approved")
    .cloned()
    .unwrap_or_default();
    assert_eq!(
        (&condition["reason"], &condition["message"]),
        (&json!("lgtm"), &json!("lgtm, staging soaked")),
        "the approver's words are kept: {request}"
    );
    assert!(
        approved.contains(
            "clusterapprovalrequest.placement.kubernetes-fleet.io/example-run-after-staging patched"
        ),
        "{approved}"
    );
    let run = json_of(&kubectl.ok(&["get", "csur", "example-run", "-o", "json"])?)?;
    let production = &run["status"]["stagesStatus"][1];
    assert!(
        production["clusters"]
            .as_array()
            .is_some_and(|clusters| clusters.iter().any(|c| c["conditions"]
                .as_array()
                .is_some_and(|conditions| conditions.iter().any(|x| x["type"] == "Started")))),
        "the approval let production start: {run}"
    );

    kubectl.ok(&[
        "patch",
        "csur",
        "example-run",
        "--type=merge",
        "-p",
        r#"{"spec":{"state":"Stop"}}"#,
    ])?;
    let stopped = json_of(&kubectl.ok(&["get", "csur", "example-run", "-o", "json"])?)?;
    assert_eq!(stopped["spec"]["state"], "Stop", "{stopped}");
    let reasons: Vec<&Value> = stopped["status"]["conditions"]
        .as_array()
        .map(|c| c.iter().map(|x| &x["reason"]).collect())
        .unwrap_or_default();
    assert!(
        reasons
            .iter()
            .any(|r| *r == "UpdateRunStopping" || *r == "UpdateRunStopped"),
        "{stopped}"
    );

    let tables = kubectl.ok(&["get", "crp,csur,careq,memberclusters"])?;
    for header in [
        "SCHEDULED-GEN",
        "RESOURCE-SNAPSHOT-INDEX",
        "UPDATE-RUN",
        "MEMBER-AGENT-LAST-SEEN",
    ] {
        assert!(tables.contains(header), "{header} missing:\n{tables}");
    }
    let described = kubectl.ok(&["describe", "crp", "example-placement"])?;
    for section in [
        "Status:",
        "Conditions:",
        "Placement Statuses:",
        "Selected Resources:",
    ] {
        assert!(
            described.contains(section),
            "{section} missing:\n{described}"
        );
    }
    hub.stop()
}

#[test]
fn kubectl_prints_the_hubs_errors_as_a_real_servers() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let missing = kubectl.fails(&["get", "crp", "nope"])?;
    assert_eq!(
        missing.trim(),
        r#"Error from server (NotFound): clusterresourceplacements.placement.kubernetes-fleet.io "nope" not found"#
    );
    let unknown = kubectl.fails(&["get", "gadgets"])?;
    assert!(
        unknown.contains(r#"the server doesn't have a resource type "gadgets""#),
        "{unknown}"
    );
    let invalid = dir.path().join("invalid.yaml");
    std::fs::write(
        &invalid,
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n\
         metadata: {name: bad}\nspec:\n  resourceSelectors: [{group: \"\", kind: Namespace, name: app, version: v1}]\n  policy: {placementType: PickN, numberOfClusters: -1}\n",
    )
    .map_err(|e| e.to_string())?;
    let refused = kubectl.fails(&["apply", "-f", &invalid.display().to_string()])?;
    assert!(
        refused.contains(
            r#"The ClusterResourcePlacement "bad" is invalid: spec.policy.numberOfClusters"#
        ),
        "{refused}"
    );
    let typo = dir.path().join("typo.yaml");
    std::fs::write(
        &typo,
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n\
         metadata: {name: typo}\nspec:\n  resourceSelectors: [{group: \"\", kind: Namespace, name: app, version: v1}]\n\
         \x20 policy: {placementType: PickAll, numberOfCluster: 2}\n",
    )
    .map_err(|e| e.to_string())?;
    // kubectl's default is `--validate=strict`; a typo is refused (`kubectl_validation.rs`).
    let warned = kubectl.run(&[
        "apply",
        "--validate=warn",
        "-f",
        &typo.display().to_string(),
    ])?;
    assert!(warned.status.success());
    assert!(
        flotilla_tests::support::stderr(&warned)
            .contains(r#"Warning: unknown field "spec.policy.numberOfCluster""#),
        "{}",
        flotilla_tests::support::stderr(&warned)
    );
    let approval = kubectl.fails(&[
        "apply",
        "-f",
        &fixture("seed-yaml/read/002-staged-update-3.yaml"),
    ])?;
    assert!(
        approval.contains(r#"The ClusterApprovalRequest "example-run-canary" is invalid: kind: ClusterApprovalRequest objects are created by staged update runs"#)
            && approval.contains("--subresource=status"),
        "applying the seed's approval request says how to approve: {approval}"
    );
    kubectl.ok(&["create", "-f", &fixture("staged-rollout.yaml")])?;
    let again = kubectl.fails(&["create", "-f", &fixture("staged-rollout.yaml")])?;
    assert!(
        again.contains(r#"Error from server (AlreadyExists): error when creating"#)
            && again.contains(r#"clusterresourceplacements.placement.kubernetes-fleet.io "example-placement" already exists"#),
        "{again}"
    );
    let status = kubectl.fails(&[
        "patch",
        "crp",
        "example-placement",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[]}}"#,
        "--subresource=status",
    ])?;
    assert!(status.contains("is invalid: status"), "{status}");

    let placement = json_of(&kubectl.ok(&["get", "crp", "example-placement", "-o", "json"])?)?;
    let mut stale = placement.clone();
    stale["metadata"]["resourceVersion"] = Value::from("1");
    stale["spec"]["revisionHistoryLimit"] = Value::from(5);
    let stale_file = dir.path().join("stale.json");
    std::fs::write(&stale_file, stale.to_string()).map_err(|e| e.to_string())?;
    let conflict = kubectl.fails(&["replace", "-f", &stale_file.display().to_string()])?;
    assert!(
        conflict.contains(r#"Error from server (Conflict): error when replacing"#)
            && conflict.contains("the object has been modified; please apply your changes to the latest version and try again"),
        "{conflict}"
    );
    let mut fresh = placement;
    fresh["spec"]["revisionHistoryLimit"] = Value::from(5);
    std::fs::write(&stale_file, fresh.to_string()).map_err(|e| e.to_string())?;
    kubectl.ok(&["replace", "-f", &stale_file.display().to_string()])?;
    let not_an_object = kubectl.fails(&[
        "patch",
        "crp",
        "example-placement",
        "--type=merge",
        "-p",
        "not json",
    ])?;
    assert!(
        not_an_object
            .contains("Error from server (BadRequest): the patch does not leave an object"),
        "{not_an_object}"
    );
    hub.stop()
}

#[test]
fn server_side_apply_owns_fields_and_delete_removes_objects() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let rollout = dir.path().join("rollout.yaml");
    std::fs::write(
        &rollout,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: test-namespace}\n---\n\
         apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n\
         metadata: {name: example-placement}\nspec:\n  resourceSelectors:\n\
         \x20 - {group: \"\", kind: Namespace, name: test-namespace, version: v1}\n\
         \x20 policy: {placementType: PickN, numberOfClusters: 2}\n",
    )
    .map_err(|e| e.to_string())?;
    let rollout = rollout.display().to_string();
    let dry = kubectl.ok(&["apply", "--dry-run=server", "-f", &rollout])?;
    assert!(dry.contains("created (server dry run)"), "{dry}");
    kubectl.fails(&["get", "crp", "example-placement"])?;
    let applied = kubectl.ok(&["apply", "--server-side", "-f", &rollout])?;
    assert!(
        applied.contains("clusterresourceplacement.placement.kubernetes-fleet.io/example-placement serverside-applied"),
        "{applied}"
    );
    let other = dir.path().join("other.yaml");
    std::fs::write(
        &other,
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n\
         metadata: {name: example-placement}\nspec:\n  policy: {placementType: PickN, numberOfClusters: 1}\n",
    )
    .map_err(|e| e.to_string())?;
    let other = other.display().to_string();
    let conflict = kubectl.fails(&[
        "apply",
        "--server-side",
        "--field-manager=ops",
        "-f",
        &other,
    ])?;
    assert!(
        conflict.contains(r#"conflict with "kubectl": .spec.policy.numberOfClusters"#),
        "{conflict}"
    );
    kubectl.ok(&[
        "apply",
        "--server-side",
        "--field-manager=ops",
        "--force-conflicts",
        "-f",
        &other,
    ])?;
    let placement = json_of(&kubectl.ok(&["get", "crp", "example-placement", "-o", "json"])?)?;
    assert_eq!(
        placement["spec"]["policy"]["numberOfClusters"], 1,
        "{placement}"
    );
    assert_eq!(
        placement["spec"]["resourceSelectors"][0]["name"], "test-namespace",
        "the fields kubectl still owns stay: {placement}"
    );

    let label = kubectl.ok(&["label", "namespace", "test-namespace", "team=blue"])?;
    assert!(
        label.contains("namespace/test-namespace labeled"),
        "{label}"
    );
    let namespace = json_of(&kubectl.ok(&["get", "ns", "test-namespace", "-o", "json"])?)?;
    assert_eq!(namespace["metadata"]["labels"]["team"], "blue");

    let deleted = kubectl.ok(&["delete", "crp", "example-placement"])?;
    assert!(
        deleted.contains(
            r#"clusterresourceplacement.placement.kubernetes-fleet.io "example-placement" deleted"#
        ),
        "{deleted}"
    );
    kubectl.fails(&["get", "crp", "example-placement"])?;
    hub.stop()
}

#[test]
fn get_watch_follows_a_rollout() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    kubectl.ok(&["apply", "-f", &fixture("staged-fleet.yaml")])?;
    heartbeats(&hub, &["member1", "member2", "member3"])?;
    let placement = dir.path().join("placement.yaml");
    std::fs::write(
        &placement,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n---\n\
         apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n\
         metadata: {name: app}\nspec:\n  resourceSelectors:\n  - {group: \"\", kind: Namespace, name: app, version: v1}\n\
         \x20 policy: {placementType: PickAll}\n",
    )
    .map_err(|e| e.to_string())?;
    kubectl.ok(&["apply", "-f", &placement.display().to_string()])?;
    let mut watch = kubectl.spawn(&["get", "crp", "app", "-w"])?;
    // Let the watch start before the rollout moves on.
    std::thread::sleep(Duration::from_millis(500));
    for cluster in ["member1", "member2", "member3"] {
        report(&hub, cluster, "app")?;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    let mut stdout = watch.stdout.take().ok_or("no stdout")?;
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0_u8; 4096];
        while let Ok(read) = stdout.read(&mut buffer) {
            if read == 0 || sender.send(buffer[..read].to_vec()).is_err() {
                break;
            }
        }
    });
    while Instant::now() < deadline && !available_line(&seen) {
        if let Ok(chunk) = receiver.recv_timeout(Duration::from_millis(200)) {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(seen.starts_with("NAME"), "{seen}");
    assert!(
        seen.lines().count() >= 3,
        "the rollout showed as it moved:\n{seen}"
    );
    assert!(
        available_line(&seen),
        "the watch saw the placement become available:\n{seen}"
    );
    hub.stop()
}

/// A `get crp` row whose AVAILABLE column (the fifth) is True.
fn available_line(text: &str) -> bool {
    text.lines()
        .skip(1)
        .any(|line| line.split_whitespace().nth(4) == Some("True"))
}

#[test]
fn a_custom_resource_definition_adds_a_kind_and_explain_reads_the_schemas() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let crd = dir.path().join("crd.yaml");
    std::fs::write(
        &crd,
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n\
         \x20 names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}\n\
         \x20 versions:\n  - {name: v1, served: true, storage: true}\n---\n\
         apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: 3}\n",
    )
    .map_err(|e| e.to_string())?;
    let crd = crd.display().to_string();
    // The Widget kind exists once its CRD is stored: the first apply creates the CRD, the
    // second (with fresh discovery) the widget.
    let _ = kubectl.run(&["apply", "-f", &crd])?;
    let applied = kubectl.ok(&["apply", "-f", &crd])?;
    assert!(applied.contains("widget.example.com/w1"), "{applied}");
    let listed = kubectl.ok(&["get", "wd"])?;
    assert!(listed.contains("w1"), "{listed}");
    let widget = json_of(&kubectl.ok(&["get", "widgets.example.com", "w1", "-o", "json"])?)?;
    assert_eq!(widget["spec"]["size"], 3);
    let explained = kubectl.ok(&["explain", "crp"])?;
    assert!(
        explained.contains("KIND:       ClusterResourcePlacement") && explained.contains("spec"),
        "{explained}"
    );
    let resources = kubectl.ok(&["api-resources", "--api-group=placement.kubernetes-fleet.io"])?;
    for short in [
        "crp", "rp", "csur", "sur", "careq", "areq", "cro", "ro", "crpe", "crpdb",
    ] {
        assert!(
            resources
                .split_whitespace()
                .any(|word| word.split(',').any(|s| s == short)),
            "{short} missing:\n{resources}"
        );
    }
    hub.stop()
}

//! The override walk-through as a user runs it: a hub, `flotilla agent` processes (`dir` for
//! two members, so the overridden objects are files on disk; `sim` for the third), and the
//! machine's `kubectl` applying the walk-through's objects as written
//! (`fixtures/seed-yaml/002-override-{1,2,3,5}.yaml`): the ConfigMap, `cro-1` (an annotation
//! on the namespace's objects), `ro-1` (an annotation on the ConfigMap, winning over the CRO),
//! and `example-cro` (a `${MEMBER-CLUSTER-NAME}` label on a ClusterRole). Each override is then
//! changed and deleted, and every step ends with the placement Available, `Overridden` True,
//! and the files on the members showing exactly what applies.

use std::path::{Path, PathBuf};

use flotilla_tests::agents::{Agent, wait_for};
use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::{condition, is_true, kube_json, seed_yaml, write};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

const DIR_MEMBERS: [&str; 2] = ["member-1", "member-2"];

const FLEET: &str = "\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-1, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-2, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member-3, labels: {env: prod}}
spec: {heartbeatPeriodSeconds: 2}
---
apiVersion: v1
kind: Namespace
metadata: {name: application-1}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: secret-reader}
rules:
  - {apiGroups: [\"\"], resources: [secrets], verbs: [get, list]}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: crp-example}
spec:
  resourceSelectors:
    - {group: \"\", kind: Namespace, name: application-1, version: v1}
    - {group: rbac.authorization.k8s.io, kind: ClusterRole, name: secret-reader, version: v1}
  policy: {placementType: PickAll}
  # A `dir` member cannot tell availability: each step waits this long per cluster.
  strategy: {rollingUpdate: {unavailablePeriodSeconds: 1}}
";

/// The object a member's `dir` agent wrote whose file name contains `name`.
fn on_member(root: &Path, member: &str, name: &str) -> Option<Value> {
    let directory = root.join(member).join("crp-example");
    let entry = std::fs::read_dir(directory)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().contains(name))?;
    let text = std::fs::read_to_string(entry.path()).ok()?;
    serde_saphyr::from_str(&text).ok()
}

/// Waits until the placement is Available and overridden as it should be, and every `dir`
/// member holds `expect(member)` as the config map's annotations and the role's labels.
fn settled(
    kubectl: &Kubectl,
    root: &Path,
    what: &str,
    expect: impl Fn(&str) -> (Value, Value),
) -> Result<String, String> {
    let last = std::cell::RefCell::new(String::new());
    let waited = wait_for(what, || {
        let crp = kube_json(kubectl, &["get", "crp", "crp-example"])?;
        let available = is_true(&crp, "ClusterResourcePlacementAvailable");
        let overridden = condition(&crp, "ClusterResourcePlacementOverridden")
            .filter(|c| c["status"] == "True")
            .and_then(|c| c["message"].as_str().map(str::to_owned));
        let files = DIR_MEMBERS.iter().all(|member| {
            let (annotations, labels) = expect(member);
            let config = on_member(root, member, "app-config-1");
            let role = on_member(root, member, "secret-reader");
            config.is_some_and(|c| c["metadata"]["annotations"] == annotations)
                && role.is_some_and(|r| r["metadata"]["labels"] == labels)
        });
        *last.borrow_mut() = format!(
            "available {available}, overridden {overridden:?}, member-1's config map {:?} \
             and role {:?}",
            on_member(root, "member-1", "app-config-1"),
            on_member(root, "member-1", "secret-reader")
        );
        Ok(overridden.filter(|_| available && files))
    });
    waited.map_err(|error| format!("{error}: {}", last.borrow()))
}

fn start_agents(hub: &HubProcess, dir: &Path, root: &Path) -> Result<Vec<Agent>, String> {
    let gitops = format!("dir:{}", root.display());
    [
        ("member-1", gitops.as_str()),
        ("member-2", &gitops),
        ("member-3", "sim"),
    ]
    .iter()
    .map(|(cluster, applier)| {
        let state = dir.join(format!("state-{cluster}"));
        Agent::start(&binary(), &["--hub", &hub.url], cluster, applier, &state)
    })
    .collect()
}

#[test]
fn the_override_walk_through_with_agents_and_kubectl() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path();
    let root = dir.join("members");
    let hub = HubProcess::start(&binary(), &dir.join("hub"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir)?;
    let apply = |file: &str| kubectl.ok(&["apply", "-f", file]);
    apply(&write(dir, "fleet.yaml", FLEET)?)?;
    apply(&seed_yaml("002-override-2.yaml"))?;
    let agents = start_agents(&hub, dir, &root)?;
    let none = |_: &str| (Value::Null, Value::Null);
    settled(&kubectl, &root, "the plain rollout", none)?;

    apply(&seed_yaml("002-override-3.yaml"))?;
    let cro = json!({"cro-test-annotation": "cro-test-annotation-val"});
    let message = settled(&kubectl, &root, "cro-1", |_| (cro.clone(), Value::Null))?;
    assert_eq!(
        message,
        "The selected resources are successfully overridden in the 3 clusters"
    );
    apply(&seed_yaml("002-override-5.yaml"))?;
    let ro = json!({"ro-test-annotation": "ro-test-annotation-val"});
    settled(&kubectl, &root, "ro-1 over cro-1", |_| {
        (ro.clone(), Value::Null)
    })?;
    apply(&seed_yaml("002-override-1.yaml"))?;
    let named = |member: &str| (ro.clone(), json!({"cluster-name": member}));
    settled(&kubectl, &root, "example-cro's cluster name", named)?;

    // Changed after the rollout (the seed files carry a `resourceVersion`, so a user edits the
    // stored object rather than applying the file again), then deleted again, one by one.
    let value = "/spec/policy/overrideRules/0/jsonPatchOverrides/0/value";
    let patch = |kind: &str, name: &str, ns: Option<&str>, to: Value| {
        let body = json!([{"op": "replace", "path": value, "value": to}]).to_string();
        let mut args = vec!["patch", kind, name, "--type=json", "-p", &body];
        args.extend(ns.map(|ns| ["-n", ns]).into_iter().flatten());
        kubectl.ok(&args)
    };
    let changed = json!({"ro-test-annotation": "changed"});
    patch(
        "resourceoverride",
        "ro-1",
        Some("application-1"),
        changed.clone(),
    )?;
    let named = |member: &str| (changed.clone(), json!({"cluster-name": member}));
    settled(&kubectl, &root, "ro-1 changed", named)?;
    kubectl.ok(&["delete", "resourceoverride", "ro-1", "-n", "application-1"])?;
    let named = |member: &str| (cro.clone(), json!({"cluster-name": member}));
    settled(&kubectl, &root, "ro-1 deleted", named)?;
    let to = json!({"served-by": "${MEMBER-CLUSTER-NAME}"});
    patch("clusterresourceoverride", "example-cro", None, to)?;
    let served = |member: &str| (cro.clone(), json!({"served-by": member}));
    settled(&kubectl, &root, "example-cro changed", served)?;
    kubectl.ok(&["delete", "clusterresourceoverride", "example-cro", "cro-1"])?;
    settled(&kubectl, &root, "every override deleted", none)?;
    let events = hub.cli(&["events"])?;
    assert!(events.status.success());
    drop(agents);
    hub.stop()
}

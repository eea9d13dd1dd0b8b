//! Every user-written YAML example of the seeds (`fixtures/seed-yaml/*.yaml`) applied with the
//! real `kubectl` to a fresh hub, and read back; the controller-written samples
//! (`fixtures/seed-yaml/read/`) compared on read with what the hub derives — the labels,
//! annotations and top-level fields KubeFleet's controllers write.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn seed_yaml() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seed-yaml")
}

fn user_written() -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(seed_yaml())
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}

#[test]
fn every_user_written_seed_example_applies_with_kubectl() -> Result<(), String> {
    let files = user_written()?;
    assert!(
        files.len() >= 20,
        "the seeds hold at least 20 user-written examples"
    );
    for file in files {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
        let kubectl = Kubectl::for_hub(&hub, dir.path())?;
        let path = file.display().to_string();
        let applied = kubectl.ok(&["apply", "-f", &path])?;
        assert!(
            !applied.is_empty() && applied.lines().all(|line| line.ends_with(" created")),
            "{path}: {applied}"
        );
        let read = kubectl.ok(&["get", "-f", &path, "-o", "json"])?;
        let read: Value = serde_json::from_str(&read).map_err(|e| format!("{path}: {e}"))?;
        let count = read["items"].as_array().map_or(1, Vec::len);
        assert_eq!(
            count,
            applied.lines().count(),
            "{path}: every object reads back"
        );
        // A file copied from `kubectl get` carries a resourceVersion, which a re-apply must
        // match (as on any API server); only the others are re-applied.
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        if text.contains("resourceVersion:") {
            hub.stop()?;
            continue;
        }
        let again = kubectl.ok(&["apply", "-f", &path])?;
        assert!(
            again.lines().all(|line| !line.ends_with(" created")),
            "{path}: a second apply creates nothing: {again}"
        );
        // A label is metadata: the spec kubectl patches back is the one `get` shows, and it
        // must read as unchanged (no new generation).
        let generations =
            || -> Result<String, String> {
                kubectl.ok(&["get", "-f", &path, "-o",
                "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.generation} {end}"])
            };
        let before = generations()?;
        kubectl.ok(&["label", "-f", &path, "probe=x"])?;
        assert_eq!(
            generations()?,
            before,
            "{path}: labelling changed a generation"
        );
        hub.stop()?;
    }
    Ok(())
}

/// The label keys, annotation keys and top-level field names of an object.
fn shape(object: &Value) -> BTreeSet<String> {
    let keys = |value: &Value, prefix: &str| -> Vec<String> {
        value
            .as_object()
            .map(|map| map.keys().map(|k| format!("{prefix}{k}")).collect())
            .unwrap_or_default()
    };
    let mut out = BTreeSet::new();
    out.extend(keys(object, ""));
    out.extend(keys(&object["metadata"]["labels"], "label "));
    out.extend(keys(&object["metadata"]["annotations"], "annotation "));
    out.extend(keys(&object["spec"], "spec."));
    out.extend(keys(&object["status"], "status."));
    out
}

fn sample(name: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(seed_yaml().join("read").join(name))
        .map_err(|e| format!("{name}: {e}"))?;
    serde_saphyr::from_str(&text).map_err(|e| format!("{name}: {e}"))
}

#[test]
fn the_derived_objects_read_as_the_seeds_controller_written_samples() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let fleet = dir.path().join("fleet.yaml");
    let members: Vec<String> = ["aks-member-1", "aks-member-2"]
        .iter()
        .map(|name| {
            format!(
                "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n\
                 metadata: {{name: {name}, labels: {{env: prod}}}}\nspec: {{}}\n"
            )
        })
        .collect();
    std::fs::write(&fleet, members.join("---\n")).map_err(|e| e.to_string())?;
    kubectl.ok(&["apply", "-f", &fleet.display().to_string()])?;
    hub.post_events(&json!([
        {"schemaVersion": 1, "type": "heartbeat", "cluster": "aks-member-1"},
        {"schemaVersion": 1, "type": "heartbeat", "cluster": "aks-member-2"},
    ]))?;
    let crp = seed_yaml().join("002-crp-1.yaml").display().to_string();
    kubectl.ok(&["apply", "-f", &crp])?;

    let cases = [
        (
            "002-crp-2.yaml",
            "clusterresourcesnapshot",
            "crp-1-0-snapshot",
        ),
        (
            "002-crp-3.yaml",
            "clusterschedulingpolicysnapshot",
            "crp-1-0",
        ),
    ];
    for (file, kind, name) in cases {
        let expected = shape(&sample(file)?);
        let ours: Value = serde_json::from_str(&kubectl.ok(&["get", kind, name, "-o", "json"])?)
            .map_err(|e| e.to_string())?;
        let ours = shape(&ours);
        let missing: Vec<&String> = expected.difference(&ours).collect();
        assert!(
            missing.is_empty(),
            "{file}: {kind}/{name} lacks {missing:?}"
        );
    }
    hub.stop()
}

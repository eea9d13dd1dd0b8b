//! `kubectl diff` against the hub shows only the change: the dry-run answer is the object as the
//! hub would store and show it (uid, creation time, generation, defaults, status), not the
//! bare written object, so a one-field change is a few lines, not the whole object.

use std::path::PathBuf;

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::HubProcess;
use flotilla_tests::walkthrough::write;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn placement(history: Option<u32>) -> String {
    let limit = history.map_or(String::new(), |n| format!("  revisionHistoryLimit: {n}\n"));
    format!(
        "apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {{name: crp-1}}
spec:
  resourceSelectors: [{{group: \"\", version: v1, kind: Namespace, name: app}}]
  policy: {{placementType: PickAll}}
{limit}"
    )
}

#[test]
fn kubectl_diff_shows_only_the_change() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    kubectl.ok(&[
        "apply",
        "-f",
        &write(dir.path(), "crp.yaml", &placement(None))?,
    ])?;
    let unchanged = kubectl.run(&[
        "diff",
        "-f",
        &write(dir.path(), "same.yaml", &placement(None))?,
    ])?;
    assert_eq!(unchanged.status.code(), Some(0), "no change, no diff");

    let changed = write(dir.path(), "changed.yaml", &placement(Some(5)))?;
    let output = kubectl.run(&["diff", "-f", &changed])?;
    assert_eq!(output.status.code(), Some(1), "a change is a diff");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("+++"))
        .filter(|l| !l.starts_with("---"))
        .collect();
    assert!(lines.contains(&"-  revisionHistoryLimit: 10"), "{text}");
    assert!(lines.contains(&"+  revisionHistoryLimit: 5"), "{text}");
    for field in ["uid:", "creationTimestamp:", "resourceVersion:", "status:"] {
        assert!(
            !lines.iter().any(|l| l.contains(field)),
            "{field} changed: {text}"
        );
    }
    assert!(lines.len() <= 8, "{} changed lines: {text}", lines.len());
    hub.stop()
}

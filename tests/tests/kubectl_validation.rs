//! Field validation against KubeFleet's CRD schemas, driven by the machine's real `kubectl`:
//! its default `--validate=strict` refuses an unknown field by path and appends nothing,
//! `--validate=warn` stores the object without it and prints the warning, `--validate=false`
//! drops it silently; an override's misspelt `clusterSelectorTerm` (which used to mean every
//! cluster) is refused; schema violations (an enum, a CEL transition rule) are refused with
//! `422 Invalid` under every mode; `kubectl explain` reads the schemas at depth.

use std::path::{Path, PathBuf};

use flotilla_tests::kubectl::Kubectl;
use flotilla_tests::support::{HubProcess, stderr};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn write(dir: &Path, name: &str, text: &str) -> Result<String, String> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

fn placement(name: &str, policy: &str) -> String {
    format!(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n\
         metadata: {{name: {name}}}\nspec:\n  resourceSelectors: [{{group: \"\", kind: Namespace, \
         name: app, version: v1}}]\n  policy: {policy}\n"
    )
}

const TYPO_POLICY: &str = "{placementType: PickAll, afinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{labelSelector: {matchLabels: {env: prod}}}]}}}}";

fn log_seq(hub: &HubProcess) -> Result<u64, String> {
    hub.status()?["logSeq"]
        .as_u64()
        .ok_or_else(|| "no logSeq in /v1/status".to_owned())
}

#[test]
fn strict_by_default_refuses_unknown_fields_and_appends_nothing() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let typo = write(dir.path(), "typo.yaml", &placement("crp-1", TYPO_POLICY))?;
    let before = log_seq(&hub)?;
    let refused = kubectl.fails(&["apply", "-f", &typo])?;
    assert!(
        refused.contains(
            r#"Error from server (BadRequest): error when creating "#
        ) && refused.contains(
            r#"ClusterResourcePlacement in version "v1beta1" cannot be handled as a ClusterResourcePlacement: strict decoding error: unknown field "spec.policy.afinity""#
        ),
        "{refused}"
    );
    assert_eq!(log_seq(&hub)?, before, "a refusal appends nothing");
    let missing = kubectl.fails(&["get", "crp", "crp-1"])?;
    assert!(missing.contains("NotFound"), "{missing}");

    let warned = kubectl.run(&["apply", "--validate=warn", "-f", &typo])?;
    assert!(warned.status.success(), "{}", stderr(&warned));
    assert!(
        stderr(&warned).contains(r#"Warning: unknown field "spec.policy.afinity""#),
        "{}",
        stderr(&warned)
    );
    let stored = kubectl.ok(&["get", "crp", "crp-1", "-o", "json"])?;
    let stored: serde_json::Value = serde_json::from_str(&stored).map_err(|e| e.to_string())?;
    assert_eq!(
        stored["spec"]["policy"]["afinity"],
        serde_json::Value::Null,
        "the unknown field is dropped: {stored}"
    );

    let again = write(dir.path(), "again.yaml", &placement("crp-2", TYPO_POLICY))?;
    let ignored = kubectl.run(&["apply", "--validate=false", "-f", &again])?;
    assert!(ignored.status.success(), "{}", stderr(&ignored));
    assert!(
        !stderr(&ignored).contains("Warning"),
        "{}",
        stderr(&ignored)
    );
    kubectl.ok(&["get", "crp", "crp-2"])?;
    hub.stop()
}

#[test]
fn a_selector_term_in_the_singular_is_refused_not_read_as_every_cluster() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let cro = write(
        dir.path(),
        "cro.yaml",
        "apiVersion: placement.kubernetes-fleet.io/v1alpha1\nkind: ClusterResourceOverride\n\
         metadata: {name: cro-1}\nspec:\n  clusterResourceSelectors: [{group: \"\", kind: Namespace, \
         name: app, version: v1}]\n  policy:\n    overrideRules:\n    - clusterSelector:\n\
         \x20       clusterSelectorTerm: [{labelSelector: {matchLabels: {env: canary}}}]\n\
         \x20     jsonPatchOverrides: [{op: add, path: /metadata/labels/x, value: y}]\n",
    )?;
    let refused = kubectl.fails(&["apply", "-f", &cro])?;
    assert!(
        refused.contains(
            r#"strict decoding error: unknown field "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerm""#
        ),
        "{refused}"
    );
    // Under `warn` the field is dropped with a warning, and what is left breaks the schema
    // (`clusterSelectorTerms` is required), as on a KubeFleet hub.
    let warned = kubectl.run(&["apply", "--validate=warn", "-f", &cro])?;
    let printed = stderr(&warned);
    assert!(
        !warned.status.success()
            && printed.contains(
                r#"Warning: unknown field "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerm""#
            )
            && printed.contains(
                "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerms: Required value"
            ),
        "{printed}"
    );
    let missing = kubectl.fails(&["get", "cro", "cro-1"])?;
    assert!(missing.contains("NotFound"), "{missing}");
    hub.stop()
}

#[test]
fn schema_violations_are_refused_with_422_under_every_mode() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let bad = write(
        dir.path(),
        "enum.yaml",
        &placement("crp-1", "{placementType: PickAl}"),
    )?;
    for mode in ["--validate=strict", "--validate=warn", "--validate=false"] {
        let refused = kubectl.fails(&["apply", mode, "-f", &bad])?;
        // kubectl lists the causes (the enum, then the API server's note that the CEL rules
        // were not evaluated) one a line.
        assert!(
            refused.contains(r#"The ClusterResourcePlacement "crp-1" is invalid"#)
                && refused.contains(
                    r#"* spec.policy.placementType: Unsupported value: "PickAl": supported values: "PickAll", "PickFixed", "PickN""#
                ),
            "{mode}: {refused}"
        );
    }
    let good = write(
        dir.path(),
        "good.yaml",
        &placement("crp-1", "{placementType: PickAll}"),
    )?;
    kubectl.ok(&["apply", "-f", &good])?;
    let changed = write(
        dir.path(),
        "changed.yaml",
        &placement("crp-1", "{placementType: PickN, numberOfClusters: 1}"),
    )?;
    let immutable = kubectl.fails(&["apply", "-f", &changed])?;
    assert!(
        immutable.contains("placement type is immutable"),
        "{immutable}"
    );
    hub.stop()
}

#[test]
fn explain_reads_kubefleets_schemas_at_any_depth() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &dir.path().join("data"), &[])?;
    let kubectl = Kubectl::for_hub(&hub, dir.path())?;
    let explained = kubectl.ok(&["explain", "crp.spec.policy.affinity.clusterAffinity"])?;
    assert!(
        explained.contains("requiredDuringSchedulingIgnoredDuringExecution")
            && explained.contains("preferredDuringSchedulingIgnoredDuringExecution"),
        "{explained}"
    );
    let deeper = kubectl.ok(&[
        "explain",
        "clusterresourceoverrides.spec.policy.overrideRules.clusterSelector.clusterSelectorTerms",
    ])?;
    assert!(deeper.contains("labelSelector"), "{deeper}");
    hub.stop()
}

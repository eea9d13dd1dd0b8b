//! End to end through the `flotilla` command: the seed documents' MemberCluster and placement
//! examples are accepted by `apply -f` and come back in KubeFleet's shape from `get -o yaml`
//! and `get -o json`; a malformed document rejects the whole file, names file, document and
//! field, and writes nothing.

use std::path::PathBuf;

use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

#[test]
fn seed_examples_are_accepted_and_read_back_in_kubefleet_shape() -> Result<(), String> {
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), data.path(), &[])?;
    let applied = hub.cli(&["apply", "-f", &fixture("seed-examples.yaml")])?;
    assert!(
        applied.status.success(),
        "apply failed: {}",
        stderr(&applied)
    );
    assert_eq!(
        stdout(&applied),
        "membercluster.cluster.kubernetes-fleet.io/aks-member-1 created\n\
         clusterresourceplacement.placement.kubernetes-fleet.io/crp-1 created\n\
         clusterresourceplacement.placement.kubernetes-fleet.io/app-namespace-crp created\n\
         resourceplacement.placement.kubernetes-fleet.io/app-configs-rp created\n\
         clusterresourceplacement.placement.kubernetes-fleet.io/example-placement created\n\
         resourceplacement.placement.kubernetes-fleet.io/example-namespace-placement created\n"
    );
    let again = hub.cli(&["apply", "-f", &fixture("seed-examples.yaml")])?;
    assert!(
        stdout(&again)
            .lines()
            .all(|line| line.ends_with(" unchanged")),
        "{}",
        stdout(&again)
    );

    let yaml = hub.cli(&["get", "crp", "crp-1", "-o", "yaml"])?;
    assert!(yaml.status.success(), "{}", stderr(&yaml));
    let yaml = stdout(&yaml);
    for expected in [
        "apiVersion: placement.kubernetes-fleet.io/v1\n",
        "kind: ClusterResourcePlacement\n",
        "  name: crp-1\n",
        "placementType: PickN",
        "numberOfClusters: 2",
        "topologyKey: env",
        "maxSurge: 25%",
        "unavailablePeriodSeconds: 5",
        "revisionHistoryLimit: 100",
    ] {
        assert!(yaml.contains(expected), "missing {expected:?} in:\n{yaml}");
    }

    let json = hub.cli(&["get", "membercluster", "aks-member-1", "-o", "json"])?;
    let member: serde_json::Value =
        serde_json::from_str(&stdout(&json)).map_err(|e| format!("{e}: {}", stdout(&json)))?;
    assert_eq!(member["apiVersion"], "cluster.kubernetes-fleet.io/v1beta1");
    assert_eq!(member["kind"], "MemberCluster");
    assert_eq!(member["metadata"]["name"], "aks-member-1");
    assert_eq!(member["metadata"]["labels"]["environment"], "staging");
    assert_eq!(member["spec"]["heartbeatPeriodSeconds"], 60);
    assert_eq!(
        member["spec"]["identity"]["name"],
        "fleet-member-agent-aks-member-1"
    );

    let rp = hub.cli(&["get", "rp", "app-configs-rp", "-n", "my-app", "-o", "json"])?;
    let rp: serde_json::Value =
        serde_json::from_str(&stdout(&rp)).map_err(|e| format!("{e}: {}", stdout(&rp)))?;
    assert_eq!(rp["metadata"]["namespace"], "my-app");
    assert_eq!(
        rp["spec"]["policy"]["clusterNames"],
        serde_json::json!(["prod-cluster-1", "prod-cluster-2"])
    );

    let list = hub.cli(&["get", "crp", "-o", "json"])?;
    let list: serde_json::Value =
        serde_json::from_str(&stdout(&list)).map_err(|e| e.to_string())?;
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(3));

    let table = stdout(&hub.cli(&["get", "crp", "crp-1"])?);
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(rows[0].starts_with("NAME "), "{table}");
    assert!(rows[1].starts_with("crp-1 "), "{table}");

    let described = stdout(&hub.cli(&["describe", "crp", "crp-1"])?);
    assert!(described.starts_with("Name:"), "{described}");
    assert!(
        described.contains("Kind:         ClusterResourcePlacement"),
        "{described}"
    );

    let events = hub.cli(&["events", "-o", "json"])?;
    let lines: Vec<serde_json::Value> = stdout(&events)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    assert_eq!(lines.len(), 12, "6 applies, then 6 unchanged re-applies");
    assert_eq!(lines[0]["event"]["type"], "apply");
    assert_eq!(lines[0]["event"]["source"], "cli");
    assert!(
        lines[0]["decisions"][0]["ObjectStored"]["created"]
            .as_bool()
            .unwrap_or(false)
    );
    assert!(lines[11]["decisions"][0]["ObjectUnchanged"].is_object());

    let deleted = hub.cli(&["delete", "crp", "crp-1"])?;
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    assert_eq!(
        stdout(&deleted),
        "clusterresourceplacement.placement.kubernetes-fleet.io/crp-1 deleted\n"
    );
    let gone = hub.cli(&["get", "crp", "crp-1", "-o", "json"])?;
    assert!(!gone.status.success());
    assert!(stderr(&gone).contains("not found"), "{}", stderr(&gone));
    let again = hub.cli(&["delete", "crp", "crp-1"])?;
    assert!(!again.status.success());
    assert!(stderr(&again).contains("(NotFound)"), "{}", stderr(&again));
    hub.stop()
}

#[test]
fn schema_prints_the_json_schema_of_events() -> Result<(), String> {
    let output = std::process::Command::new(binary())
        .arg("schema")
        .output()
        .map_err(|e| e.to_string())?;
    assert!(output.status.success());
    let schema: serde_json::Value =
        serde_json::from_str(&stdout(&output)).map_err(|e| e.to_string())?;
    assert_eq!(schema["title"], "JsonEnvelope");
    let text = schema.to_string();
    for kind in [
        "apply",
        "delete",
        "heartbeat",
        "report",
        "approve",
        "tick",
        "leave",
    ] {
        assert!(text.contains(&format!("\"{kind}\"")), "schema lacks {kind}");
    }
    // Schema 4's report fields, under the names member agents write.
    for field in [
        "diffReported",
        "diffedManifests",
        "driftedManifests",
        "observedInMemberClusterGeneration",
        "observedDiffs",
        "observedDrifts",
        "valueInMember",
        "valueInHub",
        "reason",
    ] {
        assert!(
            text.contains(&format!("\"{field}\"")),
            "schema lacks {field}"
        );
    }
    Ok(())
}

#[test]
fn a_malformed_document_is_rejected_with_its_location_and_nothing_is_written() -> Result<(), String>
{
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), data.path(), &[])?;
    let before = hub.status()?;
    let file = fixture("malformed.yaml");
    let applied = hub.cli(&["apply", "-f", &file])?;
    assert!(!applied.status.success());
    let message = stderr(&applied);
    assert!(
        message.contains(&format!(
            "{file}: document 2, field spec.policy.numberOfClusters:"
        )),
        "{message}"
    );
    let after = hub.status()?;
    assert_eq!(before["seq"], after["seq"], "something was written");
    assert_eq!(after["seq"], 0);
    let members = hub.cli(&["get", "memberclusters", "-o", "json"])?;
    let members: serde_json::Value =
        serde_json::from_str(&stdout(&members)).map_err(|e| e.to_string())?;
    assert_eq!(
        members["items"],
        serde_json::json!([]),
        "the valid first document was not kept"
    );
    hub.stop()
}

//! A staged update run driven through the `flotilla` command against a served hub: `apply` a
//! run in `Initialize`, `run start`, `approve` the after-stage request, `run stop` and `run start`
//! again, with member agents posting heartbeats and reports over HTTP; `get csur` / `get careq`
//! show KubeFleet's columns and the run ends succeeded. Refused transitions and approvals of
//! unknown requests fail the command with the hub's reason.

use std::path::PathBuf;

use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<String, String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(stdout(&output))
    } else {
        Err(format!(
            "{args:?} failed: {}{}",
            stdout(&output),
            stderr(&output)
        ))
    }
}

fn run_json(hub: &HubProcess) -> Result<Value, String> {
    let text = ok(hub, &["get", "csur", "example-run", "-o", "json"])?;
    serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
}

fn report(cluster: &str) -> Value {
    json!({"schemaVersion": 1, "type": "report", "cluster": cluster, "placement": "example-placement",
        "resourceIndex": 0, "applied": true, "available": true})
}

fn updating(run: &Value) -> Vec<String> {
    run["status"]["stagesStatus"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["clusters"].as_array().cloned().unwrap_or_default())
        .filter(|c| {
            let conditions = c["conditions"].as_array().cloned().unwrap_or_default();
            conditions.iter().any(|x| x["type"] == "Started")
                && !conditions.iter().any(|x| x["type"] == "Succeeded")
        })
        .filter_map(|c| c["clusterName"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_run_is_started_approved_stopped_and_resumed_from_the_command_line() -> Result<(), String> {
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), data.path(), &[])?;
    ok(&hub, &["apply", "-f", &fixture("staged-fleet.yaml")])?;
    let beats: Vec<Value> = ["member1", "member2", "member3"]
        .iter()
        .map(|c| json!({"schemaVersion": 1, "type": "heartbeat", "cluster": c}))
        .collect();
    hub.post_events(&Value::Array(beats))?;
    ok(&hub, &["apply", "-f", &fixture("staged-rollout.yaml")])?;
    ok(&hub, &["apply", "-f", &fixture("staged-run.yaml")])?;
    let run = run_json(&hub)?;
    assert_eq!(
        run["status"]["conditions"][0]["reason"],
        "UpdateRunInitializedSuccessfully"
    );
    assert!(updating(&run).is_empty(), "Initialize does not execute");

    let refused = hub.cli(&["run", "stop", "example-run"])?;
    assert!(!refused.status.success(), "Initialize → Stop is refused");
    assert!(
        stdout(&refused).contains("cannot stop before starting")
            || stderr(&refused).contains("cannot stop before starting"),
        "{}{}",
        stdout(&refused),
        stderr(&refused)
    );

    ok(&hub, &["run", "start", "example-run"])?;
    assert_eq!(updating(&run_json(&hub)?), ["member1"]);
    hub.post_events(&report("member1"))?;
    let table = ok(&hub, &["get", "careq"])?;
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("example-run-after-staging"), "{table}");
    assert!(
        table.contains("UPDATE-RUN") && table.contains("APPROVAL-ACCEPTED"),
        "{table}"
    );

    let unknown = hub.cli(&["approve", "example-run-after-nothing"])?;
    assert!(!unknown.status.success(), "an unknown request is refused");
    let approve = [
        "approve",
        "example-run-after-staging",
        "--reason",
        "Soaked",
        "-m",
        "staging ran an hour",
    ];
    ok(&hub, &approve)?;
    let request = ok(
        &hub,
        &["get", "careq", "example-run-after-staging", "-o", "json"],
    )?;
    let request: serde_json::Value = serde_json::from_str(&request).map_err(|e| e.to_string())?;
    let approved = (request["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|c| c["type"] == "Approved")
    .map(|c| (c["reason"].clone(), c["message"].clone()));
    assert_eq!(
        approved,
        Some(("Soaked".into(), "staging ran an hour".into())),
        "{request}"
    );
    assert_eq!(
        updating(&run_json(&hub)?),
        ["member2"],
        "production starts, one at a time"
    );

    ok(&hub, &["run", "stop", "example-run"])?;
    hub.post_events(&report("member2"))?;
    let stopped = run_json(&hub)?;
    assert_eq!(
        stopped["status"]["conditions"][1]["reason"],
        "UpdateRunStopped"
    );
    assert!(
        updating(&stopped).is_empty(),
        "no new cluster while stopped"
    );

    ok(&hub, &["run", "start", "example-run"])?;
    assert_eq!(updating(&run_json(&hub)?), ["member3"]);
    hub.post_events(&report("member3"))?;
    let done = run_json(&hub)?;
    assert_eq!(
        done["status"]["conditions"][2]["reason"],
        "UpdateRunSucceeded"
    );
    let table = ok(&hub, &["get", "csur"])?;
    assert!(
        table.starts_with("NAME          PLACEMENT           RESOURCE-SNAPSHOT-INDEX   POLICY-SNAPSHOT-INDEX   INITIALIZED   PROGRESSING   SUCCEEDED   AGE"),
        "{table}"
    );
    let described = ok(&hub, &["describe", "csur", "example-run"])?;
    assert!(described.contains("UpdateRunSucceeded"), "{described}");
    hub.stop()
}

//! Scenario files: the same file run twice gives byte-identical output (in-process and through
//! the `flotilla scenario run` command), and the member-health scenario ends in the state its
//! comments describe.

use std::path::PathBuf;
use std::process::Command;

use flotilla_tests::scenario_files::{run_scenario, run_scenario_text, scenario_path};
use serde_json::Value;

async fn run_json(name: &str) -> Result<Value, String> {
    Ok(run_scenario(name, None).await?.output)
}

#[test]
fn the_same_scenario_twice_prints_byte_identical_output() -> Result<(), String> {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"));
    // Member health alone, and a rollout with scheduling, snapshots, bindings and works.
    for name in ["member-health.yaml", "rollout/seed-001-example-2.yaml"] {
        let path = scenario_path(name);
        let run = |format: &str| {
            Command::new(&binary)
                .args(["scenario", "run"])
                .arg(&path)
                .args(["-o", format])
                .output()
                .map_err(|e| e.to_string())
        };
        for format in ["yaml", "json"] {
            let first = run(format)?;
            let second = run(format)?;
            assert!(
                first.status.success(),
                "{}",
                String::from_utf8_lossy(&first.stderr)
            );
            assert!(!first.stdout.is_empty());
            assert_eq!(
                first.stdout, second.stdout,
                "{name}: {format} differs between runs"
            );
        }
    }
    Ok(())
}

fn object<'a>(output: &'a Value, kind: &str, name: &str) -> Option<&'a Value> {
    output["objects"]
        .as_array()?
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

fn condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

#[tokio::test]
async fn member_health_scenario_ends_as_described() -> Result<(), String> {
    let output = run_json("member-health.yaml").await?;
    let member1 = object(&output, "MemberCluster", "member1").ok_or("member1 missing")?;
    // member1 beat once at 23:00:00 and then went silent for 6.5 minutes: unhealthy since 23:05.
    assert_eq!(
        condition(member1, "Joined").map(|c| c["status"].clone()),
        Some("True".into())
    );
    let healthy = condition(member1, "Healthy").ok_or("no Healthy condition")?;
    assert_eq!(healthy["status"], "False");
    assert_eq!(healthy["lastTransitionTime"], "2025-03-12T23:05:00Z");
    assert_eq!(
        member1["status"]["properties"]["kubernetes-fleet.io/node-count"]["value"],
        "3"
    );
    assert_eq!(
        member1["status"]["resourceUsage"]["available"]["memory"],
        "800Mi"
    );
    // member2 never heartbeated: registered, not joined.
    let member2 = object(&output, "MemberCluster", "member2").ok_or("member2 missing")?;
    assert_ne!(
        condition(member2, "Joined").map(|c| c["status"].clone()),
        Some("True".into())
    );
    // member3 was deleted after its agent joined: it stays, leaving, until the agent confirms,
    // and its heartbeat after the delete is still taken.
    let member3 = object(&output, "MemberCluster", "member3").ok_or("member3 missing")?;
    assert_eq!(
        member3["metadata"]["deletionTimestamp"],
        "2025-03-12T23:06:30Z"
    );
    assert_eq!(
        condition(member3, "ReadyToJoin").map(|c| c["status"].clone()),
        Some("False".into())
    );
    let rejections = output["rejections"]
        .as_array()
        .ok_or("no rejections list")?;
    assert!(rejections.is_empty(), "{rejections:?}");
    assert_eq!(output["events"], 13);
    assert_eq!(output["stateHash"].as_str().map(str::len), Some(64));
    Ok(())
}

#[tokio::test]
async fn a_refused_document_is_a_rejection_and_the_run_goes_on() -> Result<(), String> {
    let output = run_json("rejections.yaml").await?;
    let rejections: Vec<(u64, String, String)> = output["rejections"]
        .as_array()
        .ok_or("rejections")?
        .iter()
        .map(|r| {
            (
                r["step"].as_u64().unwrap_or(0),
                r["code"].as_str().unwrap_or_default().to_owned(),
                r["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(rejections.len(), 2, "{rejections:?}");
    assert_eq!(
        (rejections[0].0, rejections[0].1.as_str()),
        (1, "InvalidObject")
    );
    assert!(
        rejections[0].2.contains("spec.heartbeatPeriodSeconds"),
        "{}",
        rejections[0].2
    );
    assert_eq!(
        (rejections[1].0, rejections[1].1.as_str()),
        (5, "ImmutableField")
    );
    assert!(
        rejections[1].2.contains("spec.policy.placementType"),
        "{}",
        rejections[1].2
    );
    assert!(object(&output, "MemberCluster", "member1").is_some());
    assert!(object(&output, "MemberCluster", "member2").is_none());
    let member1 = object(&output, "MemberCluster", "member1").ok_or("member1")?;
    let joined = condition(member1, "Joined").ok_or("member1 joined after the rejections")?;
    assert_eq!(joined["status"], "True");
    let crp = object(&output, "ClusterResourcePlacement", "crp-1").ok_or("crp-1")?;
    assert_eq!(crp["spec"]["policy"]["placementType"], "PickAll");
    Ok(())
}

const START: &str = "start: 2025-03-12T23:00:00Z\nsteps:\n";

#[tokio::test]
async fn expect_rejection_fails_the_run_unless_the_previous_step_had_that_code() {
    let member = "  - apply: |\n      apiVersion: cluster.kubernetes-fleet.io/v1beta1\n      kind: MemberCluster\n      metadata: {name: member1}\n      spec: {}\n";
    let accepted = format!("{START}{member}  - expectRejection: {{code: InvalidObject}}\n");
    let error = run_scenario_text("accepted.yaml", &accepted, None)
        .await
        .err()
        .unwrap_or_default();
    assert!(
        error.contains("step 2: expected the previous step to be rejected with InvalidObject, found no rejection"),
        "{error}"
    );
    let other = format!(
        "{START}  - heartbeat: {{cluster: nobody}}\n  - expectRejection: {{code: InvalidObject}}\n"
    );
    let error = run_scenario_text("other.yaml", &other, None)
        .await
        .err()
        .unwrap_or_default();
    assert!(error.contains("found UnknownCluster"), "{error}");
    let right = format!(
        "{START}  - heartbeat: {{cluster: nobody}}\n  - expectRejection: {{code: UnknownCluster}}\n"
    );
    assert!(run_scenario_text("right.yaml", &right, None).await.is_ok());
}

#[tokio::test]
async fn a_yaml_syntax_error_or_an_unknown_code_still_stops_the_run() {
    let broken = format!("{START}  - apply: |\n      kind: [MemberCluster\n");
    let error = run_scenario_text("broken.yaml", &broken, None)
        .await
        .err()
        .unwrap_or_default();
    assert!(error.contains("invalid YAML"), "{error}");
    let unknown = format!("{START}  - expectRejection: {{code: Refused}}\n");
    let error = run_scenario_text("unknown.yaml", &unknown, None)
        .await
        .err()
        .unwrap_or_default();
    assert!(
        error.contains("\"Refused\" is not one of InvalidObject"),
        "{error}"
    );
}

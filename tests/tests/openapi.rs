//! `GET /openapi.json` describes flotilla's own endpoints, and schemathesis (PyPI), generating
//! requests from it against a served hub with a fleet in it, finds no 5xx answer. The run is
//! bounded: few examples per operation, schemathesis's own time budget, and a deadline after
//! which the test kills it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_tests::support::{HubProcess, fixture, stderr, stdout};
use serde_json::Value;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// Every path the document must describe.
const PATHS: [&str; 15] = [
    "/healthz",
    "/v1/status",
    "/v1/events",
    "/v1/kinds",
    "/v1/objects/{kind}",
    "/v1/table/{kind}",
    "/v1/describe/{kind}/{name}",
    "/v1/log",
    "/v1/timeline",
    "/v1/explain",
    "/v1/summary",
    "/v1/members",
    "/v1/marks",
    "/v1/runs",
    "/metrics",
];
/// schemathesis's own time budget.
const SCHEMATHESIS_SECONDS: u64 = 30;
/// When the test kills schemathesis if it has not finished.
const SCHEMATHESIS_DEADLINE: Duration = Duration::from_secs(75);

fn get_json(hub: &HubProcess, path: &str) -> Result<Value, String> {
    let text = hub.get_text(path)?;
    serde_json::from_str(&text).map_err(|e| format!("GET {path}: {e}"))
}

fn ok(hub: &HubProcess, args: &[&str]) -> Result<(), String> {
    let output = hub.cli(args)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

#[test]
fn the_document_lists_every_endpoint_and_schemathesis_finds_no_server_error() -> Result<(), String>
{
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(&hub, &["apply", "-f", &fixture("staged-fleet.yaml")])?;
    ok(&hub, &["apply", "-f", &fixture("staged-rollout.yaml")])?;

    let document = get_json(&hub, "/openapi.json")?;
    assert_eq!(document["openapi"], "3.1.0");
    for path in PATHS {
        assert!(document["paths"][path].is_object(), "{path} is described");
    }
    assert!(document["paths"]["/v1/test/clock"].is_null(), "test only");

    let (passed, report) = schemathesis(&hub, scratch.path())?;
    assert!(passed, "schemathesis found failures:\n{report}");
    hub.stop()
}

/// Runs schemathesis's not-a-server-error check against the hub; whether it passed, and what it
/// printed.
fn schemathesis(hub: &HubProcess, scratch: &Path) -> Result<(bool, String), String> {
    let output_path = scratch.join("schemathesis.txt");
    let output = std::fs::File::create(&output_path).map_err(|e| e.to_string())?;
    let errors = output.try_clone().map_err(|e| e.to_string())?;
    let mut child = Command::new("python3")
        .args(["-m", "schemathesis.cli", "run"])
        .arg(format!("{}/openapi.json", hub.url))
        .args(["--checks", "not_a_server_error"])
        .args(["--max-examples", "25", "--seed", "14", "--workers", "2"])
        .args(["--max-time", &SCHEMATHESIS_SECONDS.to_string()])
        .args(["--phases", "examples,coverage,fuzzing"])
        .args(["--request-timeout", "10", "--generation-database", "none"])
        .args(["--suppress-health-check", "all", "--no-color"])
        .current_dir(scratch)
        .stdin(Stdio::null())
        .stdout(output)
        .stderr(errors)
        .spawn()
        .map_err(|e| format!("cannot start schemathesis (pip install schemathesis): {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if started.elapsed() > SCHEMATHESIS_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let report = std::fs::read_to_string(&output_path).map_err(|e| e.to_string())?;
    match status {
        Some(status) => Ok((status.success(), report)),
        None => Err(format!(
            "schemathesis ran past {SCHEMATHESIS_DEADLINE:?}:\n{report}"
        )),
    }
}

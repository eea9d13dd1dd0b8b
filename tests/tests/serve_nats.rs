//! `flotilla serve --nats` runs the same hub on a real NATS JetStream server: objects applied
//! through the CLI come back in KubeFleet's shape, and the server's fsync policy is checked
//! (the test server runs with `sync_interval: always`, so no durability warning is printed).

use std::path::{Path, PathBuf};

use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::support::{HubProcess, stderr, stdout};

#[test]
fn serve_on_nats_applies_and_reads_back() -> Result<(), String> {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"));
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let url = nats.url();
    let monitoring = nats.monitoring_url();
    let hub = HubProcess::start(
        &binary,
        data.path(),
        &["--nats", &url, "--nats-monitoring", &monitoring],
    )?;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seed-examples.yaml");
    let applied = hub.cli(&["apply", "-f", &fixture.display().to_string()])?;
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(
        stdout(&applied)
            .lines()
            .filter(|l| l.ends_with(" created"))
            .count(),
        6
    );
    let got = hub.cli(&["get", "crp", "example-placement", "-o", "json"])?;
    let crp: serde_json::Value =
        serde_json::from_str(&stdout(&got)).map_err(|e| format!("{e}: {}", stdout(&got)))?;
    assert_eq!(crp["spec"]["strategy"]["type"], "External");
    assert_eq!(
        crp["spec"]["policy"]["tolerations"][0]["key"],
        "gpu-workload"
    );
    let status = hub.status()?;
    assert_eq!(status["seq"], 6);
    hub.stop()
}

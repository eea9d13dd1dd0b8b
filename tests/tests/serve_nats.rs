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

    // External publishers: JSON over NATS request/reply.
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let (accepted, refused) = runtime.block_on(async {
        let client = async_nats::connect(url.as_str())
            .await
            .map_err(|e| e.to_string())?;
        let ask = |body: &'static str| {
            let client = client.clone();
            async move {
                let reply = tokio::time::timeout(
                    std::time::Duration::from_secs(10),
                    client.request("flotilla.ingest", body.into()),
                )
                .await
                .map_err(|_| "no answer on flotilla.ingest".to_owned())?
                .map_err(|e| e.to_string())?;
                serde_json::from_slice::<serde_json::Value>(&reply.payload)
                    .map_err(|e| e.to_string())
            }
        };
        let accepted =
            ask(r#"{"type":"heartbeat","cluster":"aks-member-1","source":"agent/aks-member-1"}"#)
                .await?;
        let refused =
            ask(r#"[{"type":"heartbeat","cluster":"aks-member-1"},{"type":"explode"}]"#).await?;
        Ok::<_, String>((accepted, refused))
    })?;
    assert_eq!(accepted["results"][0]["seq"], 7, "{accepted}");
    assert_eq!(
        accepted["results"][0]["decisions"][0]["ClusterJoined"]["cluster"],
        "aks-member-1"
    );
    let refusal = refused["error"].as_str().unwrap_or_default();
    assert!(refusal.starts_with("event 1:"), "{refused}");
    assert_eq!(
        hub.status()?["logSeq"],
        7,
        "a refused request appended something"
    );
    hub.stop()
}

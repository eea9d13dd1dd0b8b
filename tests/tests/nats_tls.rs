//! NATS over TLS: a `nats-server` that requires TLS (a self-signed certificate for 127.0.0.1)
//! accepts flotilla's connection (`NatsConnection` with `--ca`, as `serve --nats`, `agent
//! --nats` and `replay --nats` make it) and the log works over it; without the CA the
//! connection is refused.

use flotilla_adapters::nats_auth::NatsConnection;
use flotilla_eventstore::LogReader;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::support::self_signed_certificate;

#[tokio::test]
async fn flotilla_connects_to_nats_over_tls_with_its_ca_only() -> Result<(), String> {
    flotilla_adapters::tls::install_crypto_provider();
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (cert, key) = self_signed_certificate(scratch.path(), "nats")?;
    let tls = format!(
        "tls {{\n  cert_file: {:?}\n  key_file: {:?}\n}}",
        cert.display().to_string(),
        key.display().to_string()
    );
    let nats = NatsTestServer::start_with_config(tls).map_err(|e| e.to_string())?;
    let url = nats.url().replace("nats://", "tls://");

    let trusted = NatsConnection {
        ca: Some(cert.clone()),
        ..NatsConnection::default()
    };
    let client = trusted
        .connect(&url, "tls-test")
        .await
        .map_err(|e| e.to_string())?;
    let log = NatsLog::with_client(client, NatsOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(log.last_seq().await.map_err(|e| e.to_string())?, 0);

    let untrusted = NatsConnection::default()
        .connect(&url, "tls-test-untrusted")
        .await;
    assert!(
        untrusted.is_err(),
        "a server certificate nobody trusts was accepted"
    );
    Ok(())
}

//! Reads the server's fsync policy from its HTTP monitoring endpoint (`/varz`).
//!
//! Nothing a client can see over the NATS protocol (the `INFO` line, `$JS.API.INFO`) says how
//! often the server fsyncs; only the server configuration does, and `/varz` publishes it as
//! `jetstream.config.sync_always` (present and `true` with `sync_interval: always`) and
//! `jetstream.config.sync_interval` (nanoseconds). The request is one plain HTTP/1.0 `GET`
//! over a TCP socket: it is a best-effort check at startup, and not worth an HTTP client
//! dependency in the log crate. `https://` monitoring endpoints are not supported.

use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What the server says about fsync before acknowledging a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerSync {
    /// `sync_interval: always`: every acknowledged write has been fsync'd.
    pub always: bool,
    /// The periodic fsync interval (the server's default is 2 minutes); unused when `always`.
    pub interval: Duration,
}

/// Largest `/varz` answer read (it is a few kilobytes).
const VARZ_BYTES_MAX: u64 = 1024 * 1024;

#[derive(Deserialize)]
struct Varz {
    jetstream: Option<VarzJetStream>,
}

#[derive(Deserialize)]
struct VarzJetStream {
    config: Option<VarzJetStreamConfig>,
}

#[derive(Deserialize)]
struct VarzJetStreamConfig {
    #[serde(default)]
    sync_always: bool,
    #[serde(default)]
    sync_interval: u64,
}

/// Fetches `<monitoring_url>/varz` and reads the JetStream sync settings.
pub(crate) async fn server_sync(
    monitoring_url: &str,
    timeout: Duration,
) -> Result<ServerSync, String> {
    let authority = authority(monitoring_url)?;
    let body = tokio::time::timeout(timeout, get_varz(authority))
        .await
        .map_err(|_| format!("GET {monitoring_url}/varz: no answer within {timeout:?}"))??;
    let varz: Varz = serde_json::from_slice(&body)
        .map_err(|err| format!("GET {monitoring_url}/varz: not varz JSON: {err}"))?;
    let config = varz
        .jetstream
        .and_then(|jetstream| jetstream.config)
        .ok_or_else(|| format!("{monitoring_url}/varz: JetStream is not enabled"))?;
    Ok(ServerSync {
        always: config.sync_always,
        interval: Duration::from_nanos(config.sync_interval),
    })
}

/// `host:port` of an `http://host:port[/…]` URL.
fn authority(url: &str) -> Result<&str, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("monitoring URL {url:?}: only http://host:port is supported"))?;
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.is_empty() {
        return Err(format!("monitoring URL {url:?} has no host"));
    }
    Ok(authority)
}

async fn get_varz(authority: &str) -> Result<Vec<u8>, String> {
    let fail = |err: std::io::Error| format!("GET http://{authority}/varz: {err}");
    let mut stream = TcpStream::connect(authority).await.map_err(fail)?;
    let request = format!("GET /varz HTTP/1.0\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.map_err(fail)?;
    let mut response = Vec::new();
    stream
        .take(VARZ_BYTES_MAX)
        .read_to_end(&mut response)
        .await
        .map_err(fail)?;
    let split = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or_else(|| format!("GET http://{authority}/varz: no HTTP header end"))?;
    let status_line = response[..split]
        .split(|&byte| byte == b'\r')
        .next()
        .unwrap_or_default();
    let status_line = String::from_utf8_lossy(status_line);
    if status_line.split_whitespace().nth(1) != Some("200") {
        return Err(format!("GET http://{authority}/varz: {status_line}"));
    }
    Ok(response[split + 4..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authority_takes_host_and_port() {
        assert_eq!(authority("http://127.0.0.1:8222"), Ok("127.0.0.1:8222"));
        assert_eq!(authority("http://nats:8222/varz"), Ok("nats:8222"));
        assert!(authority("https://nats:8222").is_err());
        assert!(authority("http:///x").is_err());
    }

    #[test]
    fn varz_sync_fields_parse() {
        let always =
            br#"{"jetstream":{"config":{"sync_interval":120000000000,"sync_always":true}}}"#;
        let varz: Varz = serde_json::from_slice(always).expect("parses");
        let config = varz.jetstream.and_then(|js| js.config).expect("has config");
        assert!(config.sync_always);
        let periodic = br#"{"jetstream":{"config":{"sync_interval":120000000000}}}"#;
        let varz: Varz = serde_json::from_slice(periodic).expect("parses");
        assert!(
            !varz
                .jetstream
                .and_then(|js| js.config)
                .expect("has config")
                .sync_always
        );
    }
}

//! The nodes' HTTP monitoring endpoints (`/jsz`, `/healthz`), read with a bounded plain
//! HTTP/1.0 client: the harness asks them who leads what and whether a node caught up.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// Bound on one monitoring request (connect, write, read).
const MONITORING_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest monitoring answer read (`/jsz?streams=true` for a few streams is a few kilobytes).
const MONITORING_BYTES_MAX: u64 = 4 * 1024 * 1024;

/// `stream`'s entry in a `/jsz?streams=true` answer.
pub(crate) fn stream_detail<'a>(jsz: &'a Value, stream: &str) -> Option<&'a Value> {
    jsz["account_details"]
        .as_array()?
        .iter()
        .filter_map(|account| account["stream_detail"].as_array())
        .flatten()
        .find(|detail| detail["name"] == stream)
}

/// A JSON monitoring answer (`/jsz?…`, `/routez`) from a loopback port, or `None` when the
/// node does not answer or the body is not JSON.
pub(crate) fn get_json(port: u16, path: &str) -> Option<Value> {
    let body = http_get(port, path).ok()?;
    serde_json::from_slice(&body).ok()
}

/// A plain HTTP/1.0 `GET` of `path` on a loopback monitoring port; the body of a `200`.
pub(crate) fn http_get(port: u16, path: &str) -> Result<Vec<u8>, std::io::Error> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, MONITORING_TIMEOUT)?;
    stream.set_read_timeout(Some(MONITORING_TIMEOUT))?;
    stream.set_write_timeout(Some(MONITORING_TIMEOUT))?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    stream
        .take(MONITORING_BYTES_MAX)
        .read_to_end(&mut response)?;
    let invalid =
        |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let split = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or_else(|| invalid("no HTTP header end"))?;
    let status = response[..split].split(|&byte| byte == b' ').nth(1);
    if status != Some(b"200".as_slice()) {
        return Err(invalid("not a 200 answer"));
    }
    Ok(response[split + 4..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_details_are_found_by_name() {
        let jsz = serde_json::json!({"account_details": [{"stream_detail": [
            {"name": "A", "cluster": {"leader": "n2"}},
            {"name": "B", "cluster": {"leader": "n3"}},
        ]}]});
        assert_eq!(
            stream_detail(&jsz, "B").map(|d| d["cluster"]["leader"].clone()),
            Some("n3".into())
        );
        assert!(stream_detail(&jsz, "C").is_none());
    }
}

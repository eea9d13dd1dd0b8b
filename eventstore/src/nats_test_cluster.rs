//! A real three-node `nats-server` cluster with JetStream for tests, on loopback ports, in a
//! temporary directory: what R3 streams and node-loss tests run on.
//!
//! Guarantees:
//! - Three real server processes (`nats-server` on `PATH`, or the path in
//!   [`SERVER_BIN_ENV`]) named `n1`, `n2`, `n3`, in one cluster ([`CLUSTER_NAME`]), each with
//!   its own store directory and `sync_interval: always`, so an acknowledged publish has been
//!   fsync'd on every replica that acknowledged it (`docs/durability.md`).
//! - Every port (client, cluster routes, HTTP monitoring) is on `127.0.0.1`, picked free by the
//!   OS, so parallel tests never share a cluster and no traffic leaves the machine.
//! - [`NatsTestCluster::start`] returns only once every node answers clients and all three
//!   agree on a JetStream meta-leader, or fails within [`READY_TIMEOUT`] with the tail of the
//!   late node's log.
//! - [`NatsTestCluster::kill`] is a SIGKILL by pid (a crash, not a shutdown);
//!   [`NatsTestCluster::restart`] brings a node back on the same ports and store and returns
//!   once it has rejoined the meta group. Dropping the handle kills every node.
//! - [`NatsTestCluster::stream_leader`] names the node leading a stream's Raft group, as the
//!   running nodes' monitoring endpoints (`/jsz?streams=true`) report it.
//!
//! The calls block the thread (they wait on processes and sockets); from an async test use
//! `tokio::task::spawn_blocking`. A library module, not `cfg(test)`, so other crates' tests can
//! use it, like [`crate::nats_test_server`].

mod error;
mod monitoring;
mod node;

pub use error::TestClusterError;

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::nats_test_server::{SERVER_BIN_ENV, greets_with_info};
use error::io;
use monitoring::{get_json, http_get, stream_detail};
use node::{Node, fresh_nodes};

/// Nodes in the cluster: the smallest that keeps a quorum after losing one.
pub const CLUSTER_SIZE: usize = 3;
/// The cluster's name in every node's `cluster` block.
pub const CLUSTER_NAME: &str = "flotilla-test";
/// Longest wait for a started (or restarted) node to answer and see a meta-leader, and for
/// [`NatsTestCluster::wait_stream_leader`] and [`NatsTestCluster::wait_stream_current`].
pub const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// Fresh-port attempts on the first start: another process may take a probed port first.
const START_ATTEMPTS_MAX: u32 = 3;
/// Pause between readiness probes.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Lines of each node's log [`NatsTestCluster::log_tails`] gives.
const LOG_TAIL_LINES: usize = 40;
/// Bytes of a node's log quoted in an error.
const LOG_TAIL_BYTES: usize = 4_000;

/// A running three-node `nats-server` cluster with JetStream; every node is killed when
/// dropped.
#[derive(Debug)]
pub struct NatsTestCluster {
    binary: PathBuf,
    dir: TempDir,
    nodes: Vec<Node>,
}

impl NatsTestCluster {
    /// Starts three `nats-server` processes (or [`SERVER_BIN_ENV`]) on fresh loopback ports
    /// with fresh stores, and waits for a JetStream meta-leader.
    ///
    /// # Errors
    /// When the binary is missing, or the cluster does not become ready (after three attempts
    /// on fresh ports).
    pub fn start() -> Result<Self, TestClusterError> {
        let binary = std::env::var_os(SERVER_BIN_ENV).unwrap_or_else(|| "nats-server".into());
        Self::start_binary(binary)
    }

    /// Starts the given server binary three times, as [`Self::start`] does.
    ///
    /// # Errors
    /// As [`Self::start`].
    pub fn start_binary(binary: impl Into<PathBuf>) -> Result<Self, TestClusterError> {
        let dir = tempfile::Builder::new()
            .prefix("flotilla-nats-cluster-")
            .tempdir()
            .map_err(io("create temporary directory"))?;
        let mut cluster = Self {
            binary: binary.into(),
            dir,
            nodes: Vec::new(),
        };
        let mut attempt = 1;
        loop {
            cluster.nodes = fresh_nodes()?;
            match cluster.spawn_all_and_wait() {
                Ok(()) => return Ok(cluster),
                // A lost port race looks like an early exit; try again on other ports.
                Err(TestClusterError::Exited { .. }) if attempt < START_ATTEMPTS_MAX => {
                    cluster.kill_all();
                    attempt += 1;
                }
                Err(err) => {
                    cluster.kill_all();
                    return Err(err);
                }
            }
        }
    }

    /// Node `node`'s client URL, `nats://127.0.0.1:<port>`.
    ///
    /// # Errors
    /// When there is no such node.
    pub fn url(&self, node: usize) -> Result<String, TestClusterError> {
        Ok(format!("nats://127.0.0.1:{}", self.node(node)?.client_port))
    }

    /// Every node's client URL, comma-separated: what `flotilla serve --nats` and
    /// `flotilla agent --nats` take to fail over between nodes.
    #[must_use]
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(|node| format!("nats://127.0.0.1:{}", node.client_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Node `node`'s HTTP monitoring URL, `http://127.0.0.1:<port>`.
    ///
    /// # Errors
    /// When there is no such node.
    pub fn monitoring_url(&self, node: usize) -> Result<String, TestClusterError> {
        Ok(format!(
            "http://127.0.0.1:{}",
            self.node(node)?.monitoring_port
        ))
    }

    /// A JSON monitoring endpoint of node `node` (`/jsz?streams=true&consumers=true`,
    /// `/routez`, …), or `None` when it is not running or does not answer: what a failing test
    /// prints to show what each node believed.
    #[must_use]
    pub fn monitoring(&self, node: usize, path: &str) -> Option<Value> {
        let node = self.nodes.get(node).filter(|node| node.child.is_some())?;
        get_json(node.monitoring_port, path)
    }

    /// Node `node`'s server name (`n1`, `n2`, `n3`), as the monitoring endpoints name it.
    ///
    /// # Errors
    /// When there is no such node.
    pub fn name(&self, node: usize) -> Result<&str, TestClusterError> {
        Ok(self.node(node)?.name.as_str())
    }

    /// Node `node`'s JetStream store directory.
    ///
    /// # Errors
    /// When there is no such node.
    pub fn store_dir(&self, node: usize) -> Result<PathBuf, TestClusterError> {
        let name = &self.node(node)?.name;
        Ok(self.dir.path().join(format!("{name}-store")))
    }

    /// Node `node`'s process id, while it runs.
    #[must_use]
    pub fn pid(&self, node: usize) -> Option<u32> {
        self.nodes.get(node)?.child.as_ref().map(Child::id)
    }

    /// Kills node `node` with SIGKILL (a crash, not a shutdown) and reaps it. Does nothing if
    /// it is not running.
    ///
    /// # Errors
    /// When there is no such node, or it cannot be signalled or reaped.
    pub fn kill(&mut self, node: usize) -> Result<(), TestClusterError> {
        let node = self.node_mut(node)?;
        if let Some(mut child) = node.child.take() {
            child.kill().map_err(io("kill nats-server"))?;
            child.wait().map_err(io("reap nats-server"))?;
        }
        Ok(())
    }

    /// Starts node `node` again on the same ports with the same store (after
    /// [`Self::kill`]); returns once it answers clients and sees a meta-leader.
    ///
    /// # Errors
    /// When there is no such node, or it does not become ready.
    pub fn restart(&mut self, node: usize) -> Result<(), TestClusterError> {
        self.kill(node)?;
        let started = self.spawn(node).and_then(|()| self.wait_ready(node));
        if started.is_err() {
            let _ = self.kill(node);
        }
        started
    }

    /// The node leading the JetStream meta group, as every running node sees it; `None` while
    /// they do not all name the same leader.
    #[must_use]
    pub fn meta_leader(&self) -> Option<usize> {
        self.agreed_leader(|jsz| jsz["meta_cluster"]["leader"].as_str().map(str::to_owned))
    }

    /// The node leading `stream`'s Raft group, as every running node sees it; `None` while
    /// they do not all name the same running leader (an election, or a stale view).
    #[must_use]
    pub fn stream_leader(&self, stream: &str) -> Option<usize> {
        self.agreed_leader(|jsz| {
            stream_detail(jsz, stream)?["cluster"]["leader"]
                .as_str()
                .map(str::to_owned)
        })
    }

    /// Waits until the running nodes agree on a running leader of `stream`, other than
    /// `not` (the node just killed, whose old leadership a stale view may still report).
    ///
    /// # Errors
    /// When they do not agree within [`READY_TIMEOUT`].
    pub fn wait_stream_leader(
        &self,
        stream: &str,
        not: Option<usize>,
    ) -> Result<usize, TestClusterError> {
        self.poll(&format!("no agreed leader of stream {stream}"), || {
            self.stream_leader(stream)
                .filter(|leader| Some(*leader) != not)
        })
    }

    /// Waits until `stream`'s leader reports every replica current (a restarted node has
    /// caught up); returns the leader.
    ///
    /// # Errors
    /// When that does not happen within [`READY_TIMEOUT`].
    pub fn wait_stream_current(&self, stream: &str) -> Result<usize, TestClusterError> {
        self.poll(&format!("stream {stream} has a lagging replica"), || {
            let leader = self.stream_leader(stream)?;
            let jsz = self.jsz(leader)?;
            let replicas = stream_detail(&jsz, stream)?["cluster"]["replicas"]
                .as_array()?
                .clone();
            let all_current = replicas.len() == CLUSTER_SIZE - 1
                && replicas.iter().all(|replica| replica["current"] == true);
            all_current.then_some(leader)
        })
    }

    /// The end of every node's log, named, for a failing test to print.
    #[must_use]
    pub fn log_tails(&self) -> String {
        (0..self.nodes.len())
            .map(|node| {
                // Reconnect attempts to a killed node flood the log; leave them out.
                let log = std::fs::read_to_string(self.log_path(node)).unwrap_or_default();
                let kept: Vec<&str> = log
                    .lines()
                    .filter(|line| !line.contains("Error trying to connect to route"))
                    .collect();
                let tail = kept[kept.len().saturating_sub(LOG_TAIL_LINES)..].join("\n");
                format!("--- {} ---\n{tail}\n", self.nodes[node].name)
            })
            .collect()
    }

    fn node(&self, node: usize) -> Result<&Node, TestClusterError> {
        self.nodes
            .get(node)
            .ok_or(TestClusterError::NoSuchNode(node))
    }

    fn node_mut(&mut self, node: usize) -> Result<&mut Node, TestClusterError> {
        self.nodes
            .get_mut(node)
            .ok_or(TestClusterError::NoSuchNode(node))
    }

    fn spawn_all_and_wait(&mut self) -> Result<(), TestClusterError> {
        for node in 0..CLUSTER_SIZE {
            self.write_config(node)?;
        }
        // All three first: none can elect a meta-leader alone.
        for node in 0..CLUSTER_SIZE {
            self.spawn(node)?;
        }
        for node in 0..CLUSTER_SIZE {
            self.wait_answers(node)?;
        }
        let first = self.nodes[0].name.clone();
        let what = format!("no meta-leader agreed on (asked via {first})");
        self.poll_node(0, &what, Self::meta_leader)?;
        Ok(())
    }

    fn config_path(&self, node: usize) -> PathBuf {
        self.dir
            .path()
            .join(format!("{}.conf", self.nodes[node].name))
    }

    fn log_path(&self, node: usize) -> PathBuf {
        self.dir
            .path()
            .join(format!("{}.log", self.nodes[node].name))
    }

    fn write_config(&self, node: usize) -> Result<(), TestClusterError> {
        let config = self.node(node)?.config(&self.nodes, &self.store_dir(node)?);
        std::fs::write(self.config_path(node), config).map_err(io("write a node's config"))
    }

    fn spawn(&mut self, node: usize) -> Result<(), TestClusterError> {
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path(node))
            .map_err(io("open a node's log"))?;
        let log_err = log.try_clone().map_err(io("open a node's log"))?;
        let child = Command::new(&self.binary)
            .arg("-c")
            .arg(self.config_path(node))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => TestClusterError::NotInstalled {
                    binary: self.binary.display().to_string(),
                },
                _ => TestClusterError::Io {
                    context: "spawn nats-server",
                    source,
                },
            })?;
        self.node_mut(node)?.child = Some(child);
        Ok(())
    }

    /// A restarted node is ready when it answers clients and has found the meta-leader.
    fn wait_ready(&mut self, node: usize) -> Result<(), TestClusterError> {
        self.wait_answers(node)?;
        self.poll_node(node, "did not rejoin the meta group", |cluster| {
            let jsz = cluster.jsz(node)?;
            jsz["meta_cluster"]["leader"]
                .as_str()
                .filter(|leader| !leader.is_empty())
                .map(|_| ())
        })?;
        // `/healthz` answers 200 only once every stream on the node is current again: the
        // leader's view of its replicas can call a recovering node current too early.
        let port = self.node(node)?.monitoring_port;
        self.poll_node(node, "did not catch up its streams (/healthz)", |_| {
            http_get(port, "/healthz").ok().map(|_| ())
        })
    }

    /// Polls until the node greets a client with `INFO`, it exits, or the deadline passes.
    fn wait_answers(&mut self, node: usize) -> Result<(), TestClusterError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.node(node)?.client_port));
        self.poll_node(node, "did not answer clients", |_| {
            greets_with_info(addr).then_some(())
        })
    }

    /// Polls `check` until it gives a value, node `node` exits, or [`READY_TIMEOUT`] passes.
    fn poll_node<T>(
        &mut self,
        node: usize,
        what: &str,
        mut check: impl FnMut(&Self) -> Option<T>,
    ) -> Result<T, TestClusterError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let this = self.node_mut(node)?;
            let exited = match this.child.as_mut() {
                Some(child) => child.try_wait().map_err(io("poll nats-server"))?,
                None => None,
            };
            if let Some(status) = exited {
                this.child = None;
                return Err(TestClusterError::Exited {
                    node: this.name.clone(),
                    status: status.to_string(),
                    log_tail: self.log_tail(node),
                });
            }
            if let Some(value) = check(self) {
                return Ok(value);
            }
            if Instant::now() >= deadline {
                return Err(self.not_ready(node, what));
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Polls `check` until it gives a value or [`READY_TIMEOUT`] passes.
    fn poll<T>(
        &self,
        what: &str,
        mut check: impl FnMut() -> Option<T>,
    ) -> Result<T, TestClusterError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(value) = check() {
                return Ok(value);
            }
            if Instant::now() >= deadline {
                let node = self.running().next().unwrap_or(0);
                return Err(self.not_ready(node, what));
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    fn not_ready(&self, node: usize, what: &str) -> TestClusterError {
        TestClusterError::NotReady {
            node: self
                .nodes
                .get(node)
                .map(|n| n.name.clone())
                .unwrap_or_default(),
            what: what.to_owned(),
            log_tail: self.log_tail(node),
        }
    }

    /// The indices of the running nodes.
    fn running(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|node| self.nodes[*node].child.is_some())
    }

    /// The leader `leader_of` reads from every running node's `/jsz`, if they all answer and
    /// name the same running node.
    fn agreed_leader(&self, leader_of: impl Fn(&Value) -> Option<String>) -> Option<usize> {
        let mut agreed: Option<String> = None;
        for node in self.running() {
            let leader = leader_of(&self.jsz(node)?).filter(|name| !name.is_empty())?;
            if agreed.as_ref().is_some_and(|seen| *seen != leader) {
                return None;
            }
            agreed = Some(leader);
        }
        let leader = agreed?;
        self.running().find(|node| self.nodes[*node].name == leader)
    }

    /// Node `node`'s `/jsz?streams=true`, or `None` when it does not answer.
    fn jsz(&self, node: usize) -> Option<Value> {
        get_json(self.nodes.get(node)?.monitoring_port, "/jsz?streams=true")
    }

    fn log_tail(&self, node: usize) -> String {
        if node >= self.nodes.len() {
            return String::new();
        }
        let log = std::fs::read(self.log_path(node)).unwrap_or_default();
        let start = log.len().saturating_sub(LOG_TAIL_BYTES);
        String::from_utf8_lossy(&log[start..]).into_owned()
    }

    fn kill_all(&mut self) {
        for node in 0..self.nodes.len() {
            // Errors cannot be acted on here: the node is gone or was never started.
            let _ = self.kill(node);
        }
    }
}

impl Drop for NatsTestCluster {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nats_test_server::INSTALL_HINT;

    #[test]
    fn a_missing_binary_says_how_to_install_it() {
        let missing = NatsTestCluster::start_binary("/nonexistent/nats-server");
        let Err(err @ TestClusterError::NotInstalled { .. }) = missing else {
            panic!("expected NotInstalled, got {missing:?}");
        };
        assert!(err.to_string().contains(INSTALL_HINT), "{err}");
    }
}

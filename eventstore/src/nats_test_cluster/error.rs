//! Why the test cluster, or one node of it, could not be started, stopped or asked.

use super::{CLUSTER_SIZE, READY_TIMEOUT};
use crate::nats_test_server::{INSTALL_HINT, SERVER_BIN_ENV};

/// Why the cluster, or one node of it, could not be started, stopped or asked.
#[derive(Debug, thiserror::Error)]
pub enum TestClusterError {
    /// The binary is missing.
    #[error("`{binary}` was not found: run `{INSTALL_HINT}` (or set {SERVER_BIN_ENV})")]
    NotInstalled {
        /// The binary that was looked for.
        binary: String,
    },
    /// A file or process operation failed.
    #[error("nats test cluster: {context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A node exited before it was ready.
    #[error("nats-server {node} exited before it was ready ({status}); log tail:\n{log_tail}")]
    Exited {
        /// The node's name.
        node: String,
        /// Its exit status.
        status: String,
        /// The end of its log.
        log_tail: String,
    },
    /// A node, or the cluster, did not get ready in time.
    #[error("nats-server {node}: {what} within {READY_TIMEOUT:?}; log tail:\n{log_tail}")]
    NotReady {
        /// The node's name.
        node: String,
        /// What did not happen.
        what: String,
        /// The end of its log.
        log_tail: String,
    },
    /// No node has this index.
    #[error("the cluster has nodes 0..{CLUSTER_SIZE}, not {0}")]
    NoSuchNode(usize),
}

pub(crate) fn io(context: &'static str) -> impl FnOnce(std::io::Error) -> TestClusterError {
    move |source| TestClusterError::Io { context, source }
}

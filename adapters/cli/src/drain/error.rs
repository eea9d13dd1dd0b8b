//! Why `drain` or `uncordon` stopped, as both the cordon and the evictions report it.

use flotilla_adapters::client::ClientError;

/// Why `drain` or `uncordon` stopped.
#[derive(Debug, thiserror::Error)]
pub enum DrainError {
    /// The hub has no such member cluster; nothing was written.
    #[error("member cluster {0:?} not found; nothing was changed")]
    ClusterNotFound(String),
    /// Some placements keep their resources on the cluster; the lines above say why.
    #[error(
        "drain was not successful for cluster {cluster}: the eviction of {placements} was not \
         executed; run `flotilla drain {cluster}` again once that changes"
    )]
    Incomplete {
        /// The member cluster.
        cluster: String,
        /// The placements not evicted, comma-separated.
        placements: String,
    },
    /// Someone else kept changing the member cluster between our read and our write.
    #[error(
        "member cluster {cluster} changed under every one of {attempts} attempts to update its \
         taints; try again"
    )]
    Contended {
        /// The member cluster.
        cluster: String,
        /// How many read-and-write rounds were made.
        attempts: usize,
    },
    /// No free eviction name was found.
    #[error(
        "failed to create an eviction for CRP {placement} targeting member cluster {cluster}: \
         {attempts} generated names were all taken"
    )]
    NamesTaken {
        /// The placement.
        placement: String,
        /// The member cluster.
        cluster: String,
        /// How many names were tried.
        attempts: usize,
    },
    /// KubeFleet's name scheme gives no valid object name for this placement and cluster.
    #[error(
        "failed to format a qualified name for drain eviction object with CRP name {placement}, \
         cluster name {cluster}: {reason}"
    )]
    EvictionName {
        /// The placement.
        placement: String,
        /// The member cluster.
        cluster: String,
        /// What is wrong with the name.
        reason: String,
    },
    /// The operation took longer than `--timeout`.
    #[error("{verb} of member cluster {cluster} did not finish within {seconds} s (--timeout)")]
    Timeout {
        /// `drain` or `uncordon`.
        verb: &'static str,
        /// The member cluster.
        cluster: String,
        /// The limit.
        seconds: u64,
    },
    /// The hub answered with something this command cannot read.
    #[error("unexpected answer from the hub: {0}")]
    Protocol(String),
    /// The hub could not be asked, or refused.
    #[error(transparent)]
    Client(#[from] ClientError),
}

//! The `Applier` contract: what an agent asks of the cluster it serves. An applier applies a
//! Work's manifests and says, per manifest, whether it applied and whether it is available;
//! removes objects a Work placed; and observes a Work again without applying. The agent decides
//! when to call which (idempotency, withdrawal, leaving); an applier only touches the cluster.
//! `sim` and `dir` implement it here; a `kube` applier (server-side apply with a fixed field
//! manager, availability from the live object's status) fits the same three calls.

use std::future::Future;

use flotilla_core::availability::Availability;

use super::work::{DesiredWork, ManifestId, WorkTarget};

/// Whether one manifest applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The object on the cluster matches the manifest.
    Applied,
    /// The apply failed, with the cluster's message.
    Failed(String),
}

/// What happened to one manifest of a Work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestOutcome {
    /// Which object.
    pub id: ManifestId,
    /// Applied or failed.
    pub applied: Applied,
    /// Available, not yet, or not trackable (seed 001's rules, `availability::judge`).
    pub availability: Availability,
}

/// Why an applier could not do its job at all (as opposed to one manifest failing).
#[derive(Debug, thiserror::Error)]
pub enum ApplierError {
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// A stored file could not be decoded or an object encoded.
    #[error("{path}: {message}")]
    Encoding {
        /// The path.
        path: String,
        /// What was wrong.
        message: String,
    },
}

impl ApplierError {
    /// An I/O error at `path`.
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// A member cluster an agent applies Works to.
pub trait Applier: Send {
    /// The prefix of every output line, e.g. `[sim member-1]`.
    fn label(&self) -> &str;

    /// Applies every manifest of `work` (an object already as desired is left alone) and
    /// returns one outcome per manifest, in order.
    fn apply(
        &mut self,
        work: &DesiredWork,
    ) -> impl Future<Output = Result<Vec<ManifestOutcome>, ApplierError>> + Send;

    /// Observes `work`'s manifests as they are now, without applying.
    fn observe(
        &mut self,
        work: &DesiredWork,
    ) -> impl Future<Output = Result<Vec<ManifestOutcome>, ApplierError>> + Send;

    /// Removes these objects, which `target` placed; returns how many were there.
    fn remove(
        &mut self,
        target: &WorkTarget,
        objects: &[ManifestId],
    ) -> impl Future<Output = Result<usize, ApplierError>> + Send;
}

//! The `Applier` contract: what an agent asks of the cluster it serves. An applier applies a
//! Work's manifests and says, per manifest, whether it applied and whether it is available;
//! removes objects a Work placed; and observes a Work again without applying. The agent decides
//! when to call which (idempotency, withdrawal, leaving); an applier only touches the cluster.
//! `sim`, `dir` and `kube` implement it. Besides applied and available, an outcome carries what
//! the `kube` applier's strategies find ([`Findings`]): why a manifest was refused, and the
//! differences (ReportDiff, a refused takeover) or drifts it observed; `sim` and `dir` find none.

use std::future::Future;

use flotilla_core::query::availability::Availability;
use serde::{Deserialize, Serialize};

use super::work::{DesiredWork, ManifestId, WorkTarget};

/// Whether one manifest applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The object on the cluster matches the manifest.
    Applied,
    /// The apply failed, with the cluster's message.
    Failed(String),
    /// ReportDiff mode: nothing was applied; the comparison with the member's object was made
    /// (its differences, if any, are in the outcome's findings).
    DiffReported,
    /// ReportDiff mode: the comparison could not be made, with why.
    DiffFailed(String),
}

/// One difference between the hub's manifest and the member's object, at a JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchDetail {
    /// JSON pointer (`/spec/replicas`).
    pub path: String,
    /// The value on the member (absent when the member's object lacks the field).
    pub value_in_member: Option<String>,
    /// The value in the hub's manifest (absent when only the member has the field).
    pub value_in_hub: Option<String>,
}

/// Differences found for one object, and the generation of the member's object they were found
/// on (`None` when the object does not exist).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedDiffs {
    /// `metadata.generation` of the member's object.
    pub generation: Option<i64>,
    /// The differences (at most `report::DIFFS_PER_MANIFEST_MAX`).
    pub details: Vec<PatchDetail>,
}

/// What an applier found about one manifest besides applied and available.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Why the manifest failed, as KubeFleet names it (`FoundDrifts`, `NotTakenOver`,
    /// `FailedToTakeOver`, `ApplyConflictWithOtherApplier`, …); `None` for none given.
    pub reason: Option<String>,
    /// How the member's object differs from the manifest (ReportDiff mode; a takeover refused
    /// for them).
    pub diffs: Option<ObservedDiffs>,
    /// How an object this agent applied drifted from the manifest.
    pub drifts: Option<ObservedDiffs>,
}

/// What happened to one manifest of a Work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestOutcome {
    /// Which object.
    pub id: ManifestId,
    /// Applied or failed.
    pub applied: Applied,
    /// Available, not yet, or not trackable (KubeFleet's availability rules,
    /// `availability::judge`).
    pub availability: Availability,
    /// Reasons, diffs and drifts (none from `sim` and `dir`).
    pub findings: Findings,
}

impl ManifestOutcome {
    /// A manifest that failed to apply, with why; its availability cannot be tracked.
    #[must_use]
    pub fn failed(id: ManifestId, message: &str) -> Self {
        Self {
            id,
            applied: Applied::Failed(message.to_owned()),
            availability: Availability::NotTrackable,
            findings: Findings::default(),
        }
    }

    /// The failed outcome of a manifest that names no object (no apiVersion, kind or name).
    #[must_use]
    pub fn unnamed() -> Self {
        Self::failed(
            ManifestId::unnamed(),
            "a manifest without apiVersion, kind or name",
        )
    }
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
    /// The cluster could not be reached or refused a call the applier cannot do without.
    #[error("cluster: {0}")]
    Cluster(String),
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

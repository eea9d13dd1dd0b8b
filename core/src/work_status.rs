//! What the hub keeps of a member's last report on one placement's work. Nearly every report
//! says only applied and available, so the message and the manifest lists sit behind one
//! pointer that is empty for those: a binding holds its work status inline, and a million
//! bindings each held four empty lists and an empty message.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use thin_vec::ThinVec;

use crate::event::ManifestFailure;

/// What a member cluster last said about one placement's work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkStatus {
    /// Resource index reported on.
    pub resource_index: u64,
    /// Applied (`Some(true)`), failed (`Some(false)`) or not yet (`None`).
    pub applied: Option<bool>,
    /// Available, not available, or unknown.
    pub available: Option<bool>,
    /// Whether availability can be tracked.
    pub trackable: bool,
    /// A `ReportDiff` member's outcome: every manifest's diff computed (`Some(true)`), some
    /// failed (`Some(false)`); `None` from a member that applies (version 4).
    pub diff_reported: Option<bool>,
    /// Event time of the report. (Through `time_text`: chrono's own text, read and written
    /// without its general parser and formatter; a million-cluster checkpoint holds one per
    /// binding.)
    #[serde(with = "crate::time_text")]
    pub reported_at: DateTime<Utc>,
    /// Since when the work has been reported available (at this index, this trackability):
    /// the `lastTransitionTime` of its Available condition.
    #[serde(with = "crate::time_text")]
    pub available_since: DateTime<Utc>,
    /// The message and the manifests listed; `None` when all are empty (a checkpoint holds
    /// what the fold held, so a decoded state keeps this too).
    details: Option<Box<ReportDetails>>,
}

/// The parts of a report most leave empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportDetails {
    /// Member's message.
    pub message: String,
    /// The manifests the member reported failed, at most [`FAILED_MANIFESTS_MAX`].
    pub failed_manifests: ThinVec<ManifestFailure>,
    /// Manifests whose object differs from the hub's, at most
    /// [`DIFFERENCES_MAX`] (version 4).
    pub diffed: ThinVec<ObservedDifference>,
    /// Manifests whose object drifted, at most [`DIFFERENCES_MAX`] (version 4).
    pub drifted: ThinVec<ObservedDifference>,
}

impl ReportDetails {
    fn is_empty(&self) -> bool {
        self.message.is_empty()
            && self.failed_manifests.is_empty()
            && self.diffed.is_empty()
            && self.drifted.is_empty()
    }
}

/// The details of a report with none.
static NO_DETAILS: ReportDetails = ReportDetails {
    message: String::new(),
    failed_manifests: ThinVec::new(),
    diffed: ThinVec::new(),
    drifted: ThinVec::new(),
};

impl WorkStatus {
    /// A report on `resource_index` at `reported_at` that says nothing yet: not applied, not
    /// available, not trackable, no details.
    #[must_use]
    pub fn new(resource_index: u64, reported_at: DateTime<Utc>) -> Self {
        Self {
            resource_index,
            applied: None,
            available: None,
            trackable: false,
            diff_reported: None,
            reported_at,
            available_since: reported_at,
            details: None,
        }
    }

    /// Sets the message and manifest lists, holding nothing for them when all are empty.
    pub fn set_details(&mut self, details: ReportDetails) {
        self.details = (!details.is_empty()).then(|| Box::new(details));
    }

    /// The message and manifest lists.
    #[must_use]
    pub fn details(&self) -> &ReportDetails {
        self.details.as_deref().unwrap_or(&NO_DETAILS)
    }

    /// Whether it holds a message or manifest lists.
    #[must_use]
    pub fn has_details(&self) -> bool {
        self.details.is_some()
    }

    /// Member's message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.details().message
    }

    /// The manifests the member reported failed.
    #[must_use]
    pub fn failed_manifests(&self) -> &[ManifestFailure] {
        &self.details().failed_manifests
    }

    /// Manifests whose object differs from the hub's.
    #[must_use]
    pub fn diffed(&self) -> &[ObservedDifference] {
        &self.details().diffed
    }

    /// Manifests whose object drifted.
    #[must_use]
    pub fn drifted(&self) -> &[ObservedDifference] {
        &self.details().drifted
    }

    /// Whether a new report says nothing this one did not (its time aside): folding it would
    /// change nothing.
    #[must_use]
    pub fn says_the_same(&self, other: &WorkStatus) -> bool {
        self.resource_index == other.resource_index
            && self.applied == other.applied
            && self.available == other.available
            && self.trackable == other.trackable
            && self.diff_reported == other.diff_reported
            && self.details == other.details
    }
}

/// A manifest reported diffed or drifted, with when the hub first saw it so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedDifference {
    /// What the member reported, its details cut at [`PATCH_DETAILS_MAX`].
    pub manifest: crate::event::ManifestDifference,
    /// Event time of the first report of the unbroken run of reports on this work that listed
    /// the manifest (`firstDiffedObservedTime` / `firstDriftedObservedTime`).
    pub first_observed: DateTime<Utc>,
}

/// At most this many failed manifests are kept per work (KubeFleet's
/// `maxFailedResourcePlacementLimit`, the length of `failedPlacements`).
pub const FAILED_MANIFESTS_MAX: usize = 100;

/// At most this many diffed, and this many drifted, manifests are kept per work (KubeFleet's
/// `maxDiffedResourcePlacementLimit` and `maxDriftedResourcePlacementLimit`).
pub const DIFFERENCES_MAX: usize = 100;

/// At most this many differing fields are kept per manifest: enough to show what changed,
/// while a report on 100 manifests stays well inside an event's size limit. KubeFleet, too,
/// may cut the details "to control the object size".
pub const PATCH_DETAILS_MAX: usize = 50;

//! The conditions after scheduling and their texts: per cluster while not known yet, and on
//! the placement when every cluster reached one, some failed it, or some have it undecided.
//! Texts are the seed-era controller's; `DiffReported`'s are KubeFleet's
//! (`pkg/utils/condition/condition.go`), which has no older ones.

use flotilla_core::query::overrides::{
    REASON_NO_OVERRIDE_SPECIFIED, REASON_OVERRIDDEN_FAILED, REASON_OVERRIDDEN_SUCCEEDED,
};
use flotilla_core::query::rollout::readiness::ApplyMode;

/// The conditions after scheduling, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The rollout bound the binding to the latest resources.
    RolloutStarted,
    /// Overrides were applied (or there were none).
    Overridden,
    /// The work was created or updated.
    WorkSynchronized,
    /// The member applied the work.
    Applied,
    /// The applied resources are available.
    Available,
    /// The member reported how the resources differ from its objects (`ReportDiff`).
    DiffReported,
}

/// The stages of a placement whose members apply, in order.
const APPLY_STAGES: [Stage; 5] = [
    Stage::RolloutStarted,
    Stage::Overridden,
    Stage::WorkSynchronized,
    Stage::Applied,
    Stage::Available,
];

/// The stages of a `ReportDiff` placement, in order.
const REPORT_DIFF_STAGES: [Stage; 4] = [
    Stage::RolloutStarted,
    Stage::Overridden,
    Stage::WorkSynchronized,
    Stage::DiffReported,
];

/// The stages under this apply mode, in order.
pub(crate) fn stages(mode: ApplyMode) -> &'static [Stage] {
    match mode {
        ApplyMode::Apply => &APPLY_STAGES,
        ApplyMode::ReportDiff => &REPORT_DIFF_STAGES,
    }
}

impl Stage {
    /// The condition type on bindings and per-cluster statuses (the placement's adds its prefix).
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            Stage::RolloutStarted => "RolloutStarted",
            Stage::Overridden => "Overridden",
            Stage::WorkSynchronized => "WorkSynchronized",
            Stage::Applied => "Applied",
            Stage::Available => "Available",
            Stage::DiffReported => "DiffReported",
        }
    }

    /// The stage after this one under `mode`.
    pub(crate) fn next(self, mode: ApplyMode) -> Option<Stage> {
        let stages = stages(mode);
        let position = stages.iter().position(|stage| *stage == self)?;
        stages.get(position + 1).copied()
    }

    /// A per-cluster condition not known yet.
    pub(crate) fn unknown_for_cluster(self) -> (&'static str, &'static str) {
        match self {
            Stage::RolloutStarted => (
                "RolloutStartedUnknown",
                "In the process of deciding whether to roll out the latest resources or not",
            ),
            Stage::Overridden => (
                "OverriddenPending",
                "In the process of overriding the selected resources if there is any override \
                 defined",
            ),
            Stage::WorkSynchronized => (
                "WorkSynchronizedUnknown",
                "In the process of creating or updating the work object(s) in the hub cluster",
            ),
            Stage::Applied => (
                "ApplyPending",
                "In the process of applying the resources on the member cluster",
            ),
            // The trailing space is KubeFleet's.
            Stage::Available => (
                "ResourceAvailableUnknown",
                "The availability of the selected resources is unknown yet ",
            ),
            Stage::DiffReported => (
                "DiffReportingPending",
                "Diff reporting has just started; its status is not yet to be known",
            ),
        }
    }

    /// The placement condition when every cluster reached this stage.
    pub(crate) fn placement_true(
        self,
        clusters: usize,
        overridden: bool,
    ) -> (&'static str, String) {
        match self {
            Stage::RolloutStarted => (
                "RolloutStarted",
                format!("All {clusters} cluster(s) start rolling out the latest resource"),
            ),
            Stage::Overridden if overridden => (
                REASON_OVERRIDDEN_SUCCEEDED,
                format!(
                    "The selected resources are successfully overridden in the {clusters} clusters"
                ),
            ),
            Stage::Overridden => (
                REASON_NO_OVERRIDE_SPECIFIED,
                "No override rules are configured for the selected resources".to_owned(),
            ),
            Stage::WorkSynchronized => (
                "WorkSynchronized",
                format!(
                    "Works(s) are succcesfully created or updated in the {clusters} target \
                     clusters' namespaces"
                ),
            ),
            Stage::Applied => (
                "ApplySucceeded",
                format!("The selected resources are successfully applied to {clusters} clusters"),
            ),
            Stage::Available => (
                "ResourceAvailable",
                format!("The selected resources in {clusters} cluster are available now"),
            ),
            Stage::DiffReported => (
                "DiffReportingCompleted",
                format!("Diff reporting in {clusters} cluster(s) has been completed"),
            ),
        }
    }

    /// The placement condition when `clusters` clusters failed this stage.
    pub(crate) fn placement_false(self, clusters: usize) -> (&'static str, String) {
        match self {
            Stage::RolloutStarted => (
                "RolloutNotStartedYet",
                format!(
                    "The rollout is being blocked by the rollout strategy in {clusters} cluster(s)"
                ),
            ),
            Stage::Overridden => (
                REASON_OVERRIDDEN_FAILED,
                format!(
                    "Failed to override resources in {clusters} clusters, please check the \
                     `failedPlacements` status"
                ),
            ),
            Stage::WorkSynchronized => (
                "WorkNotSynchronizedYet",
                format!(
                    "There are {clusters} cluster(s) which have not finished creating or \
                     updating work(s) yet"
                ),
            ),
            Stage::Applied => (
                "ApplyFailed",
                format!(
                    "Failed to apply resources to {clusters} clusters, please check the \
                     `failedPlacements` status"
                ),
            ),
            Stage::Available => (
                "ResourceNotAvailableYet",
                format!("The selected resources in {clusters} cluster are still not available yet"),
            ),
            Stage::DiffReported => (
                "DiffReportingIncompleteOrFailed",
                format!("Diff reporting in {clusters} clusters is still in progress or has failed"),
            ),
        }
    }

    /// The placement condition when `clusters` clusters have this stage undecided.
    pub(crate) fn placement_unknown(self, clusters: usize) -> (&'static str, String) {
        let (reason, doing) = match self {
            Stage::RolloutStarted => (
                "RolloutStartedUnknown",
                "deciding whether to roll out the latest resources or not",
            ),
            Stage::Overridden => (
                "OverriddenPending",
                "overriding the selected resources if there is any override defined",
            ),
            Stage::WorkSynchronized => (
                "WorkSynchronizedUnknown",
                "creating or updating the work object(s) in the hub cluster",
            ),
            Stage::Applied => (
                "ApplyPending",
                "applying the resources on the member cluster",
            ),
            Stage::Available => (
                "ResourceAvailableUnknown",
                "checking the availability of the selected resources",
            ),
            Stage::DiffReported => (
                "DiffReportingPending",
                "checking for configuration differences",
            ),
        };
        (
            reason,
            format!("There are still {clusters} cluster(s) in the process of {doing}"),
        )
    }
}

//! What a run reports: its [`Outcome`] when it passes, its [`Failure`] when it does not.

use super::SimError;

/// What a passing run did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The seed.
    pub seed: u64,
    /// Digest of the trace: equal for two runs of one seed.
    pub trace_digest: String,
    /// Trace lines.
    pub trace_lines: u64,
    /// Steps taken.
    pub steps: u64,
    /// Inputs in the log at the end.
    pub inputs: u64,
    /// Simulated time at the end, in ms.
    pub simulated_ms: u64,
    /// Simulated time from the end of the faults until every rollout was done, in ms.
    pub settle_ms: u64,
    /// Member clusters and placements.
    pub members: u64,
    /// Placements.
    pub placements: u64,
    /// Writer crashes (drawn, and caused by failed log calls).
    pub writer_crashes: u64,
    /// Restarts over a damaged newest checkpoint.
    pub corrupt_checkpoints: u64,
    /// Log calls that failed by an injected fault.
    pub log_faults: u64,
    /// Agent crashes.
    pub agent_crashes: u64,
    /// Silences past the heartbeat timeout.
    pub silences: u64,
    /// Messages lost, duplicated, and re-sent past the deduplication window.
    pub dropped: u64,
    /// Messages delivered twice.
    pub duplicated: u64,
    /// Messages delivered again past the window.
    pub late_duplicated: u64,
    /// Copies of an event id the log holds beyond the first (each decided `DuplicateEvent`).
    pub stored_copies: u64,
}

/// A failed run: why, and the end of its trace.
#[derive(Debug)]
pub struct Failure {
    /// Why.
    pub error: SimError,
    /// The last trace lines.
    pub tail: String,
    /// The digest of the trace up to the failure.
    pub digest: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n--- last trace lines (trace digest {}) ---\n{}",
            self.error, self.digest, self.tail
        )
    }
}

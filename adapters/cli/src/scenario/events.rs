//! A scenario run's events: the source every one carries, the bound on how many one step may
//! generate, and why a run stops. The runner ([`super`]) and its in-process agents
//! ([`super::agents`]) both append them.

use flotilla_eventstore::LogError;
use flotilla_eventstore::fold::FoldError;

/// Source name of every scenario event.
pub const SCENARIO_SOURCE: &str = "scenario";
/// Most events one `advance` step may generate (a guard against a runaway loop).
pub const ADVANCE_EVENTS_MAX: usize = 1_000_000;

/// Why a scenario could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// Folding failed, or the state could not be hashed.
    #[error(transparent)]
    Fold(#[from] FoldError),
    /// An in-process agent published something that is not an event.
    #[error("a member agent: {0}")]
    Agent(String),
    /// An advance step would generate too many events.
    #[error("step {step}: advancing generates more than {ADVANCE_EVENTS_MAX} events")]
    RunawayAdvance {
        /// Step number.
        step: usize,
    },
    /// An `expectRejection` step found the previous step not rejected with its code.
    #[error("step {step}: expected the previous step to be rejected with {code}, found {found}")]
    RejectionExpected {
        /// Step number of the `expectRejection` step.
        step: usize,
        /// The code expected.
        code: &'static str,
        /// The codes the previous step was rejected with, or "no rejection".
        found: String,
    },
}

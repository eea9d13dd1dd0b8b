//! flotilla-replay: folding a log again — from zero, from a checkpoint, up to any sequence —
//! and checking that today's code decides what was recorded.
//!
//! [`Folder`] is the one place where stored records meet [`flotilla_core::step`]; the
//! runtime's writer, the scenario runner and every replay use it, so they cannot drift apart.
//! [`verify`] compares recorded decisions with recomputed ones both ways, input by input.
//! For incidents: [`timeline()`] lists what touched a placement, cluster or run;
//! [`explain_cluster`] and [`explain_placement`] tell why a rollout is where it is at a point;
//! [`diff()`] compares two folded states as `get` shows them; [`bisect()`] and [`scan`] find
//! the first input after which a predicate holds; [`what_if()`] forks at an input with changed
//! objects and compares the rollouts.

pub mod bisect;
pub mod diff;
pub mod explain;
pub mod seek;
mod text;
pub mod timeline;
mod verify;
pub mod what_if;

pub use bisect::{
    Answer, Held, Hit, Predicate, Probe, Search, SearchError, StatePredicate, bisect, bisect_with,
    scan,
};
pub use diff::{PointsDiff, StateDiff, diff, diff_points};
pub use explain::{
    ClusterExplanation, DEFAULT_MIN_SOAK_SECONDS, PlacementExplanation, explain_cluster,
    explain_placement, explain_state as explain_placement_state, waits_in_state,
};
pub use flotilla_eventstore::fold::{
    FoldError, Folded, Folder, Known, READ_BATCH_MAX, first_folded,
};
pub use seek::{Point, fold_on, fold_to, resolve};
pub use timeline::{InputSift, PlacementRef, RunRef, Timeline, TimelineFilter, timeline};
pub use verify::{
    Divergence, HashDivergence, Verification, WARNINGS_KEPT_MAX, compare_batch, verify,
};
pub use what_if::{WhatIf, WhatIfError, what_if};

use flotilla_core::{StateHash, codec::CodecError};
use flotilla_eventstore::{LogError, LogReader};

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The state could not be hashed.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Folding stopped: a gap in the log, or a record of a newer build (see
    /// [`flotilla_eventstore::fold::FoldError`]).
    #[error(transparent)]
    Fold(FoldError),
    /// Folding again decided something else than what was recorded under this build's
    /// decision version.
    #[error("determinism failure at {0}")]
    Diverged(Box<Divergence>),
    /// A checkpoint recorded a state hash that folding again to its sequence does not give.
    #[error("determinism failure: {0}")]
    HashDiverged(Box<HashDivergence>),
    /// Decisions are recorded for an input that this build could not fold again.
    #[error("input {seq} has recorded decisions but was not folded again (the log ends early)")]
    Incomplete {
        /// The first input missing.
        seq: u64,
    },
    /// A recorded batch lists an input outside its range, or one input twice.
    #[error("the decision batch for inputs {first}..={last} lists input {seq} wrongly")]
    MalformedBatch {
        /// First input of the batch.
        first: u64,
        /// Last input of the batch.
        last: u64,
        /// The input listed wrongly.
        seq: u64,
    },
    /// A point before the log's base: a retention window removed the inputs up to it.
    #[error("input {seq} is before the log's retained inputs, which start after #{base}")]
    BeforeBase {
        /// The point asked for.
        seq: u64,
        /// The log's base.
        base: u64,
    },
    /// The log starts at a base checkpoint that cannot be read.
    #[error("the log starts after #{0}, and its checkpoint there cannot be read")]
    BaseUnreadable(u64),
}

/// A fold's log and codec failures are the replay's own; its gaps and newer records stay
/// [`ReplayError::Fold`].
impl From<FoldError> for ReplayError {
    fn from(error: FoldError) -> Self {
        match error {
            FoldError::Log(error) => ReplayError::Log(error),
            FoldError::Codec(error) => ReplayError::Codec(error),
            other => ReplayError::Fold(other),
        }
    }
}

/// Folds the whole log from its start up to `until`: from sequence 1, or from the base
/// checkpoint of a log a retention window cut (no other checkpoint).
///
/// # Errors
/// A log read failure, a gap, or a newer build's record.
pub async fn fold_from_zero<L: LogReader>(log: &L, until: u64) -> Result<Folder, ReplayError> {
    let mut folder = start(log).await?;
    folder.catch_up(log, until).await?;
    Ok(folder)
}

/// The state the log starts from: empty, or its base checkpoint.
///
/// # Errors
/// When the base checkpoint cannot be read.
pub async fn start<L: LogReader>(log: &L) -> Result<Folder, ReplayError> {
    let base = log.base_seq().await?;
    if base == 0 {
        return Ok(Folder::default());
    }
    match log.load_checkpoint_before(base).await? {
        Some(checkpoint) if checkpoint.seq == base => Ok(Folder::from_checkpoint(checkpoint)),
        _ => Err(ReplayError::BaseUnreadable(base)),
    }
}

/// Loads the newest readable checkpoint (if any) and folds the tail up to `until`.
///
/// # Errors
/// A log read failure, a gap, or a newer build's record.
pub async fn restore<L: LogReader>(log: &L, until: u64) -> Result<Folder, ReplayError> {
    let mut folder = match log.load_checkpoint().await? {
        Some(checkpoint) if checkpoint.seq <= until => Folder::from_checkpoint(checkpoint),
        _ => Folder::default(),
    };
    folder.catch_up(log, until).await?;
    Ok(folder)
}

/// The hash of the state after folding the whole log from zero.
///
/// # Errors
/// A log read failure, a gap, or an unencodable state.
pub async fn hash_from_zero<L: LogReader>(log: &L) -> Result<(u64, StateHash), ReplayError> {
    let last = log.last_seq().await?;
    let folder = fold_from_zero(log, last).await?;
    Ok((folder.seq, folder.state.hash()?))
}

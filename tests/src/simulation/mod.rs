//! The seeded simulator: the real fold, the real redb log and the hub's real restart path,
//! driven step by step on a simulated clock against simulated members, under a fault schedule
//! drawn from one `u64` seed — the way TigerBeetle's VOPR drives its replicas. One seed is one
//! run: every choice comes from [`rng::Rng`], time is the simulated clock (the log keeps the
//! times the simulator gives, `AppendTime::AsGiven`, as the hub does on a test clock), and no
//! thread timing decides anything, so `SEED=<seed>` replays a run to the same trace.
//!
//! A run has three phases. **Faults** (2–6 simulated minutes): agents crash and restart;
//! messages are dropped, duplicated, re-sent after the deduplication window, delayed and
//! reordered; clusters go silent past their heartbeat timeout and return; the writer crashes and
//! restarts from its checkpoint and the tail, sometimes over a damaged checkpoint; log calls fail
//! before or after their commit; agents' clocks are wrong; resources change. **Liveness**: the
//! faults stop and every rollout must finish within [`plan::LIVENESS_MS_MAX`]. **End**: the
//! checks of [`checks`]. After every folded input `invariants::check_step` holds; after every
//! writer round the state hash equals the one any earlier writer had at the same input; the
//! fold's clock never passes the log's.
//!
//! What is real and what is driven is said in [`writer`] and in `docs/reliability.md`.

pub mod checks;
pub mod faulty_log;
pub mod members;
pub mod network;
pub mod operator;
mod outcome;
pub mod plan;
pub mod rng;
mod run;
pub mod trace;
pub mod writer;

pub use outcome::{Failure, Outcome};
pub use run::run_seed;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// An invariant broke after an input.
    #[error("invariant broken after input {seq}: {violation}")]
    Invariant {
        /// The input.
        seq: u64,
        /// What broke.
        violation: String,
    },
    /// A promise the simulator checks was broken.
    #[error("{0}")]
    Broken(String),
    /// A rollout did not finish after the faults stopped.
    #[error("liveness: {0}")]
    Liveness(String),
    /// The log failed other than by an injected fault.
    #[error("log: {0}")]
    Log(#[from] flotilla_eventstore::LogError),
    /// A fold or replay failed.
    #[error("replay: {0}")]
    Replay(#[from] flotilla_replay::ReplayError),
    /// The hub's restart failed.
    #[error("hub: {0}")]
    Hub(#[from] flotilla_hub::runtime::HubError),
    /// The state could not be hashed.
    #[error("codec: {0}")]
    Codec(#[from] flotilla_core::codec::CodecError),
    /// The redb file could not be damaged as planned.
    #[error("redb: {0}")]
    Redb(#[from] redb::Error),
    /// A part panicked (the folder's debug invariant check, say).
    #[error("panicked: {0}")]
    Panicked(String),
    /// The temporary directory or the runtime could not be made.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}

/// A fold's error is reported as replay's of the same name: one kind of fold failure, whether
/// the simulated writer or a replay folded.
impl From<flotilla_eventstore::fold::FoldError> for SimError {
    fn from(error: flotilla_eventstore::fold::FoldError) -> Self {
        SimError::Replay(error.into())
    }
}

//! A run's shape, drawn from its seed: how long each phase lasts, how fast time steps, how often
//! each fault strikes. Every limit is named here.

use super::network::LinkFaults;
use super::rng::Rng;

/// Fewest and most member clusters.
pub const MEMBERS: (u64, u64) = (3, 20);
/// Shortest and longest step of simulated time, in ms.
pub const STEP_MS: (u64, u64) = (100, 1_500);
/// Length of the phase with faults, in simulated ms.
pub const FAULT_PHASE_MS: (u64, u64) = (120_000, 360_000);
/// Longest liveness phase, in simulated ms: the rollouts must finish within it.
pub const LIVENESS_MS_MAX: u64 = 600_000;
/// Most steps of one run (a bound on the loop, far above what the phases take).
pub const STEPS_MAX: u64 = 20_000;
/// Most writer rounds per step (each folds up to `writer::FOLD_BATCH_MAX` inputs).
pub const ROUNDS_PER_STEP_MAX: u64 = 64;
/// The log's deduplication window modelled by `FaultyLog` (JetStream's default), in seconds.
pub const DEDUPE_WINDOW_SECS: i64 = 120;
/// How long after a failed append a publisher sends again, shortest and longest, in ms.
pub const RETRY_MS: (u64, u64) = (200, 5_000);

/// Everything drawn for one run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Member clusters.
    pub members: u64,
    /// Heartbeat period of every member, in seconds.
    pub heartbeat_secs: u64,
    /// Length of the fault phase, in ms.
    pub fault_phase_ms: u64,
    /// Checkpoint after this many folded inputs.
    pub checkpoint_every: u64,
    /// The link while faults run.
    pub link: LinkFaults,
    /// Per step: the writer process dies.
    pub writer_crash_per_mille: u64,
    /// Writer down time, shortest and longest, in ms.
    pub writer_down_ms: (u64, u64),
    /// On a writer restart: the newest checkpoint was damaged on disk.
    pub corrupt_checkpoint_per_mille: u64,
    /// Per log call: it fails (before or after its commit).
    pub log_fault_per_mille: u64,
    /// Per step and member: its agent dies.
    pub agent_crash_per_mille: u64,
    /// Per step and member: it goes silent, for longer than its heartbeat timeout.
    pub silence_per_mille: u64,
    /// Per step: a placement's resources change.
    pub change_per_mille: u64,
    /// Share of applies that fail while faults run.
    pub apply_fail_per_mille: u64,
    /// Share of members whose clock is wrong.
    pub skewed_per_mille: u64,
}

impl Plan {
    /// Draws a plan.
    #[must_use]
    pub fn draw(rng: &mut Rng) -> Self {
        let heartbeat_secs = rng.between(5, 15);
        Self {
            members: rng.between(MEMBERS.0, MEMBERS.1),
            heartbeat_secs,
            fault_phase_ms: rng.between(FAULT_PHASE_MS.0, FAULT_PHASE_MS.1),
            checkpoint_every: rng.between(16, 256),
            link: LinkFaults {
                drop_per_mille: rng.between(0, 80),
                duplicate_per_mille: rng.between(0, 80),
                late_duplicate_per_mille: rng.between(0, 30),
                late_after_ms: u64::try_from(DEDUPE_WINDOW_SECS).unwrap_or(120) * 1_000 + 1_000,
                delay_ms_max: rng.between(50, 5_000),
            },
            writer_crash_per_mille: rng.between(0, 8),
            writer_down_ms: (200, rng.between(1_000, 30_000)),
            corrupt_checkpoint_per_mille: rng.between(0, 600),
            log_fault_per_mille: rng.between(0, 40),
            agent_crash_per_mille: rng.between(0, 4),
            silence_per_mille: rng.between(0, 2),
            change_per_mille: rng.between(2, 15),
            apply_fail_per_mille: rng.between(0, 100),
            skewed_per_mille: rng.between(0, 1_000),
        }
    }

    /// How long a silent member stays away: past its heartbeat timeout (5 periods), in ms.
    #[must_use]
    pub fn silence_ms(&self, rng: &mut Rng) -> u64 {
        let timeout_ms = 5 * self.heartbeat_secs * 1_000;
        timeout_ms + rng.between(1_000, timeout_ms)
    }
}

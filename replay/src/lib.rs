//! flotilla-replay: folding a log again — from zero, from a checkpoint, up to any sequence —
//! and checking that today's code decides what was recorded.
//!
//! [`Folder`] is the one place where stored events meet [`flotilla_core::step`]; the runtime's
//! writer, the scenario runner and every replay use it, so they cannot drift apart.

use flotilla_core::decision::rejected;
use flotilla_core::wire::{LogRecord, RecordKind};
use flotilla_core::{Decisions, RejectCode, State, StateHash, codec::CodecError, step};
use flotilla_eventstore::{Checkpoint, DecisionBatch, EventLog, LogError, StoredEvent};

/// Events read per round trip when folding a log.
pub const READ_BATCH_MAX: usize = 1_000;

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The state could not be hashed.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The log skipped a sequence number.
    #[error("the log jumps from sequence {folded} to {found}")]
    Gap {
        /// Last folded sequence.
        folded: u64,
        /// Sequence found next.
        found: u64,
    },
    /// The log holds a record written by a newer flotilla: this build must not decide it.
    #[error("input {seq} is a {kind} of version {version}, newer than this build reads")]
    Newer {
        /// Its sequence.
        seq: u64,
        /// Its record kind.
        kind: RecordKind,
        /// Its version.
        version: u16,
    },
    /// Folding again decided something else than what was recorded.
    #[error("determinism failure at input {seq}: recorded {recorded:?}, recomputed {recomputed:?}")]
    Diverged {
        /// First input sequence where they differ.
        seq: u64,
        /// What the log holds.
        recorded: Decisions,
        /// What this build decides.
        recomputed: Decisions,
    },
}

/// State plus the sequence it has folded up to.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    /// The folded state.
    pub state: State,
    /// The last folded input sequence (0 = nothing).
    pub seq: u64,
}

impl Folder {
    /// Starts from a checkpoint.
    #[must_use]
    pub fn from_checkpoint(checkpoint: Checkpoint) -> Self {
        Self {
            state: checkpoint.state,
            seq: checkpoint.seq,
        }
    }

    /// Folds one stored record, which must be the next in sequence. A rejected record is
    /// answered with an `Undecodable` rejection and changes nothing (not even time).
    ///
    /// # Errors
    /// [`ReplayError::Gap`] when the event is not `seq + 1`; [`ReplayError::Newer`] for a
    /// record of a newer build (nothing is folded).
    pub fn fold(&mut self, event: &StoredEvent) -> Result<Decisions, ReplayError> {
        if event.seq != self.seq + 1 {
            return Err(ReplayError::Gap {
                folded: self.seq,
                found: event.seq,
            });
        }
        let decisions = match &event.record {
            LogRecord::Event(envelope) => step(&mut self.state, envelope),
            LogRecord::Rejected {
                subject, reason, ..
            } => vec![rejected(
                RejectCode::Undecodable,
                format!("record {} on {subject}: {reason}", event.seq),
            )],
            LogRecord::Newer { kind, version } => {
                return Err(ReplayError::Newer {
                    seq: event.seq,
                    kind: *kind,
                    version: *version,
                });
            }
        };
        self.seq = event.seq;
        Ok(decisions)
    }

    /// A checkpoint of the current state.
    ///
    /// # Errors
    /// When the state cannot be encoded for hashing.
    pub fn checkpoint(&self) -> Result<Checkpoint, ReplayError> {
        Ok(Checkpoint {
            seq: self.seq,
            hash: self.state.hash()?,
            state: self.state.clone(),
        })
    }

    /// Folds the log forward up to `until` (inclusive), returning every input's decisions.
    ///
    /// # Errors
    /// A log read failure or a gap in the sequence.
    pub async fn catch_up<L: EventLog>(
        &mut self,
        log: &L,
        until: u64,
    ) -> Result<Vec<(u64, Decisions)>, ReplayError> {
        let mut out = Vec::new();
        while self.seq < until {
            let events = log.read(self.seq + 1, READ_BATCH_MAX).await?;
            if events.is_empty() {
                break;
            }
            for event in events.iter().take_while(|e| e.seq <= until) {
                let decisions = self.fold(event)?;
                out.push((event.seq, decisions));
            }
        }
        Ok(out)
    }
}

/// Folds the whole log from sequence 1 (no checkpoint) up to `until`.
///
/// # Errors
/// A log read failure or a gap.
pub async fn fold_from_zero<L: EventLog>(log: &L, until: u64) -> Result<Folder, ReplayError> {
    let mut folder = Folder::default();
    folder.catch_up(log, until).await?;
    Ok(folder)
}

/// Loads the newest checkpoint (if any) and folds the tail up to `until`.
///
/// # Errors
/// A log read failure or a gap.
pub async fn restore<L: EventLog>(log: &L, until: u64) -> Result<Folder, ReplayError> {
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
pub async fn hash_from_zero<L: EventLog>(log: &L) -> Result<(u64, StateHash), ReplayError> {
    let last = log.last_seq().await?;
    let folder = fold_from_zero(log, last).await?;
    Ok((folder.seq, folder.state.hash()?))
}

/// Compares recomputed decisions with a recorded batch; the first difference is an error.
///
/// # Errors
/// [`ReplayError::Diverged`] at the first input whose decisions differ.
pub fn compare_batch(
    recorded: &DecisionBatch,
    recomputed: &[(u64, Decisions)],
) -> Result<(), ReplayError> {
    let covered = recomputed
        .iter()
        .filter(|(seq, _)| (recorded.first_input_seq..=recorded.last_input_seq).contains(seq));
    for (seq, decisions) in covered {
        let recorded_decisions = recorded
            .decisions
            .iter()
            .find(|(s, _)| s == seq)
            .map(|(_, d)| d.clone())
            .unwrap_or_default();
        if &recorded_decisions != decisions {
            return Err(ReplayError::Diverged {
                seq: *seq,
                recorded: recorded_decisions,
                recomputed: decisions.clone(),
            });
        }
    }
    Ok(())
}

/// Folds the whole log from zero and checks every recorded decision batch against what this
/// build decides. Returns the number of inputs checked.
///
/// # Errors
/// The first divergence, or a log failure.
pub async fn verify<L: EventLog>(log: &L) -> Result<u64, ReplayError> {
    let last = log.last_decided_seq().await?;
    let mut folder = Folder::default();
    let recomputed = folder.catch_up(log, last).await?;
    let mut from = 1;
    loop {
        let batches = log.read_decisions(from, READ_BATCH_MAX).await?;
        let Some(tail) = batches.last() else { break };
        from = tail.last_input_seq + 1;
        for batch in &batches {
            let start =
                usize::try_from(batch.first_input_seq.saturating_sub(1)).unwrap_or(usize::MAX);
            let end = usize::try_from(batch.last_input_seq).unwrap_or(usize::MAX);
            let slice = recomputed
                .get(start..end.min(recomputed.len()))
                .unwrap_or_default();
            compare_batch(batch, slice)?;
        }
    }
    Ok(folder.seq)
}

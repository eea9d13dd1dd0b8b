//! The hub's single writer, driven step by step. What is real: the redb log (through
//! [`FaultyLog`]), the restart path — [`Hub::open`]: newest readable checkpoint, then the
//! decided tail folded again and compared with the recorded decisions — and every piece a
//! writer round is made of: [`Folder::fold_records`] (the fold the runtime uses, with its
//! duplicate verdicts), `first_folded`, `record_folded`, `append_decisions`, `save_checkpoint`,
//! and the clock's tick rule (`next_deadline`). What is driven: the loop itself. The runtime's
//! `run_writer` and clock task are tokio tasks woken by wall-clock timers and the redb writer
//! thread, so which events share a round would depend on thread timing; here one call is one
//! round, in the same order of operations (fold, ids, decisions, checkpoint), so a seed
//! replays exactly. A log error stops the writer, as it stops `run_writer`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use flotilla_core::wire::DECISION_VERSION;
use flotilla_core::{Decisions, Envelope, Input, State, StateHash, invariants, next_deadline};
use flotilla_eventstore::fold::{FoldError, Folder, first_folded};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, Appended, DecisionBatch, EventLog, LogError, LogReader};
use flotilla_hub::runtime::{Hub, HubConfig};
use uuid::Uuid;

use super::SimError;
use super::faulty_log::{FaultyLog, SharedFaults};

/// Most inputs folded in one round (the runtime reads up to `fold_round_max`, 10,000; smaller rounds
/// give crashes more places to land).
pub const FOLD_BATCH_MAX: usize = 64;

/// Source of the clock's ticks (the runtime's `clock::CLOCK_SOURCE`).
pub const CLOCK_SOURCE: &str = "clock";

/// What one round did.
#[derive(Debug)]
pub enum Round {
    /// Nothing new in the log.
    Idle,
    /// Inputs folded and decided: the last one, and the decisions.
    Folded {
        /// Inputs folded.
        count: u64,
        /// Every decision of the round.
        decisions: Vec<(u64, Decisions)>,
        /// A checkpoint was written at this sequence.
        checkpoint: Option<u64>,
    },
    /// A log call failed: the writer stopped (its process would exit and be restarted).
    Stopped(LogError),
}

/// The writer: its log and its folded state.
pub struct Writer {
    log: Arc<FaultyLog>,
    folder: Folder,
    since_checkpoint: u64,
    pending_tick: u64,
}

impl Writer {
    /// Opens the log at `path` and restores the state as the hub does on start.
    ///
    /// # Errors
    /// The log cannot be opened, or the restore fails (a determinism failure included).
    pub async fn open(path: &Path, faults: SharedFaults) -> Result<Writer, SimError> {
        let options = RedbOptions {
            cache_size_bytes: 8 * 1024 * 1024,
            ..RedbOptions::default()
        };
        let log = Arc::new(FaultyLog::new(RedbLog::open(path, options)?, faults));
        let config = HubConfig {
            checkpoint_every: u64::MAX,
            ..HubConfig::default()
        };
        let hub = Hub::open(Arc::clone(&log), config).await?;
        let folder = {
            let view = hub.view()?;
            if let Some(refused) = view.declined.as_ref().or(view.fenced.as_ref()) {
                return Err(SimError::Broken(format!(
                    "the restarted hub refused: {refused}"
                )));
            }
            view.folder.clone()
        };
        drop(hub);
        Ok(Writer {
            log,
            folder,
            since_checkpoint: 0,
            pending_tick: 0,
        })
    }

    /// The log.
    #[must_use]
    pub fn log(&self) -> &FaultyLog {
        &self.log
    }

    /// The folded state.
    #[must_use]
    pub fn state(&self) -> &State {
        &self.folder.state
    }

    /// The last folded input.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.folder.seq
    }

    /// Appends inputs with the hub's (simulated) time, as `Hub::submit` does on a test clock.
    ///
    /// # Errors
    /// When the log refuses them.
    pub async fn submit(
        &self,
        mut events: Vec<Envelope>,
        now: DateTime<Utc>,
    ) -> Result<Vec<Appended>, LogError> {
        for event in &mut events {
            event.time = now;
        }
        self.log.append(events, AppendTime::AsGiven).await
    }

    /// Appends a tick when the core's next deadline has passed and the last tick was folded
    /// (the clock task's rule). Returns the tick's sequence.
    ///
    /// # Errors
    /// When the log refuses it.
    pub async fn tick_if_due(
        &mut self,
        now: DateTime<Utc>,
        id: Uuid,
    ) -> Result<Option<u64>, LogError> {
        let due = next_deadline(&self.folder.state).is_some_and(|deadline| deadline <= now);
        if !due || self.folder.seq < self.pending_tick {
            return Ok(None);
        }
        let tick = Envelope::new(id, now, CLOCK_SOURCE, Input::Tick);
        let appended = self.submit(vec![tick], now).await?;
        let seq = appended.first().map(|a| a.seq);
        self.pending_tick = seq.unwrap_or(self.pending_tick);
        Ok(seq)
    }

    /// One writer round: read, fold (checking the invariants after every input), record the
    /// folded ids, record the decisions, and checkpoint every `checkpoint_every` inputs. The
    /// state hash after the round is checked against `hashes` (the hash an earlier writer
    /// recorded at the same sequence) and recorded there.
    ///
    /// # Errors
    /// A broken invariant, a determinism failure, or a log error that no fault explains.
    pub async fn round(
        &mut self,
        checkpoint_every: u64,
        hashes: &mut BTreeMap<u64, StateHash>,
    ) -> Result<Round, SimError> {
        let events = match self.log.read(self.folder.seq + 1, FOLD_BATCH_MAX).await {
            Ok(events) if events.is_empty() => return Ok(Round::Idle),
            Ok(events) => events,
            Err(error) => return stopped(error),
        };
        let first = match first_folded(self.log.as_ref(), &events).await {
            Ok(first) => first,
            Err(FoldError::Log(error)) => return stopped(error),
            Err(error) => return Err(error.into()),
        };
        let (decisions, first_seen) = self.fold_checked(&events, first)?;
        let last = self.folder.seq;
        let first_input_seq = decisions.first().map_or(last, |(seq, _)| *seq);
        let hash = self.folder.state.hash()?;
        if let Some(earlier) = hashes.insert(last, hash.clone())
            && earlier != hash
        {
            return Err(SimError::Broken(format!(
                "state hash after input {last} is {hash}, an earlier writer had {earlier}"
            )));
        }
        if let Err(error) = self.log.record_folded(&first_seen).await {
            return stopped(error);
        }
        let batch = DecisionBatch {
            version: DECISION_VERSION,
            first_input_seq,
            last_input_seq: last,
            decisions: decisions
                .iter()
                .filter(|(_, decided)| !decided.is_empty())
                .cloned()
                .collect(),
        };
        if let Err(error) = self.log.append_decisions(&batch).await {
            return stopped(error);
        }
        let count = last + 1 - first_input_seq;
        self.since_checkpoint += count;
        let mut checkpoint = None;
        if self.since_checkpoint >= checkpoint_every {
            if let Err(error) = self.checkpoint().await {
                return stopped(error);
            }
            checkpoint = Some(last);
        }
        Ok(Round::Folded {
            count,
            decisions,
            checkpoint,
        })
    }

    /// Writes a checkpoint of the folded state.
    ///
    /// # Errors
    /// When the log refuses it.
    pub async fn checkpoint(&mut self) -> Result<(), LogError> {
        if self.folder.seq == 0 {
            return Ok(());
        }
        let checkpoint = self
            .folder
            .checkpoint()
            .map_err(|error| LogError::Storage(error.to_string()))?;
        self.log.save_checkpoint(&checkpoint).await?;
        self.since_checkpoint = 0;
        Ok(())
    }

    /// Folds a page input by input, as `Folder::fold_records` does, checking every step.
    fn fold_checked(
        &mut self,
        events: &[flotilla_eventstore::StoredEvent],
        mut first: BTreeMap<Uuid, u64>,
    ) -> Result<FoldedPage, SimError> {
        let mut decisions = Vec::with_capacity(events.len());
        let mut first_seen = Vec::new();
        for event in events {
            let before = self.folder.state.clone();
            let known: BTreeMap<Uuid, u64> = event
                .event()
                .and_then(|e| first.get(&e.id).map(|seq| (e.id, *seq)))
                .into_iter()
                .collect();
            let folded = self
                .folder
                .fold_records(std::slice::from_ref(event), known, &[])?;
            if let Some(stopped) = folded.stopped {
                return Err(stopped.into());
            }
            if let Some(envelope) = event.event() {
                invariants::check_step(&before, envelope, &self.folder.state).map_err(
                    |violation| SimError::Invariant {
                        seq: event.seq,
                        violation: violation.to_string(),
                    },
                )?;
            }
            for (id, seq) in folded.first_seen {
                first.insert(id, seq);
                first_seen.push((id, seq));
            }
            decisions.extend(folded.decisions);
        }
        Ok((decisions, first_seen))
    }

    /// The process dies: everything in memory is dropped and the file is released.
    pub fn crash(self) {
        drop(self.folder);
        if let Ok(log) = Arc::try_unwrap(self.log) {
            // A writer thread that died is what a crash looks like anyway.
            let _ = log.close();
        }
    }
}

/// A page's decisions and the ids it folded first.
type FoldedPage = (Vec<(u64, Decisions)>, Vec<(Uuid, u64)>);

/// A log error stops the writer when a fault explains it; otherwise it is a failure.
fn stopped(error: LogError) -> Result<Round, SimError> {
    if is_injected(&error) {
        Ok(Round::Stopped(error))
    } else {
        Err(error.into())
    }
}

/// Whether the error is one the simulator injected.
#[must_use]
pub fn is_injected(error: &LogError) -> bool {
    matches!(error, LogError::Storage(message) if message.starts_with("simulated fault"))
}

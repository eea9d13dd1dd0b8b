//! The single-writer runtime: inputs are appended to the log, one writer folds them in log
//! order, records the decisions (fenced, so a second writer cannot interleave), keeps the
//! folded state for readers, and checkpoints it every [`HubConfig::checkpoint_every`] events
//! and on clean shutdown. A clock task appends ticks when the core's next deadline passes.
//!
//! On start the hub loads the newest checkpoint, folds the already-decided tail and compares
//! what it decides with what was recorded — every restart is a determinism check — then
//! continues with the undecided inputs.

pub mod clock;

use std::collections::VecDeque;
use std::sync::{Arc, RwLock, RwLockReadGuard};
use std::time::Duration;

use flotilla_core::Decisions;
use flotilla_core::Envelope;
use flotilla_core::wire::DECISION_VERSION;
use flotilla_eventstore::{AppendTime, Appended, DecisionBatch, EventLog, LogError};
use flotilla_replay::{Folder, ReplayError, compare_batch};
use tokio::sync::watch;

/// Decisions kept in memory for callers waiting on their own events.
pub const RECENT_DECISIONS_MAX: usize = 50_000;

/// Runtime settings.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// Write a checkpoint after this many folded events.
    pub checkpoint_every: u64,
    /// Most events folded (and decided in one record) per round.
    pub fold_batch_max: usize,
    /// How long the writer waits for new events before looking again.
    pub idle_wait: Duration,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            checkpoint_every: 10_000,
            fold_batch_max: 1_000,
            idle_wait: Duration::from_millis(200),
        }
    }
}

/// Why the runtime stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// Folding failed (a gap in the log, or an unencodable state).
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// Another writer holds the log.
    #[error("another writer is appending decisions to this log: {0}")]
    Fenced(LogError),
    /// An internal lock was poisoned by a panic.
    #[error("the hub's state lock is poisoned")]
    Poisoned,
}

/// What readers see: the folded state and the most recent decisions.
#[derive(Debug, Default)]
pub struct View {
    /// State and the sequence it has folded.
    pub folder: Folder,
    /// `(input seq, decisions)` of the latest inputs that decided something.
    pub recent: VecDeque<(u64, Decisions)>,
    /// Set when this process lost the writer role.
    pub fenced: Option<String>,
}

impl View {
    /// The decisions recorded for one input, if still in memory.
    #[must_use]
    pub fn decisions_for(&self, seq: u64) -> Option<Decisions> {
        if seq > self.folder.seq {
            return None;
        }
        let found = self.recent.binary_search_by_key(&seq, |(s, _)| *s);
        Some(found.map(|i| self.recent[i].1.clone()).unwrap_or_default())
    }
}

/// A running hub over one log.
pub struct Hub<L: EventLog> {
    log: Arc<L>,
    view: Arc<RwLock<View>>,
    folded: watch::Receiver<u64>,
    folded_tx: Arc<watch::Sender<u64>>,
    shutdown: watch::Sender<bool>,
    config: HubConfig,
}

impl<L: EventLog> Clone for Hub<L> {
    fn clone(&self) -> Self {
        Self {
            log: Arc::clone(&self.log),
            view: Arc::clone(&self.view),
            folded: self.folded.clone(),
            folded_tx: Arc::clone(&self.folded_tx),
            shutdown: self.shutdown.clone(),
            config: self.config.clone(),
        }
    }
}

impl<L: EventLog> Hub<L> {
    /// Restores state (checkpoint + decided tail, checked against the recorded decisions).
    ///
    /// # Errors
    /// The log cannot be read, or it has a gap.
    pub async fn open(log: Arc<L>, config: HubConfig) -> Result<Self, HubError> {
        let decided = log.last_decided_seq().await?;
        let mut folder = match log.load_checkpoint().await? {
            Some(checkpoint) if checkpoint.seq <= decided => Folder::from_checkpoint(checkpoint),
            _ => Folder::default(),
        };
        let start = folder.seq;
        let recomputed = folder.catch_up(log.as_ref(), decided).await?;
        check_recorded(log.as_ref(), start + 1, &recomputed).await?;
        let mut view = View {
            folder,
            ..View::default()
        };
        remember(&mut view.recent, recomputed);
        let (folded_tx, folded) = watch::channel(view.folder.seq);
        let (shutdown, _) = watch::channel(false);
        tracing::info!(
            seq = view.folder.seq,
            restored_from = start,
            "hub state restored"
        );
        Ok(Self {
            log,
            view: Arc::new(RwLock::new(view)),
            folded,
            folded_tx: Arc::new(folded_tx),
            shutdown,
            config,
        })
    }

    /// The log this hub writes to.
    #[must_use]
    pub fn log(&self) -> &Arc<L> {
        &self.log
    }

    /// Read access to the folded state.
    ///
    /// # Errors
    /// When the lock was poisoned.
    pub fn view(&self) -> Result<RwLockReadGuard<'_, View>, HubError> {
        self.view.read().map_err(|_| HubError::Poisoned)
    }

    /// Appends input events durably; the log assigns their time (they come from outside, or
    /// from the clock).
    ///
    /// # Errors
    /// When the log refuses them.
    pub async fn submit(&self, events: Vec<Envelope>) -> Result<Vec<Appended>, HubError> {
        Ok(self.log.append(events, AppendTime::Assigned).await?)
    }

    /// Waits until the writer has folded `seq` (or `timeout` passes); returns whether it has.
    pub async fn wait_folded(&self, seq: u64, timeout: Duration) -> bool {
        let mut folded = self.folded.clone();
        let reached = tokio::time::timeout(timeout, folded.wait_for(|s| *s >= seq)).await;
        matches!(reached, Ok(Ok(_)))
    }

    /// Asks the writer and clock to stop; the writer checkpoints on its way out.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    /// A receiver that turns `true` when shutdown is requested.
    #[must_use]
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    /// The writer loop: fold, record decisions, checkpoint. Returns on shutdown or when fenced.
    ///
    /// # Errors
    /// A log failure, a gap, or losing the writer role.
    pub async fn run_writer(&self) -> Result<(), HubError> {
        let mut shutdown = self.shutdown.subscribe();
        let mut since_checkpoint = 0_u64;
        loop {
            if *shutdown.borrow() {
                break;
            }
            let folded = self.view()?.folder.seq;
            let events = self
                .log
                .read(folded + 1, self.config.fold_batch_max)
                .await?;
            if events.is_empty() {
                tokio::select! {
                    waited = self.log.wait_for(folded, self.config.idle_wait) => { waited?; }
                    _ = shutdown.changed() => {}
                }
                continue;
            }
            let decided = self.fold_batch(&events)?;
            let last = decided.last_input_seq;
            let count = last - decided.first_input_seq + 1;
            if let Err(error) = self.log.append_decisions(decided).await {
                return Err(self.lose_writer_role(error));
            }
            self.folded_tx.send_replace(last);
            since_checkpoint += count;
            if since_checkpoint >= self.config.checkpoint_every {
                self.checkpoint().await?;
                since_checkpoint = 0;
            }
        }
        self.checkpoint().await
    }

    fn fold_batch(
        &self,
        events: &[flotilla_eventstore::StoredEvent],
    ) -> Result<DecisionBatch, HubError> {
        let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
        let mut decisions = Vec::new();
        for event in events {
            let decided = view.folder.fold(event)?;
            if !decided.is_empty() {
                decisions.push((event.seq, decided));
            }
        }
        remember(&mut view.recent, decisions.clone());
        let first_input_seq = events.first().map_or(0, |e| e.seq);
        let last_input_seq = events.last().map_or(0, |e| e.seq);
        Ok(DecisionBatch {
            version: DECISION_VERSION,
            first_input_seq,
            last_input_seq,
            decisions,
        })
    }

    fn lose_writer_role(&self, error: LogError) -> HubError {
        if let LogError::Fenced { .. } = error {
            tracing::error!(%error, "lost the writer role; stopping the writer");
            if let Ok(mut view) = self.view.write() {
                view.fenced = Some(error.to_string());
            }
            return HubError::Fenced(error);
        }
        HubError::Log(error)
    }

    /// Writes a checkpoint of the current state.
    ///
    /// # Errors
    /// When the state cannot be encoded or the log refuses it.
    pub async fn checkpoint(&self) -> Result<(), HubError> {
        let checkpoint = {
            let view = self.view()?;
            if view.fenced.is_some() || view.folder.seq == 0 {
                return Ok(());
            }
            view.folder.checkpoint()?
        };
        self.log.save_checkpoint(&checkpoint).await?;
        tracing::debug!(seq = checkpoint.seq, hash = %checkpoint.hash, "checkpoint written");
        Ok(())
    }
}

fn remember(recent: &mut VecDeque<(u64, Decisions)>, decided: Vec<(u64, Decisions)>) {
    recent.extend(decided.into_iter().filter(|(_, d)| !d.is_empty()));
    while recent.len() > RECENT_DECISIONS_MAX {
        recent.pop_front();
    }
}

/// Compares recomputed decisions of already-decided inputs with the recorded ones.
async fn check_recorded<L: EventLog>(
    log: &L,
    from: u64,
    recomputed: &[(u64, Decisions)],
) -> Result<(), HubError> {
    let mut next = from;
    let last = recomputed.last().map_or(0, |(seq, _)| *seq);
    while next <= last {
        let batches = log
            .read_decisions(next, flotilla_replay::READ_BATCH_MAX)
            .await?;
        let Some(tail) = batches.last() else { break };
        next = tail.last_input_seq + 1;
        for batch in &batches {
            if let Err(error) = compare_batch(batch, recomputed) {
                // A different decision after an upgrade is worth knowing but must not stop
                // the hub: the recorded decisions stay in the log for `flotilla replay`.
                tracing::error!(%error, "recorded decisions differ from this build's");
                return Ok(());
            }
        }
    }
    Ok(())
}

//! The single-writer runtime: inputs are appended to the log, one writer folds them in log
//! order, records the decisions (fenced, so a second writer cannot interleave), keeps the
//! folded state for readers, and checkpoints it every [`HubConfig::checkpoint_every`] events
//! and on clean shutdown. A clock task appends ticks when the core's next deadline passes.
//!
//! On start the hub loads the newest readable checkpoint, folds the already-decided tail and
//! compares what it decides with what was recorded, input by input and both ways — every
//! restart is a determinism check. A difference under this build's decision version stops the
//! hub, naming the input and both sides (unless [`HubConfig::allow_divergence`]); a difference
//! in decisions recorded under an older version is a warning, since an intended change of
//! behaviour moves the decision version. Then it continues with the undecided inputs.
//!
//! The writer never stops on an input: an undecodable record or a late duplicate is answered
//! with a rejection (see `flotilla_eventstore::fold::Folder`). A record written by a newer flotilla is
//! different: this build must not decide it, so the hub declines the writer role there, says
//! so, and goes on serving reads of what it folded — which keeps a rolling upgrade safe.

pub mod analysis;
mod checkpoints;
pub mod clock;
mod follower;
mod hub;
mod low_priority;
mod marks;
mod newer;
mod recording;
mod restore;
mod rounds;
mod test_clock;
mod view;

use std::sync::{Arc, RwLock};

use flotilla_core::Decisions;
use flotilla_core::Envelope;
use flotilla_core::wire::DECISION_VERSION;
use flotilla_eventstore::fold::{FoldError, Folded, Folder};
use flotilla_eventstore::{AppendTime, Appended, DecisionBatch, EventLog, LogError};
pub use hub::{Hub, HubConfig, HubError, TRANSIENT_RETRY_PAUSE, checkpoint_spacing_for};
pub(crate) use hub::{pause_or_stop, transient};
pub use marks::TimedMark;
use newer::decline_message;
use restore::{report_warnings, restore_checked};
use tokio::sync::watch;
pub use view::{RECENT_DECISIONS_MAX, VERSIONS_KEPT, View};

impl<L: EventLog> Hub<L> {
    /// Restores state (checkpoint + decided tail, checked against the recorded decisions).
    ///
    /// # Errors
    /// The log cannot be read, or it has a gap.
    pub async fn open(log: Arc<L>, config: HubConfig) -> Result<Self, HubError> {
        // Installed before anything is recorded, or the first records would go nowhere.
        crate::hub_metrics::handle();
        let decided = log.last_decided_seq().await?;
        let mut folder = match log.load_checkpoint().await? {
            Some(checkpoint) if checkpoint.seq <= decided => Folder::from_checkpoint(checkpoint),
            _ => Folder::default(),
        };
        let start = folder.seq;
        let mut view = View::default();
        match restore_checked(log.as_ref(), &mut folder, decided, &config).await {
            Ok((recomputed, verification)) => {
                report_warnings(&verification);
                view.remember(recomputed, folder.seq);
            }
            Err(HubError::Fold(newer @ FoldError::Newer { .. })) => {
                view.declined = Some(decline_message(&newer));
            }
            Err(HubError::Log(LogError::Newer { seq, kind, version })) => {
                let newer = FoldError::Newer { seq, kind, version };
                view.declined = Some(decline_message(&newer));
            }
            Err(error) => return Err(error),
        }
        // Every input folded at the start is settled: its decisions are in `recent`, or were
        // dropped from memory as older ones are.
        view.remembered = folder.seq;
        view.folder = folder;
        // Watches start from the restored state: the hub holds no earlier version.
        view.versions.clear();
        view.note_version();
        if let Some(declined) = &view.declined {
            tracing::error!(seq = view.folder.seq, "{declined}");
        }
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
            marks_before: Arc::new(marks::Before::through(start)),
        })
    }

    /// Appends input events durably; the log assigns their time (they come from outside, or
    /// from the clock).
    ///
    /// # Errors
    /// When the log refuses them.
    pub async fn submit(&self, mut events: Vec<Envelope>) -> Result<Vec<Appended>, HubError> {
        let started = std::time::Instant::now();
        let appended = match &self.config.test_clock {
            None => self.log.append(events, AppendTime::Assigned).await,
            Some(clock) => {
                let now = clock.now();
                for event in &mut events {
                    event.time = now;
                }
                self.log.append(events, AppendTime::AsGiven).await
            }
        };
        let appended = appended.inspect_err(|error| {
            crate::hub_metrics::record_append_error();
            if hub::full(error) {
                crate::hub_metrics::record_storage_full_refusal();
            }
        })?;
        crate::hub_metrics::record_append(started.elapsed());
        Ok(appended)
    }

    /// The writer loop: fold, record decisions, checkpoint. Returns on shutdown or when fenced.
    /// A full storage never stops it: the round waiting to be recorded is tried again until
    /// the log has room. Stopped while the storage is full, it stops cleanly without the last
    /// round's decisions or the final checkpoint (logged): a restart folds those inputs again.
    ///
    /// # Errors
    /// A log failure, a gap, or losing the writer role.
    pub async fn run_writer(&self) -> Result<(), HubError> {
        match self.write_rounds().await {
            Err(error) if hub::storage_full(&error) && *self.shutdown.borrow() => {
                tracing::warn!(
                    %error,
                    "stopping while the log's storage is full: the last decisions or the \
                     final checkpoint were not written; the next start folds those inputs again"
                );
                Ok(())
            }
            other => other,
        }
    }

    /// The writer loop itself (see [`Self::run_writer`]).
    async fn write_rounds(&self) -> Result<(), HubError> {
        let mut shutdown = self.shutdown.subscribe();
        let mut pacer = checkpoints::Pacer::new(
            self.config.checkpoint_every,
            self.config.checkpoint_every_log_time,
        );
        // The round being recorded while the next one folds.
        let mut recording: Option<recording::Recording> = None;
        // The page being read while this one folds, when the writer is behind.
        let mut ahead: Option<rounds::Ahead> = None;
        loop {
            if *shutdown.borrow() || self.view()?.declined.is_some() {
                break;
            }
            let folded = self.view()?.folder.seq;
            // With a round still recording, an empty log is not waited on: the round settles
            // first, so its answers are not held back by the wait.
            let wait = recording.is_none();
            // Nothing is folded yet in this round, so a failed read is simply tried again.
            let reading = std::time::Instant::now();
            let read = self
                .next_round(&mut ahead, folded, wait, &mut shutdown)
                .await;
            let read_took = reading.elapsed();
            let (events, mut first) = match read {
                Ok(Some(read)) => read,
                Ok(None) => {
                    if let Some(round) = recording.take()
                        && self.settle_round(round, &mut pacer).await?
                    {
                        self.checkpoint_in_background(&mut pacer)?;
                    }
                    continue;
                }
                Err(error) if transient(&error) => {
                    hub::note_retry("reading the log", &error, hub::storage_full(&error));
                    pause_or_stop(TRANSIENT_RETRY_PAUSE, &mut shutdown).await;
                    continue;
                }
                Err(error) => return Err(error),
            };
            if let Some(round) = &recording {
                round.note_ids(&mut first);
            }
            pacer.note_round(events.len() >= self.config.fold_round_max);
            ahead = self.read_ahead(&events);
            if ahead.is_some() {
                // The read was spawned into this worker's LIFO slot, which other workers do
                // not steal: without a yield it would start only after the fold.
                tokio::task::yield_now().await;
            }
            let folding = std::time::Instant::now();
            let (decided, first_seen, stopped) = self.fold_batch(&events, first)?;
            let fold_took = folding.elapsed();
            // The previous round settles before this one records: one round records at a
            // time, in order.
            let mut checkpoint_due = false;
            let settling = std::time::Instant::now();
            if let Some(round) = recording.take() {
                checkpoint_due = self.settle_round(round, &mut pacer).await?;
            }
            // Where a busy writer's time goes: reading, folding, or waiting for the previous
            // round to be recorded.
            tracing::debug!(
                inputs = events.len(),
                ?read_took,
                ?fold_took,
                settle_took = ?settling.elapsed(),
                "round folded"
            );
            if let Some(decided) = decided {
                let round = self.record(decided, first_seen, &shutdown);
                if checkpoint_due || stopped.is_some() {
                    // A checkpoint must not run ahead of the recorded decisions (a restart
                    // would not use it): this round is recorded before the snapshot.
                    checkpoint_due |= self.settle_round(round, &mut pacer).await?;
                } else {
                    recording = Some(round);
                }
            }
            if checkpoint_due {
                self.checkpoint_in_background(&mut pacer)?;
            }
            if let Some(newer) = stopped {
                self.meet_newer_record(&newer).await?;
            }
        }
        if let Some(round) = recording.take() {
            self.settle_round(round, &mut pacer).await?;
        }
        pacer.settle().await;
        self.checkpoint().await
    }

    /// Folds one page, a part at a time under the view's lock: the batch to record (none when
    /// the first record is a newer build's), the ids folded for the first time, and why the
    /// fold stopped early.
    fn fold_batch(
        &self,
        events: &[flotilla_eventstore::StoredEvent],
        mut first: std::collections::BTreeMap<uuid::Uuid, u64>,
    ) -> Result<FoldedBatch, HubError> {
        let _span = tracing::debug_span!(
            "writer_fold",
            from_seq = events.first().map(|e| e.seq),
            to_seq = events.last().map(|e| e.seq),
        )
        .entered();
        let mut folded = Folded::default();
        for records in events.chunks(self.config.fold_batch_max.max(1)) {
            let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
            let part = view.folder.fold_records_with(records, &mut first, &[])?;
            drop(view);
            crate::hub_metrics::record_folded(&part.decisions, records);
            folded.decisions.extend(part.decisions);
            folded.first_seen.extend(part.first_seen);
            if part.stopped.is_some() {
                folded.stopped = part.stopped;
                break;
            }
        }
        let Some(last_input_seq) = folded.decisions.last().map(|(seq, _)| *seq) else {
            return Ok((None, Vec::new(), folded.stopped));
        };
        let first_input_seq = folded.decisions.first().map_or(0, |(seq, _)| *seq);
        let decisions: Vec<(u64, Decisions)> = folded
            .decisions
            .into_iter()
            .filter(|(_, decided)| !decided.is_empty())
            .collect();
        let batch = DecisionBatch {
            version: DECISION_VERSION,
            first_input_seq,
            last_input_seq,
            decisions,
        };
        Ok((Some(batch), folded.first_seen, folded.stopped))
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
}

/// What one writer round folded: the batch to record, the ids seen first, and a stop.
type FoldedBatch = (
    Option<DecisionBatch>,
    Vec<(uuid::Uuid, u64)>,
    Option<FoldError>,
);

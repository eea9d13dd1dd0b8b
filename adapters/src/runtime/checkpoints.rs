//! When and how the writer checkpoints. The state is encoded once under the view's lock — the
//! writer cannot fold while it encodes, so that is the writer's whole cost — and the record is
//! stored by a background task while the writer folds on. A checkpoint is due after
//! [`super::HubConfig::checkpoint_every`] events, but no sooner than
//! [`COST_MULTIPLE`] times the last encoding's duration after the last one began, and never
//! while the previous one is still being stored: on a large fleet, where one encoding takes
//! seconds, checkpointing costs the writer at most about one part in [`COST_MULTIPLE`] of its
//! time instead of stalling it every few thousand events. Checkpoints only shorten a restart's
//! fold; when they are written changes no state and no decision.

use std::time::{Duration, Instant};

use flotilla_eventstore::{EncodedCheckpoint, EventLog};
use tokio::task::JoinHandle;

use super::{Hub, HubError};

/// A checkpoint may begin no sooner than this many times the last encoding's duration after
/// the last one began.
pub const COST_MULTIPLE: u32 = 20;

/// The writer's checkpoint schedule and the save in flight.
pub(super) struct Pacer {
    every: u64,
    since: u64,
    last_began: Option<Instant>,
    last_cost: Duration,
    saving: Option<JoinHandle<()>>,
}

impl Pacer {
    /// A schedule of one checkpoint per `every` folded events, paced by cost.
    pub(super) fn new(every: u64) -> Self {
        Self {
            every,
            since: 0,
            last_began: None,
            last_cost: Duration::ZERO,
            saving: None,
        }
    }

    /// Counts `folded` events; whether a checkpoint is due now.
    pub(super) fn folded(&mut self, folded: u64) -> bool {
        self.since += folded;
        if self.since < self.every || self.saving.as_ref().is_some_and(|s| !s.is_finished()) {
            return false;
        }
        self.last_began
            .is_none_or(|began| began.elapsed() >= self.last_cost * COST_MULTIPLE)
    }

    /// Waits for the save in flight, if any (before a final checkpoint, or shutdown).
    pub(super) async fn settle(&mut self) {
        if let Some(saving) = self.saving.take() {
            // The task logs its own failure; a panic in it is not the writer's to propagate.
            let _ = saving.await;
        }
    }
}

impl<L: EventLog> Hub<L> {
    /// Encodes a checkpoint now and stores it in the background.
    ///
    /// # Errors
    /// When the state cannot be encoded.
    pub(super) fn checkpoint_in_background(&self, pacer: &mut Pacer) -> Result<(), HubError> {
        let began = Instant::now();
        let Some(encoded) = self.encode_checkpoint()? else {
            return Ok(());
        };
        pacer.since = 0;
        pacer.last_began = Some(began);
        pacer.last_cost = began.elapsed();
        let log = std::sync::Arc::clone(&self.log);
        pacer.saving = Some(tokio::spawn(async move {
            save(log.as_ref(), encoded, began).await;
        }));
        Ok(())
    }

    /// Writes a checkpoint of the current state and waits until it is stored.
    ///
    /// # Errors
    /// When the state cannot be encoded or the log refuses it.
    pub async fn checkpoint(&self) -> Result<(), HubError> {
        let began = Instant::now();
        let Some(encoded) = self.encode_checkpoint()? else {
            return Ok(());
        };
        let (seq, hash) = (encoded.seq, encoded.hash.clone());
        let bytes = self.log.save_encoded_checkpoint(encoded).await?;
        crate::hub_metrics::record_checkpoint(bytes, began.elapsed());
        tracing::debug!(seq, %hash, bytes, "checkpoint written");
        Ok(())
    }

    /// The current state's checkpoint, encoded under the view's lock; `None` when this hub
    /// must not write one (fenced, declined, following, or nothing folded).
    fn encode_checkpoint(&self) -> Result<Option<EncodedCheckpoint>, HubError> {
        let view = self.view()?;
        if view.fenced.is_some()
            || view.declined.is_some()
            || view.following
            || view.folder.seq == 0
        {
            return Ok(None);
        }
        Ok(Some(view.folder.encoded_checkpoint()?))
    }
}

/// Stores an encoded checkpoint; a failure is logged, not fatal: a checkpoint only shortens
/// the next restart, and the log's own failures surface on the writer's next append.
async fn save<L: EventLog>(log: &L, encoded: EncodedCheckpoint, began: Instant) {
    let (seq, hash) = (encoded.seq, encoded.hash.clone());
    match log.save_encoded_checkpoint(encoded).await {
        Ok(bytes) => {
            crate::hub_metrics::record_checkpoint(bytes, began.elapsed());
            tracing::debug!(seq, %hash, bytes, "checkpoint written");
        }
        Err(error) => tracing::warn!(seq, %error, "could not store a checkpoint"),
    }
}

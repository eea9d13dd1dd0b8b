//! Following another writer: a standby or read follower folds only inputs the writer has
//! decided, following its recorded decisions and checking its own against them (the same
//! determinism check a restart makes), so it serves reads of the same state the writer has,
//! a few milliseconds behind. When a standby takes the writer role, it folds the decided tail,
//! claims the log's writer position and runs the writer loop from there: no input is skipped
//! or folded twice, because folding is by sequence and the decisions stream is fenced.

use std::time::Duration;

use flotilla_eventstore::fold::{READ_BATCH_MAX, first_folded};
use flotilla_eventstore::{DecisionBatch, EventLog, StoredEvent};
use flotilla_replay::{Verification, compare_batch};

use super::hub::{Hub, HubError, pause_or_stop, transient};
use super::newer::decline_message;
use super::restore::{check_differences, report_warnings};

impl<L: EventLog> Hub<L> {
    /// Marks this hub as following (it neither ticks nor checkpoints nor publishes) or as the
    /// writer.
    ///
    /// # Errors
    /// When the state lock was poisoned.
    pub fn set_following(&self, following: bool) -> Result<(), HubError> {
        let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
        view.following = following;
        Ok(())
    }

    /// Marks this hub as one that only follows (`--read-only`): it never becomes the writer.
    ///
    /// # Errors
    /// When the view's lock is poisoned.
    pub fn set_read_only(&self) -> Result<(), HubError> {
        let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
        view.read_only = true;
        view.following = true;
        Ok(())
    }

    /// Whether this hub writes: it neither follows, nor declined, nor lost the role.
    #[must_use]
    pub fn is_writing(&self) -> bool {
        self.view()
            .is_ok_and(|view| !view.following && view.declined.is_none() && view.fenced.is_none())
    }

    /// Stops writing because another process holds the writer lease now, and shuts down.
    pub fn lose_lease(&self, holder: String) {
        if let Ok(mut view) = self.view.write() {
            view.fenced = Some(format!("lost the writer lease to {holder:?}"));
        }
        self.shutdown();
    }

    /// Folds every input the writer has decided so far; returns the folded sequence.
    ///
    /// # Errors
    /// A log failure, a gap, or decisions that differ from this build's.
    pub async fn follow_decided(&self) -> Result<u64, HubError> {
        let decided = self.log.last_decided_seq().await?;
        loop {
            let folded = self.view()?.folder.seq;
            if folded >= decided || self.view()?.declined.is_some() {
                return Ok(folded);
            }
            let batches = self.log.read_decisions(folded + 1, READ_BATCH_MAX).await?;
            let Some(until) = batches.last().map(|b| b.last_input_seq.min(decided)) else {
                return Ok(folded);
            };
            let mut events = self.log.read(folded + 1, READ_BATCH_MAX).await?;
            events.retain(|event| event.seq <= until);
            if events.is_empty() {
                // A replica that lags returns a shorter prefix: read again next round.
                return Ok(folded);
            }
            let first = first_folded(self.log.as_ref(), &events).await?;
            let last = self.fold_followed(&events, first, &batches)?;
            self.folded_tx.send_replace(last);
        }
    }

    /// Folds one page under the view's lock and compares with the recorded decisions.
    fn fold_followed(
        &self,
        events: &[StoredEvent],
        first: std::collections::BTreeMap<uuid::Uuid, u64>,
        batches: &[DecisionBatch],
    ) -> Result<u64, HubError> {
        let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
        let from = view.folder.seq + 1;
        let folded = view.folder.fold_records(events, first, batches)?;
        crate::hub_metrics::record_folded(&folded.decisions, events);
        let upto = view.folder.seq;
        let mut verification = Verification::default();
        for batch in batches {
            let mut partial = batch.clone();
            partial.first_input_seq = partial.first_input_seq.max(from);
            partial.last_input_seq = partial.last_input_seq.min(upto);
            partial
                .decisions
                .retain(|(seq, _)| (from..=upto).contains(seq));
            if partial.first_input_seq > partial.last_input_seq {
                continue;
            }
            let differences = compare_batch(&partial, &folded.decisions)?;
            check_differences(&mut verification, differences, &self.config)?;
        }
        report_warnings(&verification);
        view.remember(folded.decisions, upto);
        if let Some(newer) = folded.stopped {
            view.declined = Some(decline_message(&newer));
        }
        Ok(upto)
    }

    /// Follows the writer until shutdown, or until `until` turns true (checked every round).
    ///
    /// # Errors
    /// As [`Hub::follow_decided`].
    pub async fn run_follower(
        &self,
        pause: Duration,
        mut until: impl FnMut() -> bool,
    ) -> Result<(), HubError> {
        let mut shutdown = self.shutdown_signal();
        while !*shutdown.borrow() && !until() {
            match self.follow_decided().await {
                Ok(_) => {}
                Err(error) if transient(&error) => {
                    tracing::warn!(%error, "cannot follow the log; trying again");
                }
                Err(error) => return Err(error),
            }
            pause_or_stop(pause, &mut shutdown).await;
        }
        Ok(())
    }

    /// Takes the writer role after this process was granted it: folds what the old writer
    /// decided, claims the log's writer position, folds anything decided meanwhile, and stops
    /// following. The caller then runs [`Hub::run_writer`].
    ///
    /// # Errors
    /// As [`Hub::follow_decided`].
    pub async fn take_writer_role(&self) -> Result<u64, HubError> {
        self.follow_decided().await?;
        let decided = self.log.claim_writer_position().await?;
        while self.follow_decided().await? < decided {
            if self.view()?.declined.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.set_following(false)?;
        let folded = self.view()?.folder.seq;
        tracing::info!(folded, decided, "took the writer role");
        Ok(folded)
    }
}

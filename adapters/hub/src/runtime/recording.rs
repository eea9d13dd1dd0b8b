//! Recording a folded round while the writer folds the next one. A round's two durable writes
//! (the ids it folded first, then its decisions) wait on the disk; done in a task of their own,
//! they overlap the next round's fold instead of pausing the writer between rounds.
//!
//! Order still holds: one round records at a time, the next starts only after it settled, and
//! within a round the ids go before the decisions. A round's decisions reach readers (and
//! `wait_folded`) only once recorded. The next round's fold sees the recording round's ids
//! (the log's index does not have them yet), so a duplicate across the two is still caught.
//! A checkpoint is taken only when nothing folded is unrecorded (see `run_writer`).

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_eventstore::{DecisionBatch, EventLog, LogError};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use uuid::Uuid;

use super::checkpoints::Pacer;
use super::hub::{Hub, HubError, retried};

/// Why recording a round failed.
enum Failed {
    /// Recording the ids folded first.
    Ids(LogError),
    /// Appending the decisions (a fenced writer lands here).
    Decisions(LogError),
}

/// A round being recorded.
pub(super) struct Recording {
    task: JoinHandle<Result<DecisionBatch, Failed>>,
    /// The ids the round folded first, which the log's index may not have yet.
    first_seen: Arc<[(Uuid, u64)]>,
}

impl Recording {
    /// Adds the recording round's ids to the next page's `first`.
    pub(super) fn note_ids(&self, first: &mut BTreeMap<Uuid, u64>) {
        for (id, seq) in self.first_seen.iter() {
            first.entry(*id).or_insert(*seq);
        }
    }
}

impl<L: EventLog> Hub<L> {
    /// Starts recording a folded round: its first-folded ids, then its decisions, each retried
    /// while the failure is transient.
    pub(super) fn record(
        &self,
        batch: DecisionBatch,
        first_seen: Vec<(Uuid, u64)>,
        shutdown: &watch::Receiver<bool>,
    ) -> Recording {
        let first_seen: Arc<[(Uuid, u64)]> = first_seen.into();
        let ids = Arc::clone(&first_seen);
        let log = Arc::clone(&self.log);
        let mut shutdown = shutdown.clone();
        let task = tokio::spawn(async move {
            // The id index must know these events before their decisions are recorded: a
            // restart re-folds recorded inputs and must see each id at its own sequence. Both
            // writes are retried: the round is folded already, and this writer retrying its
            // own round is recognised, not fenced.
            retried("record folded ids", &mut shutdown, || {
                log.record_folded(&ids)
            })
            .await
            .map_err(Failed::Ids)?;
            retried("append decisions", &mut shutdown, || {
                log.append_decisions(&batch)
            })
            .await
            .map_err(Failed::Decisions)?;
            Ok(batch)
        });
        Recording { task, first_seen }
    }

    /// Waits until the round is recorded, then hands its decisions to readers. Returns
    /// whether a checkpoint is due.
    pub(super) async fn settle_round(
        &self,
        recording: Recording,
        pacer: &mut Pacer,
    ) -> Result<bool, HubError> {
        let joined = recording
            .task
            .await
            .map_err(|error| HubError::Task(error.to_string()))?;
        let batch = match joined {
            Ok(batch) => batch,
            Err(Failed::Ids(error)) => return Err(HubError::Log(error)),
            Err(Failed::Decisions(error)) => return Err(self.lose_writer_role(error)),
        };
        let last = batch.last_input_seq;
        let count = last - batch.first_input_seq + 1;
        // Kept for answers once recorded, moved rather than copied: a round at scale holds
        // tens of thousands of decisions.
        let now = {
            let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
            view.remember(batch.decisions, last);
            view.folder.state.now()
        };
        self.folded_tx.send_replace(last);
        Ok(pacer.folded(count, now))
    }
}

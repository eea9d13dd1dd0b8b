//! [`MemoryLog`]: the event log held in memory, for unit tests that need a few records and
//! no file. It keeps the guarantees of [`crate::EventLog`] that do not concern storage: dense
//! sequences from 1, deduplication by event id at any distance (as redb: a repeat writes
//! nothing and gets the original sequence), the log's time for [`AppendTime::Assigned`], fenced
//! decision batches, and checkpoints by sequence. Nothing survives the value, so it proves
//! nothing about durability: the redb and NATS backends have their own tests for that.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use chrono::Utc;
use flotilla_core::Envelope;
use flotilla_core::wire::{DECISION_VERSION, LogRecord};
use tokio::sync::watch;
use uuid::Uuid;

use crate::{
    AppendTime, Appended, Checkpoint, DecisionBatch, EventLog, LogError, LogReader, StoredEvent,
};

/// An event log in memory (module docs).
#[derive(Debug)]
pub struct MemoryLog {
    inner: Mutex<Inner>,
    /// The highest input sequence, for [`LogReader::wait_for`].
    last_seq: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Input records; the one at index `i` has sequence `i + 1`.
    records: Vec<LogRecord>,
    /// Every stored event id and its sequence.
    ids: BTreeMap<Uuid, u64>,
    /// Decision batches, ascending and contiguous.
    batches: Vec<DecisionBatch>,
    /// Checkpoints by sequence.
    checkpoints: BTreeMap<u64, Checkpoint>,
}

impl Default for MemoryLog {
    fn default() -> Self {
        Self {
            inner: Mutex::default(),
            last_seq: watch::Sender::new(0),
        }
    }
}

impl MemoryLog {
    /// An empty log.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores any input record as it is — a rejected record, a newer build's frame, or an event
    /// whose id is already in the log — as a publisher could on NATS; returns its sequence.
    /// For tests of what the fold does with records an `append` never writes.
    pub fn push_record(&self, record: LogRecord) -> u64 {
        let mut inner = self.lock();
        inner.records.push(record);
        let seq = inner.records.len() as u64;
        drop(inner);
        self.last_seq.send_replace(seq);
        seq
    }

    /// The lock, taken even after a panic elsewhere: the data is only ever extended whole.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Inner {
    fn last_decided(&self) -> u64 {
        self.batches.last().map_or(0, |batch| batch.last_input_seq)
    }

    /// The time an assigned event gets: now, never earlier than the previous event's.
    fn assigned_time(&self) -> chrono::DateTime<Utc> {
        let previous = self
            .records
            .iter()
            .rev()
            .find_map(|record| record.event().map(|envelope| envelope.time));
        let now = Utc::now();
        previous.map_or(now, |previous| previous.max(now))
    }
}

impl LogReader for MemoryLog {
    async fn read(&self, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        let inner = self.lock();
        let start = usize::try_from(from.max(1) - 1).unwrap_or(usize::MAX);
        Ok(inner
            .records
            .iter()
            .enumerate()
            .skip(start)
            .take(max)
            .map(|(index, record)| StoredEvent {
                seq: index as u64 + 1,
                record: record.clone(),
            })
            .collect())
    }

    async fn last_seq(&self) -> Result<u64, LogError> {
        Ok(*self.last_seq.borrow())
    }

    async fn wait_for(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        crate::error::wait_past(self.last_seq.subscribe(), after, timeout).await
    }

    async fn read_decisions(&self, from: u64, max: usize) -> Result<Vec<DecisionBatch>, LogError> {
        let inner = self.lock();
        Ok(inner
            .batches
            .iter()
            .filter(|batch| batch.last_input_seq >= from)
            .take(max)
            .cloned()
            .collect())
    }

    async fn last_decided_seq(&self) -> Result<u64, LogError> {
        Ok(self.lock().last_decided())
    }

    async fn load_checkpoint(&self) -> Result<Option<Checkpoint>, LogError> {
        self.load_checkpoint_before(u64::MAX).await
    }

    async fn load_checkpoint_before(&self, seq: u64) -> Result<Option<Checkpoint>, LogError> {
        let inner = self.lock();
        Ok(inner
            .checkpoints
            .range(..=seq)
            .next_back()
            .map(|(_, checkpoint)| checkpoint.clone()))
    }

    /// `append` refuses every repeated id, as redb does.
    fn deduplicates_every_append(&self) -> bool {
        true
    }

    async fn first_seq_of(&self, ids: &[Uuid]) -> Result<BTreeMap<Uuid, u64>, LogError> {
        let inner = self.lock();
        Ok(ids
            .iter()
            .filter_map(|id| inner.ids.get(id).map(|seq| (*id, *seq)))
            .collect())
    }
}

impl EventLog for MemoryLog {
    async fn append(
        &self,
        events: Vec<Envelope>,
        time: AppendTime,
    ) -> Result<Vec<Appended>, LogError> {
        let mut inner = self.lock();
        let mut appended = Vec::with_capacity(events.len());
        for mut envelope in events {
            if let Some(seq) = inner.ids.get(&envelope.id) {
                appended.push(Appended {
                    seq: *seq,
                    duplicate: true,
                });
                continue;
            }
            if time == AppendTime::Assigned {
                envelope.time = inner.assigned_time();
            }
            let seq = inner.records.len() as u64 + 1;
            inner.ids.insert(envelope.id, seq);
            inner.records.push(LogRecord::Event(envelope));
            appended.push(Appended {
                seq,
                duplicate: false,
            });
        }
        let last = inner.records.len() as u64;
        drop(inner);
        self.last_seq.send_replace(last);
        Ok(appended)
    }

    async fn append_decisions(&self, batch: &DecisionBatch) -> Result<(), LogError> {
        let mut inner = self.lock();
        let decided = inner.last_decided();
        if batch.first_input_seq != decided + 1 {
            return Err(LogError::Fenced {
                expected: batch.first_input_seq.saturating_sub(1),
                actual: decided,
            });
        }
        inner.batches.push(DecisionBatch {
            version: DECISION_VERSION,
            ..batch.clone()
        });
        Ok(())
    }

    /// Returns the size the checkpoint's record would have: nothing is written.
    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<u64, LogError> {
        let record =
            flotilla_core::wire::checkpoint::encode_once(checkpoint.seq, &checkpoint.state)?;
        self.lock()
            .checkpoints
            .insert(checkpoint.seq, checkpoint.clone());
        Ok(record.record.len() as u64)
    }

    /// Nothing to record: every stored id is the first with it, and [`LogReader::first_seq_of`]
    /// answers from the ids stored.
    async fn record_folded(&self, _folded: &[(Uuid, u64)]) -> Result<(), LogError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_core::{Input, State};

    fn event(id: u128) -> Envelope {
        Envelope::new(Uuid::from_u128(id), Utc::now(), "test", Input::Tick)
    }

    #[tokio::test]
    async fn a_repeated_id_is_not_stored_again() -> Result<(), LogError> {
        let log = MemoryLog::new();
        let first = log
            .append(vec![event(1), event(2)], AppendTime::AsGiven)
            .await?;
        let again = log
            .append(vec![event(2), event(3)], AppendTime::AsGiven)
            .await?;
        assert_eq!(
            first[1],
            Appended {
                seq: 2,
                duplicate: false
            }
        );
        assert_eq!(
            again[0],
            Appended {
                seq: 2,
                duplicate: true
            }
        );
        assert_eq!(
            again[1],
            Appended {
                seq: 3,
                duplicate: false
            }
        );
        assert_eq!(log.last_seq().await?, 3);
        assert_eq!(log.read(2, 5).await?.len(), 2);
        let ids = log.first_seq_of(&[Uuid::from_u128(3)]).await?;
        assert_eq!(ids.get(&Uuid::from_u128(3)), Some(&3));
        Ok(())
    }

    #[tokio::test]
    async fn a_decision_batch_that_does_not_follow_is_fenced() -> Result<(), LogError> {
        let log = MemoryLog::new();
        log.append(vec![event(1), event(2)], AppendTime::AsGiven)
            .await?;
        let batch = |first, last| DecisionBatch {
            version: DECISION_VERSION,
            first_input_seq: first,
            last_input_seq: last,
            decisions: Vec::new(),
        };
        log.append_decisions(&batch(1, 1)).await?;
        assert!(matches!(
            log.append_decisions(&batch(1, 2)).await,
            Err(LogError::Fenced { .. })
        ));
        log.append_decisions(&batch(2, 2)).await?;
        assert_eq!(log.last_decided_seq().await?, 2);
        assert_eq!(log.read_decisions(2, 10).await?.len(), 1);
        Ok(())
    }

    #[tokio::test]
    async fn the_checkpoint_before_a_point_is_the_newest_at_or_before_it() -> Result<(), LogError> {
        let log = MemoryLog::new();
        let state = State::default();
        for seq in [3, 7] {
            let hash = state.hash()?;
            let state = state.clone();
            log.save_checkpoint(&Checkpoint { seq, hash, state })
                .await?;
        }
        let at = |checkpoint: Option<Checkpoint>| checkpoint.map(|c| c.seq);
        assert_eq!(at(log.load_checkpoint().await?), Some(7));
        assert_eq!(at(log.load_checkpoint_before(6).await?), Some(3));
        assert_eq!(at(log.load_checkpoint_before(2).await?), None);
        Ok(())
    }
}

//! Folding a recorded log one input at a time, with a look at each input before it is folded:
//! what a linear scan and a what-if's recording side need. It folds exactly as
//! [`crate::fold_on`] does — pages of [`READ_BATCH_MAX`] records, recorded record-level
//! verdicts followed, duplicates of event ids answered as duplicates — so the state after each
//! input is the one the hub had.

use std::collections::{BTreeMap, VecDeque};

use flotilla_core::Decisions;
use flotilla_eventstore::{LogReader, StoredEvent};
use uuid::Uuid;

use crate::{Folder, Known, READ_BATCH_MAX, ReplayError, first_folded};

/// A cursor over the inputs after a folder's sequence, up to `until`.
pub(crate) struct Walk<'a, L: LogReader> {
    log: &'a L,
    until: u64,
    page: VecDeque<StoredEvent>,
    /// Recorded decisions of the page's inputs (only record-level verdicts are followed).
    recorded: BTreeMap<u64, Decisions>,
    /// Where the log first folded each event id of the page (and those seen since).
    first: BTreeMap<Uuid, u64>,
}

/// One folded input.
pub(crate) struct Stepped {
    /// Its sequence.
    pub(crate) seq: u64,
    /// The record.
    pub(crate) record: StoredEvent,
    /// What folding it decided.
    pub(crate) decisions: Decisions,
}

impl Stepped {
    /// Whether the log's verdict was on the record itself (undecodable, a duplicate): the
    /// input asked nothing of the state.
    pub(crate) fn is_record_verdict(&self) -> bool {
        use flotilla_core::{Decision, RejectCode};
        matches!(
            self.decisions.as_slice(),
            [Decision::Rejected {
                code: RejectCode::Undecodable | RejectCode::DuplicateEvent,
                ..
            }]
        )
    }
}

impl<'a, L: LogReader> Walk<'a, L> {
    /// A walk over the inputs up to `until` (inclusive).
    pub(crate) fn new(log: &'a L, until: u64) -> Self {
        Self {
            log,
            until,
            page: VecDeque::new(),
            recorded: BTreeMap::new(),
            first: BTreeMap::new(),
        }
    }

    /// The next input after `folder`'s sequence, not folded yet; `None` at `until` or the
    /// log's end.
    ///
    /// # Errors
    /// A log read failure.
    pub(crate) async fn peek(
        &mut self,
        folder: &Folder,
    ) -> Result<Option<&StoredEvent>, ReplayError> {
        if self.page.front().is_none_or(|e| e.seq != folder.seq + 1) {
            self.refill(folder.seq).await?;
        }
        Ok(self.page.front())
    }

    /// Folds the next input into `folder`; `None` at `until` or the log's end.
    ///
    /// # Errors
    /// A log read failure, a gap, or a newer build's record.
    pub(crate) async fn step(
        &mut self,
        folder: &mut Folder,
    ) -> Result<Option<Stepped>, ReplayError> {
        if self.peek(folder).await?.is_none() {
            return Ok(None);
        }
        let Some(record) = self.page.pop_front() else {
            return Ok(None);
        };
        let id = record.event().map(|envelope| envelope.id);
        let known = Known {
            first_seq: id.and_then(|id| self.first.get(&id).copied()),
            recorded: self.recorded.get(&record.seq),
        };
        let decisions = folder.fold_known(&record, known)?;
        if let Some(id) = id {
            self.first.entry(id).or_insert(record.seq);
        }
        Ok(Some(Stepped {
            seq: record.seq,
            record,
            decisions,
        }))
    }

    /// Reads the next page after `folded`, cut where the recorded decisions end (as
    /// [`crate::fold_on`] does, so verdicts are known for every input of the page).
    async fn refill(&mut self, folded: u64) -> Result<(), ReplayError> {
        self.page.clear();
        if folded >= self.until {
            return Ok(());
        }
        let mut events = self.log.read(folded + 1, READ_BATCH_MAX).await?;
        let batches = self.log.read_decisions(folded + 1, READ_BATCH_MAX).await?;
        let decided = batches.last().map_or(self.until, |b| b.last_input_seq);
        events.retain(|e| e.seq <= self.until.min(decided.max(folded + 1)));
        self.recorded = batches
            .into_iter()
            .flat_map(|batch| batch.decisions)
            .collect();
        self.first = first_folded(self.log, &events).await?;
        self.page = events.into();
        Ok(())
    }
}

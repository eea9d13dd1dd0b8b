//! Reading a span of the log: its inputs page by page with their recorded decisions, and the
//! decisions of inputs the writer has not decided yet, folded again.

use std::collections::BTreeMap;

use flotilla_core::{Decisions, Envelope};
use flotilla_eventstore::{LogReader, StoredEvent};

use crate::seek::fold_to;
use crate::{Folder, READ_BATCH_MAX, ReplayError};

/// One stored input with its decisions.
#[derive(Debug, Clone)]
pub(crate) struct LoggedInput {
    pub(crate) seq: u64,
    /// `None` for a rejected or newer record.
    pub(crate) envelope: Option<Envelope>,
    pub(crate) decisions: Decisions,
    pub(crate) recorded: bool,
}

/// Reads the inputs after `after` up to `until` page by page, with their recorded decisions;
/// inputs past the last decided one are folded again for theirs.
pub(crate) struct Inputs<'a, L: LogReader> {
    log: &'a L,
    next: u64,
    until: u64,
    decided: u64,
    tail: Option<Folder>,
}

impl<'a, L: LogReader> Inputs<'a, L> {
    pub(crate) async fn new(log: &'a L, after: u64, until: u64) -> Result<Self, ReplayError> {
        Ok(Self {
            log,
            next: after + 1,
            until,
            decided: log.last_decided_seq().await?,
            tail: None,
        })
    }

    /// The next page of inputs (empty at the end).
    pub(crate) async fn next_page(&mut self) -> Result<Vec<LoggedInput>, ReplayError> {
        if self.next > self.until {
            return Ok(Vec::new());
        }
        let mut events = self.log.read(self.next, READ_BATCH_MAX).await?;
        events.retain(|event| event.seq <= self.until);
        let Some(last) = events.last().map(|event| event.seq) else {
            return Ok(Vec::new());
        };
        let mut decisions = self.recorded(self.next, last.min(self.decided)).await?;
        let undecided: Vec<StoredEvent> = events
            .iter()
            .filter(|event| event.seq > self.decided)
            .cloned()
            .collect();
        if let Some(first) = undecided.first().map(|event| event.seq) {
            decisions.extend(self.fold_again(first, &undecided).await?);
        }
        self.next = last + 1;
        Ok(events
            .into_iter()
            .map(|event| LoggedInput {
                seq: event.seq,
                recorded: event.seq <= self.decided,
                decisions: decisions.remove(&event.seq).unwrap_or_default(),
                envelope: event.record.event().cloned(),
            })
            .collect())
    }

    /// The recorded decisions of inputs `from..=to`.
    async fn recorded(&self, from: u64, to: u64) -> Result<BTreeMap<u64, Decisions>, ReplayError> {
        let mut found = BTreeMap::new();
        let mut next = from;
        while next <= to {
            let batches = self.log.read_decisions(next, READ_BATCH_MAX).await?;
            let Some(reached) = batches.last().map(|batch| batch.last_input_seq) else {
                break;
            };
            for batch in batches {
                let wanted = batch.decisions.into_iter();
                found.extend(wanted.filter(|(seq, _)| (from..=to).contains(seq)));
            }
            next = reached + 1;
        }
        Ok(found)
    }

    /// Decides undecided inputs again, from the state before the first of them.
    async fn fold_again(
        &mut self,
        first: u64,
        events: &[StoredEvent],
    ) -> Result<BTreeMap<u64, Decisions>, ReplayError> {
        let mut folder = match self.tail.take() {
            Some(folder) if folder.seq + 1 == first => folder,
            _ => fold_to(self.log, first - 1).await?,
        };
        let folded = folder.fold_page(self.log, events, &[]).await?;
        self.tail = Some(folder);
        if let Some(newer) = folded.stopped {
            return Err(newer.into());
        }
        Ok(folded.decisions.into_iter().collect())
    }
}

//! How the writer reads its rounds. A writer that is behind the log (its last page was full)
//! begins reading the next page before it folds this one: on a large fleet's burst the read of
//! 10,000 inputs took about a tenth of the fold's time, and the fold waited for it every round.
//! The page read ahead is used only if the fold reached exactly where it begins; otherwise it
//! is dropped and the page is read again. What the log knows of the page's ids is asked only
//! when the page is folded, after the previous rounds were recorded.

use flotilla_eventstore::fold::first_folded;
use flotilla_eventstore::{EventLog, LogError, StoredEvent};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::hub::{Hub, HubError};

/// A page of inputs and the sequences their ids were first folded at.
pub(super) type ReadRound = (
    Vec<StoredEvent>,
    std::collections::BTreeMap<uuid::Uuid, u64>,
);

/// A page being read while the previous one folds.
pub(super) struct Ahead {
    /// The sequence the page begins at.
    from: u64,
    page: JoinHandle<Result<Vec<StoredEvent>, LogError>>,
}

impl<L: EventLog> Hub<L> {
    /// Begins reading the page after `events` when `events` filled a round (the writer is
    /// behind); `None` otherwise.
    pub(super) fn read_ahead(&self, events: &[StoredEvent]) -> Option<Ahead> {
        let max = self.config.fold_round_max.max(1);
        if events.len() < max {
            return None;
        }
        let from = events.last()?.seq + 1;
        let log = std::sync::Arc::clone(&self.log);
        let page = tokio::spawn(async move { log.read(from, max).await });
        Some(Ahead { from, page })
    }

    /// The next round after `folded`: the page read ahead when it begins there and was read
    /// without error, else a fresh read ([`Self::read_round`]).
    pub(super) async fn next_round(
        &self,
        ahead: &mut Option<Ahead>,
        folded: u64,
        wait: bool,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<Option<ReadRound>, HubError> {
        if let Some(Ahead { from, page }) = ahead.take() {
            if from != folded + 1 {
                page.abort();
            } else if let Ok(Ok(events)) = page.await
                && !events.is_empty()
            {
                let first = first_folded(self.log.as_ref(), &events).await?;
                return Ok(Some((events, first)));
            }
        }
        self.read_round(folded, wait, shutdown).await
    }

    /// Reads the next page of inputs and what the log knows of their ids; `None` when there
    /// was nothing new (after waiting a little, if `wait`).
    async fn read_round(
        &self,
        folded: u64,
        wait: bool,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<Option<ReadRound>, HubError> {
        let events = self
            .log
            .read(folded + 1, self.config.fold_round_max.max(1))
            .await?;
        if events.is_empty() && !wait {
            return Ok(None);
        }
        if events.is_empty() {
            tokio::select! {
                waited = self.log.wait_for(folded, self.config.idle_wait) => { waited?; }
                _ = shutdown.changed() => {}
            }
            return Ok(None);
        }
        let first = first_folded(self.log.as_ref(), &events).await?;
        Ok(Some((events, first)))
    }
}

//! The cut: moving the log's base to the newest checkpoint the window lets go of, and removing
//! what lies before it (`super` says what and in which order).

use std::collections::HashMap;
use std::time::Duration;

use async_nats::jetstream::object_store::ObjectMetadata;
use futures::StreamExt;

use super::super::checkpoints::{TIME_METADATA, seek_name, seek_seqs};
use super::super::{NatsLog, decisions, nats};
use super::{BASE_OBJECT, Base, CUT_INPUTS_MAX};
use crate::{LogError, LogReader};

impl NatsLog {
    /// Moves the stored base to the newest seek checkpoint at least `window` older than the
    /// newest input that ends a decision batch; the base now.
    pub(super) async fn move_base(&self, window: Duration) -> Result<Base, LogError> {
        let stored = self.stored_base(self.options.request_timeout).await?;
        let last = self.last_seq().await?;
        let newest = self.input_times(last).await?.and_then(|times| times.log);
        let Some(newest) = newest else {
            self.retention.remember_base(stored);
            return Ok(stored);
        };
        let cutoff = newest - chrono::Duration::from_std(window).unwrap_or(chrono::TimeDelta::MAX);
        let mut base = stored;
        let seeks = seek_seqs(&self.checkpoints).await?;
        for &seq in seeks.range(stored.seq + 1..) {
            // A checkpoint whose input max_age removed is no base: its time is unknown.
            let Some(time) = self.input_times(seq).await?.and_then(|times| times.log) else {
                continue;
            };
            if time > cutoff {
                break;
            }
            if self.ends_batch(seq).await? {
                let time_ms = u64::try_from(time.timestamp_millis()).ok();
                base = Base { seq, time_ms };
            }
        }
        if base != stored {
            self.store_base(base).await?;
            tracing::info!(base = base.seq, "the retention window moved the log's base");
        }
        self.retention.remember_base(base);
        Ok(base)
    }

    /// Whether a decision batch ends at input `seq`.
    async fn ends_batch(&self, seq: u64) -> Result<bool, LogError> {
        let budget = self.options.request_timeout;
        let Some(at) = decisions::first_batch_covering(&self.decisions, seq, budget).await? else {
            return Ok(false);
        };
        Ok(decisions::last_input_at(&self.decisions, at, budget).await? == seq)
    }

    async fn store_base(&self, base: Base) -> Result<(), LogError> {
        let mut metadata = HashMap::from([("seq".to_owned(), base.seq.to_string())]);
        if let Some(time_ms) = base.time_ms {
            metadata.insert(TIME_METADATA.to_owned(), time_ms.to_string());
        }
        let meta = ObjectMetadata {
            name: BASE_OBJECT.to_owned(),
            description: Some(format!(
                "flotilla log base: a retention window removed the inputs up to {}",
                base.seq
            )),
            metadata,
            ..ObjectMetadata::default()
        };
        self.checkpoints
            .put(meta, &mut &[][..])
            .await
            .map_err(|err| LogError::Nats(format!("put the log's base {}: {err}", base.seq)))?;
        Ok(())
    }

    /// Removes what lies at or before `base`: inputs (at most [`CUT_INPUTS_MAX`]), decision
    /// batches (never the last), their objects, and the seek checkpoints before it.
    pub(super) async fn cut(&self, base: u64) -> Result<(), LogError> {
        let input = self.input_info().await?;
        let first = input.state.first_sequence;
        if !input.config.deny_purge && input.state.messages > 0 && first <= base {
            let upto = (base + 1).min(first.saturating_add(CUT_INPUTS_MAX));
            let purged = self
                .input
                .purge()
                .sequence(upto)
                .await
                .map_err(nats("purge inputs"))?;
            tracing::info!(
                base,
                upto,
                purged = purged.purged,
                "cut the inputs before the base"
            );
        }
        self.cut_decisions(base).await?;
        for seq in seek_seqs(&self.checkpoints).await?.range(..base) {
            self.checkpoints
                .delete(seek_name(*seq))
                .await
                .map_err(|err| LogError::Nats(format!("delete seek checkpoint {seq}: {err}")))?;
        }
        Ok(())
    }

    /// Purges the decision batches that end at or before `base`, but the stream's last batch
    /// (the writers' fence), and deletes the objects of the large ones.
    async fn cut_decisions(&self, base: u64) -> Result<(), LogError> {
        let budget = self.options.request_timeout;
        if self.decisions.cached_info().config.deny_purge {
            return Ok(());
        }
        let after = decisions::first_batch_covering(&self.decisions, base + 1, budget).await?;
        let (keep_from, objects_upto) = match after {
            Some(at) => (at, base),
            None => match decisions::first_batch_covering(&self.decisions, base, budget).await? {
                Some(at) => (at, base - 1),
                None => return Ok(()),
            },
        };
        self.decisions
            .purge()
            .sequence(keep_from)
            .await
            .map_err(nats("purge decision batches"))?;
        let mut listing = self
            .batches
            .list()
            .await
            .map_err(nats("list decision batch objects"))?;
        let mut doomed = Vec::new();
        while let Some(info) = listing.next().await {
            let info = info.map_err(nats("list decision batch objects"))?;
            let last = info
                .name
                .rsplit_once('-')
                .and_then(|(_, last)| last.parse::<u64>().ok());
            if !info.deleted && last.is_some_and(|last| last <= objects_upto) {
                doomed.push(info.name);
            }
        }
        for name in doomed {
            self.batches.delete(&name).await.map_err(|err| {
                LogError::Nats(format!("delete decision batch object {name}: {err}"))
            })?;
        }
        Ok(())
    }
}

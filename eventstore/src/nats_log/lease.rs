//! The writer lease: which of several `flotilla serve` processes on one NATS log is the writer.
//!
//! One key (`writer`) in the `<prefix>_WRITER` key-value bucket names the holder. The bucket's
//! `max_age` is the lease's time to live, so a holder that stops renewing (killed, partitioned)
//! loses the key when its last renewal ages out, and a standby's `create` succeeds. Renewals
//! are compare-and-set on the key's revision, so a holder learns at once that someone else took
//! the key. The lease only elects; safety rests on the decisions stream's fencing (a stale
//! writer's next decision batch is refused), so two writers can never interleave decisions even
//! when clocks or timers disagree.

use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::kv::{self, CreateErrorKind, UpdateErrorKind};
use bytes::Bytes;

use super::placing::{create_key_value, key_value_config};
use super::{NatsOptions, resend};
use crate::LogError;

/// The one key of the lease bucket.
pub const LEASE_KEY: &str = "writer";

/// The lease bucket's name.
#[must_use]
pub fn lease_bucket_name(options: &NatsOptions) -> String {
    format!("{}_WRITER", options.stream_prefix)
}

/// A process's claim on the writer role.
pub struct WriterLease {
    store: kv::Store,
    holder: String,
    revision: Option<u64>,
    ttl: Duration,
}

impl std::fmt::Debug for WriterLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterLease")
            .field("holder", &self.holder)
            .field("revision", &self.revision)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl WriterLease {
    /// Binds to the lease bucket, creating it with time to live `ttl` when missing (an existing
    /// bucket keeps the time to live it was created with). `holder` names this process.
    ///
    /// # Errors
    /// When the bucket can be neither bound nor created.
    pub async fn open(
        context: &jetstream::Context,
        options: &NatsOptions,
        holder: String,
        ttl: Duration,
    ) -> Result<Self, LogError> {
        let bucket = lease_bucket_name(options);
        let store = match context.get_key_value(&bucket).await {
            Ok(store) => store,
            Err(_) => {
                let config = key_value_config(&bucket, "flotilla writer lease", ttl, options);
                create_key_value(context, config, "lease bucket").await?
            }
        };
        let ttl = match store.status().await {
            Ok(status) => status.max_age(),
            Err(_) => ttl,
        };
        Ok(Self {
            store,
            holder,
            revision: None,
            ttl,
        })
    }

    /// The lease's time to live, as the bucket has it.
    #[must_use]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// This process's name in the lease.
    #[must_use]
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Takes the lease if nobody holds it; whether this process holds it now. A create left
    /// unanswered (a leader election) is sent again within the lease's time to live; a copy
    /// that finds the first stored is refused and adopted as our own write.
    ///
    /// # Errors
    /// When the server cannot be asked.
    pub async fn try_acquire(&mut self) -> Result<bool, LogError> {
        let value = Bytes::from(self.holder.clone().into_bytes());
        let store = &self.store;
        let answer =
            resend::ask_until_answered(self.ttl, || store.create(LEASE_KEY, value.clone()))
                .await
                .map_err(|unanswered| unanswered.error("acquire the writer lease", self.ttl))?;
        match answer {
            Ok(revision) => {
                self.revision = Some(revision);
                Ok(true)
            }
            // Our own earlier create may have landed with its ack lost (a leader change mid-
            // request): then the key names this holder, and the lease is ours.
            Err(err) if err.kind() == CreateErrorKind::AlreadyExists => {
                self.adopt_own_write().await
            }
            Err(err) => Err(LogError::Nats(format!("acquire the writer lease: {err}"))),
        }
    }

    /// Renews a held lease; `false` when it was lost (expired and taken, or never held). A
    /// renewal left unanswered is sent again within the lease's time to live, like a create.
    ///
    /// # Errors
    /// When the server cannot be asked (the lease may still be held: renew again soon).
    pub async fn renew(&mut self) -> Result<bool, LogError> {
        let Some(revision) = self.revision else {
            return Ok(false);
        };
        let value = Bytes::from(self.holder.clone().into_bytes());
        let store = &self.store;
        let answer = resend::ask_until_answered(self.ttl, || {
            store.update(LEASE_KEY, value.clone(), revision)
        })
        .await
        .map_err(|unanswered| unanswered.error("renew the writer lease", self.ttl))?;
        match answer {
            Ok(revision) => {
                self.revision = Some(revision);
                Ok(true)
            }
            // A renewal whose ack was lost may have landed at a newer revision than we know; the
            // lease is lost only if the key no longer names this holder.
            Err(err) if err.kind() == UpdateErrorKind::WrongLastRevision => {
                self.adopt_own_write().await
            }
            Err(err) => Err(LogError::Nats(format!("renew the writer lease: {err}"))),
        }
    }

    /// After a refused create or renewal: whether the key names this holder at a revision newer
    /// than the one this holder knows (a write of ours whose ack was lost), adopting that
    /// revision if so, and forgetting the lease if not.
    async fn adopt_own_write(&mut self) -> Result<bool, LogError> {
        let known = self.revision.unwrap_or(0);
        let entry = self
            .store
            .entry(LEASE_KEY)
            .await
            .map_err(|err| LogError::Nats(format!("read the writer lease: {err}")))?;
        let own = entry.filter(|entry| {
            entry.operation == kv::Operation::Put
                && entry.value == self.holder.as_bytes()
                && entry.revision > known
        });
        self.revision = own.map(|entry| entry.revision);
        if self.revision.is_some() {
            tracing::warn!(holder = %self.holder, "the writer lease holds an unacknowledged write of ours; keeping it");
        }
        Ok(self.revision.is_some())
    }

    /// Gives a held lease up (on a clean shutdown), so a standby need not wait for it to
    /// expire; a lease this process no longer holds is left alone.
    ///
    /// # Errors
    /// When the server cannot be asked.
    pub async fn release(&mut self) -> Result<(), LogError> {
        let Some(revision) = self.revision.take() else {
            return Ok(());
        };
        self.store
            .delete_expect_revision(LEASE_KEY, Some(revision))
            .await
            .map_err(|err| LogError::Nats(format!("release the writer lease: {err}")))
    }

    /// Who holds the lease now, if anyone.
    ///
    /// # Errors
    /// When the server cannot be asked.
    pub async fn current_holder(&self) -> Result<Option<String>, LogError> {
        let value = self
            .store
            .get(LEASE_KEY)
            .await
            .map_err(|err| LogError::Nats(format!("read the writer lease: {err}")))?;
        Ok(value.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }
}

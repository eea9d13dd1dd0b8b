//! Choosing the log at run time: the embedded redb file (default) or a NATS JetStream server.

use std::path::Path;
use std::time::Duration;

use flotilla_core::Envelope;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use std::collections::BTreeMap;

use flotilla_eventstore::{
    AppendTime, Appended, Checkpoint, DecisionBatch, EncodedCheckpoint, EventLog, LogError,
    LogReader, StoredEvent,
};
use uuid::Uuid;

/// File name of the embedded log inside the data directory.
pub const LOG_FILE: &str = "flotilla.redb";

/// One of the two backends.
pub enum AnyLog {
    /// The embedded redb file.
    Redb(RedbLog),
    /// A NATS JetStream stream.
    Nats(Box<NatsLog>),
}

impl AnyLog {
    /// Opens the embedded log in `data_dir` (created if missing).
    ///
    /// # Errors
    /// When the directory or the file cannot be opened (another process may hold it).
    pub fn open_embedded(data_dir: &Path) -> Result<Self, LogError> {
        Self::open_embedded_with(data_dir, RedbOptions::default())
    }

    /// Opens the embedded log in `data_dir` (created if missing) with `options`.
    ///
    /// # Errors
    /// As [`AnyLog::open_embedded`], and when `options` are out of range.
    pub fn open_embedded_with(data_dir: &Path, options: RedbOptions) -> Result<Self, LogError> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            LogError::Storage(format!(
                "cannot create data directory {}: {e}",
                data_dir.display()
            ))
        })?;
        Ok(AnyLog::Redb(RedbLog::open(
            &data_dir.join(LOG_FILE),
            options,
        )?))
    }

    /// Connects to a NATS server.
    ///
    /// # Errors
    /// When the server cannot be reached or the streams cannot be created.
    pub async fn connect_nats(url: &str, monitoring_url: Option<String>) -> Result<Self, LogError> {
        let options = NatsOptions {
            monitoring_url,
            ..NatsOptions::default()
        };
        Ok(AnyLog::Nats(Box::new(
            NatsLog::connect(url, options).await?,
        )))
    }

    /// The log on an already connected NATS client (one that carries credentials).
    ///
    /// # Errors
    /// When the streams cannot be created or bound.
    pub async fn with_nats_client(
        client: async_nats::Client,
        options: NatsOptions,
    ) -> Result<Self, LogError> {
        Ok(AnyLog::Nats(Box::new(
            NatsLog::with_client(client, options).await?,
        )))
    }
}

macro_rules! dispatch {
    ($self:ident, $log:ident => $call:expr) => {
        match $self {
            AnyLog::Redb($log) => $call.await,
            AnyLog::Nats($log) => $call.await,
        }
    };
}

impl LogReader for AnyLog {
    async fn read(&self, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        dispatch!(self, log => log.read(from, max))
    }

    async fn last_seq(&self) -> Result<u64, LogError> {
        dispatch!(self, log => log.last_seq())
    }

    async fn wait_for(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        dispatch!(self, log => log.wait_for(after, timeout))
    }

    async fn read_decisions(&self, from: u64, max: usize) -> Result<Vec<DecisionBatch>, LogError> {
        dispatch!(self, log => log.read_decisions(from, max))
    }

    async fn last_decided_seq(&self) -> Result<u64, LogError> {
        dispatch!(self, log => log.last_decided_seq())
    }

    async fn load_checkpoint(&self) -> Result<Option<Checkpoint>, LogError> {
        dispatch!(self, log => log.load_checkpoint())
    }

    async fn load_checkpoint_before(&self, seq: u64) -> Result<Option<Checkpoint>, LogError> {
        dispatch!(self, log => log.load_checkpoint_before(seq))
    }

    async fn base_seq(&self) -> Result<u64, LogError> {
        dispatch!(self, log => log.base_seq())
    }

    fn deduplicates_every_append(&self) -> bool {
        match self {
            AnyLog::Redb(log) => log.deduplicates_every_append(),
            AnyLog::Nats(log) => log.deduplicates_every_append(),
        }
    }

    async fn newer_build(&self) -> Result<Option<String>, LogError> {
        dispatch!(self, log => log.newer_build())
    }

    async fn first_seq_of(&self, ids: &[Uuid]) -> Result<BTreeMap<Uuid, u64>, LogError> {
        dispatch!(self, log => log.first_seq_of(ids))
    }
}

impl EventLog for AnyLog {
    async fn append(
        &self,
        events: Vec<Envelope>,
        time: AppendTime,
    ) -> Result<Vec<Appended>, LogError> {
        dispatch!(self, log => log.append(events, time))
    }

    async fn append_decisions(&self, batch: &DecisionBatch) -> Result<(), LogError> {
        dispatch!(self, log => log.append_decisions(batch))
    }

    async fn claim_writer_position(&self) -> Result<u64, LogError> {
        dispatch!(self, log => log.claim_writer_position())
    }

    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<u64, LogError> {
        dispatch!(self, log => log.save_checkpoint(checkpoint))
    }

    async fn save_encoded_checkpoint(&self, encoded: EncodedCheckpoint) -> Result<u64, LogError> {
        dispatch!(self, log => log.save_encoded_checkpoint(encoded))
    }

    fn checkpoint_dir(&self) -> Option<flotilla_eventstore::redb_log::CheckpointDir> {
        match self {
            AnyLog::Redb(log) => log.checkpoint_dir(),
            AnyLog::Nats(log) => log.checkpoint_dir(),
        }
    }

    async fn save_checkpoint_file(
        &self,
        written: flotilla_eventstore::redb_log::WrittenCheckpoint,
    ) -> Result<u64, LogError> {
        dispatch!(self, log => log.save_checkpoint_file(written))
    }

    async fn announce_build(&self, by: &str) -> Result<(), LogError> {
        dispatch!(self, log => log.announce_build(by))
    }

    async fn record_folded(&self, folded: &[(Uuid, u64)]) -> Result<(), LogError> {
        dispatch!(self, log => log.record_folded(folded))
    }

    fn storage_full(&self) -> bool {
        match self {
            AnyLog::Redb(log) => log.storage_full(),
            AnyLog::Nats(log) => log.storage_full(),
        }
    }
}

/// How much of the log is kept, and where what leaves it goes, as the hub prints it at start.
#[must_use]
pub fn retention_text(
    retain: Option<std::time::Duration>,
    archive: Option<&std::path::Path>,
) -> String {
    match (retain, archive) {
        (Some(window), None) => format!(
            "keeping the last {} of inputs (--retain)",
            humanize(window.as_secs())
        ),
        (Some(window), Some(archive)) => format!(
            "keeping the last {} of inputs (--retain), older ones archived in {} (--archive)",
            humanize(window.as_secs()),
            archive.display()
        ),
        (None, _) => "keeping every input (--retain forever)".to_owned(),
    }
}

fn humanize(seconds: u64) -> String {
    match seconds {
        s if s >= 86_400 && s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s >= 3_600 && s % 3_600 == 0 => format!("{}h", s / 3_600),
        s if s >= 60 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

//! Storing a checkpoint on a redb log: in a file of its own (`checkpoint_files.rs`), entered in
//! the log's index once it is durable, or in the log's table when it keeps no files.

use redb::ReadableDatabase;
use tokio::sync::oneshot;

use super::checkpoint_files::CheckpointDir;
use super::tables::storage;
use super::writer::{Reply, Work};
use super::{RedbLog, reads};
use crate::LogError;

impl RedbLog {
    /// Stores an encoded checkpoint record: in a file of its own, entered in the log once it is
    /// durable, or in the table when this log keeps no files.
    pub(super) async fn store_checkpoint(
        &self,
        seq: u64,
        record: Vec<u8>,
    ) -> Result<u64, LogError> {
        let bytes = u64::try_from(record.len()).unwrap_or(u64::MAX);
        let Some(files) = self.checkpoint_files.clone() else {
            let (reply, answer) = oneshot::channel();
            let work = Work::Checkpoint { seq, record };
            self.submit(work, Reply::Done(reply), answer).await?;
            return Ok(bytes);
        };
        self.check_checkpoint_seq(seq)?;
        let _one_at_a_time = self.checkpoint_saves.lock().await;
        let written = files.clone();
        tokio::task::spawn_blocking(move || written.write(seq, &record))
            .await
            .map_err(|error| LogError::Storage(format!("checkpoint write task: {error}")))??;
        self.index_checkpoint_file(files, seq, bytes).await
    }

    /// Refuses a checkpoint of an input the log does not hold.
    fn check_checkpoint_seq(&self, seq: u64) -> Result<(), LogError> {
        let last_seq = *self.last_seq.borrow();
        if seq > last_seq {
            return Err(LogError::Storage(format!(
                "checkpoint at input {seq}, but the log ends at {last_seq}"
            )));
        }
        Ok(())
    }

    /// Enters checkpoint file `seq`, written and in place, in the log's index, then deletes the
    /// files the index does not hold. The caller holds `checkpoint_saves`.
    pub(super) async fn index_checkpoint_file(
        &self,
        files: CheckpointDir,
        seq: u64,
        bytes: u64,
    ) -> Result<u64, LogError> {
        let indexed = match self.check_checkpoint_seq(seq) {
            Ok(()) => {
                let (reply, answer) = oneshot::channel();
                let work = Work::IndexCheckpointFile { seq, bytes };
                self.submit(work, Reply::Done(reply), answer).await
            }
            Err(error) => Err(error),
        };
        // Swept whether or not the entry was made: a file the log does not index must go.
        let db = self.shared.database();
        tokio::task::spawn_blocking(move || {
            let db = db?;
            let txn = db.begin_read().map_err(storage("begin read"))?;
            let indexed = reads::indexed_files(&txn, u64::MAX)?.into_iter().collect();
            files.sweep(&indexed)
        })
        .await
        .map_err(|error| LogError::Storage(format!("checkpoint sweep task: {error}")))??;
        indexed.map(|()| bytes)
    }
}

//! What a redb log holds and what it costs on disk, for `flotilla replay info`: the first and
//! last input it keeps (sequence and the time the log assigned), the bytes of each table, and
//! every checkpoint with its size. Read in one read transaction, so the figures agree.

use std::path::Path;

use chrono::{DateTime, Utc};
use redb::{ReadTransaction, ReadableTableMetadata, TableDefinition, TableError, TableHandle};
use serde::Serialize;

use super::checkpoint_files::CheckpointDir;
use super::reads;
use super::tables::{
    CHECKPOINT_FILES, CHECKPOINTS, DECISIONS, EVENT_IDS, INPUT_GROUPS, INPUTS, storage,
};
use crate::LogError;

/// One input's place: its sequence and the time the log assigned it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputPoint {
    /// The sequence.
    pub seq: u64,
    /// The log's time (absent for a record this build cannot read as an event).
    pub time: Option<DateTime<Utc>>,
}

/// What one table of the file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TableUsage {
    /// The table's name, as stored.
    pub name: String,
    /// Its entries (an input group counts once).
    pub entries: u64,
    /// Bytes of keys and values.
    pub stored_bytes: u64,
    /// Bytes of the tree's own bookkeeping.
    pub metadata_bytes: u64,
    /// Bytes of its pages left unused.
    pub fragmented_bytes: u64,
}

impl TableUsage {
    /// Every byte its pages take.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.stored_bytes + self.metadata_bytes + self.fragmented_bytes
    }
}

/// One checkpoint the log keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointUsage {
    /// The last input folded into it.
    pub seq: u64,
    /// Its record's size.
    pub bytes: u64,
    /// `file` (beside the log) or `table` (inside it).
    pub stored: &'static str,
}

/// What a redb log holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogInfo {
    /// The first input kept, if any.
    pub first: Option<InputPoint>,
    /// The last input, if any.
    pub last: Option<InputPoint>,
    /// The last input whose decisions are recorded.
    pub last_decided_seq: u64,
    /// The checkpoint a retention window made the log's start (0: it holds every input).
    pub base_seq: u64,
    /// The log file's size on disk.
    pub file_bytes: u64,
    /// The tables, in the order the layout defines them.
    pub tables: Vec<TableUsage>,
    /// The checkpoints, oldest first.
    pub checkpoints: Vec<CheckpointUsage>,
}

impl LogInfo {
    /// Inputs kept: from the first to the last, both included.
    #[must_use]
    pub fn inputs(&self) -> u64 {
        match (&self.first, &self.last) {
            (Some(first), Some(last)) => last.seq + 1 - first.seq,
            _ => 0,
        }
    }

    /// The time from the first kept input to the last.
    #[must_use]
    pub fn window(&self) -> Option<chrono::Duration> {
        let first = self.first.as_ref()?.time?;
        Some(self.last.as_ref()?.time? - first)
    }

    /// Bytes of the checkpoints kept in files of their own.
    #[must_use]
    pub fn checkpoint_file_bytes(&self) -> u64 {
        let files = self.checkpoints.iter().filter(|c| c.stored == "file");
        files.map(|c| c.bytes).sum()
    }
}

/// Reads what the log in `txn` holds; `path` is the log file, `files` its checkpoint directory.
pub(crate) fn read(
    txn: &ReadTransaction,
    path: &Path,
    files: Option<&CheckpointDir>,
) -> Result<LogInfo, LogError> {
    let file_bytes = std::fs::metadata(path)
        .map_err(|error| LogError::Storage(format!("{}: {error}", path.display())))?
        .len();
    let tables = [
        usage(txn, INPUTS)?,
        usage(txn, INPUT_GROUPS)?,
        usage(txn, EVENT_IDS)?,
        usage(txn, DECISIONS)?,
        usage(txn, CHECKPOINTS)?,
        usage(txn, CHECKPOINT_FILES)?,
    ];
    let (last_seq, last_decided_seq) = reads::heads(txn)?;
    let first_seq = reads::inputs(txn, 0, 1)?.first().map(|input| input.seq);
    Ok(LogInfo {
        first: first_seq.map(|seq| point(txn, seq)).transpose()?,
        last: (last_seq > 0).then(|| point(txn, last_seq)).transpose()?,
        last_decided_seq,
        base_seq: reads::base(txn)?,
        file_bytes,
        tables: tables.into_iter().flatten().collect(),
        checkpoints: checkpoints(txn, files)?,
    })
}

/// Input `seq` with its time.
fn point(txn: &ReadTransaction, seq: u64) -> Result<InputPoint, LogError> {
    let input = reads::inputs(txn, seq, 1)?;
    let time = input
        .first()
        .filter(|input| input.seq == seq)
        .and_then(|input| input.event().map(|event| event.time));
    Ok(InputPoint { seq, time })
}

/// A table's usage; `None` when the file has no such table.
fn usage<K, V>(
    txn: &ReadTransaction,
    table: TableDefinition<K, V>,
) -> Result<Option<TableUsage>, LogError>
where
    K: redb::Key + 'static,
    V: redb::Value + 'static,
{
    let name = table.name().to_owned();
    let opened = match txn.open_table(table) {
        Ok(opened) => opened,
        Err(TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(error) => return Err(storage("open a table")(error)),
    };
    let stats = opened.stats().map_err(storage("read table statistics"))?;
    Ok(Some(TableUsage {
        name,
        entries: opened.len().map_err(storage("count table entries"))?,
        stored_bytes: stats.stored_bytes(),
        metadata_bytes: stats.metadata_bytes(),
        fragmented_bytes: stats.fragmented_bytes(),
    }))
}

/// The checkpoints in the table and in files, oldest first.
fn checkpoints(
    txn: &ReadTransaction,
    files: Option<&CheckpointDir>,
) -> Result<Vec<CheckpointUsage>, LogError> {
    use redb::ReadableTable;
    let mut found = Vec::new();
    let table = txn
        .open_table(CHECKPOINTS)
        .map_err(storage("open table checkpoints"))?;
    for entry in table.iter().map_err(storage("read checkpoints"))? {
        let (key, value) = entry.map_err(storage("read checkpoint"))?;
        let bytes = value.value().len() as u64;
        found.push(CheckpointUsage {
            seq: key.value(),
            bytes,
            stored: "table",
        });
    }
    if files.is_some() {
        match txn.open_table(CHECKPOINT_FILES) {
            Ok(indexed) => {
                for entry in indexed.iter().map_err(storage("read checkpoint files"))? {
                    let (key, value) = entry.map_err(storage("read checkpoint files"))?;
                    found.push(CheckpointUsage {
                        seq: key.value(),
                        bytes: value.value(),
                        stored: "file",
                    });
                }
            }
            Err(TableError::TableDoesNotExist(_)) => {}
            Err(error) => return Err(storage("open table checkpoint_files")(error)),
        }
    }
    found.sort_by_key(|checkpoint| checkpoint.seq);
    Ok(found)
}

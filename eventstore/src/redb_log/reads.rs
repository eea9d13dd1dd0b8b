//! Reads of the redb file, shared by the writing [`super::RedbLog`] and the read-only
//! [`super::reader::RedbReader`]: each takes an open read transaction.

use std::collections::BTreeMap;

use flotilla_core::wire::{InputOrigin, read_input};
use redb::{ReadTransaction, ReadableTable};

use super::checkpoint_files::CheckpointDir;
use super::decode_batch;
use super::groups;
use super::tables::{
    BASE_SEQ_KEY, CHECKPOINT_FILES, CHECKPOINTS, DECISIONS, EVENT_IDS, INPUTS, META,
    decode_checkpoint_record, storage,
};
use super::writer::last_key;
use crate::{Checkpoint, DecisionBatch, LogError, StoredEvent};

/// Up to `max` input records from `from` on, in sequence order: layout 1's, one per key, and
/// those of the groups (which follow them in a file a layout 1 build began).
pub(crate) fn inputs(
    txn: &ReadTransaction,
    from: u64,
    max: usize,
) -> Result<Vec<StoredEvent>, LogError> {
    // A retention window removed what lies at or before the base; a group straddling it
    // still holds some of those inputs.
    held_inputs(txn, from.max(base(txn)? + 1), max)
}

/// As [`inputs`], but also the inputs at or before the base that the file still holds (a
/// group straddling the base, groups a cut has not reached yet): for a reader that finds the
/// removed ones in an archive (`archive/read.rs`).
pub(crate) fn held_inputs(
    txn: &ReadTransaction,
    from: u64,
    max: usize,
) -> Result<Vec<StoredEvent>, LogError> {
    let table = txn
        .open_table(INPUTS)
        .map_err(storage("open table inputs"))?;
    let range = table.range(from..).map_err(storage("read inputs"))?;
    let mut events = Vec::with_capacity(max.min(1_024));
    for entry in range.take(max) {
        let (key, value) = entry.map_err(storage("read inputs"))?;
        events.push(stored(key.value(), value.value()));
    }
    let Some(groups) = groups::open(txn)? else {
        return Ok(events);
    };
    let mut grouped: Vec<StoredEvent> = Vec::new();
    let range = groups.range(from..).map_err(storage("read input groups"))?;
    for entry in range {
        if grouped.len() >= max {
            break;
        }
        let (key, value) = entry.map_err(storage("read input groups"))?;
        let group = groups::decode(key.value(), value.value())?;
        let wanted = group.inputs()?.into_iter().filter(|(seq, _)| *seq >= from);
        let room = max - grouped.len();
        grouped.extend(wanted.take(room).map(|(seq, bytes)| stored(seq, bytes)));
    }
    if events.is_empty() {
        return Ok(grouped);
    }
    // Both tables hold inputs from `from` on: a file a layout 1 build began, read from before
    // this build first wrote to it.
    events.extend(grouped);
    events.sort_by_key(|event| event.seq);
    events.truncate(max);
    Ok(events)
}

/// The log's base (0: none), from the `meta` table a file without one lacks.
pub(crate) fn base(txn: &ReadTransaction) -> Result<u64, LogError> {
    let meta = match txn.open_table(META) {
        Ok(meta) => meta,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
        Err(error) => return Err(storage("open table meta")(error)),
    };
    let base = meta.get(BASE_SEQ_KEY).map_err(storage("read base"))?;
    Ok(base.map_or(0, |value| value.value()))
}

/// The first input of the first input group the file holds (`None`: it holds none): the
/// groups before it were removed by cuts.
pub(crate) fn first_grouped(txn: &ReadTransaction) -> Result<Option<u64>, LogError> {
    let Some(groups) = groups::open(txn)? else {
        return Ok(None);
    };
    let first = groups
        .first()
        .map_err(storage("read the first input group"))?;
    first
        .map(|(key, value)| {
            groups::first_of(value.value()).ok_or_else(|| {
                LogError::Storage(format!(
                    "input group stored under sequence {}: truncated header",
                    key.value()
                ))
            })
        })
        .transpose()
}

/// Input `seq` read from its stored bytes.
pub(crate) fn stored(seq: u64, bytes: &[u8]) -> StoredEvent {
    let origin = InputOrigin {
        seq,
        subject: None,
        log_time: None,
    };
    StoredEvent {
        seq,
        record: read_input(bytes, &origin),
    }
}

/// The stored bytes of input `seq`, as written.
pub(crate) fn input_bytes(txn: &ReadTransaction, seq: u64) -> Result<Option<Vec<u8>>, LogError> {
    let table = txn
        .open_table(INPUTS)
        .map_err(storage("open table inputs"))?;
    if let Some(value) = table.get(seq).map_err(storage("read input"))? {
        return Ok(Some(value.value().to_vec()));
    }
    match groups::open(txn)? {
        Some(groups) => groups::input(&groups, seq),
        None => Ok(None),
    }
}

/// Up to `max` decision batches whose last input is `from` or later.
pub(crate) fn batches(
    txn: &ReadTransaction,
    from: u64,
    max: usize,
) -> Result<Vec<DecisionBatch>, LogError> {
    let table = txn
        .open_table(DECISIONS)
        .map_err(storage("open table decisions"))?;
    // Keyed by last_input_seq, so `from..` is exactly "last_input_seq >= from".
    let range = table.range(from..).map_err(storage("read decisions"))?;
    let mut batches = Vec::with_capacity(max.min(1_024));
    for entry in range.take(max) {
        let (key, value) = entry.map_err(storage("read decisions"))?;
        batches.push(decode_batch(key.value(), value.value())?);
    }
    Ok(batches)
}

/// The last input sequence and the last decided one.
pub(crate) fn heads(txn: &ReadTransaction) -> Result<(u64, u64), LogError> {
    let inputs = txn
        .open_table(INPUTS)
        .map_err(storage("open table inputs"))?;
    let decisions = txn
        .open_table(DECISIONS)
        .map_err(storage("open table decisions"))?;
    let last_group = match groups::open(txn)? {
        Some(groups) => last_key(&groups, "read last input group")?,
        None => 0,
    };
    Ok((
        last_key(&inputs, "read last input sequence")?.max(last_group),
        last_key(&decisions, "read last decided sequence")?,
    ))
}

/// The newest readable checkpoint at or before `at_most`, from the table or, when `files` is
/// given, from the checkpoint files the log indexes; unreadable ones are skipped.
pub(crate) fn checkpoint_before(
    txn: &ReadTransaction,
    files: Option<&CheckpointDir>,
    at_most: u64,
) -> Result<Option<Checkpoint>, LogError> {
    let table = txn
        .open_table(CHECKPOINTS)
        .map_err(storage("open table checkpoints"))?;
    let mut candidates: BTreeMap<u64, Stored> = BTreeMap::new();
    for entry in table
        .range(..=at_most)
        .map_err(storage("read checkpoints"))?
    {
        let (key, _) = entry.map_err(storage("read checkpoint"))?;
        candidates.insert(key.value(), Stored::InTable);
    }
    if let Some(files) = files {
        for seq in indexed_files(txn, at_most)? {
            candidates.insert(seq, Stored::InFile(files));
        }
    }
    for (seq, stored) in candidates.into_iter().rev() {
        let decoded = match stored {
            Stored::InTable => table
                .get(seq)
                .map_err(storage("read checkpoint"))?
                .ok_or_else(|| LogError::Storage(format!("checkpoint {seq} vanished")))
                .and_then(|value| decode_checkpoint_record(seq, value.value())),
            Stored::InFile(files) => files
                .read(seq)
                .and_then(|record| decode_checkpoint_record(seq, &record)),
        };
        match decoded {
            Ok(checkpoint) => return Ok(Some(checkpoint)),
            Err(error) => tracing::warn!(
                seq,
                %error,
                "skipping a checkpoint this build cannot read; trying an older one"
            ),
        }
    }
    Ok(None)
}

/// Where a checkpoint candidate is stored.
enum Stored<'a> {
    InTable,
    InFile(&'a CheckpointDir),
}

/// The sequences of the checkpoint files the log indexes, at or before `at_most` (none in a
/// file written before checkpoint files existed, which lacks the table).
pub(crate) fn indexed_files(txn: &ReadTransaction, at_most: u64) -> Result<Vec<u64>, LogError> {
    let table = match txn.open_table(CHECKPOINT_FILES) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(error) => return Err(storage("open table checkpoint_files")(error)),
    };
    table
        .range(..=at_most)
        .map_err(storage("read checkpoint files"))?
        .map(|entry| entry.map(|(key, _)| key.value()))
        .collect::<Result<_, _>>()
        .map_err(storage("read checkpoint files"))
}

/// The first sequence each of `ids` was stored at, for those stored.
pub(crate) fn event_ids(
    txn: &ReadTransaction,
    ids: &[uuid::Uuid],
) -> Result<BTreeMap<uuid::Uuid, u64>, LogError> {
    let table = txn
        .open_table(EVENT_IDS)
        .map_err(storage("open table event_ids"))?;
    let mut found = BTreeMap::new();
    for id in ids {
        let seq = table
            .get(id.as_bytes())
            .map_err(storage("look up event id"))?;
        if let Some(seq) = seq {
            found.insert(*id, seq.value());
        }
    }
    Ok(found)
}

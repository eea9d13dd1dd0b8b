//! One write transaction's staging: the tables it writes and the heads they imply, and how each
//! kind of work is applied to them (appends deduplicated by id, fenced decisions); checkpoints,
//! their thinning and the retention window are in `checkpoints.rs` and `retention.rs`, and what
//! a cut writes to the archive before it removes anything in `archiving.rs`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use flotilla_core::wire::encode_envelope;
use redb::{ReadableTable, Table, WriteTransaction};

use super::super::archive::Archiver;
use super::super::groups::GroupBuilder;
use super::super::tables::{
    CHECKPOINT_FILES, CHECKPOINTS, DECISIONS, EVENT_IDS, INPUT_GROUPS, INPUTS, META, storage,
};
use super::{EncodedEvent, Outcome, Work, WriterLimits};
use crate::{Appended, LogError};

mod archiving;
mod checkpoints;
mod retention;

/// The tables of one write transaction and the heads they imply.
pub(super) struct Staging<'txn> {
    groups: Table<'txn, u64, &'static [u8]>,
    /// The inputs this transaction appends since it last stored a group; stored when full
    /// and before it commits.
    pub(super) group: GroupBuilder,
    event_ids: Table<'txn, &'static [u8; 16], u64>,
    decisions: Table<'txn, u64, &'static [u8]>,
    checkpoints: Table<'txn, u64, &'static [u8]>,
    checkpoint_files: Table<'txn, u64, u64>,
    meta: Table<'txn, &'static str, u64>,
    /// The time (ms since the epoch) of the log's base input: ids older than it may belong to
    /// inputs a retention window removed (`retention.rs`).
    forgotten_before: Option<u64>,
    /// The sequence the next new event gets.
    pub(super) next_seq: u64,
    /// The last input sequence with decisions, including this transaction's.
    pub(super) decided: u64,
    checkpoints_kept: usize,
    seek_spacing: u64,
    retain: Option<chrono::Duration>,
    /// Where a cut writes what it removes before removing it (`archiving.rs`).
    archive: Option<Arc<Archiver>>,
    pub(super) wrote: bool,
    /// The latest event time, including this transaction's events.
    pub(super) last_time: Option<DateTime<Utc>>,
}

impl<'txn> Staging<'txn> {
    pub(super) fn open(
        txn: &'txn WriteTransaction,
        limits: &WriterLimits,
        last_time: Option<DateTime<Utc>>,
        group: GroupBuilder,
        archive: Option<Arc<Archiver>>,
    ) -> Result<Self, LogError> {
        let inputs = txn
            .open_table(INPUTS)
            .map_err(storage("open table inputs"))?;
        let groups = txn
            .open_table(INPUT_GROUPS)
            .map_err(storage("open table input_groups"))?;
        let event_ids = txn
            .open_table(EVENT_IDS)
            .map_err(storage("open table event_ids"))?;
        let decisions = txn
            .open_table(DECISIONS)
            .map_err(storage("open table decisions"))?;
        let checkpoints = txn
            .open_table(CHECKPOINTS)
            .map_err(storage("open table checkpoints"))?;
        let checkpoint_files = txn
            .open_table(CHECKPOINT_FILES)
            .map_err(storage("open table checkpoint_files"))?;
        let meta = txn.open_table(META).map_err(storage("open table meta"))?;
        let forgotten_before = retention::forgotten_before(&meta)?;
        // Layout 1's inputs come first; groups follow them.
        let last_seq = last_key(&inputs, "read last input sequence")?
            .max(last_key(&groups, "read last input group")?);
        let decided = last_key(&decisions, "read last decided sequence")?;
        Ok(Self {
            groups,
            group,
            event_ids,
            decisions,
            checkpoints,
            checkpoint_files,
            meta,
            forgotten_before,
            next_seq: last_seq + 1,
            decided,
            checkpoints_kept: limits.checkpoints_kept,
            seek_spacing: limits.seek_spacing,
            retain: limits.retain,
            archive,
            wrote: false,
            last_time,
        })
    }

    /// Outer error: storage failed and the whole transaction must abort. Inner error: this
    /// request alone is refused and wrote nothing.
    pub(super) fn apply(&mut self, work: &mut Work) -> Result<Outcome, LogError> {
        match work {
            Work::Append(events) => match self.forgotten(events)? {
                Some(refusal) => Ok(Err(refusal)),
                None => self.append(events.as_mut_slice()).map(Ok),
            },
            Work::Decide {
                first_input_seq,
                last_input_seq,
                record,
            } => self.decide(*first_input_seq, *last_input_seq, record),
            Work::Checkpoint { seq, record } => self.checkpoint(*seq, record).map(Ok),
            Work::IndexCheckpointFile { seq, bytes } => self.index_file(*seq, *bytes),
        }
    }

    fn append(&mut self, events: &mut [EncodedEvent]) -> Result<Vec<Appended>, LogError> {
        let mut outcomes = Vec::with_capacity(events.len());
        for event in events {
            let Some(id) = event.id else {
                outcomes.push(self.store_as_is(&event.bytes)?);
                continue;
            };
            let seq = self.next_seq;
            // One search of the index both claims the id and finds an earlier claim: the index
            // sees this transaction's own inserts, so a repeat within the group (or within one
            // append) is caught exactly like one from an earlier commit.
            if let Some(earlier) = self.claim_id(&id, seq)? {
                outcomes.push(Appended {
                    seq: earlier,
                    duplicate: true,
                });
                continue;
            }
            self.settle_time(event)?;
            self.stage_input(seq, &event.bytes)?;
            self.next_seq += 1;
            self.wrote = true;
            outcomes.push(Appended {
                seq,
                duplicate: false,
            });
        }
        Ok(outcomes)
    }

    /// Indexes `id` at `seq`, unless it is already indexed: then the earlier entry is put back
    /// and its sequence returned. Duplicates are rare, so the common case costs one insert.
    fn claim_id(&mut self, id: &[u8; 16], seq: u64) -> Result<Option<u64>, LogError> {
        let earlier = self
            .event_ids
            .insert(id, seq)
            .map_err(storage("insert event id"))?
            .map(|guard| guard.value());
        if let Some(earlier) = earlier {
            self.event_ids
                .insert(id, earlier)
                .map_err(storage("restore event id"))?;
        }
        Ok(earlier)
    }

    /// Stores a record as it came, at the next sequence.
    fn store_as_is(&mut self, bytes: &[u8]) -> Result<Appended, LogError> {
        let seq = self.next_seq;
        self.stage_input(seq, bytes)?;
        self.next_seq += 1;
        self.wrote = true;
        Ok(Appended {
            seq,
            duplicate: false,
        })
    }

    /// Adds input `seq` to the group, storing the group when that fills it.
    fn stage_input(&mut self, seq: u64, bytes: &[u8]) -> Result<(), LogError> {
        self.group.push(seq, bytes)?;
        if self.group.is_full() {
            self.store_group()?;
        }
        Ok(())
    }

    /// Stores the inputs staged since the last group was stored as one group.
    pub(super) fn store_group(&mut self) -> Result<(), LogError> {
        if let Some((last, record)) = self.group.finish()? {
            self.groups
                .insert(last, record)
                .map_err(storage("insert input group"))?;
        }
        Ok(())
    }

    /// Raises an assigned time to the previous event's, re-encoding the event if it moved,
    /// and remembers the latest time.
    fn settle_time(&mut self, event: &mut EncodedEvent) -> Result<(), LogError> {
        let floor = self.last_time.filter(|floor| *floor > event.time);
        // A given time is the caller's to choose; later assigned times still never go below it.
        if let (Some(floor), Some(envelope)) = (floor, event.assigned.as_mut()) {
            envelope.time = floor;
            event.bytes = encode_envelope(envelope)?;
            event.time = floor;
        }
        self.last_time = Some(
            self.last_time
                .map_or(event.time, |last| last.max(event.time)),
        );
        Ok(())
    }

    fn decide(&mut self, first: u64, last: u64, record: &[u8]) -> Result<Outcome, LogError> {
        if first == 0 || first > last {
            return Ok(Err(LogError::Storage(format!(
                "decision batch covers inputs {first}..={last}: not a range of input sequences"
            ))));
        }
        let expected = first - 1;
        if self.decided != expected {
            return Ok(Err(LogError::Fenced {
                expected,
                actual: self.decided,
            }));
        }
        let last_seq = self.next_seq - 1;
        if last > last_seq {
            return Ok(Err(LogError::Storage(format!(
                "decision batch covers inputs {first}..={last}, but the log ends at {last_seq}"
            ))));
        }
        self.decisions
            .insert(last, record)
            .map_err(storage("insert decision batch"))?;
        self.decided = last;
        self.wrote = true;
        Ok(Ok(Vec::new()))
    }
}

/// The largest key of a u64-keyed table, 0 when it is empty.
pub(crate) fn last_key<T>(table: &T, context: &str) -> Result<u64, LogError>
where
    T: ReadableTable<u64, &'static [u8]>,
{
    let last = table.last().map_err(storage(context))?;
    Ok(last.map_or(0, |(key, _)| key.value()))
}

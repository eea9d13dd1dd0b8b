//! The writer's checkpoint work: storing a checkpoint in the table, indexing one written to
//! its own file, and keeping the ones [`super::super::thinning`] keeps; with a retention
//! window, the oldest kept checkpoint then becomes the log's base (`retention.rs`).

use std::collections::{BTreeMap, BTreeSet};

use redb::ReadableTable;

use super::{Outcome, Staging};
use crate::redb_log::tables::storage;
use crate::thinning;
use crate::{Appended, LogError};

impl Staging<'_> {
    pub(super) fn checkpoint(
        &mut self,
        seq: u64,
        record: &[u8],
    ) -> Result<Vec<Appended>, LogError> {
        self.checkpoints
            .insert(seq, record)
            .map_err(storage("insert checkpoint"))?;
        self.wrote = true;
        self.prune_checkpoints()?;
        self.retain()?;
        Ok(Vec::new())
    }

    pub(super) fn index_file(&mut self, seq: u64, bytes: u64) -> Result<Outcome, LogError> {
        let last_seq = self.next_seq - 1;
        if seq > last_seq {
            return Ok(Err(LogError::Storage(format!(
                "checkpoint at input {seq}, but the log ends at {last_seq}"
            ))));
        }
        self.checkpoint_files
            .insert(seq, bytes)
            .map_err(storage("index checkpoint file"))?;
        self.wrote = true;
        self.prune_checkpoints()?;
        self.retain()?;
        Ok(Ok(Vec::new()))
    }

    /// Keeps the checkpoints [`thinning`] keeps: the newest `checkpoints_kept`, and of
    /// the older ones fewer the older they are. Checkpoints in the table and in files count
    /// together; a pruned file's entry goes, and the file with it at the next sweep.
    fn prune_checkpoints(&mut self) -> Result<(), LogError> {
        let in_table = keys(&self.checkpoints, "list checkpoints")?;
        let file_bytes = self.checkpoint_file_bytes()?;
        let in_files: BTreeSet<u64> = file_bytes.keys().copied().collect();
        let all: BTreeSet<u64> = in_table.union(&in_files).copied().collect();
        // A checkpoint in the table (written by an older build, or to a log with no
        // directory) is thinned as a small one.
        let sized: BTreeMap<u64, u64> = all
            .iter()
            .map(|seq| (*seq, file_bytes.get(seq).copied().unwrap_or(0)))
            .collect();
        let needed = self.needed_by_window(&all)?;
        for key in thinning::pruned(&sized, self.checkpoints_kept, self.seek_spacing) {
            if needed.contains(&key) {
                continue;
            }
            if in_table.contains(&key) {
                self.checkpoints
                    .remove(key)
                    .map_err(storage("prune checkpoint"))?;
            }
            if in_files.contains(&key) {
                self.checkpoint_files
                    .remove(key)
                    .map_err(storage("prune checkpoint file"))?;
            }
        }
        Ok(())
    }
}

impl Staging<'_> {
    /// The checkpoints a retention window keeps from thinning: across the window, the first
    /// in each [`thinning::CHECKPOINTS_PER_WINDOW`]th of it (slots aligned in the log's time,
    /// so a checkpoint kept stays kept as the window moves), and the newest one older than
    /// the window, which becomes the log's next base. Thinned like the rest, the base would be
    /// whichever checkpoint thinning kept beyond the window, and the log would keep up to a
    /// whole span more than the window.
    fn needed_by_window(&self, all: &BTreeSet<u64>) -> Result<BTreeSet<u64>, LogError> {
        let mut needed = BTreeSet::new();
        let (Some(window), Some(newest)) = (self.retain, self.last_time) else {
            return Ok(needed);
        };
        let cutoff = newest - window;
        let slot_millis = (window / thinning::CHECKPOINTS_PER_WINDOW)
            .num_milliseconds()
            .max(1);
        let mut first_in_slot = BTreeMap::new();
        for seq in all.iter().rev() {
            let Some(time) = self.input_time(*seq)? else {
                continue;
            };
            if time <= cutoff {
                needed.insert(*seq);
                break;
            }
            let slot = time.timestamp_millis().div_euclid(slot_millis);
            first_in_slot.insert(slot, *seq);
        }
        needed.extend(first_in_slot.into_values());
        Ok(needed)
    }
}

/// Every key of a u64-keyed table, in order.
fn keys<T, V>(table: &T, context: &str) -> Result<BTreeSet<u64>, LogError>
where
    T: ReadableTable<u64, V>,
    V: redb::Value + 'static,
{
    table
        .iter()
        .map_err(storage(context))?
        .map(|entry| entry.map(|(key, _)| key.value()))
        .collect::<Result<_, _>>()
        .map_err(storage(context))
}

impl Staging<'_> {
    /// The checkpoints in files of their own, with their records' lengths.
    fn checkpoint_file_bytes(&self) -> Result<BTreeMap<u64, u64>, LogError> {
        let context = "list checkpoint files";
        self.checkpoint_files
            .iter()
            .map_err(storage(context))?
            .map(|entry| entry.map(|(key, bytes)| (key.value(), bytes.value())))
            .collect::<Result<_, _>>()
            .map_err(storage(context))
    }
}

/// Every checkpoint the log holds, in the table or in files, in order.
pub(super) fn all_checkpoints(staging: &Staging<'_>) -> Result<BTreeSet<u64>, LogError> {
    let in_table = keys(&staging.checkpoints, "list checkpoints")?;
    let in_files = keys(&staging.checkpoint_files, "list checkpoint files")?;
    Ok(in_table.union(&in_files).copied().collect())
}

//! A retention window (`RedbOptions::retain`): inputs older than the window leave the log, and
//! the oldest kept checkpoint becomes its base — the state every read starts from. The base is
//! the newest checkpoint whose input is at least the window older than the newest input and
//! ends a decision batch, so a replay from it re-decides whole batches. What goes: the input
//! groups wholly at or before the base, their event ids, the decision batches that end at or
//! before it, and the checkpoints before it. A group that straddles the base stays whole; reads
//! start after the base (`reads.rs`).
//!
//! Each transaction that indexes a checkpoint cuts at most [`CUT_GROUPS_MAX`] groups, so a
//! window shortened on a long log catches up over several checkpoints instead of holding the
//! writer for one long transaction.
//!
//! With an archive (`RedbOptions::archive`), what a cut removes is first written there; when
//! that fails nothing is removed and the base stays (`archiving.rs`).

use chrono::{DateTime, Utc};
use flotilla_core::wire::{InputOrigin, read_input};
use redb::ReadableTable;

use super::{EncodedEvent, Staging};
use crate::LogError;
use crate::redb_log::groups;
use crate::redb_log::tables::{BASE_SEQ_KEY, BASE_TIME_KEY, storage};

/// Most input groups one transaction removes (about a million inputs).
const CUT_GROUPS_MAX: usize = 1_024;

impl Staging<'_> {
    /// Moves the log's base to the newest checkpoint the window lets go of, and removes what
    /// lies before it; with an archive, only once what goes is written there
    /// (`archiving.rs`).
    pub(super) fn retain(&mut self) -> Result<(), LogError> {
        let (Some(window), Some(newest)) = (self.retain, self.last_time) else {
            return Ok(());
        };
        let stored = self.meta.get(BASE_SEQ_KEY).map_err(storage("read base"))?;
        let stored = stored.map_or(0, |value| value.value());
        let base = self.newest_base(stored, newest - window)?;
        if base == 0 {
            return Ok(());
        }
        let doomed = self.doomed_groups(base)?;
        if let Some(archive) = self.archive.clone() {
            // A cut that removes no whole group (the base fell inside one) waits: every
            // segment holds inputs, and the base moves with the next checkpoint.
            if doomed.is_empty() || !self.archive_cut(&archive, stored, base, &doomed)? {
                return Ok(());
            }
        }
        self.meta
            .insert(BASE_SEQ_KEY, base)
            .map_err(storage("write base"))?;
        if let Some(time) = self.input_time(base)? {
            let millis = u64::try_from(time.timestamp_millis()).unwrap_or(0);
            self.meta
                .insert(BASE_TIME_KEY, millis)
                .map_err(storage("write base time"))?;
            self.forgotten_before = Some(millis);
        }
        self.cut(base, &doomed)
    }

    /// The newest checkpoint after `base` whose input is at or before `cutoff` and ends a
    /// decision batch; `base` when there is none.
    fn newest_base(&self, mut base: u64, cutoff: DateTime<Utc>) -> Result<u64, LogError> {
        let mut candidates = super::checkpoints::all_checkpoints(self)?;
        candidates.retain(|seq| *seq > base);
        for seq in candidates {
            let old_enough = self.input_time(seq)?.is_some_and(|time| time <= cutoff);
            if !old_enough {
                break;
            }
            if self
                .decisions
                .get(seq)
                .map_err(storage("read batch"))?
                .is_some()
            {
                base = seq;
            }
        }
        Ok(base)
    }

    /// The keys of the input groups a cut to `base` removes: those wholly at or before it, at
    /// most [`CUT_GROUPS_MAX`].
    fn doomed_groups(&self, base: u64) -> Result<Vec<u64>, LogError> {
        self.groups
            .range(..=base)
            .map_err(storage("list input groups"))?
            .take(CUT_GROUPS_MAX)
            .map(|entry| entry.map(|(key, _)| key.value()))
            .collect::<Result<_, _>>()
            .map_err(storage("list input groups"))
    }

    /// Refuses an append holding an event whose id is older than the log's base and not in
    /// its index: it may repeat an input the window removed, whose id is gone with it, so
    /// storing it could fold one input twice. Ids are UUIDv7 (their first 48 bits are the
    /// publisher's clock in milliseconds); an id of another version is not judged. `None`:
    /// nothing to refuse.
    pub(super) fn forgotten(&self, events: &[EncodedEvent]) -> Result<Option<LogError>, LogError> {
        let Some(before) = self.forgotten_before else {
            return Ok(None);
        };
        for id in events.iter().filter_map(|event| event.id) {
            let uuid = uuid::Uuid::from_bytes(id);
            let old = uuid.get_version_num() == 7 && uuid.as_u64_pair().0 >> 16 < before;
            if old
                && self
                    .event_ids
                    .get(&id)
                    .map_err(storage("look up event id"))?
                    .is_none()
            {
                return Ok(Some(LogError::Refused(format!(
                    "event {uuid} is older than the oldest input the log keeps (its retention \
                     window removed what came before): it may repeat one of those, so it is \
                     not stored; publish it again with a new id"
                ))));
            }
        }
        Ok(None)
    }

    /// The time the log assigned input `seq`, if it holds it as an event.
    pub(super) fn input_time(&self, seq: u64) -> Result<Option<DateTime<Utc>>, LogError> {
        let Some(bytes) = groups::input(&self.groups, seq)? else {
            return Ok(None);
        };
        let origin = InputOrigin {
            seq,
            subject: None,
            log_time: None,
        };
        Ok(read_input(&bytes, &origin).event().map(|event| event.time))
    }

    /// Removes what lies at or before `base` (checkpoints: before it): the groups `doomed`
    /// with their event ids, and every decision batch ending there or before.
    fn cut(&mut self, base: u64, doomed: &[u64]) -> Result<(), LogError> {
        for last in doomed {
            self.forget_group(*last)?;
        }
        let batches: Vec<u64> = keys_up_to(&self.decisions, base)?;
        for key in batches {
            self.decisions
                .remove(key)
                .map_err(storage("remove decision batch"))?;
        }
        for key in keys_up_to(&self.checkpoints, base.saturating_sub(1))? {
            self.checkpoints
                .remove(key)
                .map_err(storage("remove checkpoint"))?;
        }
        let files: Vec<u64> = keys_up_to(&self.checkpoint_files, base.saturating_sub(1))?;
        for key in files {
            self.checkpoint_files
                .remove(key)
                .map_err(storage("remove checkpoint file"))?;
        }
        self.wrote = true;
        Ok(())
    }

    /// Removes the group stored under `last` and the event ids of its inputs.
    fn forget_group(&mut self, last: u64) -> Result<(), LogError> {
        let record = self
            .groups
            .remove(last)
            .map_err(storage("remove input group"))?;
        let Some(record) = record else {
            return Ok(());
        };
        let record = record.value().to_vec();
        let group = groups::decode(last, &record)?;
        for (seq, bytes) in group.inputs()? {
            let origin = InputOrigin {
                seq,
                subject: None,
                log_time: None,
            };
            if let Some(event) = read_input(bytes, &origin).event() {
                self.event_ids
                    .remove(event.id.as_bytes())
                    .map_err(storage("remove event id"))?;
            }
        }
        Ok(())
    }
}

/// The keys of a u64-keyed table at or before `last`.
pub(super) fn keys_up_to<T, V>(table: &T, last: u64) -> Result<Vec<u64>, LogError>
where
    T: ReadableTable<u64, V>,
    V: redb::Value + 'static,
{
    table
        .range(..=last)
        .map_err(storage("list keys"))?
        .map(|entry| entry.map(|(key, _)| key.value()))
        .collect::<Result<_, _>>()
        .map_err(storage("list keys"))
}

/// The base input's time from `meta`, if a window cut the log.
pub(super) fn forgotten_before<T>(meta: &T) -> Result<Option<u64>, LogError>
where
    T: ReadableTable<&'static str, u64>,
{
    let stored = meta.get(BASE_TIME_KEY).map_err(storage("read base time"))?;
    Ok(stored.map(|value| value.value()))
}

//! A cut with an archive: before the transaction removes anything, what it removes — the input
//! groups as they are stored, the decision batches up to the new base — is written to one
//! segment file in the archive, durably; and when that segment begins a chain (the archive is
//! new, or cuts were made without it since), the checkpoint the chain starts after is copied
//! there first. Any failure of the archive's own storage removes nothing: the cut is skipped
//! with a warning, and the next checkpoint tries again. A failure of the log's storage fails
//! the transaction, as it would without an archive.

use redb::ReadableTable;

use super::Staging;
use super::retention::keys_up_to;
use crate::LogError;
use crate::redb_log::archive::{ArchiveError, Archiver};
use crate::redb_log::groups;
use crate::redb_log::tables::storage;

impl Staging<'_> {
    /// Writes what a cut from base `from_base` to `to_base` removes — the groups `doomed` and
    /// the batches up to `to_base` — to the archive. `Ok(false)`: the archive could not be
    /// written, and nothing may be removed.
    pub(super) fn archive_cut(
        &mut self,
        archive: &Archiver,
        from_base: u64,
        to_base: u64,
        doomed: &[u64],
    ) -> Result<bool, LogError> {
        match self.write_segment(archive, from_base, to_base, doomed)? {
            Ok(()) => Ok(true),
            Err(error) => {
                tracing::warn!(
                    %error,
                    base = from_base,
                    wanted = to_base,
                    "the retention window's cut waits: nothing is removed from the log until \
                     what it removes is archived; {}",
                    error.advice()
                );
                Ok(false)
            }
        }
    }

    /// The segment's writing: outer error, the log's storage failed; inner, the archive's.
    fn write_segment(
        &mut self,
        archive: &Archiver,
        from_base: u64,
        to_base: u64,
        doomed: &[u64],
    ) -> Result<Result<(), ArchiveError>, LogError> {
        let (Some(&first_key), Some(&last)) = (doomed.first(), doomed.last()) else {
            return Ok(Ok(()));
        };
        let first = {
            let record = self
                .groups
                .get(first_key)
                .map_err(storage("read input group"))?;
            record.and_then(|record| groups::first_of(record.value()))
        };
        let Some(first) = first else {
            let what = format!("the input group stored under {first_key} has no header");
            return Ok(Err(ArchiveError::other(archive.dir(), what)));
        };
        match archive.needs_checkpoint(first, from_base) {
            Ok(false) => {}
            Ok(true) => match self.stored_checkpoint(archive, from_base)? {
                Ok(payload) => {
                    if let Err(error) = archive.write_checkpoint(from_base, &payload) {
                        return Ok(Err(error));
                    }
                }
                Err(error) => return Ok(Err(error)),
            },
            Err(error) => return Ok(Err(error)),
        }
        let mut segment = match archive.segment(first, last, from_base, to_base) {
            Ok(segment) => segment,
            Err(error) => return Ok(Err(error)),
        };
        for key in doomed {
            let stored = self.groups.get(*key).map_err(storage("read input group"))?;
            let Some(stored) = stored else {
                let what = format!("the input group stored under {key} vanished");
                return Ok(Err(ArchiveError::other(archive.dir(), what)));
            };
            let record = groups::compressed(*key, stored.value())?;
            if let Err(error) = segment.group(*key, &record) {
                return Ok(Err(error));
            }
        }
        for key in keys_up_to(&self.decisions, to_base)? {
            let stored = self
                .decisions
                .get(key)
                .map_err(storage("read decision batch"))?;
            if let Some(stored) = stored
                && let Err(error) = segment.batch(key, stored.value())
            {
                return Ok(Err(error));
            }
        }
        Ok(segment.finish())
    }

    /// The bytes of the log's checkpoint `seq` as it stores them: its table record, or its
    /// file's contents.
    fn stored_checkpoint(
        &self,
        archive: &Archiver,
        seq: u64,
    ) -> Result<Result<Vec<u8>, ArchiveError>, LogError> {
        let in_table = self
            .checkpoints
            .get(seq)
            .map_err(storage("read checkpoint"))?;
        if let Some(record) = in_table {
            return Ok(Ok(record.value().to_vec()));
        }
        let indexed = self
            .checkpoint_files
            .get(seq)
            .map_err(storage("read checkpoint files"))?
            .is_some();
        let file = archive.checkpoint_files().filter(|_| indexed);
        Ok(match file.map(|files| files.read_stored(seq)) {
            Some(Ok(bytes)) => Ok(bytes),
            Some(Err(error)) => Err(ArchiveError::other(
                archive.dir(),
                format!("copy the log's base checkpoint {seq}: {error}"),
            )),
            None => Err(ArchiveError::other(
                archive.dir(),
                format!(
                    "the archive begins after the log's base checkpoint {seq}, which the log \
                     does not hold"
                ),
            )),
        })
    }
}

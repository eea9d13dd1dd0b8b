//! Input groups (table layout 2): the inputs one write transaction appends, stored as one
//! record of up to [`GROUP_INPUTS_MAX`] inputs under the group's last sequence, where layout 1
//! stored each input under its own key.
//! A redb insert costs a walk from the root and page bookkeeping whatever its size, so a group
//! of a thousand inputs costs one insert instead of a thousand; deduplication still indexes
//! every event id on its own (`event_ids`).
//!
//! A group record, versioned by its first byte:
//!
//! ```text
//! [version: u8 = 1][first sequence: u64 LE][count: u32 LE]
//! count × ([length: u32 LE][framed envelope, as layout 1 stored it])
//! ```
//!
//! Its key is its last sequence, so the group holding sequence `s` is the first whose key is
//! `s` or more. Nothing here does IO.

use redb::{ReadOnlyTable, ReadableTable, TableError};

use super::tables::{INPUT_GROUPS, storage};
use crate::LogError;

/// The group record version this build writes and reads.
const GROUP_VERSION: u8 = 1;
/// The most inputs a group holds: a transaction appending more stores several groups. A read
/// of inputs from some sequence on decodes each group it touches whole, so an unbounded group
/// (a burst of a hundred thousand inputs in one commit) made every read of the fold's round
/// decode it all again, and folding fell to about a tenth of its speed.
pub(crate) const GROUP_INPUTS_MAX: u32 = 1_024;
/// The bytes past which a group holds no more inputs (it may end past them by one input).
pub(crate) const GROUP_BYTES_MAX: usize = 1 << 20;
/// Bytes before the first input: version, first sequence, count.
const HEADER: usize = 1 + 8 + 4;

/// The inputs of one transaction, as they are staged. The writer keeps one builder for its
/// life, so the buffer a group is built in keeps its capacity from commit to commit: grown
/// afresh for each group, it was copied into new memory the kernel had to zero (under 64
/// gateways the writer's samples in page zeroing fell from 11 % to 7 % with one buffer).
#[derive(Debug, Default)]
pub(crate) struct GroupBuilder {
    first: u64,
    count: u32,
    bytes: Vec<u8>,
}

impl GroupBuilder {
    /// Adds the input stored at `seq` (the one after the last added).
    pub(crate) fn push(&mut self, seq: u64, input: &[u8]) -> Result<(), LogError> {
        let length = u32::try_from(input.len())
            .map_err(|_| LogError::Storage(format!("input {seq} is larger than 4 GiB")))?;
        if self.count == 0 {
            self.first = seq;
            self.bytes.clear();
            self.bytes.push(GROUP_VERSION);
            self.bytes.extend_from_slice(&seq.to_le_bytes());
            self.bytes.extend_from_slice(&0u32.to_le_bytes());
        }
        self.count += 1;
        self.bytes.extend_from_slice(&length.to_le_bytes());
        self.bytes.extend_from_slice(input);
        Ok(())
    }

    /// Whether the group holds as many inputs or bytes as a group should: it is to be stored,
    /// and the next input begins another.
    pub(crate) fn is_full(&self) -> bool {
        self.count >= GROUP_INPUTS_MAX || self.bytes.len() >= GROUP_BYTES_MAX
    }

    /// The group's last sequence and its record, if it holds any input; the next push begins
    /// another group in the same buffer.
    pub(crate) fn finish(&mut self) -> Option<(u64, &[u8])> {
        if self.count == 0 {
            return None;
        }
        self.bytes[9..HEADER].copy_from_slice(&self.count.to_le_bytes());
        let last = self.first + u64::from(self.count) - 1;
        self.count = 0;
        Some((last, &self.bytes))
    }
}

/// The inputs of the group record stored under `last`, with their sequences, in order.
///
/// # Errors
/// [`LogError::Storage`] when the record is not a group this build reads, or its lengths do
/// not add up: the file was altered, since redb checksums what it stores.
pub(crate) fn decode(last: u64, record: &[u8]) -> Result<Vec<(u64, &[u8])>, LogError> {
    let corrupt =
        |what: &str| LogError::Storage(format!("input group stored under sequence {last}: {what}"));
    let header = record
        .get(..HEADER)
        .ok_or_else(|| corrupt("truncated header"))?;
    if header[0] != GROUP_VERSION {
        return Err(corrupt(&format!(
            "version {}, this build reads {GROUP_VERSION}",
            header[0]
        )));
    }
    let first = u64::from_le_bytes(header[1..9].try_into().map_err(|_| corrupt("header"))?);
    let count = u32::from_le_bytes(header[9..13].try_into().map_err(|_| corrupt("header"))?);
    if count == 0 || first.checked_add(u64::from(count) - 1) != Some(last) {
        return Err(corrupt(&format!("{count} inputs from {first}")));
    }
    let mut inputs = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(16_384));
    let mut rest = &record[HEADER..];
    for seq in first..=last {
        let (length, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| corrupt("truncated input length"))?;
        let length = usize::try_from(u32::from_le_bytes(*length)).unwrap_or(usize::MAX);
        if tail.len() < length {
            return Err(corrupt("truncated input"));
        }
        let (input, tail) = tail.split_at(length);
        inputs.push((seq, input));
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(corrupt("bytes after the last input"));
    }
    Ok(inputs)
}

/// The group table of a read transaction; `None` in a file of layout 1 opened read-only,
/// which has none.
pub(crate) fn open(
    txn: &redb::ReadTransaction,
) -> Result<Option<ReadOnlyTable<u64, &'static [u8]>>, LogError> {
    match txn.open_table(INPUT_GROUPS) {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(error) => Err(storage("open table input_groups")(error)),
    }
}

/// The stored bytes of input `seq` in the groups, if a group holds it.
pub(crate) fn input<T>(table: &T, seq: u64) -> Result<Option<Vec<u8>>, LogError>
where
    T: ReadableTable<u64, &'static [u8]>,
{
    let mut range = table.range(seq..).map_err(storage("read input groups"))?;
    let Some(entry) = range.next() else {
        return Ok(None);
    };
    let (key, value) = entry.map_err(storage("read input groups"))?;
    let inputs = decode(key.value(), value.value())?;
    Ok(inputs
        .into_iter()
        .find(|(at, _)| *at == seq)
        .map(|(_, bytes)| bytes.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_comes_back_as_built() {
        let mut group = GroupBuilder::default();
        assert_eq!(group.finish(), None);
        for (seq, input) in [(7, &b"seven"[..]), (8, b""), (9, b"nine")] {
            group.push(seq, input).expect("pushed");
        }
        let (last, record) = group.finish().expect("a group");
        let record = record.to_vec();
        assert_eq!(last, 9);
        // The stored form is part of the file layout: these bytes must keep decoding.
        let golden: &[u8] = &[
            1, 7, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, b's', b'e', b'v', b'e', b'n', 0, 0,
            0, 0, 4, 0, 0, 0, b'n', b'i', b'n', b'e',
        ];
        assert_eq!(record, golden);
        let inputs = decode(9, &record).expect("decodes");
        assert_eq!(
            inputs,
            vec![(7, &b"seven"[..]), (8, &b""[..]), (9, &b"nine"[..])]
        );
        // The builder starts afresh.
        group.push(10, b"ten").expect("pushed");
        assert_eq!(group.finish().map(|(last, _)| last), Some(10));
    }

    #[test]
    fn a_damaged_group_is_refused_with_its_key() {
        let mut group = GroupBuilder::default();
        group.push(1, b"one").expect("pushed");
        let record = group.finish().expect("a group").1.to_vec();
        for (key, bytes) in [
            (1, &record[..record.len() - 1]),
            (2, &record[..]),
            (1, &record[..5]),
            (1, &[2, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0][..]),
        ] {
            let error = decode(key, bytes).expect_err("refused");
            assert!(
                error.to_string().contains(&format!("sequence {key}")),
                "{error}"
            );
        }
        let mut longer = record.clone();
        longer.push(0);
        assert!(decode(1, &longer).is_err());
    }
}

//! Input groups (table layout 2 and on): the inputs one write transaction appends, stored as
//! one record of up to [`GROUP_INPUTS_MAX`] inputs under the group's last sequence, where layout
//! 1 stored each input under its own key.
//! A redb insert costs a walk from the root and page bookkeeping whatever its size, so a group
//! of a thousand inputs costs one insert instead of a thousand; deduplication still indexes
//! every event id on its own (`event_ids`).
//!
//! A group record, versioned by its first byte. Version 1 (layout 2) holds the inputs as they
//! are; version 2 (layout 3) compresses the same body with zstd, since steady heartbeats repeat
//! almost every byte of their neighbours (cluster names, sources, times to the second):
//!
//! ```text
//! version 1: [1][first sequence: u64 LE][count: u32 LE] body
//! version 2: [2][first sequence: u64 LE][count: u32 LE][body length: u32 LE] zstd(body)
//! body:      count × ([length: u32 LE][framed envelope, as layout 1 stored it])
//! ```
//!
//! Its key is its last sequence, so the group holding sequence `s` is the first whose key is
//! `s` or more. Nothing here does IO.

use std::borrow::Cow;

use redb::{ReadOnlyTable, ReadableTable, TableError};

use super::tables::{INPUT_GROUPS, storage};
use crate::LogError;

/// The plain group record (layout 2), read only.
const GROUP_PLAIN: u8 = 1;
/// The compressed group record this build writes.
const GROUP_COMPRESSED: u8 = 2;
/// The most inputs a group holds: a transaction appending more stores several groups. A read
/// of inputs from some sequence on decodes each group it touches whole, so an unbounded group
/// (a burst of a hundred thousand inputs in one commit) made every read of the fold's round
/// decode it all again, and folding fell to about a tenth of its speed.
pub(crate) const GROUP_INPUTS_MAX: u32 = 1_024;
/// The body bytes past which a group holds no more inputs (it may end past them by one input).
pub(crate) const GROUP_BYTES_MAX: usize = 1 << 20;
/// The largest body a compressed group may claim: a full group plus one input of the largest
/// size an event may have, with room to spare. A larger claim is a damaged record, refused
/// before anything is allocated for it.
const BODY_BYTES_MAX: usize = 4 * GROUP_BYTES_MAX;
/// zstd's level: the fastest of its standard levels, since the writer compresses on the
/// append path; heartbeats compress about as well at higher levels.
const LEVEL: i32 = 1;
/// Bytes before the first input of a plain group: version, first sequence, count.
const PLAIN_HEADER: usize = 1 + 8 + 4;
/// Bytes before the compressed body: the plain header and the body's length.
const COMPRESSED_HEADER: usize = PLAIN_HEADER + 4;

/// The inputs of one transaction, as they are staged. The writer keeps one builder for its
/// life, so the buffers a group is built in keep their capacity from commit to commit: grown
/// afresh for each group, they were copied into new memory the kernel had to zero (under 64
/// gateways the writer's samples in page zeroing fell from 11 % to 7 % with one buffer).
#[derive(Default)]
pub(crate) struct GroupBuilder {
    first: u64,
    count: u32,
    body: Vec<u8>,
    record: Vec<u8>,
    compressor: Option<zstd::bulk::Compressor<'static>>,
}

impl std::fmt::Debug for GroupBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupBuilder")
            .field("first", &self.first)
            .field("count", &self.count)
            .field("body", &self.body.len())
            .finish_non_exhaustive()
    }
}

impl GroupBuilder {
    /// Adds the input stored at `seq` (the one after the last added).
    pub(crate) fn push(&mut self, seq: u64, input: &[u8]) -> Result<(), LogError> {
        let length = u32::try_from(input.len())
            .map_err(|_| LogError::Storage(format!("input {seq} is larger than 4 GiB")))?;
        if self.count == 0 {
            self.first = seq;
            self.body.clear();
        }
        self.count += 1;
        self.body.extend_from_slice(&length.to_le_bytes());
        self.body.extend_from_slice(input);
        Ok(())
    }

    /// Whether the group holds as many inputs or bytes as a group should: it is to be stored,
    /// and the next input begins another.
    pub(crate) fn is_full(&self) -> bool {
        self.count >= GROUP_INPUTS_MAX || self.body.len() >= GROUP_BYTES_MAX
    }

    /// The group's last sequence and its record, if it holds any input; the next push begins
    /// another group.
    pub(crate) fn finish(&mut self) -> Result<Option<(u64, &[u8])>, LogError> {
        if self.count == 0 {
            return Ok(None);
        }
        let last = self.first + u64::from(self.count) - 1;
        let failed = |error: std::io::Error| {
            LogError::Storage(format!(
                "compress the input group ending at {last}: {error}"
            ))
        };
        let body_length = u32::try_from(self.body.len())
            .map_err(|_| LogError::Storage(format!("input group ending at {last} over 4 GiB")))?;
        let compressor = match &mut self.compressor {
            Some(compressor) => compressor,
            None => self
                .compressor
                .insert(zstd::bulk::Compressor::new(LEVEL).map_err(failed)?),
        };
        self.record.clear();
        self.record.push(GROUP_COMPRESSED);
        self.record.extend_from_slice(&self.first.to_le_bytes());
        self.record.extend_from_slice(&self.count.to_le_bytes());
        self.record.extend_from_slice(&body_length.to_le_bytes());
        self.record
            .reserve(zstd::zstd_safe::compress_bound(self.body.len()));
        let compressed = compressor.compress(&self.body).map_err(failed)?;
        self.record.extend_from_slice(&compressed);
        self.count = 0;
        Ok(Some((last, &self.record)))
    }
}

/// One decoded group: its first sequence and its body, borrowed from the record (plain) or
/// decompressed (compressed).
#[derive(Debug)]
pub(crate) struct Group<'a> {
    first: u64,
    last: u64,
    body: Cow<'a, [u8]>,
}

impl Group<'_> {
    /// The inputs with their sequences, in order.
    ///
    /// # Errors
    /// [`LogError::Storage`] when the lengths do not add up.
    pub(crate) fn inputs(&self) -> Result<Vec<(u64, &[u8])>, LogError> {
        let corrupt = |what: &str| corrupt(self.last, what);
        let count = self.last + 1 - self.first;
        let mut inputs = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(16_384));
        let mut rest = &self.body[..];
        for seq in self.first..=self.last {
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
}

fn corrupt(last: u64, what: &str) -> LogError {
    LogError::Storage(format!("input group stored under sequence {last}: {what}"))
}

/// The group record stored under `last`, plain or compressed.
///
/// # Errors
/// [`LogError::Storage`] when the record is not a group this build reads, or its header or
/// compressed body do not hold together: the file was altered, since redb checksums what it
/// stores.
pub(crate) fn decode(last: u64, record: &[u8]) -> Result<Group<'_>, LogError> {
    let corrupt = |what: &str| corrupt(last, what);
    let header = record
        .get(..PLAIN_HEADER)
        .ok_or_else(|| corrupt("truncated header"))?;
    let first = u64::from_le_bytes(header[1..9].try_into().map_err(|_| corrupt("header"))?);
    let count = u32::from_le_bytes(header[9..13].try_into().map_err(|_| corrupt("header"))?);
    if count == 0 || first.checked_add(u64::from(count) - 1) != Some(last) {
        return Err(corrupt(&format!("{count} inputs from {first}")));
    }
    let body = match header[0] {
        GROUP_PLAIN => Cow::Borrowed(&record[PLAIN_HEADER..]),
        GROUP_COMPRESSED => Cow::Owned(decompress(record, &corrupt)?),
        version => {
            return Err(corrupt(&format!(
                "version {version}, this build reads {GROUP_PLAIN} and {GROUP_COMPRESSED}"
            )));
        }
    };
    Ok(Group { first, last, body })
}

/// The body of a compressed group record.
fn decompress(record: &[u8], corrupt: &dyn Fn(&str) -> LogError) -> Result<Vec<u8>, LogError> {
    let length = record
        .get(PLAIN_HEADER..COMPRESSED_HEADER)
        .and_then(|bytes| bytes.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| corrupt("truncated header"))?;
    let length = usize::try_from(length).unwrap_or(usize::MAX);
    if length > BODY_BYTES_MAX {
        return Err(corrupt(&format!("claims a body of {length} bytes")));
    }
    let body = with_decompressor(|decompressor| {
        decompressor.decompress(&record[COMPRESSED_HEADER..], length)
    })
    .map_err(|error| corrupt(&format!("does not decompress: {error}")))?;
    if body.len() != length {
        return Err(corrupt(&format!(
            "decompresses to {} bytes, not the {length} its header says",
            body.len()
        )));
    }
    Ok(body)
}

thread_local! {
    /// One decompression context per reading thread: a read decompresses a group per thousand
    /// inputs, and setting up a fresh context cost as much as a tenth of a replay's reading.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `work` with this thread's decompression context, made on first use.
fn with_decompressor<T>(
    work: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(std::io::Error::other)?;
        let decompressor = match slot.as_mut() {
            Some(decompressor) => decompressor,
            None => slot.insert(zstd::bulk::Decompressor::new()?),
        };
        work(decompressor)
    })
}

/// The first sequence a group record holds, read from its header alone (nothing is
/// decompressed); `None` when the record is too short to have one.
pub(crate) fn first_of(record: &[u8]) -> Option<u64> {
    let bytes = record.get(1..9)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// A group record in the compressed form this build writes: as it is when it already is,
/// compressed from its inputs when it is a plain one (layout 2).
///
/// # Errors
/// When the record does not decode, or compressing it fails.
pub(crate) fn compressed(last: u64, record: &[u8]) -> Result<Cow<'_, [u8]>, LogError> {
    if record.first() != Some(&GROUP_PLAIN) {
        return Ok(Cow::Borrowed(record));
    }
    let group = decode(last, record)?;
    let mut builder = GroupBuilder::default();
    for (seq, input) in group.inputs()? {
        builder.push(seq, input)?;
    }
    let (_, rebuilt) = builder
        .finish()?
        .ok_or_else(|| corrupt(last, "no inputs"))?;
    Ok(Cow::Owned(rebuilt.to_vec()))
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
    let group = decode(key.value(), value.value())?;
    Ok(group
        .inputs()?
        .into_iter()
        .find(|(at, _)| *at == seq)
        .map(|(_, bytes)| bytes.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs_of(last: u64, record: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let group = decode(last, record).expect("decodes");
        let inputs = group.inputs().expect("inputs");
        inputs
            .into_iter()
            .map(|(seq, b)| (seq, b.to_vec()))
            .collect()
    }

    fn seven_eight_nine() -> Vec<(u64, Vec<u8>)> {
        vec![
            (7, b"seven".to_vec()),
            (8, Vec::new()),
            (9, b"nine".to_vec()),
        ]
    }

    #[test]
    fn a_group_comes_back_as_built() {
        let mut group = GroupBuilder::default();
        assert_eq!(group.finish().expect("finished"), None);
        for (seq, input) in [(7, &b"seven"[..]), (8, b""), (9, b"nine")] {
            group.push(seq, input).expect("pushed");
        }
        let (last, record) = group.finish().expect("finished").expect("a group");
        let record = record.to_vec();
        assert_eq!(last, 9);
        assert_eq!(record[0], GROUP_COMPRESSED);
        assert_eq!(inputs_of(9, &record), seven_eight_nine());
        // The builder starts afresh.
        group.push(10, b"ten").expect("pushed");
        let next = group
            .finish()
            .expect("finished")
            .map(|(last, r)| (last, r.to_vec()));
        let (last, record) = next.expect("a group");
        assert_eq!(inputs_of(last, &record), vec![(10, b"ten".to_vec())]);
    }

    #[test]
    fn stored_groups_of_every_version_keep_decoding() {
        // The stored forms are part of the file layout: these bytes must keep decoding.
        let plain: &[u8] = &[
            1, 7, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, b's', b'e', b'v', b'e', b'n', 0, 0,
            0, 0, 4, 0, 0, 0, b'n', b'i', b'n', b'e',
        ];
        assert_eq!(inputs_of(9, plain), seven_eight_nine());
        let compressed: &[u8] = &[
            2, 7, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 21, 0, 0, 0, 40, 181, 47, 253, 32, 21, 169, 0,
            0, 5, 0, 0, 0, 115, 101, 118, 101, 110, 0, 0, 0, 0, 4, 0, 0, 0, 110, 105, 110, 101,
        ];
        assert_eq!(inputs_of(9, compressed), seven_eight_nine());
    }

    #[test]
    fn heartbeats_like_inputs_shrink() {
        let mut group = GroupBuilder::default();
        let mut raw = 0;
        for seq in 1..=1_000u64 {
            let input = format!(
                "heartbeat member-{:05} at 2026-11-29T15:51:{:02}Z from agent/member-{:05}",
                seq % 997,
                seq % 60,
                seq % 997
            );
            raw += input.len();
            group.push(seq, input.as_bytes()).expect("pushed");
        }
        let (_, record) = group.finish().expect("finished").expect("a group");
        assert!(record.len() * 3 < raw, "{} of {raw}", record.len());
    }

    #[test]
    fn a_damaged_group_is_refused_with_its_key() {
        let mut group = GroupBuilder::default();
        group.push(1, b"one").expect("pushed");
        let finished = group.finish().expect("finished").expect("a group");
        let record = finished.1.to_vec();
        let mut huge = record.clone();
        huge[13..17].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut short = record.clone();
        short[13..17].copy_from_slice(&2u32.to_le_bytes());
        for (key, bytes) in [
            (1, &record[..record.len() - 1]),
            (2, &record[..]),
            (1, &record[..5]),
            (1, &[3, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0][..]),
            (1, &huge[..]),
            (1, &short[..]),
        ] {
            let error = decode(key, bytes)
                .and_then(|group| group.inputs().map(|_| ()))
                .expect_err("refused");
            assert!(
                error.to_string().contains(&format!("sequence {key}")),
                "{error}"
            );
        }
        let plain = [
            1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, b'o', b'n', b'e', 0,
        ];
        assert!(
            decode(1, &plain)
                .and_then(|g| g.inputs().map(|_| ()))
                .is_err()
        );
    }
}

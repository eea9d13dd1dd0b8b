//! The archive's two kinds of file, as bytes. Nothing here does IO.
//!
//! Both begin with a fixed header: the magic `flotilla-archive`, a kind byte, the format
//! version, the range, the lengths of what follows, and a SHA-256 over everything else in the
//! file — the bytes after the header, then the header's bytes before the hash — so that any
//! byte flipped anywhere in the file is found when it is read.
//!
//! ```text
//! segment:    ["flotilla-archive"]['S'][version: u16 LE]
//!             [first input: u64][last input: u64][from base: u64][to base: u64]
//!             [groups: u32][batches: u32][groups bytes: u64][batches bytes: u64]
//!             [batches bytes uncompressed: u64][SHA-256: 32 bytes]
//!             groups × ([key: u64][length: u32][group record, as the log stores it])
//!             zstd(batches × ([key: u64][length: u32][decision batch, as the log stores it]))
//! checkpoint: ["flotilla-archive"]['C'][version: u16 LE][sequence: u64][payload bytes: u64]
//!             [SHA-256: 32 bytes] payload (the checkpoint file's bytes, or the table's record)
//! ```
//!
//! Numbers are little-endian. A segment holds the input groups one cut removed, under the
//! keys the log stored them under (each group's last sequence), from `first input` to `last
//! input` without a gap, and the decision batches it removed, covering inputs `from base + 1`
//! to `to base` (none when the cut did not move the base).

use std::ops::Range;

use sha2::{Digest, Sha256};

use crate::redb_log::groups;

/// The bytes every archive file starts with.
pub(crate) const MAGIC: &[u8; 16] = b"flotilla-archive";
/// The format version this build writes and reads.
pub(crate) const FORMAT_VERSION: u16 = 1;
/// The kind byte of a segment.
const KIND_SEGMENT: u8 = b'S';
/// The kind byte of a checkpoint.
const KIND_CHECKPOINT: u8 = b'C';
/// Bytes of a SHA-256.
const HASH: usize = 32;
/// Bytes before a header's own fields: magic, kind, version.
const PREFIX: usize = 16 + 1 + 2;
/// Bytes of a segment's header.
pub(crate) const SEGMENT_HEADER: usize = PREFIX + 4 * 8 + 2 * 4 + 3 * 8 + HASH;
/// Bytes of a checkpoint file's header.
pub(crate) const CHECKPOINT_HEADER: usize = PREFIX + 2 * 8 + HASH;
/// Bytes one stored record's key and length take.
const ENTRY_HEAD: usize = 8 + 4;
/// The largest uncompressed batches section a segment may claim (a cut's batches of a very
/// long log, with room to spare): a larger claim is refused before anything is allocated.
const BATCHES_BYTES_MAX: u64 = 1 << 34;

/// What a segment's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegmentHeader {
    /// The first input its groups hold.
    pub(crate) first: u64,
    /// The last input its groups hold.
    pub(crate) last: u64,
    /// The log's base before the cut: its batches cover the inputs after it.
    pub(crate) from_base: u64,
    /// The log's base after the cut: its batches cover the inputs up to it.
    pub(crate) to_base: u64,
    /// How many groups.
    pub(crate) groups: u32,
    /// How many decision batches.
    pub(crate) batches: u32,
    /// Bytes of the groups section.
    pub(crate) groups_bytes: u64,
    /// Bytes of the batches section, compressed.
    pub(crate) batches_bytes: u64,
    /// Bytes of the batches section, uncompressed.
    pub(crate) batches_raw_bytes: u64,
    /// The SHA-256 of the file (module docs).
    pub(crate) sha256: [u8; HASH],
}

impl SegmentHeader {
    /// The header's bytes.
    pub(crate) fn encode(&self) -> [u8; SEGMENT_HEADER] {
        let mut bytes = [0; SEGMENT_HEADER];
        let fields = self.fields();
        bytes[..fields.len()].copy_from_slice(&fields);
        bytes[fields.len()..].copy_from_slice(&self.sha256);
        bytes
    }

    /// The header's bytes before its hash.
    pub(crate) fn fields(&self) -> Vec<u8> {
        let mut bytes = prefix(KIND_SEGMENT);
        for number in [self.first, self.last, self.from_base, self.to_base] {
            bytes.extend_from_slice(&number.to_le_bytes());
        }
        bytes.extend_from_slice(&self.groups.to_le_bytes());
        bytes.extend_from_slice(&self.batches.to_le_bytes());
        for number in [
            self.groups_bytes,
            self.batches_bytes,
            self.batches_raw_bytes,
        ] {
            bytes.extend_from_slice(&number.to_le_bytes());
        }
        bytes
    }

    /// Reads a segment's header from the first bytes of its file.
    ///
    /// # Errors
    /// What does not hold together: not an archive segment, a newer format version, a range
    /// that is not one.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut reader = Fields::new(bytes, KIND_SEGMENT, SEGMENT_HEADER, "segment")?;
        let header = SegmentHeader {
            first: reader.u64(),
            last: reader.u64(),
            from_base: reader.u64(),
            to_base: reader.u64(),
            groups: reader.u32(),
            batches: reader.u32(),
            groups_bytes: reader.u64(),
            batches_bytes: reader.u64(),
            batches_raw_bytes: reader.u64(),
            sha256: reader.hash(),
        };
        if header.first == 0 || header.first > header.last || header.groups == 0 {
            return Err(format!(
                "inputs {}..={} in {} groups: not a range",
                header.first, header.last, header.groups
            ));
        }
        if header.from_base > header.to_base {
            return Err(format!(
                "a base moved back from {} to {}",
                header.from_base, header.to_base
            ));
        }
        Ok(header)
    }

    /// The file's size.
    pub(crate) fn file_bytes(&self) -> u64 {
        SEGMENT_HEADER as u64 + self.groups_bytes + self.batches_bytes
    }

    /// The file name it is stored under.
    pub(crate) fn file_name(&self) -> String {
        segment_name(self.first, self.last)
    }
}

/// The file name of the segment holding inputs `first..=last`.
pub(crate) fn segment_name(first: u64, last: u64) -> String {
    format!("{first:020}-{last:020}.segment")
}

/// The file name of the checkpoint of `seq`.
pub(crate) fn checkpoint_name(seq: u64) -> String {
    format!("{seq:020}.checkpoint")
}

/// The first and last input a segment's file name says it holds.
pub(crate) fn parse_segment_name(name: &str) -> Option<(u64, u64)> {
    let (first, last) = name.strip_suffix(".segment")?.split_once('-')?;
    Some((first.parse().ok()?, last.parse().ok()?))
}

/// The sequence a checkpoint's file name says it is of.
pub(crate) fn parse_checkpoint_name(name: &str) -> Option<u64> {
    name.strip_suffix(".checkpoint")?.parse().ok()
}

/// Appends one stored record as a segment entry: its key, its length, its bytes.
pub(crate) fn entry(out: &mut Vec<u8>, key: u64, record: &[u8]) -> Result<(), String> {
    let length = u32::try_from(record.len())
        .map_err(|_| format!("the record stored under {key} is larger than 4 GiB"))?;
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(record);
    Ok(())
}

/// The SHA-256 of a file whose header's fields are `fields` and whose body is `body`.
pub(crate) fn file_hash(body_hasher: Sha256, fields: &[u8]) -> [u8; HASH] {
    let mut hasher = body_hasher;
    hasher.update(fields);
    hasher.finalize().into()
}

/// A segment read whole and verified: its header, its bytes, where each group is, and its
/// decision batches uncompressed.
#[derive(Debug)]
pub(crate) struct Segment {
    pub(crate) header: SegmentHeader,
    bytes: Vec<u8>,
    /// Each group's key (its last input) and where its record is in `bytes`, in order.
    groups: Vec<(u64, Range<usize>)>,
    batches_section: Vec<u8>,
    /// Each batch's key (its last input) and where its record is in `batches_section`.
    batches: Vec<(u64, Range<usize>)>,
}

impl Segment {
    /// Verifies a segment's file and indexes it.
    ///
    /// # Errors
    /// What does not hold together: the header, the lengths, the SHA-256 (a flipped byte), the
    /// groups' sequences, the batches' keys.
    pub(crate) fn parse(bytes: Vec<u8>) -> Result<Self, String> {
        let header = SegmentHeader::decode(&bytes)?;
        if bytes.len() as u64 != header.file_bytes() {
            return Err(format!(
                "{} bytes, where its header says {}",
                bytes.len(),
                header.file_bytes()
            ));
        }
        let mut hasher = Sha256::new();
        hasher.update(&bytes[SEGMENT_HEADER..]);
        if file_hash(hasher, &header.fields()) != header.sha256 {
            return Err("its SHA-256 does not match its contents: the file is damaged".into());
        }
        let groups_end = SEGMENT_HEADER + usize::try_from(header.groups_bytes).unwrap_or(0);
        let groups = entries(&bytes, SEGMENT_HEADER..groups_end, header.groups)?;
        check_groups(&header, &bytes, &groups)?;
        if header.batches_raw_bytes > BATCHES_BYTES_MAX {
            return Err(format!(
                "claims {} bytes of decision batches",
                header.batches_raw_bytes
            ));
        }
        let raw = usize::try_from(header.batches_raw_bytes).unwrap_or(usize::MAX);
        let batches_section = zstd::bulk::decompress(&bytes[groups_end..], raw)
            .map_err(|error| format!("its decision batches do not decompress: {error}"))?;
        let batches = entries(&batches_section, 0..batches_section.len(), header.batches)?;
        check_batches(&header, &batches)?;
        Ok(Segment {
            header,
            bytes,
            groups,
            batches_section,
            batches,
        })
    }

    /// Its groups: key and record, in order.
    pub(crate) fn groups(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.groups
            .iter()
            .map(|(key, range)| (*key, &self.bytes[range.clone()]))
    }

    /// Its decision batches: key (the batch's last input) and record, in order.
    pub(crate) fn batches(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.batches
            .iter()
            .map(|(key, range)| (*key, &self.batches_section[range.clone()]))
    }
}

/// The `count` entries in `bytes[within]`, which they must fill exactly.
fn entries(
    bytes: &[u8],
    within: Range<usize>,
    count: u32,
) -> Result<Vec<(u64, Range<usize>)>, String> {
    let end = within.end;
    let mut at = within.start;
    let mut found = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(1 << 16));
    for _ in 0..count {
        let head = bytes
            .get(at..at + ENTRY_HEAD)
            .filter(|_| at + ENTRY_HEAD <= end)
            .ok_or("an entry is cut short")?;
        let key = u64::from_le_bytes(head[..8].try_into().map_err(|_| "an entry's key")?);
        let length = u32::from_le_bytes(head[8..].try_into().map_err(|_| "an entry's length")?);
        let start = at + ENTRY_HEAD;
        let stop = start + usize::try_from(length).unwrap_or(usize::MAX);
        if stop > end {
            return Err(format!("the record stored under {key} is cut short"));
        }
        found.push((key, start..stop));
        at = stop;
    }
    if at != end {
        return Err(format!("{} bytes after the last entry", end - at));
    }
    Ok(found)
}

/// The groups must hold the header's inputs, one after the other.
fn check_groups(
    header: &SegmentHeader,
    bytes: &[u8],
    groups: &[(u64, Range<usize>)],
) -> Result<(), String> {
    let mut next = header.first;
    for (key, range) in groups {
        let first = groups::first_of(&bytes[range.clone()])
            .ok_or_else(|| format!("the group stored under {key} has no header"))?;
        if first != next || *key < first {
            return Err(format!(
                "the group stored under {key} begins at input {first}, not {next}"
            ));
        }
        next = key + 1;
    }
    if next != header.last + 1 {
        return Err(format!(
            "its groups end at input {}, its header says {}",
            next - 1,
            header.last
        ));
    }
    Ok(())
}

/// The batches must be in order, within the bases, and the last must end at the new base.
fn check_batches(header: &SegmentHeader, batches: &[(u64, Range<usize>)]) -> Result<(), String> {
    let mut previous = header.from_base;
    for (key, _) in batches {
        if *key <= previous || *key > header.to_base {
            return Err(format!(
                "a decision batch ends at input {key}, outside {}..={} or out of order",
                previous + 1,
                header.to_base
            ));
        }
        previous = *key;
    }
    if previous != header.to_base {
        return Err(format!(
            "its decision batches end at input {previous}, not at the base {}",
            header.to_base
        ));
    }
    Ok(())
}

/// A checkpoint file's header and payload, verified.
///
/// # Errors
/// What does not hold together, as for a segment.
pub(crate) fn parse_checkpoint(bytes: &[u8]) -> Result<(u64, &[u8]), String> {
    let mut reader = Fields::new(bytes, KIND_CHECKPOINT, CHECKPOINT_HEADER, "checkpoint")?;
    let seq = reader.u64();
    let length = reader.u64();
    let sha256 = reader.hash();
    let payload = &bytes[CHECKPOINT_HEADER..];
    if payload.len() as u64 != length {
        return Err(format!(
            "a payload of {} bytes, where its header says {length}",
            payload.len()
        ));
    }
    let mut hasher = Sha256::new();
    hasher.update(payload);
    if file_hash(hasher, &checkpoint_fields(seq, length)) != sha256 {
        return Err("its SHA-256 does not match its contents: the file is damaged".into());
    }
    Ok((seq, payload))
}

/// A checkpoint file's bytes: header and payload.
pub(crate) fn checkpoint_file(seq: u64, payload: &[u8]) -> Vec<u8> {
    let fields = checkpoint_fields(seq, payload.len() as u64);
    let mut hasher = Sha256::new();
    hasher.update(payload);
    let sha256 = file_hash(hasher, &fields);
    let mut bytes = Vec::with_capacity(CHECKPOINT_HEADER + payload.len());
    bytes.extend_from_slice(&fields);
    bytes.extend_from_slice(&sha256);
    bytes.extend_from_slice(payload);
    bytes
}

fn checkpoint_fields(seq: u64, length: u64) -> Vec<u8> {
    let mut bytes = prefix(KIND_CHECKPOINT);
    bytes.extend_from_slice(&seq.to_le_bytes());
    bytes.extend_from_slice(&length.to_le_bytes());
    bytes
}

fn prefix(kind: u8) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(SEGMENT_HEADER);
    bytes.extend_from_slice(MAGIC);
    bytes.push(kind);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes
}

/// Reads a header's fields in order, once its prefix is checked.
struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8], kind: u8, size: usize, what: &str) -> Result<Self, String> {
        let header = bytes
            .get(..size)
            .ok_or_else(|| format!("shorter than an archive {what}'s header"))?;
        if &header[..16] != MAGIC || header[16] != kind {
            return Err(format!(
                "not an archive {what} (no `flotilla-archive` header)"
            ));
        }
        let version = u16::from_le_bytes([header[17], header[18]]);
        if version != FORMAT_VERSION {
            return Err(format!(
                "archive format version {version}; this build reads {FORMAT_VERSION}"
            ));
        }
        Ok(Self {
            bytes: header,
            at: PREFIX,
        })
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        out.copy_from_slice(&self.bytes[self.at..self.at + N]);
        self.at += N;
        out
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    fn hash(&mut self) -> [u8; HASH] {
        self.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redb_log::groups::GroupBuilder;

    /// A segment of inputs 1..=5 in two groups and one batch, as the writer lays it out.
    fn segment() -> Vec<u8> {
        let mut body = Vec::new();
        let mut builder = GroupBuilder::default();
        for (from, to) in [(1, 3), (4, 5)] {
            for seq in from..=to {
                builder.push(seq, format!("input {seq}").as_bytes()).ok();
            }
            let (last, record) = builder.finish().ok().flatten().expect("a group");
            entry(&mut body, last, record).ok();
        }
        let groups_bytes = body.len() as u64;
        let mut batches = Vec::new();
        entry(&mut batches, 5, b"batch 1..=5").ok();
        let compressed = zstd::bulk::compress(&batches, 1).expect("compressed");
        body.extend_from_slice(&compressed);
        let mut header = SegmentHeader {
            first: 1,
            last: 5,
            from_base: 0,
            to_base: 5,
            groups: 2,
            batches: 1,
            groups_bytes,
            batches_bytes: compressed.len() as u64,
            batches_raw_bytes: batches.len() as u64,
            sha256: [0; HASH],
        };
        let mut hasher = Sha256::new();
        hasher.update(&body);
        header.sha256 = file_hash(hasher, &header.fields());
        let mut file = header.encode().to_vec();
        file.extend_from_slice(&body);
        file
    }

    #[test]
    fn a_segment_reads_back_and_any_flipped_byte_is_found() {
        let file = segment();
        let parsed = Segment::parse(file.clone()).expect("parsed");
        assert_eq!(parsed.header.file_name(), segment_name(1, 5));
        assert_eq!(parse_segment_name(&segment_name(1, 5)), Some((1, 5)));
        let keys: Vec<u64> = parsed.groups().map(|(key, _)| key).collect();
        assert_eq!(keys, [3, 5]);
        let batches: Vec<_> = parsed.batches().collect();
        assert_eq!(batches, [(5, &b"batch 1..=5"[..])]);
        for at in 0..file.len() {
            let mut damaged = file.clone();
            damaged[at] ^= 0x10;
            assert!(
                Segment::parse(damaged).is_err(),
                "byte {at} flipped unnoticed"
            );
        }
        assert!(Segment::parse(file[..file.len() - 1].to_vec()).is_err());
    }

    #[test]
    fn a_checkpoint_file_reads_back_and_a_flipped_byte_is_found() {
        let file = checkpoint_file(700, b"the state at 700");
        assert_eq!(parse_checkpoint(&file), Ok((700, &b"the state at 700"[..])));
        for at in 0..file.len() {
            let mut damaged = file.clone();
            damaged[at] ^= 0x01;
            assert!(parse_checkpoint(&damaged).is_err(), "byte {at} flipped");
        }
        assert_eq!(parse_checkpoint_name(&checkpoint_name(700)), Some(700));
    }

    #[test]
    fn a_newer_format_is_refused_by_name() {
        let mut file = segment();
        file[17] = 2;
        let error = Segment::parse(file).expect_err("refused");
        assert!(error.contains("version 2"), "{error}");
    }
}

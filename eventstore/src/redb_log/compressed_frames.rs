//! A compressed checkpoint's rest is a run of zstd frames of at most [`FRAME_BYTES`] each,
//! followed by a zstd *skippable* frame that indexes them: what each frame takes compressed
//! and decompressed. Any zstd reader decompresses the run as one stream (concatenated frames
//! are one content, a skippable frame is passed over), so a file reads whole without the
//! index; with it, the frames are decompressed side by side into their places in the record.
//!
//! ```text
//! [magic: 0x184D2A5F LE][size: u32 LE]
//! [per frame: compressed length u64 LE, decompressed length u64 LE][count: u32 LE]["FLZFIDX1"]
//! ```

use std::ops::Range;

/// Bytes of the record each frame holds at most: a large fleet's state is cut into frames
/// that decompress on their own threads.
pub(crate) const FRAME_BYTES: u64 = 32 << 20;

/// The first bytes of the index's skippable frame (zstd reserves 0x184D2A50–5F for these).
const SKIPPABLE_MAGIC: u32 = 0x184D_2A5F;
/// The index's last bytes.
const FOOTER: &[u8; 8] = b"FLZFIDX1";
/// Bytes of one frame's entry.
const ENTRY_BYTES: usize = 16;

/// One frame: where it lies in the compressed bytes and in the decompressed ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) compressed: Range<usize>,
    pub(crate) raw: Range<usize>,
}

/// The index frame of frames of these (compressed, decompressed) lengths.
pub(crate) fn index(frames: &[(u64, u64)]) -> Vec<u8> {
    let body = frames.len() * ENTRY_BYTES + 4 + FOOTER.len();
    let mut bytes = Vec::with_capacity(8 + body);
    bytes.extend_from_slice(&SKIPPABLE_MAGIC.to_le_bytes());
    bytes.extend_from_slice(&u32::try_from(body).unwrap_or(u32::MAX).to_le_bytes());
    for (compressed, raw) in frames {
        bytes.extend_from_slice(&compressed.to_le_bytes());
        bytes.extend_from_slice(&raw.to_le_bytes());
    }
    let count = u32::try_from(frames.len()).unwrap_or(u32::MAX);
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes.extend_from_slice(FOOTER);
    bytes
}

/// The frames `rest` (everything after the preamble) holds, when it ends with an index whose
/// frames cover exactly it and `raw` decompressed bytes; `None` otherwise (a file written
/// before the index, or one the index does not describe, which then reads as one stream).
pub(crate) fn frames(rest: &[u8], raw: usize) -> Option<Vec<Frame>> {
    let footer_at = rest.len().checked_sub(FOOTER.len())?;
    if &rest[footer_at..] != FOOTER {
        return None;
    }
    let count = usize::try_from(word(rest, footer_at.checked_sub(4)?, 4)?).ok()?;
    let entries_at = footer_at
        .checked_sub(4)?
        .checked_sub(count.checked_mul(ENTRY_BYTES)?)?;
    let index_at = entries_at.checked_sub(8)?;
    let body = rest.len() - entries_at;
    if word(rest, index_at, 4)? != u64::from(SKIPPABLE_MAGIC)
        || word(rest, index_at + 4, 4)? != body as u64
    {
        return None;
    }
    let mut found = Vec::with_capacity(count);
    let (mut compressed_at, mut raw_at) = (0_usize, 0_usize);
    for entry in 0..count {
        let at = entries_at + entry * ENTRY_BYTES;
        let compressed = usize::try_from(word(rest, at, 8)?).ok()?;
        let decompressed = usize::try_from(word(rest, at + 8, 8)?).ok()?;
        let frame = Frame {
            compressed: compressed_at..compressed_at.checked_add(compressed)?,
            raw: raw_at..raw_at.checked_add(decompressed)?,
        };
        (compressed_at, raw_at) = (frame.compressed.end, frame.raw.end);
        found.push(frame);
    }
    (compressed_at == index_at && raw_at == raw).then_some(found)
}

/// The little-endian number of `width` bytes at `at`.
fn word(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    let slice = bytes.get(at..at.checked_add(width)?)?;
    Some(
        slice
            .iter()
            .rev()
            .fold(0_u64, |n, byte| (n << 8) | u64::from(*byte)),
    )
}

/// Decompresses `frames` of `rest` into `out` (their decompressed bytes, in order), frames
/// side by side on up to the machine's parallelism in threads.
///
/// # Errors
/// A frame that does not decompress, or not to the length its entry gives.
pub(crate) fn decompress(rest: &[u8], frames: &[Frame], out: &mut [u8]) -> Result<(), String> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(frames.len())
        .max(1);
    let mut jobs: Vec<Vec<(&[u8], &mut [u8])>> = (0..threads).map(|_| Vec::new()).collect();
    let mut left = out;
    for (number, frame) in frames.iter().enumerate() {
        let (into, after) = std::mem::take(&mut left).split_at_mut(frame.raw.len());
        left = after;
        let from = rest
            .get(frame.compressed.clone())
            .ok_or("a frame past the file's end")?;
        jobs[number % threads].push((from, into));
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|job| {
                scope.spawn(move || job.into_iter().try_for_each(|(from, into)| one(from, into)))
            })
            .collect();
        handles.into_iter().try_for_each(|handle| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    })
}

/// One frame into exactly its place.
fn one(from: &[u8], into: &mut [u8]) -> Result<(), String> {
    let expected = into.len();
    let written = zstd::bulk::decompress_to_buffer(from, into)
        .map_err(|error| format!("a frame does not decompress: {error}"))?;
    if written != expected {
        return Err(format!(
            "a frame of {written} bytes, not the {expected} its index gives"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_reads_back_only_where_it_describes_the_frames() {
        let frame = |bytes: &[u8]| zstd::bulk::compress(bytes, 1).unwrap_or_default();
        let (a, b) = (frame(&[1; 1000]), frame(&[2; 500]));
        let mut rest = a.clone();
        rest.extend_from_slice(&b);
        rest.extend_from_slice(&index(&[(a.len() as u64, 1000), (b.len() as u64, 500)]));
        let found = frames(&rest, 1500).unwrap_or_default();
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].raw, 1000..1500);
        let mut out = vec![0; 1500];
        assert_eq!(decompress(&rest, &found, &mut out), Ok(()));
        assert!(out[..1000].iter().all(|&x| x == 1) && out[1000..].iter().all(|&x| x == 2));
        // Any zstd reader reads the frames as one stream, passing over the index.
        assert_eq!(zstd::bulk::decompress(&rest, 1500).ok(), Some(out));
        // Another length, a cut file, a lying entry: no index.
        assert_eq!(frames(&rest, 1499), None);
        assert_eq!(frames(&rest[1..], 1500), None);
        let mut lying = rest.clone();
        let entry_at = rest.len() - 8 - 4 - 2 * ENTRY_BYTES;
        lying[entry_at] ^= 1;
        assert_eq!(frames(&lying, 1500), None);
        assert_eq!(frames(&a, 1000), None);
    }
}

//! A checkpoint file's compressed form. A checkpoint of a large fleet repeats itself (cluster
//! names, labels, conditions): zstd at its fastest level stores it in about a tenth. The record
//! is compressed as it is written, so it is never held whole; its head — the frame and the
//! state's hash, which the encoder fills in last by seeking back — stays in memory and is
//! written uncompressed at the file's start when the file is finished:
//!
//! ```text
//! [magic: "FLZCKPT1"][head length: u32 LE][record length: u64 LE][head, padded to HEAD_MAX]
//! zstd(the record after its head)
//! ```
//!
//! The compressed rest is cut into frames with an index after them
//! ([`super::compressed_frames`]), which a reader decompresses side by side; a file without the
//! index (written before it) reads as one stream.
//!
//! A file without the magic is a record stored as it is (written before compression).

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

use super::compressed_frames::{self, FRAME_BYTES};

/// The bytes a compressed checkpoint file starts with.
const MAGIC: &[u8; 8] = b"FLZCKPT1";
/// The record's first bytes kept uncompressed: room for the frame and the hash, which the
/// encoder writes back into once the state has passed.
const HEAD_MAX: usize = 256;
/// Bytes before the compressed rest.
const PREAMBLE: usize = MAGIC.len() + 4 + 8 + HEAD_MAX;
/// zstd's level: its fastest standard level (checkpoints are written every few seconds at
/// fleet scale; a higher level saves little more on this data).
const LEVEL: i32 = 1;

/// Writes a record compressed, as [`Write`] and the two seeks the checkpoint encoder makes:
/// back into the head, and to the end.
pub(crate) struct CompressingWriter {
    head: Vec<u8>,
    /// Where a write into the head goes, after a seek back into it.
    patch: Option<usize>,
    /// The record's length so far.
    length: u64,
    /// The frame being written (`None` only while one is finished and the next started).
    rest: Option<zstd::stream::write::Encoder<'static, BufWriter<File>>>,
    /// Record bytes in the frame being written.
    frame_raw: u64,
    /// Record bytes a frame holds at most.
    frame_bytes: u64,
    /// Where the frame being written starts in the file.
    frame_at: u64,
    /// The finished frames' compressed and decompressed lengths.
    frames: Vec<(u64, u64)>,
}

impl std::fmt::Debug for CompressingWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressingWriter")
            .field("length", &self.length)
            .finish_non_exhaustive()
    }
}

impl CompressingWriter {
    /// Starts the compressed file in `file`, reserving its preamble.
    pub(crate) fn new(file: BufWriter<File>) -> io::Result<Self> {
        Self::with_frames_of(file, FRAME_BYTES)
    }

    /// [`Self::new`] with frames of at most `frame_bytes` record bytes.
    fn with_frames_of(mut file: BufWriter<File>, frame_bytes: u64) -> io::Result<Self> {
        file.write_all(&[0; PREAMBLE])?;
        Ok(Self {
            head: Vec::with_capacity(HEAD_MAX),
            patch: None,
            length: 0,
            rest: Some(zstd::stream::write::Encoder::new(file, LEVEL)?),
            frame_raw: 0,
            frame_bytes: frame_bytes.max(1),
            frame_at: PREAMBLE as u64,
            frames: Vec::new(),
        })
    }

    /// Finishes the frame being written and records its lengths; returns the file after it.
    fn end_frame(&mut self) -> io::Result<BufWriter<File>> {
        let encoder = self.rest.take().ok_or_else(|| {
            io::Error::other("a compressed checkpoint's frame was lost to an earlier failure")
        })?;
        let mut file = encoder.finish()?;
        let end = file.stream_position()?;
        self.frames.push((end - self.frame_at, self.frame_raw));
        self.frame_at = end;
        self.frame_raw = 0;
        Ok(file)
    }

    /// Writes into the frame being written, which a new one follows once it holds its
    /// bytes.
    fn write_framed(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.frame_raw >= self.frame_bytes {
            let file = self.end_frame()?;
            self.rest = Some(zstd::stream::write::Encoder::new(file, LEVEL)?);
        }
        let room = usize::try_from(self.frame_bytes - self.frame_raw).unwrap_or(usize::MAX);
        let frame = self.rest.as_mut().ok_or_else(|| {
            io::Error::other("a compressed checkpoint's frame was lost to an earlier failure")
        })?;
        let written = frame.write(&bytes[..room.min(bytes.len())])?;
        self.frame_raw += written as u64;
        Ok(written)
    }

    /// Ends the compressed stream and writes the preamble: the file, complete, not yet synced.
    pub(crate) fn finish(mut self) -> io::Result<File> {
        let mut file = self.end_frame()?;
        file.write_all(&compressed_frames::index(&self.frames))?;
        let mut file = file.into_inner().map_err(|error| error.into_error())?;
        let mut preamble = Vec::with_capacity(PREAMBLE);
        preamble.extend_from_slice(MAGIC);
        let head_length = u32::try_from(self.head.len()).unwrap_or(u32::MAX);
        preamble.extend_from_slice(&head_length.to_le_bytes());
        preamble.extend_from_slice(&self.length.to_le_bytes());
        preamble.extend_from_slice(&self.head);
        preamble.resize(PREAMBLE, 0);
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&preamble)?;
        Ok(file)
    }
}

impl Write for CompressingWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(at) = self.patch {
            let end = at + bytes.len();
            let target = self.head.get_mut(at..end).ok_or_else(|| {
                io::Error::new(io::ErrorKind::Unsupported, "a write back past the head")
            })?;
            target.copy_from_slice(bytes);
            self.patch = Some(end);
            return Ok(bytes.len());
        }
        let room = HEAD_MAX.saturating_sub(self.head.len());
        let written = if self.length < HEAD_MAX as u64 && room > 0 {
            let taken = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..taken]);
            taken
        } else {
            self.write_framed(bytes)?
        };
        self.length += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.rest.as_mut() {
            Some(frame) => frame.flush(),
            None => Ok(()),
        }
    }
}

impl Seek for CompressingWriter {
    fn seek(&mut self, position: SeekFrom) -> io::Result<u64> {
        match position {
            SeekFrom::Start(at) if at < self.head.len() as u64 => {
                let at = usize::try_from(at).unwrap_or(usize::MAX);
                self.patch = Some(at);
                Ok(at as u64)
            }
            SeekFrom::End(0) => {
                self.patch = None;
                Ok(self.length)
            }
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a compressed checkpoint seeks only back into its head, or to its end",
            )),
        }
    }
}

/// The record a checkpoint file holds: decompressed, or as it is in a file written before
/// compression.
///
/// # Errors
/// A description of what does not hold together.
pub(crate) fn record(file: Vec<u8>) -> Result<Vec<u8>, String> {
    if !file.starts_with(MAGIC) {
        return Ok(file);
    }
    let preamble = file.get(..PREAMBLE).ok_or("a truncated preamble")?;
    let number = |range: std::ops::Range<usize>| -> u64 {
        preamble[range]
            .iter()
            .rev()
            .fold(0u64, |n, byte| (n << 8) | u64::from(*byte))
    };
    let head_length = usize::try_from(number(8..12)).unwrap_or(usize::MAX);
    let length = usize::try_from(number(12..20)).map_err(|e| e.to_string())?;
    if length > flotilla_core::codec::CHECKPOINT_BYTES_MAX {
        return Err(format!(
            "a record of {length} bytes, over the {} a checkpoint may have",
            flotilla_core::codec::CHECKPOINT_BYTES_MAX
        ));
    }
    if head_length > HEAD_MAX || head_length > length {
        return Err(format!(
            "a head of {head_length} bytes in a record of {length}"
        ));
    }
    // Decompressed straight into the record: at a million clusters the rest is 650 MB, which
    // a copy would hold twice.
    let mut record = vec![0; length];
    record[..head_length].copy_from_slice(&preamble[20..20 + head_length]);
    let rest = &file[PREAMBLE..];
    let into = &mut record[head_length..];
    let written = match compressed_frames::frames(rest, into.len()) {
        Some(frames) if frames.len() > 1 => {
            compressed_frames::decompress(rest, &frames, into)?;
            into.len()
        }
        _ => zstd::bulk::decompress_to_buffer(rest, into)
            .map_err(|error| format!("does not decompress: {error}"))?,
    };
    if head_length + written != length {
        return Err(format!(
            "{} bytes, not the {length} it says",
            head_length + written
        ));
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `record` as the checkpoint encoder does: all of it, then back into the head,
    /// then to the end.
    fn written(record: &[u8], patch_at: usize, patch: &[u8]) -> io::Result<Vec<u8>> {
        written_in_frames(record, patch_at, patch, FRAME_BYTES)
    }

    fn written_in_frames(
        record: &[u8],
        patch_at: usize,
        patch: &[u8],
        frame_bytes: u64,
    ) -> io::Result<Vec<u8>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("c");
        let file = BufWriter::new(File::create(&path)?);
        let mut writer = CompressingWriter::with_frames_of(file, frame_bytes)?;
        for chunk in record.chunks(100) {
            writer.write_all(chunk)?;
        }
        writer.seek(SeekFrom::Start(patch_at as u64))?;
        writer.write_all(patch)?;
        assert_eq!(writer.seek(SeekFrom::End(0))?, record.len() as u64);
        drop(writer.finish()?);
        std::fs::read(path)
    }

    #[test]
    fn a_record_comes_back_whole_with_its_head_patched_and_the_rest_compressed() -> io::Result<()> {
        let mut record: Vec<u8> = (0..200u8).collect();
        record.extend(b"member-cluster-0001 healthy ".repeat(4_000));
        let file = written(&record, 120, b"HASH")?;
        assert!(
            file.len() * 10 < record.len(),
            "{} of {}",
            file.len(),
            record.len()
        );
        record[120..124].copy_from_slice(b"HASH");
        assert_eq!(record_of(file), Ok(record));
        // Shorter than the head: all of it stays uncompressed.
        let short = written(b"tiny", 0, b"T")?;
        assert_eq!(record_of(short), Ok(b"Tiny".to_vec()));
        // A file written before compression reads as it is.
        assert_eq!(record_of(b"plain".to_vec()), Ok(b"plain".to_vec()));
        Ok(())
    }

    #[test]
    fn a_record_in_many_frames_comes_back_whole_with_or_without_its_index() -> io::Result<()> {
        let mut record: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        record.extend(b"member-cluster-0002 joined ".repeat(3_000));
        let file = written_in_frames(&record, 10, b"HASH", 7_000)?;
        record[10..14].copy_from_slice(b"HASH");
        let rest = &file[PREAMBLE..];
        let frames = compressed_frames::frames(rest, record.len() - HEAD_MAX);
        assert_eq!(
            frames.map(|f| f.len()),
            Some(12),
            "81,000 bytes in 7,000-byte frames"
        );
        assert_eq!(record_of(file.clone()), Ok(record.clone()));
        // Without the index (as a reader takes a damaged one), one stream of the same bytes.
        let mut unindexed = file.clone();
        let last = unindexed.len() - 1;
        unindexed[last] ^= 1;
        assert_eq!(record_of(unindexed), Ok(record));
        Ok(())
    }

    #[test]
    fn a_damaged_compressed_file_is_refused() -> io::Result<()> {
        let record = b"x".repeat(10_000);
        let file = written(&record, 0, b"y")?;
        let mut cut = file.clone();
        cut.truncate(file.len() - 3);
        assert!(record_of(cut).is_err());
        let mut longer = file.clone();
        longer[12] = longer[12].wrapping_add(1);
        assert!(record_of(longer).is_err());
        assert!(record_of(file[..30].to_vec()).is_err());
        Ok(())
    }

    fn record_of(file: Vec<u8>) -> Result<Vec<u8>, String> {
        record(file)
    }
}

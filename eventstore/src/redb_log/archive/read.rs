//! Reading through the archive: [`ArchivedLog`] composes an archive's segments and the live
//! log into one [`LogReader`] that starts where the archive starts.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use uuid::Uuid;

use super::format::{Segment, SegmentHeader, checkpoint_name, parse_checkpoint};
use super::{Listing, list};
use crate::redb_log::file_reads::{RedbFile, held, read_held};
use crate::redb_log::tables::decode_checkpoint_record;
use crate::redb_log::{READ_MAX, compressed_file, decode_batch, groups, reads};
use crate::{Checkpoint, DecisionBatch, LogError, LogReader, StoredEvent};

/// Segments kept decoded: a replay reads a span of decision batches, then the inputs they
/// cover, so the same few segments are read twice in turn.
const LOADED_MAX: usize = 8;
/// Looks at the archive and the log before a cut that is committing between the two is taken
/// for a gap.
const VIEW_TRIES: u32 = 3;

/// The archive in a directory and the live log after it, read as one log: inputs, decision
/// batches and checkpoints come from the archive's segments up to where the log's own begin,
/// and [`LogReader::base_seq`] is where the archive starts — 0 when it holds the log from its
/// first input, or the checkpoint it holds a copy of. Everything else (the last input, waiting,
/// event ids) is the live log's.
///
/// It reads a chain of committed segments that reaches the live log: segments a cut wrote
/// without committing are left out, and an archive that stops before the log's retained
/// inputs (cuts were made without it since) is refused by [`ArchivedLog::open`]. An archive
/// that holds nothing yet reads as the live log alone.
pub struct ArchivedLog<L> {
    dir: PathBuf,
    live: L,
    view: Mutex<Arc<View>>,
    loaded: Mutex<VecDeque<Arc<Segment>>>,
}

impl<L> std::fmt::Debug for ArchivedLog<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArchivedLog")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// The chain of segments reads go through, as it was when the live log's base was
/// `live_base`.
#[derive(Debug, Default)]
struct View {
    live_base: u64,
    /// Oldest first; empty when the archive holds nothing the log lacks.
    chain: Vec<SegmentHeader>,
    /// Where reads start: the first segment's base before its cut.
    start: u64,
    /// The archive's checkpoints from `start` on.
    checkpoints: BTreeSet<u64>,
}

impl View {
    /// The segment holding input `seq`.
    fn holding(&self, seq: u64) -> Option<&SegmentHeader> {
        let at = self.chain.partition_point(|header| header.last < seq);
        self.chain.get(at).filter(|header| header.first <= seq)
    }

    /// The last input whose decisions the archive holds.
    fn decided_to(&self) -> u64 {
        self.chain.last().map_or(0, |header| header.to_base)
    }
}

impl<L: RedbFile> ArchivedLog<L> {
    /// The archive in `dir` in front of the log `live`.
    ///
    /// # Errors
    /// When the directory cannot be read, or its newest segments do not reach the live log's
    /// retained inputs, or its chain starts after a checkpoint it does not hold.
    pub async fn open(dir: &Path, live: L) -> Result<Self, LogError> {
        let view = build(dir, &live).await?;
        Ok(Self {
            dir: dir.to_path_buf(),
            live,
            view: Mutex::new(Arc::new(view)),
            loaded: Mutex::new(VecDeque::new()),
        })
    }

    /// The live log.
    pub fn live(&self) -> &L {
        &self.live
    }

    /// The chain as it is now: built again when the live log's base moved.
    async fn current(&self) -> Result<Arc<View>, LogError> {
        let base = self.live.base_seq().await?;
        let view = Arc::clone(&self.view.lock().unwrap_or_else(PoisonError::into_inner));
        if view.live_base == base {
            return Ok(view);
        }
        self.refresh().await
    }

    /// The chain built again: a hub cut the log since it was built.
    async fn refresh(&self) -> Result<Arc<View>, LogError> {
        let fresh = Arc::new(build(&self.dir, &self.live).await?);
        *self.view.lock().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&fresh);
        Ok(fresh)
    }

    /// The segment `header` names, read and verified (or kept from an earlier read).
    async fn load(&self, header: &SegmentHeader) -> Result<Arc<Segment>, LogError> {
        {
            let loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(segment) = loaded.iter().find(|s| s.header == *header) {
                return Ok(Arc::clone(segment));
            }
        }
        let path = self.dir.join(header.file_name());
        let read = tokio::task::spawn_blocking(move || {
            let refused = |error: &dyn std::fmt::Display| {
                LogError::Storage(format!("archive segment {}: {error}", path.display()))
            };
            let bytes = std::fs::read(&path).map_err(|e| refused(&e))?;
            Segment::parse(bytes).map_err(|e| refused(&e))
        });
        let segment = Arc::new(read.await.map_err(|error| {
            LogError::Storage(format!("read an archive segment: task failed: {error}"))
        })??);
        if segment.header != *header {
            return Err(LogError::Storage(format!(
                "archive segment {} changed while it was read",
                header.file_name()
            )));
        }
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if loaded.len() >= LOADED_MAX {
            loaded.pop_front();
        }
        loaded.push_back(Arc::clone(&segment));
        Ok(segment)
    }

    /// Up to `max` inputs from `from` on, from the segment holding `from` or the live log.
    async fn page(&self, view: &View, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        let Some(header) = view.holding(from) else {
            return read_held(&self.live, from, max).await;
        };
        let segment = self.load(header).await?;
        let decode = tokio::task::spawn_blocking(move || inputs_of(&segment, from, max));
        decode.await.map_err(|error| {
            LogError::Storage(format!("decode an archive segment: task failed: {error}"))
        })?
    }

    /// The archive's checkpoint `seq`, read and verified.
    async fn archived_checkpoint(&self, seq: u64) -> Result<Checkpoint, LogError> {
        let path = self.dir.join(checkpoint_name(seq));
        let read = tokio::task::spawn_blocking(move || {
            let refused = |error: &dyn std::fmt::Display| {
                LogError::Storage(format!("archive checkpoint {}: {error}", path.display()))
            };
            let bytes = std::fs::read(&path).map_err(|e| refused(&e))?;
            let (stored, payload) = parse_checkpoint(&bytes).map_err(|e| refused(&e))?;
            if stored != seq {
                return Err(refused(&format!("its header says checkpoint {stored}")));
            }
            let record = compressed_file::record(payload.to_vec()).map_err(|e| refused(&e))?;
            decode_checkpoint_record(seq, &record)
        });
        read.await.map_err(|error| {
            LogError::Storage(format!("read an archive checkpoint: task failed: {error}"))
        })?
    }
}

/// Looks at the archive and the live log, a few times if a cut commits in between.
async fn build<L: RedbFile>(dir: &Path, live: &L) -> Result<View, LogError> {
    let mut tries = 0;
    loop {
        tries += 1;
        let at = dir.to_path_buf();
        let listing = tokio::task::spawn_blocking(move || list(&at))
            .await
            .map_err(|error| LogError::Storage(format!("list the archive: {error}")))??;
        let (base, first_grouped) = held(live).await?;
        match chain(dir, &listing, base, first_grouped) {
            Err(_) if tries < VIEW_TRIES => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            done => return done,
        }
    }
}

/// The chain of committed segments that ends where the live log's inputs (from
/// `first_grouped`, its first grouped input) and decisions (after `base`) begin.
fn chain(
    dir: &Path,
    listing: &Listing,
    base: u64,
    first_grouped: Option<u64>,
) -> Result<View, LogError> {
    // A segment whose inputs the log still holds was written by a cut that did not commit.
    let committed: Vec<&SegmentHeader> = listing
        .segments
        .iter()
        .filter(|header| first_grouped.is_none_or(|first| header.last < first))
        .collect();
    let Some(newest) = committed.last() else {
        return Ok(View {
            live_base: base,
            start: base,
            ..View::default()
        });
    };
    let reaches = newest.to_base == base && first_grouped.is_none_or(|f| newest.last + 1 == f);
    if !reaches {
        return Err(LogError::Storage(format!(
            "the archive in {} ends at input {} (decisions to {}), but the log's base is {}: \
             what lies between was removed without the archive; replay without --archive \
             reads the log from its base",
            dir.display(),
            newest.last,
            newest.to_base,
            base
        )));
    }
    let mut chain = vec![**newest];
    for header in committed.iter().rev().skip(1) {
        let next = chain[chain.len() - 1];
        if header.last + 1 != next.first || header.to_base != next.from_base {
            break;
        }
        chain.push(**header);
    }
    chain.reverse();
    let start = chain[0].from_base;
    let checkpoints: BTreeSet<u64> = listing
        .checkpoints
        .iter()
        .map(|checkpoint| checkpoint.seq)
        .filter(|seq| *seq >= start)
        .collect();
    if start > 0 && !checkpoints.contains(&start) {
        return Err(LogError::Storage(format!(
            "the archive in {} starts after input {start}, but holds no checkpoint there ({})",
            dir.display(),
            checkpoint_name(start)
        )));
    }
    Ok(View {
        live_base: base,
        chain,
        start,
        checkpoints,
    })
}

/// Up to `max` inputs of `segment` from `from` on.
fn inputs_of(segment: &Segment, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
    let mut inputs = Vec::new();
    for (key, record) in segment.groups().filter(|(key, _)| *key >= from) {
        let group = groups::decode(key, record)?;
        let room = max - inputs.len();
        let wanted = group.inputs()?.into_iter().filter(|(seq, _)| *seq >= from);
        inputs.extend(
            wanted
                .take(room)
                .map(|(seq, bytes)| reads::stored(seq, bytes)),
        );
        if inputs.len() >= max {
            break;
        }
    }
    Ok(inputs)
}

impl<L: RedbFile> LogReader for ArchivedLog<L> {
    async fn read(&self, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        let max = max.min(READ_MAX);
        let mut view = self.current().await?;
        let mut refreshed = false;
        let mut next = from.max(view.start + 1);
        let mut inputs: Vec<StoredEvent> = Vec::new();
        while inputs.len() < max {
            let page = self.page(&view, next, max - inputs.len()).await?;
            let gap = page.first().is_some_and(|input| input.seq > next);
            if gap && !refreshed {
                // A cut that did not move the base (one of several catching up) removed
                // inputs after the chain's last since it was built: its segment has them.
                view = self.refresh().await?;
                refreshed = true;
                continue;
            }
            if page.first().is_none_or(|input| input.seq != next) {
                // A gap: handed on as it is, for the fold to name, when nothing came before it.
                if inputs.is_empty() {
                    inputs = page;
                }
                break;
            }
            let before = inputs.len();
            for input in page {
                if input.seq != next {
                    break;
                }
                next += 1;
                inputs.push(input);
            }
            if inputs.len() == before {
                break;
            }
        }
        Ok(inputs)
    }

    async fn last_seq(&self) -> Result<u64, LogError> {
        self.live.last_seq().await
    }

    async fn wait_for(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        self.live.wait_for(after, timeout).await
    }

    async fn read_decisions(&self, from: u64, max: usize) -> Result<Vec<DecisionBatch>, LogError> {
        let max = max.min(READ_MAX);
        let view = self.current().await?;
        let mut batches = Vec::new();
        let at = view.chain.partition_point(|header| header.to_base < from);
        for header in view.chain.iter().skip(at).filter(|h| h.batches > 0) {
            let segment = self.load(header).await?;
            for (key, record) in segment.batches().filter(|(key, _)| *key >= from) {
                if batches.len() >= max {
                    return Ok(batches);
                }
                batches.push(decode_batch(key, record)?);
            }
        }
        if batches.len() < max {
            let from = from.max(view.decided_to() + 1);
            let live = self.live.read_decisions(from, max - batches.len()).await?;
            batches.extend(live);
        }
        Ok(batches)
    }

    async fn last_decided_seq(&self) -> Result<u64, LogError> {
        self.live.last_decided_seq().await
    }

    async fn load_checkpoint(&self) -> Result<Option<Checkpoint>, LogError> {
        self.load_checkpoint_before(u64::MAX).await
    }

    async fn load_checkpoint_before(&self, seq: u64) -> Result<Option<Checkpoint>, LogError> {
        if let Some(checkpoint) = self.live.load_checkpoint_before(seq).await? {
            return Ok(Some(checkpoint));
        }
        let view = self.current().await?;
        for at in view.checkpoints.range(..=seq).rev() {
            match self.archived_checkpoint(*at).await {
                Ok(checkpoint) => return Ok(Some(checkpoint)),
                Err(error) => tracing::warn!(seq = at, %error,
                    "skipping an archived checkpoint that cannot be read; trying an older one"),
            }
        }
        Ok(None)
    }

    async fn newer_build(&self) -> Result<Option<String>, LogError> {
        self.live.newer_build().await
    }

    async fn base_seq(&self) -> Result<u64, LogError> {
        Ok(self.current().await?.start)
    }

    fn deduplicates_every_append(&self) -> bool {
        self.live.deduplicates_every_append()
    }

    async fn first_seq_of(&self, ids: &[Uuid]) -> Result<BTreeMap<Uuid, u64>, LogError> {
        self.live.first_seq_of(ids).await
    }
}

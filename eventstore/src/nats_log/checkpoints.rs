//! Checkpoints in a JetStream object store bucket.
//!
//! A checkpoint of 100k clusters is tens of megabytes, over the server's `max_payload` (1 MiB
//! by default) and far over what a KV value should hold, so it goes into an object store,
//! which splits it into chunks and records a SHA-256 digest that is checked on every read.
//!
//! One object, [`CHECKPOINT_OBJECT`], holds the newest checkpoint. A put writes the new chunks
//! first and then swaps the object's metadata (a rollup message), so a crash mid-put leaves the
//! previous checkpoint readable: the newest *complete* checkpoint always survives. A put is
//! skipped when the stored checkpoint is newer (a writer that lost the writer role late must not
//! roll it back); that check and the put are not atomic, which is fine because only the single
//! writer saves checkpoints and equal sequences hold equal states.
//!
//! Older checkpoints are kept for seeking as objects of their own, named by their sequence
//! ([`SEEK_PREFIX`]`00000000000000050000`): a checkpoint that starts a new span of
//! [`crate::redb_log::SEEK_SPACING_DEFAULT`] inputs is stored under its name too, and the
//! older ones are thinned with age as the redb log thins its own (`thinning.rs`).
//! [`load_before`] reads the newest of them at or before a point. Under a retention window the
//! oldest of them is the log's base (`retention.rs`): the thinning never counts the ones before
//! it, so it always keeps the base. As on redb, a checkpoint that is the first in an eighth of
//! the window's time is kept too, and the thinning spares those across the window and the
//! newest older than it ([`needed_by_window`]), so the base follows the window within about an
//! eighth of it rather than by spans of inputs.
//!
//! The object is a marked checkpoint frame (`flotilla_core::wire::checkpoint`; release 19da42c
//! wrote `[01 00][body]`, still read); the object's metadata repeats `seq` and `hash` for
//! operators (`nats object info`). A checkpoint that cannot be read (damaged, newer, an older
//! `State` layout) is skipped with a warning: there is no older one here, so the hub folds from
//! the log.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use async_nats::jetstream::object_store::{InfoErrorKind, ObjectInfo, ObjectMetadata, ObjectStore};
use flotilla_core::codec::CHECKPOINT_BYTES_MAX;
use flotilla_core::wire::{HEADER_BYTES, checkpoint};
use tokio::io::AsyncReadExt;

use crate::{CHECKPOINTS_PER_WINDOW, Checkpoint, EncodedCheckpoint, LogError};

/// The object holding the newest checkpoint.
pub const CHECKPOINT_OBJECT: &str = "newest";
/// The name of a checkpoint kept for seeking starts with this, and ends with its sequence in
/// twenty digits.
pub const SEEK_PREFIX: &str = "seek-";
/// The metadata key of the input time (the log's, Unix milliseconds) of a seek checkpoint and
/// of the log's base (`retention.rs`).
pub(crate) const TIME_METADATA: &str = "timeMs";
/// Chunk size: under the server's default 1 MiB `max_payload`, large enough to keep a
/// 50 MB checkpoint to ~100 publishes.
const CHUNK_BYTES: usize = 512 * 1024;
/// Chunks read per request timeout when loading (a floor on read throughput before a load is
/// declared stuck).
const CHUNKS_PER_TIMEOUT: usize = 16;
/// Longest a save asks again for the stored checkpoint's info while the bucket's stream has no
/// leader (the client's default request timeout).
const SAVE_INFO_BUDGET: Duration = Duration::from_secs(10);
/// The first pause before asking again; each later one is twice as long, up to a second.
const INFO_PAUSE_FIRST: Duration = Duration::from_millis(100);

/// What decides which checkpoints are kept for seeking besides their sequences: the log's
/// base, the oldest of them the thinning may look at, and the retention window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seeking {
    /// The log's base (0: none); seek checkpoints before it are the retention cut's to delete.
    pub(crate) base: u64,
    /// The retention window, if any.
    pub(crate) window: Option<Duration>,
    /// The log time of the checkpoint's input in Unix milliseconds, when known.
    pub(crate) time_ms: Option<i64>,
}

/// Encodes `checkpoint`.
pub(crate) fn encode(checkpoint: &Checkpoint) -> Result<EncodedCheckpoint, LogError> {
    let record = checkpoint::encode(checkpoint.seq, &checkpoint.hash, &checkpoint.state)?;
    Ok(EncodedCheckpoint {
        seq: checkpoint.seq,
        hash: checkpoint.hash.clone(),
        record,
    })
}

/// Stores an encoded checkpoint unless the stored one is newer; its size, or 0 when it was not
/// stored.
pub(crate) async fn save_encoded(
    store: &ObjectStore,
    encoded: &EncodedCheckpoint,
    seeking: Seeking,
) -> Result<u64, LogError> {
    if let Some(stored) = stored_info(store, CHECKPOINT_OBJECT, SAVE_INFO_BUDGET).await? {
        let stored_seq = metadata_seq(&stored);
        if stored_seq.is_some_and(|seq| seq > encoded.seq) {
            tracing::debug!(
                stored_seq,
                seq = encoded.seq,
                "a newer checkpoint is stored; not replacing it"
            );
            return Ok(0);
        }
    }
    let record = &encoded.record;
    let metadata = HashMap::from([
        ("seq".to_owned(), encoded.seq.to_string()),
        ("hash".to_owned(), encoded.hash.0.clone()),
    ]);
    let meta = ObjectMetadata {
        name: CHECKPOINT_OBJECT.to_owned(),
        description: Some(format!("flotilla checkpoint at input {}", encoded.seq)),
        chunk_size: Some(CHUNK_BYTES),
        metadata,
        headers: None,
    };
    store
        .put(meta.clone(), &mut record.as_slice())
        .await
        .map_err(|err| LogError::Nats(format!("put checkpoint {}: {err}", encoded.seq)))?;
    let bytes = u64::try_from(record.len()).unwrap_or(u64::MAX);
    keep_for_seeking(store, meta, record, encoded.seq, seeking).await?;
    Ok(bytes)
}

/// Stores the checkpoint at `seq` under its own name too when it starts a new span, or under
/// a retention window a new [`CHECKPOINTS_PER_WINDOW`]th of the window's time, and deletes the
/// seek checkpoints the thinning lets go but those the window needs ([`needed_by_window`]).
async fn keep_for_seeking(
    store: &ObjectStore,
    mut meta: ObjectMetadata,
    record: &[u8],
    seq: u64,
    seeking: Seeking,
) -> Result<(), LogError> {
    let spacing = crate::thinning::spacing(
        crate::redb_log::SEEK_SPACING_DEFAULT,
        u64::try_from(record.len()).unwrap_or(u64::MAX),
    );
    let mut kept = seek_objects(store).await?;
    // The first of the set is always kept: so is the base, with those before it left out.
    kept.retain(|kept, _| *kept >= seeking.base);
    let newest = kept.last_key_value().map(|(newest, _)| *newest);
    if newest.is_some_and(|newest| newest >= seq) {
        return Ok(());
    }
    let new_span = newest.is_none_or(|newest| newest / spacing != seq / spacing);
    let slot = |time_ms: i64| {
        seeking
            .window
            .map(|window| time_ms.div_euclid(slot_millis(window)))
    };
    let new_slot = (seeking.time_ms.and_then(slot)).is_some_and(|at| {
        kept.values()
            .all(|kept| kept.time_ms.and_then(slot) != Some(at))
    });
    if !new_span && !new_slot {
        return Ok(());
    }
    meta.name = seek_name(seq);
    if let Some(time_ms) = seeking.time_ms {
        meta.metadata
            .insert(TIME_METADATA.to_owned(), time_ms.to_string());
    }
    store
        .put(meta, &mut &record[..])
        .await
        .map_err(|err| LogError::Nats(format!("put seek checkpoint {seq}: {err}")))?;
    let bytes = u64::try_from(record.len()).unwrap_or(u64::MAX);
    let time_ms = seeking.time_ms;
    kept.insert(seq, SeekObject { time_ms, bytes });
    let needed = needed_by_window(&kept, seeking);
    let sized = kept.iter().map(|(seq, kept)| (*seq, kept.bytes)).collect();
    let seek_spacing = crate::redb_log::SEEK_SPACING_DEFAULT;
    for gone in crate::thinning::pruned(&sized, 1, seek_spacing) {
        if needed.contains(&gone) {
            continue;
        }
        store
            .delete(seek_name(gone))
            .await
            .map_err(|err| LogError::Nats(format!("delete seek checkpoint {gone}: {err}")))?;
    }
    Ok(())
}

/// The log time a [`CHECKPOINTS_PER_WINDOW`]th of `window` spans, in milliseconds.
fn slot_millis(window: Duration) -> i64 {
    let window = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
    (window / i64::from(CHECKPOINTS_PER_WINDOW)).max(1)
}

/// The seek checkpoints a retention window keeps from thinning, as on redb: across the window,
/// the first in each [`CHECKPOINTS_PER_WINDOW`]th of it (slots aligned in the log's time, so a
/// checkpoint kept stays kept as the window moves), and the newest one older than the window,
/// which becomes the log's next base. The window ends at the checkpoint just stored.
fn needed_by_window(kept: &BTreeMap<u64, SeekObject>, seeking: Seeking) -> BTreeSet<u64> {
    let mut needed = BTreeSet::new();
    let (Some(window), Some(newest)) = (seeking.window, seeking.time_ms) else {
        return needed;
    };
    let cutoff = newest.saturating_sub(i64::try_from(window.as_millis()).unwrap_or(i64::MAX));
    let mut first_in_slot = BTreeMap::new();
    for (seq, kept) in kept.iter().rev() {
        let Some(time) = &kept.time_ms else {
            continue;
        };
        if *time <= cutoff {
            needed.insert(*seq);
            break;
        }
        first_in_slot.insert(time.div_euclid(slot_millis(window)), *seq);
    }
    needed.extend(first_in_slot.into_values());
    needed
}

/// The name of the checkpoint at `seq` kept for seeking.
pub(crate) fn seek_name(seq: u64) -> String {
    format!("{SEEK_PREFIX}{seq:020}")
}

/// The sequences of the checkpoints kept for seeking.
pub(crate) async fn seek_seqs(store: &ObjectStore) -> Result<BTreeSet<u64>, LogError> {
    Ok(seek_objects(store).await?.into_keys().collect())
}

/// A checkpoint kept for seeking, as the bucket lists it.
#[derive(Debug, Clone, Copy)]
struct SeekObject {
    /// Its input's log time in Unix milliseconds, when it was stored with it.
    time_ms: Option<i64>,
    /// Its size.
    bytes: u64,
}

/// The checkpoints kept for seeking, by sequence.
async fn seek_objects(store: &ObjectStore) -> Result<BTreeMap<u64, SeekObject>, LogError> {
    use futures::StreamExt;
    let mut listing = match store.list().await {
        Ok(listing) => listing,
        Err(err) => return Err(LogError::Nats(format!("list checkpoints: {err}"))),
    };
    let mut seqs = BTreeMap::new();
    while let Some(info) = listing.next().await {
        let info = info.map_err(|err| LogError::Nats(format!("list checkpoints: {err}")))?;
        let seq = info
            .name
            .strip_prefix(SEEK_PREFIX)
            .and_then(|n| n.parse().ok());
        if let (Some(seq), false) = (seq, info.deleted) {
            let time = info.metadata.get(TIME_METADATA);
            let time_ms = time.and_then(|time| time.parse().ok());
            let bytes = u64::try_from(info.size).unwrap_or(u64::MAX);
            seqs.insert(seq, SeekObject { time_ms, bytes });
        }
    }
    Ok(seqs)
}

/// The newest readable checkpoint at or before `at_most`: the newest one if it is, else the
/// newest kept for seeking that is.
pub(crate) async fn load_before(
    store: &ObjectStore,
    request_timeout: Duration,
    at_most: u64,
) -> Result<Option<Checkpoint>, LogError> {
    if let Some(newest) = load(store, request_timeout).await?
        && newest.seq <= at_most
    {
        return Ok(Some(newest));
    }
    for seq in seek_seqs(store).await?.range(..=at_most).rev() {
        if let Some(checkpoint) = load_named(store, &seek_name(*seq), request_timeout).await? {
            return Ok(Some(checkpoint));
        }
    }
    Ok(None)
}

/// Loads the newest checkpoint, if any.
pub(crate) async fn load(
    store: &ObjectStore,
    request_timeout: Duration,
) -> Result<Option<Checkpoint>, LogError> {
    load_named(store, CHECKPOINT_OBJECT, request_timeout).await
}

/// Loads the checkpoint stored as `name`, if it is there and readable.
async fn load_named(
    store: &ObjectStore,
    name: &str,
    request_timeout: Duration,
) -> Result<Option<Checkpoint>, LogError> {
    let Some(info) = stored_info(store, name, request_timeout).await? else {
        return Ok(None);
    };
    if info.size > CHECKPOINT_BYTES_MAX.saturating_add(HEADER_BYTES) {
        tracing::warn!(
            bytes = info.size,
            max = CHECKPOINT_BYTES_MAX,
            "skipping a checkpoint over the size limit; folding from the log"
        );
        return Ok(None);
    }
    let seq_hint = metadata_seq(&info).unwrap_or_default();
    let chunk_rounds = u32::try_from(1 + info.chunks / CHUNKS_PER_TIMEOUT).unwrap_or(u32::MAX);
    let read_timeout = request_timeout.saturating_mul(chunk_rounds);
    let mut object = store
        .get(name)
        .await
        .map_err(|err| LogError::Nats(format!("get checkpoint: {err}")))?;
    let mut record = Vec::with_capacity(info.size);
    tokio::time::timeout(read_timeout, object.read_to_end(&mut record))
        .await
        .map_err(|_| LogError::Nats(format!("reading the checkpoint took over {read_timeout:?}")))?
        // The object store checks the SHA-256 digest at the end of the read.
        .map_err(|err| LogError::Nats(format!("read checkpoint: {err}")))?;
    match decode(&record) {
        Ok(checkpoint) => Ok(Some(checkpoint)),
        Err(error) => {
            tracing::warn!(
                seq = seq_hint,
                %error,
                "skipping a checkpoint this build cannot read; folding from the log"
            );
            Ok(None)
        }
    }
}

fn decode(record: &[u8]) -> Result<Checkpoint, flotilla_core::codec::CodecError> {
    let body = checkpoint::decode(record)?;
    Ok(Checkpoint {
        seq: body.seq,
        hash: body.hash,
        state: body.state,
    })
}

/// The stored checkpoint's info, `None` when there is none. A bucket whose stream has no
/// leader yet (just created on an R3 stream, or electing a new leader) answers at once with
/// "no responders", so an error is asked again, after a pause, until `budget` is spent.
pub(crate) async fn stored_info(
    store: &ObjectStore,
    name: &str,
    budget: Duration,
) -> Result<Option<ObjectInfo>, LogError> {
    let deadline = tokio::time::Instant::now() + budget;
    let mut pause = INFO_PAUSE_FIRST;
    loop {
        match store.info(name).await {
            Ok(info) if info.deleted => return Ok(None),
            Ok(info) => return Ok(Some(info)),
            Err(err) if err.kind() == InfoErrorKind::NotFound => return Ok(None),
            Err(err) if tokio::time::Instant::now() + pause < deadline => {
                tracing::debug!(%err, ?pause, "checkpoint info not given; asking again");
                tokio::time::sleep(pause).await;
                pause = pause.saturating_mul(2).min(Duration::from_secs(1));
            }
            Err(err) => return Err(LogError::Nats(format!("checkpoint info: {err}"))),
        }
    }
}

pub(crate) fn metadata_seq(info: &ObjectInfo) -> Option<u64> {
    info.metadata.get("seq").and_then(|seq| seq.parse().ok())
}

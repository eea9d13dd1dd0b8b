//! Errors of the event log, one enum for every backend.

use std::path::PathBuf;

use flotilla_core::codec::CodecError;
use flotilla_core::wire::RecordKind;

/// What can go wrong talking to the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The storage engine failed (redb, file system).
    #[error("storage: {0}")]
    Storage(String),
    /// The storage has no room for the write (the file system is full, or a quota is reached):
    /// nothing of the write was stored, and the log takes writes again by itself once space is
    /// freed — no restart, no reopen by the caller. A retry with the same ids is safe.
    #[error(
        "no space left for the log in {}: nothing of this write was stored; free space in {} \
         and the log takes writes again by itself ({detail})",
        dir.display(),
        dir.display()
    )]
    StorageFull {
        /// The directory the log writes in (for the hub, its data directory).
        dir: PathBuf,
        /// What the storage answered.
        detail: String,
    },
    /// A stream of the log on NATS is at its limits (`max_bytes`, `max_msgs`) or the server's
    /// JetStream storage is used up: the write was refused, and the log takes writes again by
    /// itself once the limit is raised or space freed. An append of up to 1,000 events to a
    /// stream that takes atomic batches is refused whole; a retry with the same ids is safe.
    #[error(
        "the log's stream {stream} on NATS is full: this write was not stored; raise the \
         stream's limits (max_bytes, max_msgs) or free JetStream storage on the server, and the \
         log takes writes again by itself ({detail})"
    )]
    StreamFull {
        /// The stream's name.
        stream: String,
        /// What the server answered.
        detail: String,
    },
    /// The NATS server or JetStream failed.
    #[error("nats: {0}")]
    Nats(String),
    /// A stored record does not decode.
    #[error("record at sequence {seq}: {source}")]
    Corrupt {
        /// Where.
        seq: u64,
        /// Why.
        source: CodecError,
    },
    /// A value could not be encoded.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Another writer appended decisions first: this writer must stop.
    #[error(
        "fenced: decisions expected to follow input {expected}, but the log has decisions up to {actual}"
    )]
    Fenced {
        /// The last decided sequence this writer assumed.
        expected: u64,
        /// The last decided sequence the log has.
        actual: u64,
    },
    /// A stored record was written by a newer flotilla: this build must not act on it as the
    /// writer (a rolling upgrade is in progress).
    #[error("record at sequence {seq} is a {kind} of version {version}, newer than this build")]
    Newer {
        /// Where (the input sequence, or the decisions stream's sequence).
        seq: u64,
        /// The record kind.
        kind: RecordKind,
        /// Its version.
        version: u16,
    },
    /// An event of the append is larger than the log stores: the whole append is refused
    /// before anything is written, and a retry is refused the same way.
    #[error(
        "event {index} of the request is {size} bytes encoded, over the log's limit of {limit} \
         bytes per event; nothing was appended"
    )]
    TooLarge {
        /// Its place in the append (0-based).
        index: usize,
        /// Its encoded size (frame and, on NATS, headers), in bytes.
        size: usize,
        /// The most the log stores for one event, in bytes.
        limit: usize,
    },
    /// The backend refuses the request as asked (e.g. times as given on NATS).
    #[error("refused: {0}")]
    Refused(String),
    /// The log was closed.
    #[error("the log is closed")]
    Closed,
}

/// What `wait_for` answers for a log that announces its last sequence on `seen`: the first
/// sequence past `after`, or the last one when `timeout` ends first; `Closed` once the writer
/// is gone, since nothing new can arrive.
pub(crate) async fn wait_past(
    mut seen: tokio::sync::watch::Receiver<u64>,
    after: u64,
    timeout: std::time::Duration,
) -> Result<u64, LogError> {
    let waited = tokio::time::timeout(timeout, seen.wait_for(|seq| *seq > after)).await;
    match waited.map(|changed| changed.map(|seq| *seq)) {
        Ok(Ok(seq)) => Ok(seq),
        Ok(Err(_closed)) => Err(LogError::Closed),
        Err(_elapsed) => Ok(*seen.borrow()),
    }
}

//! Opening the redb file: the builder every open uses, the table creation and layout check, and
//! the heads read at open.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use flotilla_core::wire::{InputOrigin, read_input};
use redb::backends::FileBackend;
use redb::{
    Builder, ConcurrencyMode, Database, DatabaseError, Durability, ReadableTable, StorageBackend,
};

use super::RedbOptions;
use super::tables::{
    CHECKPOINT_FILES, CHECKPOINTS, DECISIONS, EVENT_IDS, INPUT_GROUPS, INPUTS, LAYOUT_VERSION,
    LAYOUT_VERSION_1, LAYOUT_VERSION_2, LAYOUT_VERSION_KEY, META, storage,
};
use super::writer::last_key;
use crate::LogError;

/// The heads read from the file at open.
pub(crate) struct Heads {
    pub(crate) last_seq: u64,
    pub(crate) decided: u64,
    /// The time of the last stored event, the floor for the next assigned time.
    pub(crate) last_time: Option<chrono::DateTime<chrono::Utc>>,
}

/// Creates every table (so readers never meet a missing one), checks the layout version, and
/// reads the heads, in one durable write transaction.
pub(crate) fn prepare(db: &Database) -> Result<Heads, LogError> {
    let mut txn = db
        .begin_write()
        .map_err(storage("begin write transaction"))?;
    txn.set_durability(Durability::Immediate)
        .map_err(storage("set durability"))?;
    let heads = {
        let mut meta = txn.open_table(META).map_err(storage("open table meta"))?;
        let stored = meta
            .get(LAYOUT_VERSION_KEY)
            .map_err(storage("read layout version"))?;
        match stored.map(|guard| guard.value()) {
            Some(LAYOUT_VERSION) => {}
            found @ (Some(LAYOUT_VERSION_1 | LAYOUT_VERSION_2) | None) => {
                if let Some(found) = found {
                    tracing::info!(
                        "raising the log's table layout from {found} to {LAYOUT_VERSION}"
                    );
                }
                meta.insert(LAYOUT_VERSION_KEY, LAYOUT_VERSION)
                    .map_err(storage("write layout version"))?;
            }
            Some(found) => {
                return Err(LogError::Storage(format!(
                    "table layout version {found}, this build reads {LAYOUT_VERSION_1} to \
                     {LAYOUT_VERSION}"
                )));
            }
        }
        let inputs = txn
            .open_table(INPUTS)
            .map_err(storage("open table inputs"))?;
        txn.open_table(EVENT_IDS)
            .map_err(storage("open table event_ids"))?;
        let decisions = txn
            .open_table(DECISIONS)
            .map_err(storage("open table decisions"))?;
        txn.open_table(CHECKPOINTS)
            .map_err(storage("open table checkpoints"))?;
        txn.open_table(CHECKPOINT_FILES)
            .map_err(storage("open table checkpoint_files"))?;
        let groups = txn
            .open_table(INPUT_GROUPS)
            .map_err(storage("open table input_groups"))?;
        let last_seq = last_key(&inputs, "read last input sequence")?
            .max(last_key(&groups, "read last input group")?);
        let last = match inputs.get(last_seq).map_err(storage("read last input"))? {
            Some(value) => Some(value.value().to_vec()),
            None => super::groups::input(&groups, last_seq)?,
        };
        let origin = InputOrigin {
            seq: last_seq,
            subject: None,
            log_time: None,
        };
        let last_time = last.and_then(|value| read_input(&value, &origin).event().map(|e| e.time));
        Heads {
            last_seq,
            decided: last_key(&decisions, "read last decided sequence")?,
            last_time,
        }
    };
    txn.commit().map_err(storage("commit table creation"))?;
    Ok(heads)
}

/// The redb builder every open uses: single writer, the options' cache, and a repair callback
/// that records whether the file needed recovery.
pub(crate) fn builder(options: &RedbOptions, repaired: &Arc<AtomicBool>) -> Builder {
    let mut builder = Builder::new();
    let seen = Arc::clone(repaired);
    builder
        .set_cache_size(options.cache_size_bytes)
        .set_concurrency_mode(ConcurrencyMode::SingleWriter)
        .set_repair_callback(move |_session| seen.store(true, Ordering::Release));
    builder
}

/// Opens the log file at `path` for writing, as every open of a file on disk does; whether redb
/// had to repair it (it was not closed cleanly).
pub(crate) fn open_file(path: &Path, options: &RedbOptions) -> Result<(Database, bool), LogError> {
    let repaired = Arc::new(AtomicBool::new(false));
    let db = builder(options, &repaired)
        .create(path)
        .map_err(|error| open_error(path, error))?;
    Ok((db, repaired.load(Ordering::Acquire)))
}

/// Opens the log file at `path` for writing on the storage `backend_for` gives it; whether redb
/// had to repair it.
pub(crate) fn open_on<B, F>(
    path: &Path,
    options: &RedbOptions,
    backend_for: &F,
) -> Result<(Database, bool), LogError>
where
    B: StorageBackend,
    F: Fn(&Path) -> io::Result<B>,
{
    let backend = backend_for(path)
        .map_err(|error| LogError::Storage(format!("{}: {error}", path.display())))?;
    let repaired = Arc::new(AtomicBool::new(false));
    let db = builder(options, &repaired)
        .create_with_backend(backend)
        .map_err(|error| open_error(path, error))?;
    Ok((db, repaired.load(Ordering::Acquire)))
}

pub(crate) fn open_error(path: &Path, error: DatabaseError) -> LogError {
    let shown = path.display();
    match error {
        DatabaseError::DatabaseAlreadyOpen => LogError::Storage(format!(
            "{shown}: already open by another writer (the redb file lock allows one)"
        )),
        other => LogError::Storage(format!("{shown}: cannot open: {other}")),
    }
}

/// Where a new log file is built before it takes its name.
pub(crate) fn creating_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".creating");
    path.with_file_name(name)
}

/// Creates the log file at `path` if there is none, so that `path` only ever names a complete
/// file: the file is built under [`creating_path`] on the storage `backend_for` gives, its
/// tables created in one durable commit, then renamed into place and the directory synced. A
/// crash or an I/O fault during creation leaves at most the `.creating` file, which the next
/// open discards — never a file at `path` that redb cannot open.
pub(crate) fn create_if_missing<B, F>(
    path: &Path,
    options: &RedbOptions,
    backend_for: F,
) -> Result<(), LogError>
where
    B: StorageBackend,
    F: Fn(&Path) -> io::Result<B>,
{
    if path.exists() {
        return Ok(());
    }
    let creating = creating_path(path);
    let shown = creating.display().to_string();
    let failed = |what: &str, error: &dyn std::fmt::Display| {
        LogError::Storage(format!("{shown}: {what}: {error}"))
    };
    match fs::remove_file(&creating) {
        Ok(()) => {
            tracing::warn!(path = %shown, "discarding a log file whose creation did not finish")
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(failed("discard an unfinished creation", &error)),
    }
    let backend = backend_for(&creating).map_err(|error| failed("create", &error))?;
    let db = builder(options, &Arc::new(AtomicBool::new(false)))
        .create_with_backend(backend)
        .map_err(|error| open_error(&creating, error))?;
    prepare(&db)?;
    drop(db);
    fs::rename(&creating, path).map_err(|error| failed("rename into place", &error))?;
    let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
    File::open(dir.unwrap_or(Path::new(".")))
        .and_then(|dir| dir.sync_all())
        .map_err(|error| failed("sync the directory", &error))
}

/// The storage of a log file on disk, as `redb::Builder::create` would open it.
pub(crate) fn file_backend(path: &Path) -> io::Result<FileBackend> {
    let file = open_log_file(path)?;
    FileBackend::new(file).map_err(io::Error::other)
}

/// Opens (or creates) a log file for reading and writing without truncating it, the way
/// `redb::Builder::create` opens one.
pub(crate) fn open_log_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

//! The hub's handle and settings: what every part of the runtime (the writer, the follower,
//! the clock, checkpoints, analyses) and every adapter holds — the log, the folded view, the
//! fold and shutdown signals — with the reads and signals that need nothing else, and the
//! error helpers the runtime's loops share. The writer loop itself is in [`super`].

use std::sync::{Arc, RwLock, RwLockReadGuard};
use std::time::Duration;

use flotilla_eventstore::fold::FoldError;
use flotilla_eventstore::{CHECKPOINTS_PER_WINDOW, EventLog, LogError};
use flotilla_replay::ReplayError;
use tokio::sync::watch;

use super::test_clock::TestClock;
use super::view::View;

/// Runtime settings.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// Write a checkpoint after this many folded events.
    pub checkpoint_every: u64,
    /// Also write one once the log's time moved this far past the last one. Under a retention
    /// window the log's base is its newest checkpoint at least the window old, so checkpoints
    /// this far apart keep the retained span within this much of the window
    /// ([`checkpoint_spacing_for`]).
    pub checkpoint_every_log_time: Option<chrono::Duration>,
    /// Most events folded under one hold of the view's lock: readers wait at most that long.
    pub fold_batch_max: usize,
    /// Most events read, folded (in parts of `fold_batch_max`) and decided in one record per
    /// round. A writer that is behind makes its two durable writes per round (the ids folded,
    /// the decisions) once per this many events rather than once per part.
    pub fold_round_max: usize,
    /// How long the writer waits for new events before looking again.
    pub idle_wait: Duration,
    /// Go on when a restart recomputes different decisions than were recorded under this
    /// build's decision version (logged as an error) instead of refusing to start.
    pub allow_divergence: bool,
    /// Test only: the hub's time comes from this clock instead of the system's.
    pub test_clock: Option<TestClock>,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            checkpoint_every: 10_000,
            checkpoint_every_log_time: None,
            fold_batch_max: 1_000,
            fold_round_max: 10_000,
            idle_wait: Duration::from_millis(200),
            allow_divergence: false,
            test_clock: None,
        }
    }
}

/// The log time between checkpoints under a retention window of `window`: a
/// [`CHECKPOINTS_PER_WINDOW`]th of it, the spacing at which the log keeps them across the
/// window, so it keeps at most about that much more than the window (`docs/storage.md`).
#[must_use]
pub fn checkpoint_spacing_for(window: std::time::Duration) -> Option<chrono::Duration> {
    chrono::Duration::from_std(window)
        .ok()?
        .checked_div(CHECKPOINTS_PER_WINDOW)
}

/// Why the runtime stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// Folding failed (a gap in the log, or an unencodable state).
    #[error(transparent)]
    Fold(#[from] FoldError),
    /// Checking what a restart folds again against the recorded decisions failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// Another writer holds the log.
    #[error("another writer is appending decisions to this log: {0}")]
    Fenced(LogError),
    /// A task of the writer panicked or was cancelled.
    #[error("a task of the writer ended abnormally: {0}")]
    Task(String),
    /// An internal lock was poisoned by a panic.
    #[error("the hub's state lock is poisoned")]
    Poisoned,
}

/// A running hub over one log.
pub struct Hub<L: EventLog> {
    pub(super) log: Arc<L>,
    pub(super) view: Arc<RwLock<View>>,
    pub(super) folded: watch::Receiver<u64>,
    pub(super) folded_tx: Arc<watch::Sender<u64>>,
    pub(super) shutdown: watch::Sender<bool>,
    pub(super) config: HubConfig,
    /// Marks of the inputs through the sequence this process restored its state at, read
    /// from the log's decisions once asked for (`marks.rs`).
    pub(super) marks_before: Arc<super::marks::Before>,
}

impl<L: EventLog> Clone for Hub<L> {
    fn clone(&self) -> Self {
        Self {
            log: Arc::clone(&self.log),
            view: Arc::clone(&self.view),
            folded: self.folded.clone(),
            folded_tx: Arc::clone(&self.folded_tx),
            shutdown: self.shutdown.clone(),
            config: self.config.clone(),
            marks_before: Arc::clone(&self.marks_before),
        }
    }
}

impl<L: EventLog> Hub<L> {
    /// The log this hub writes to.
    #[must_use]
    pub fn log(&self) -> &Arc<L> {
        &self.log
    }

    /// Read access to the folded state.
    ///
    /// # Errors
    /// When the lock was poisoned.
    pub fn view(&self) -> Result<RwLockReadGuard<'_, View>, HubError> {
        self.view.read().map_err(|_| HubError::Poisoned)
    }

    /// Takes the folded state out, leaving an empty one: for `flotilla simulate` to count the
    /// heap a state holds, once the hub has stopped. A hub still running would fold on from
    /// nothing.
    ///
    /// # Errors
    /// When the lock was poisoned.
    pub fn take_state(&self) -> Result<flotilla_core::State, HubError> {
        let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
        Ok(std::mem::take(&mut view.folder.state))
    }

    /// The hub's time: the system's, or the test clock's.
    #[must_use]
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.config
            .test_clock
            .as_ref()
            .map_or_else(chrono::Utc::now, TestClock::now)
    }

    /// The test clock, when the hub runs on one.
    #[must_use]
    pub fn test_clock(&self) -> Option<&TestClock> {
        self.config.test_clock.as_ref()
    }

    /// Waits until the writer has folded `seq` (or `timeout` passes); returns whether it has.
    pub async fn wait_folded(&self, seq: u64, timeout: Duration) -> bool {
        let mut folded = self.folded.clone();
        let reached = tokio::time::timeout(timeout, folded.wait_for(|s| *s >= seq)).await;
        matches!(reached, Ok(Ok(_)))
    }

    /// A receiver whose value (the folded sequence) changes after every fold.
    #[must_use]
    pub fn folded_updates(&self) -> watch::Receiver<u64> {
        self.folded.clone()
    }

    /// Asks the writer and clock to stop; the writer checkpoints on its way out.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    /// A receiver that turns `true` when shutdown is requested. One taken after the request
    /// reports it as a change, so a task that first runs after a quick stop (the clock, the
    /// analysis adapter: spawned at start, subscribing when first polled) still returns
    /// instead of waiting forever for a change that already happened.
    #[must_use]
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        let mut receiver = self.shutdown.subscribe();
        if *receiver.borrow() {
            receiver.mark_changed();
        }
        receiver
    }
}

/// How long the writer waits before trying a failed NATS call, or a write refused for a full
/// storage, again.
pub const TRANSIENT_RETRY_PAUSE: Duration = Duration::from_millis(500);

/// Whether an error may pass by itself: the NATS server is away or slow (restarting, a leader
/// election), or the log's storage is full (its disk, or a stream's limits on NATS: it takes
/// writes again once space is freed). Every other error stops the writer.
pub(crate) fn transient(error: &HubError) -> bool {
    match error {
        HubError::Log(error)
        | HubError::Fold(FoldError::Log(error))
        | HubError::Replay(ReplayError::Log(error)) => passes(error),
        _ => false,
    }
}

/// Whether a log error may pass by itself (see [`transient`]).
pub(crate) fn passes(error: &LogError) -> bool {
    matches!(error, LogError::Nats(_)) || full(error)
}

/// Whether a log error is its storage being full: the disk under the embedded log, or a stream
/// of the log on NATS at its limits.
pub(crate) fn full(error: &LogError) -> bool {
    matches!(
        error,
        LogError::StorageFull { .. } | LogError::StreamFull { .. }
    )
}

/// Logs that `what` failed and is tried again. A full storage is at debug: the log says once
/// when its storage fills up and once when it has room again, and a line per retry would bury
/// that.
pub(crate) fn note_retry(what: &str, error: &impl std::fmt::Display, full: bool) {
    if full {
        tracing::debug!(%error, "{what} failed: the log's storage is full; trying again");
    } else {
        tracing::warn!(%error, "{what} failed; trying again");
    }
}

/// Whether the error is the log's storage being full (see [`full`]).
pub(crate) fn storage_full(error: &HubError) -> bool {
    match error {
        HubError::Log(error)
        | HubError::Fold(FoldError::Log(error))
        | HubError::Replay(ReplayError::Log(error)) => full(error),
        _ => false,
    }
}

/// Sleeps `pause`, or less if shutdown is asked for.
pub(crate) async fn pause_or_stop(pause: Duration, shutdown: &mut watch::Receiver<bool>) {
    tokio::select! {
        () = tokio::time::sleep(pause) => {}
        _ = shutdown.changed() => {}
    }
}

/// Runs `call` until it succeeds, fails other than transiently (see [`passes`]), or shutdown is
/// asked for.
pub(super) async fn retried<F, Fut>(
    what: &str,
    shutdown: &mut watch::Receiver<bool>,
    mut call: F,
) -> Result<(), LogError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), LogError>>,
{
    loop {
        match call().await {
            Err(error) if passes(&error) && !*shutdown.borrow() => {
                note_retry(what, &error, full(&error));
                pause_or_stop(TRANSIENT_RETRY_PAUSE, shutdown).await;
            }
            other => return other,
        }
    }
}

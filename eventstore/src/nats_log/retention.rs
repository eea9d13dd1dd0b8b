//! A retention window on NATS ([`NatsOptions::retain`](super::NatsOptions::retain),
//! `flotilla serve --nats … --retain`), with the meaning it has on redb
//! (`redb_log/writer/staging/retention.rs`): the inputs older than the window leave the log,
//! and the oldest kept checkpoint becomes its **base**, the state every read starts from.
//!
//! - **The cut.** Each time the writer stores a checkpoint it moves the base to the newest
//!   checkpoint kept for seeking (`seek-<seq>`, `checkpoints.rs`: under a window, one per
//!   eighth of it at least) whose input is at least the window older than the newest input and
//!   that ends a decision batch, so a replay from it re-decides whole batches. The base (its
//!   sequence and its input's time) is stored first, as the checkpoint bucket's
//!   [`BASE_OBJECT`]; then the input stream is purged up to it (at most [`CUT_INPUTS_MAX`]
//!   inputs a cut, so a window shortened on a long log catches up over several checkpoints),
//!   the decisions stream up to the first batch after it (its last batch always stays: it is
//!   the writers' fence), the objects of the large batches removed, and the seek checkpoints
//!   before it. A crash in between leaves more than the base needs, which
//!   the next cut removes; readers start after the base either way.
//! - **`max_age`.** The input stream's `max_age` is twice the window ([`max_age_for`]), so that
//!   a log whose hubs are all down still stops growing, while a running writer cuts at its
//!   checkpoints before `max_age` reaches what it keeps. While a writer runs, the inputs after
//!   its newest checkpoint never age out: after each decision batch, and each idle poll
//!   ([`crate::LogReader::wait_for`]: a silent fleet makes no batches and no checkpoints), it
//!   compares the oldest of them with `max_age`, and raises `max_age` when it is three quarters
//!   of the way there ([`next_max_age`]); a later checkpoint brings it back to twice the
//!   window.
//! - **Event ids** of removed inputs expire: the id bucket's `max_age` is the input stream's,
//!   and an id is recorded after its input is stored, so it outlives its input.
//! - **The base readers see** ([`crate::LogReader::base_seq`]) is the stored one while the
//!   stream holds every input after it. When `max_age` removed more (no writer cut for a
//!   while), it is the oldest checkpoint at or after the input before the first kept one, so
//!   that a replay never starts from a base whose successors are gone.
//! - **Exactly once after a cut**, as on redb: an append holding a UUIDv7 event id older than
//!   the base input's time and not in the id index is refused whole ([`LogError::Refused`]):
//!   it may repeat an input the window removed. A hub that is not the writer learns a moved
//!   base within [`BASE_FRESH_FOR`]. A record published straight onto the input stream is not
//!   judged: nothing stands between a publisher and the stream.
//! - **Streams created before retention** deny purges, which JetStream never lifts: on them the
//!   base moves and readers start after it as above, and the inputs before it leave by
//!   `max_age` alone (the decisions stay).
//!
//! Only the writer cuts and sets `max_age`: a hub that reads, or waits for the writer role,
//! changes nothing, whatever its own window.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_nats::jetstream::stream::Info;
use chrono::{DateTime, Utc};
use flotilla_core::Envelope;
use tokio::time::Instant;
use uuid::Uuid;

use super::checkpoints::{CHECKPOINT_OBJECT, TIME_METADATA, metadata_seq, seek_seqs, stored_info};
use super::{NatsLog, direct, given_times, nats, resend, streams};
use crate::{LogError, LogReader};

mod cut;

/// The object of the checkpoint bucket that holds the log's base: no content, its sequence and
/// its input's time (Unix milliseconds) in the metadata (`seq`, `timeMs`).
pub const BASE_OBJECT: &str = "base";
/// Most inputs one cut purges (about a thousand atomic batches).
pub const CUT_INPUTS_MAX: u64 = 1 << 20;
/// How long a base read for an append is trusted before it is read again: how late a hub that
/// is not the writer learns that the writer moved it.
pub const BASE_FRESH_FOR: Duration = Duration::from_secs(10);
/// Longest an append waits for the base to be read again.
const BASE_READ_BUDGET: Duration = Duration::from_secs(1);

/// The input stream's `max_age` under `window`: twice the window. `max_age` removes what no
/// writer cut, so it must stay clear of what a running writer keeps: the inputs after its base,
/// which trails the window by about an eighth of it (the hub checkpoints once per eighth of the
/// window's log time, and one per eighth is kept for seeking) plus what a slow checkpoint's
/// pacing adds, and the inputs after its newest checkpoint, which a restart folds again. One
/// more window leaves seven eighths of it for that pacing; a writer whose checkpoints are
/// sparser still (a fleet that falls silent folds nothing, so no checkpoint comes) raises
/// `max_age` itself ([`next_max_age`]). With every hub down the stream stops growing at two
/// windows of inputs, and a hub restarted within a window finds every input its newest
/// checkpoint needs.
#[must_use]
pub fn max_age_for(window: Duration) -> Duration {
    window.saturating_mul(2)
}

/// The `max_age` to set now, if it should change: `current` (zero: none), the window's
/// `floor` ([`max_age_for`]) and the age of the oldest input after the newest checkpoint
/// (zero when there is none). Raised to twice that age once it passes three quarters of
/// `current`, so that input never ages out while a writer runs, and each raise is at least
/// half as long again as the last (a stream update per doubling of the time between two
/// checkpoints); back to the floor once twice the age is within it.
#[must_use]
pub fn next_max_age(current: Duration, floor: Duration, age: Duration) -> Option<Duration> {
    let wanted = floor.max(age.saturating_mul(2));
    let near = age > current / 4 * 3;
    if current.is_zero() || near || wanted == floor {
        return (wanted != current).then_some(wanted);
    }
    None
}

/// The log's base as stored ([`BASE_OBJECT`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Base {
    /// The base checkpoint's sequence (0: none).
    pub(crate) seq: u64,
    /// The base input's log time in Unix milliseconds, when it was read.
    pub(crate) time_ms: Option<u64>,
}

/// What one `NatsLog` knows of retention: the base as last read or stored, and what the
/// writer's guard of its newest checkpoint needs.
#[derive(Debug, Default)]
pub(crate) struct Known {
    state: Mutex<KnownState>,
    /// Held while `max_age` is judged and set: the cut and the guard run concurrently.
    adjusting: tokio::sync::Mutex<()>,
    /// This handle appended the last decision batch it tried: it is the writer.
    writing: AtomicBool,
}

#[derive(Debug, Default)]
struct KnownState {
    /// The stored base, and when it was read.
    base: Base,
    base_read: Option<Instant>,
    /// The highest base readers were told: reads start after it.
    read_after: u64,
    /// The newest checkpoint, once saved or read.
    newest_checkpoint: Option<u64>,
    /// The JetStream time of the input after it, once read (`Some(None)`: not in the stream).
    successor: Option<Option<DateTime<Utc>>>,
    /// The input stream's `max_age` as this handle last set it (`None`: as at connect).
    max_age: Option<Duration>,
}

impl Known {
    fn lock(&self) -> MutexGuard<'_, KnownState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first sequence a read may return: after the highest base this handle knows.
    pub(crate) fn read_from(&self) -> u64 {
        self.lock().read_after + 1
    }

    /// Notes whether this handle's last decision append was stored (it writes) or fenced.
    pub(crate) fn note_writing(&self, writing: bool) {
        self.writing.store(writing, Ordering::Relaxed);
    }

    /// Whether this handle is the writer, as far as its decision appends tell.
    pub(crate) fn writing(&self) -> bool {
        self.writing.load(Ordering::Relaxed)
    }

    fn remember_base(&self, base: Base) {
        let mut state = self.lock();
        state.base = base;
        state.base_read = Some(Instant::now());
        state.read_after = state.read_after.max(base.seq);
    }
}

impl NatsLog {
    /// The base as stored (none: 0), asked again while unanswered within `budget`.
    pub(crate) async fn stored_base(&self, budget: Duration) -> Result<Base, LogError> {
        let Some(info) = stored_info(&self.checkpoints, BASE_OBJECT, budget).await? else {
            return Ok(Base::default());
        };
        let time_ms = info
            .metadata
            .get(TIME_METADATA)
            .and_then(|ms| ms.parse().ok());
        let seq = metadata_seq(&info).unwrap_or(0);
        Ok(Base { seq, time_ms })
    }

    /// [`crate::LogReader::base_seq`]: the stored base while the stream holds every input after
    /// it; otherwise the oldest checkpoint at or after the input before the first kept one
    /// (or that input, when no checkpoint is: the log lost inputs no checkpoint covers, and a
    /// replay from it is refused as unreadable).
    pub(super) async fn reader_base(&self) -> Result<u64, LogError> {
        let stored = self.stored_base(self.options.request_timeout).await?;
        self.retention.remember_base(stored);
        let first = self.input_info().await?.state.first_sequence;
        if first <= stored.seq + 1 {
            return Ok(stored.seq);
        }
        let before_first = first - 1;
        let seeks = seek_seqs(&self.checkpoints).await?;
        let seek = seeks.range(before_first..).next().copied();
        let newest = self.newest_checkpoint_seq().await?;
        let newest = newest.filter(|newest| *newest >= before_first);
        let base = match (seek, newest) {
            (Some(seek), Some(newest)) => seek.min(newest),
            (one, other) => one.or(other).unwrap_or(before_first),
        };
        let mut state = self.retention.lock();
        state.read_after = state.read_after.max(base);
        Ok(base)
    }

    /// The sequence of the newest checkpoint, if one is stored.
    async fn newest_checkpoint_seq(&self) -> Result<Option<u64>, LogError> {
        let timeout = self.options.request_timeout;
        let info = stored_info(&self.checkpoints, CHECKPOINT_OBJECT, timeout).await?;
        Ok(info.as_ref().and_then(metadata_seq))
    }

    /// The input stream's info, from its leader (asked again while unanswered).
    pub(super) async fn input_info(&self) -> Result<Info, LogError> {
        let budget = self.options.request_timeout;
        resend::ask_until_answered(budget, || self.input.get_info())
            .await
            .map_err(|unanswered| unanswered.error("input stream info", budget))?
            .map_err(nats("input stream info"))
    }

    /// Input `seq` as the stream holds it: its log time and its JetStream time; `None` when
    /// the stream no longer holds it.
    async fn input_times(&self, seq: u64) -> Result<Option<InputTimes>, LogError> {
        let name = self.input.cached_info().config.name.as_str();
        let timeout = self.options.request_timeout;
        let messages = direct::get_batch(&self.client, name, seq, 1, timeout).await?;
        let Some(message) = messages.into_iter().find(|message| message.sequence == seq) else {
            return Ok(None);
        };
        let stored =
            DateTime::from_timestamp(message.time.unix_timestamp(), message.time.nanosecond());
        Ok(Some(InputTimes {
            log: given_times::log_time(&message, self.keeps_given_times),
            stored,
        }))
    }

    /// Under a window, the log time of input `seq` in Unix milliseconds, which a checkpoint at
    /// it is kept for seeking with (`checkpoints.rs`); `None` without a window, or when the
    /// stream no longer holds the input.
    pub(super) async fn checkpoint_time_ms(&self, seq: u64) -> Result<Option<i64>, LogError> {
        if self.options.retain.is_none() {
            return Ok(None);
        }
        let time = self.input_times(seq).await?.and_then(|times| times.log);
        Ok(time.map(|time| time.timestamp_millis()))
    }

    /// Refuses an append holding an event whose UUIDv7 id is older than the base input and
    /// is not in the id index: it may repeat an input the window removed, whose id may be
    /// gone with it, so storing it could fold one input twice. Ids of another version are not
    /// judged.
    pub(super) async fn refuse_forgotten(&self, events: &[Envelope]) -> Result<(), LogError> {
        let v7 = |id: &Uuid| id.get_version_num() == 7;
        if !events.iter().any(|event| v7(&event.id)) {
            return Ok(());
        }
        let Some(before_ms) = self.fresh_base().await.time_ms else {
            return Ok(());
        };
        // A UUIDv7's first 48 bits are its publisher's clock in milliseconds.
        let old: Vec<Uuid> = events
            .iter()
            .map(|event| event.id)
            .filter(|id| v7(id) && id.as_u64_pair().0 >> 16 < before_ms)
            .collect();
        if old.is_empty() {
            return Ok(());
        }
        let known = self.first_seq_of(&old).await?;
        match old.iter().find(|id| !known.contains_key(id)) {
            Some(id) => Err(LogError::Refused(format!(
                "event {id} is older than the oldest input the log keeps (its retention window \
                 removed what came before): it may repeat one of those, so it is not stored; \
                 publish it again with a new id"
            ))),
            None => Ok(()),
        }
    }

    /// The stored base, read again when the one known was read over [`BASE_FRESH_FOR`] ago.
    /// A read left unanswered for [`BASE_READ_BUDGET`] (the bucket electing a leader) keeps
    /// the one known until the next: an append must not wait on the checkpoint bucket, and a
    /// base read late only refuses less.
    pub(super) async fn fresh_base(&self) -> Base {
        {
            let state = self.retention.lock();
            if state
                .base_read
                .is_some_and(|read| read.elapsed() < BASE_FRESH_FOR)
            {
                return state.base;
            }
        }
        match self.stored_base(BASE_READ_BUDGET).await {
            Ok(base) => {
                self.retention.remember_base(base);
                base
            }
            Err(error) => {
                tracing::warn!(%error, "could not read the log's base; keeping the one known");
                let mut state = self.retention.lock();
                state.base_read = Some(Instant::now());
                state.base
            }
        }
    }

    /// After the writer stored the checkpoint at `seq`: sets `max_age` and cuts. A failure is
    /// logged, not returned: the checkpoint is stored, and the next one cuts again.
    pub(super) async fn after_checkpoint(&self, seq: u64) {
        {
            let mut state = self.retention.lock();
            if state.newest_checkpoint.is_none_or(|newest| newest < seq) {
                state.newest_checkpoint = Some(seq);
                state.successor = None;
            }
        }
        if let Err(error) = self.retain().await {
            tracing::warn!(seq, %error, "the retention cut failed; the next checkpoint cuts again");
        }
    }

    async fn retain(&self) -> Result<(), LogError> {
        let adjusting = self.retention.adjusting.lock().await;
        let Some(window) = self.options.retain else {
            return self.set_max_age(Duration::ZERO).await;
        };
        self.guard(window, None).await?;
        drop(adjusting);
        let base = self.move_base(window).await?;
        if base.seq > 0 {
            self.cut(base.seq).await?;
        }
        Ok(())
    }

    /// After the writer recorded a decision batch: keeps the inputs after its newest
    /// checkpoint clear of `max_age` ([`next_max_age`]). Skipped while a cut runs, which does
    /// the same; logged, not returned, on failure.
    pub(super) async fn guard_newest_checkpoint(&self, decided: u64) {
        let Some(window) = self.options.retain else {
            return;
        };
        let Ok(_adjusting) = self.retention.adjusting.try_lock() else {
            return;
        };
        if let Err(error) = self.guard(window, Some(decided)).await {
            tracing::warn!(%error, "could not keep max_age clear of the inputs after the newest checkpoint");
        }
    }

    /// Sets `max_age` for `window` and the age of the input after the newest checkpoint, with
    /// inputs up to `decided` folded when the caller knows; the caller holds `adjusting`.
    async fn guard(&self, window: Duration, decided: Option<u64>) -> Result<(), LogError> {
        let age = self.successor_age(decided).await?;
        let current = self.current_max_age();
        if let Some(max_age) = next_max_age(current, max_age_for(window), age) {
            if max_age > max_age_for(window) {
                tracing::warn!(
                    ?age,
                    ?max_age,
                    "the inputs after the newest checkpoint near the input stream's max_age; \
                     raising it until the next checkpoint"
                );
            }
            self.set_max_age(max_age).await?;
        }
        Ok(())
    }

    /// How long ago the input after the newest checkpoint was stored (zero: none yet). Read
    /// once per checkpoint, when inputs after it are `decided` (or when the caller cannot say).
    async fn successor_age(&self, decided: Option<u64>) -> Result<Duration, LogError> {
        let (newest, successor) = {
            let state = self.retention.lock();
            (state.newest_checkpoint, state.successor)
        };
        let newest = match newest {
            Some(newest) => newest,
            None => {
                let newest = self.newest_checkpoint_seq().await?.unwrap_or(0);
                self.retention.lock().newest_checkpoint = Some(newest);
                newest
            }
        };
        if decided.is_some_and(|decided| decided <= newest) {
            return Ok(Duration::ZERO);
        }
        let successor = match successor {
            Some(successor) => successor,
            None => {
                let times = self.input_times(newest + 1).await?;
                if times.is_none() && decided.is_none() {
                    // Not appended yet: nothing to keep clear of max_age now.
                    return Ok(Duration::ZERO);
                }
                // Folded but gone (a purge or max_age got there first): nothing to keep.
                let stored = times.and_then(|times| times.stored);
                let mut state = self.retention.lock();
                if state.newest_checkpoint == Some(newest) {
                    state.successor = Some(stored);
                }
                stored
            }
        };
        let age = successor.map_or(Duration::ZERO, |time| {
            (Utc::now() - time).to_std().unwrap_or(Duration::ZERO)
        });
        Ok(age)
    }

    /// The input stream's `max_age` as this handle last set or saw it.
    fn current_max_age(&self) -> Duration {
        self.retention
            .lock()
            .max_age
            .unwrap_or_else(|| self.input.cached_info().config.max_age)
    }

    /// Sets the input stream's and the id bucket's `max_age` (zero: none). The ids must
    /// outlive their inputs, so a longer age goes to the ids first, a shorter to the inputs.
    async fn set_max_age(&self, max_age: Duration) -> Result<(), LogError> {
        let current = self.current_max_age();
        if current == max_age {
            return Ok(());
        }
        let input = self.input.cached_info().config.name.clone();
        let ids = self.event_ids.stream_name.clone();
        let longer = max_age.is_zero() || (!current.is_zero() && max_age > current);
        let order = if longer { [ids, input] } else { [input, ids] };
        for stream in order {
            streams::set_max_age(&self.context, &stream, max_age).await?;
        }
        self.retention.lock().max_age = Some(max_age);
        tracing::info!(?max_age, "set the input stream's max_age");
        Ok(())
    }
}

/// An input's times.
struct InputTimes {
    /// The time the log gives it (what a read returns as the event's time).
    log: Option<DateTime<Utc>>,
    /// When JetStream stored it (what `max_age` counts from).
    stored: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3_600);

    #[test]
    fn max_age_stays_at_twice_the_window_while_checkpoints_keep_up() {
        let floor = max_age_for(HOUR);
        assert_eq!(floor, 2 * HOUR);
        assert_eq!(next_max_age(floor, floor, Duration::ZERO), None);
        assert_eq!(next_max_age(floor, floor, HOUR), None);
        // Set where there was none (or another window's).
        assert_eq!(next_max_age(Duration::ZERO, floor, HOUR / 2), Some(floor));
        assert_eq!(next_max_age(10 * HOUR, floor, HOUR / 2), Some(floor));
    }

    #[test]
    fn an_input_no_checkpoint_covers_never_reaches_max_age() {
        let floor = max_age_for(HOUR);
        // Three quarters of the way: doubled, and again later.
        let raised = next_max_age(floor, floor, HOUR * 3 / 2 + HOUR / 60);
        assert_eq!(raised, Some(HOUR * 3 + HOUR / 30));
        let again = raised.and_then(|raised| next_max_age(raised, floor, HOUR * 2));
        assert_eq!(again, None);
        let again = raised.and_then(|raised| next_max_age(raised, floor, HOUR * 3));
        assert_eq!(again, Some(HOUR * 6));
        // A new checkpoint's successor is young: back to the floor.
        assert_eq!(
            raised.and_then(|raised| next_max_age(raised, floor, HOUR / 4)),
            Some(floor)
        );
        // Without a window's floor in reach, a raised age stays until it must grow.
        assert_eq!(next_max_age(8 * HOUR, floor, 2 * HOUR), None);
    }
}

//! The distributed backend: the event log on a NATS JetStream server (or cluster).
//!
//! Guarantees, on top of those of [`EventLog`]:
//! - **Durable appends**: an append returns after JetStream's ack for every event. The ack
//!   means fsync'd only when the server runs with `sync_interval: always`; by default it
//!   fsyncs every 2 minutes, and a crash of every replica in that window loses acknowledged
//!   writes. [`NatsLog::server_sync`] reads the policy so `flotilla serve` can warn; R3 streams
//!   protect against losing one node. See `docs/durability.md`.
//! - **Input sequence = the input stream's sequence**: dense from 1, because the streams deny
//!   deletes (settings in [`streams`]); under a retention window ([`NatsOptions::retain`],
//!   [`retention`]) the log starts after its base, and is dense from there.
//! - **Deduplication**: every event is published with its id as `Nats-Msg-Id`; within the
//!   stream's duplicate window ([`NatsOptions::duplicate_window`]) the server stores it once and
//!   answers a duplicate with the original sequence. Older duplicates are stored again; the
//!   `<prefix>_EVENT_IDS` key-value bucket (event id → first folded sequence, written by the
//!   single writer through [`EventLog::record_folded`]) is how the writer recognises them at any
//!   distance ([`LogReader::first_seq_of`]).
//! - **Time**: the stream is open to any publisher, so no stored time is trusted: a marked frame
//!   or a JSON record reads back with the JetStream timestamp as its time (what the publisher
//!   said stays in `claimed_time`), and [`AppendTime::AsGiven`] is refused — except on a test
//!   stream created to keep given times ([`given_times`]). Unmarked records of release 19da42c
//!   keep their stored time.
//! - **Any bytes on `flotilla.in.>`** read back as a [`LogRecord`]: flotilla's frames, the
//!   JSON form of `docs/events.md` published with a plain client (its id, when absent, derived
//!   from the stream sequence), or a rejected record with the reason.
//! - **Fenced decisions**: a decision batch is published with `Nats-Expected-Last-Sequence` set
//!   to the decisions stream's last sequence as *this writer* knows it (learned at connect and
//!   after each of its own appends). If any other writer appended in between, the server
//!   refuses it atomically and the call returns [`LogError::Fenced`]. Once fenced, a `NatsLog`
//!   stays fenced: it never re-learns the position, so a stale writer cannot resume. The one
//!   exception is its *own* batch: a batch whose ack was lost is found at the next position
//!   with this writer's `Nats-Msg-Id`, so retrying it succeeds instead of fencing.
//! - **Checkpoints** live in an object store bucket, older ones thinned (see [`checkpoints`]).
//! - **Retention** ([`NatsOptions::retain`]): the writer cuts what lies before the log's base
//!   at its checkpoints, and the input stream's `max_age` follows the window; readers start
//!   after the base, and an old event id the log may have forgotten is refused ([`retention`]).
//! - **A full stream is waited out.** A stream at its limits (`max_bytes` or `max_msgs` set on
//!   it, or the server's JetStream storage used up) refuses a write with
//!   [`LogError::StreamFull`]; an atomic batch is refused whole rather than published again one
//!   by one, which would store a prefix. Nothing is latched: the first write after the limit is
//!   raised is stored ([`limits`]), and [`EventLog::storage_full`] reports the condition
//!   meanwhile.
//! - **Reads** (`read`, `read_decisions`) use batched direct gets, which any replica of an R3
//!   stream may answer: a lagging follower returns a shorter prefix (never a gap), so a read can
//!   trail `last_seq` by milliseconds and callers simply read again. `last_seq`,
//!   `last_decided_seq` and the fencing check ask the stream leader, sending a request again
//!   while it is unanswered (a leader election drops it; see [`resend`]).
//! - **Size**: one input event must fit [`crate::event_size::EVENT_BYTES_MAX`], and the
//!   server's `max_payload` and the stream's `max_msg_size` when they are smaller; an append
//!   with a larger one is refused whole with [`LogError::TooLarge`] before anything is
//!   published. A decision batch over `max_payload` goes into the
//!   `<prefix>_DECISION_BATCHES` object store, pointed at from the stream.
//!
//! Subjects are documented in [`subjects`]. Batched direct gets need nats-server 2.11 or newer
//! (checked at connect). `wait_for` polls the input stream's last sequence (see
//! [`NatsLog::wait_for`]).

mod append;
mod atomic;
pub mod builds;
pub mod checkpoints;
mod checks;
mod decisions;
mod direct;
mod event_ids;
pub mod given_times;
pub mod info;
pub mod lease;
mod limits;
pub mod placing;
mod resend;
pub mod retention;
pub mod streams;
pub mod subjects;
mod varz;

pub use resend::RESEND_WAIT_FIRST;
pub use varz::ServerSync;

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::kv;
use async_nats::jetstream::object_store::ObjectStore;
use async_nats::jetstream::stream::Stream;
use async_nats::jetstream::{self, ContextBuilder};
use flotilla_core::Envelope;
use flotilla_core::wire::{InputOrigin, read_input};
use tokio::sync::{Mutex, Semaphore};
use tokio::time::Instant;
use uuid::Uuid;

use std::collections::BTreeMap;

use crate::{
    AppendTime, Appended, Checkpoint, DecisionBatch, EncodedCheckpoint, EventLog, LogError,
    LogReader, StoredEvent,
};
use decisions::{Fence, last_decision};

/// Most publishes awaiting their ack at once, over all concurrent appends of one `NatsLog`.
pub const APPEND_IN_FLIGHT_MAX: usize = 4096;
/// Events published one by one before their acks are awaited (on a stream without atomic
/// batches, or when a batch was not stored).
pub const APPEND_PIPELINE_MAX: usize = 256;
pub use atomic::ATOMIC_BATCH_MAX;
const _: () = assert!(ATOMIC_BATCH_MAX <= APPEND_IN_FLIGHT_MAX);
/// Most messages one `read` or `read_decisions` returns (callers page with `from`).
pub const READ_BATCH_MAX: usize = 4096;
/// Longest wait in one decision append for the input stream's leader to count what was read.
const LEADER_CATCH_UP_MAX: Duration = Duration::from_secs(2);
/// How many times one decision batch is published again after messages that are not batches.
const PUBLISH_OVER_NOT_BATCHES_MAX: usize = 8;
/// Shortest pause between two polls in `wait_for`.
pub const WAIT_POLL_MIN: Duration = Duration::from_millis(2);
/// Longest pause between two polls in `wait_for`: the worst added latency when idle.
pub const WAIT_POLL_MAX: Duration = Duration::from_millis(50);
/// Event id lookups (or records) in flight at once in `first_seq_of` and `record_folded`.
pub const EVENT_ID_REQUESTS_IN_FLIGHT_MAX: usize = 64;
/// The oldest server that answers batched direct gets.
const SERVER_VERSION_MIN: (u64, u64) = (2, 11);

/// How to reach and lay out the log on JetStream.
#[derive(Debug, Clone)]
pub struct NatsOptions {
    /// Prefix of the stream and bucket names: `<prefix>_INPUT`, `<prefix>_DECISIONS`,
    /// `<prefix>_CHECKPOINTS`. Letters, digits, `-` and `_` only. The subjects are fixed
    /// (`flotilla.in.>`, `flotilla.decisions`), so one NATS account holds one flotilla log:
    /// separate fleets by account, not by prefix.
    pub stream_prefix: String,
    /// Replicas of each stream and the bucket: 1 on a single server, 3 in a cluster.
    pub replicas: usize,
    /// How long the server remembers event ids for deduplication. Memory on the server grows
    /// with ids per window (about 100 bytes each), so 2 minutes at 10k events/s is ~120 MB;
    /// publishers retry within seconds, and older duplicates are found in the event id bucket.
    /// Applied when the stream is created (tests shorten it).
    pub duplicate_window: Duration,
    /// Bound on every request and publish ack.
    pub request_timeout: Duration,
    /// The server's HTTP monitoring URL (`http://host:8222`), to read its fsync policy.
    pub monitoring_url: Option<String>,
    /// Test only: create the input stream marked to keep the times its appender gives
    /// ([`given_times`]), for a hub on a test clock. Has no effect on an existing stream.
    pub test_given_times: bool,
    /// The retention window (`flotilla serve --retain`): the writer cuts the inputs older than
    /// it at its checkpoints, and the input stream's `max_age` follows it ([`retention`]).
    /// `None` keeps every input. Only the writer applies it: it needs no agreement between
    /// hubs, and a reader's options never change the streams.
    pub retain: Option<Duration>,
}

impl Default for NatsOptions {
    fn default() -> Self {
        Self {
            stream_prefix: "FLOTILLA".to_owned(),
            replicas: 1,
            duplicate_window: Duration::from_secs(120),
            request_timeout: Duration::from_secs(10),
            monitoring_url: None,
            test_given_times: false,
            retain: None,
        }
    }
}

/// The event log on NATS JetStream.
pub struct NatsLog {
    client: async_nats::Client,
    context: jetstream::Context,
    input: Stream,
    decisions: Stream,
    checkpoints: ObjectStore,
    batches: ObjectStore,
    event_ids: kv::Store,
    /// The builds hubs announced ([`builds`]): the hub-only signal of a rolling upgrade.
    builds: kv::Store,
    options: NatsOptions,
    /// Names this writer in the `Nats-Msg-Id` of its decision batches, so a retry of its own
    /// batch whose ack was lost is recognised, while another writer's batch fences it.
    writer_id: Uuid,
    fence: Mutex<Fence>,
    in_flight: Arc<Semaphore>,
    /// The input stream is a test stream marked to keep given times ([`given_times`]).
    keeps_given_times: bool,
    /// Which stream, if any, refused the last write to it at its limits ([`limits`]).
    limits: limits::Limits,
    /// What this handle knows of the log's base and the streams' `max_age` ([`retention`]).
    retention: retention::Known,
}

impl std::fmt::Debug for NatsLog {
    // By hand: `ObjectStore` has no `Debug`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsLog")
            .field("input", &self.input.cached_info().config.name)
            .field("decisions", &self.decisions.cached_info().config.name)
            .field("options", &self.options)
            .field("writer_id", &self.writer_id)
            .finish_non_exhaustive()
    }
}

impl NatsLog {
    /// Connects to `url` (or a cluster's node URLs, comma-separated: see [`server_urls`]) and
    /// creates (or binds to) the streams and the checkpoint bucket.
    ///
    /// # Errors
    /// When the server is unreachable, too old, has no JetStream, or an existing stream has
    /// settings the log cannot run on.
    pub async fn connect(url: &str, options: NatsOptions) -> Result<Self, LogError> {
        let client = async_nats::ConnectOptions::new()
            .name("flotilla-eventstore")
            .connection_timeout(options.request_timeout)
            .request_timeout(Some(options.request_timeout))
            .connect(server_urls(url))
            .await
            .map_err(|err| LogError::Nats(format!("connect to {url}: {err}")))?;
        Self::with_client(client, options).await
    }

    /// Uses an already connected client (for credentials, TLS or a custom reconnect policy).
    ///
    /// # Errors
    /// As [`NatsLog::connect`].
    pub async fn with_client(
        client: async_nats::Client,
        options: NatsOptions,
    ) -> Result<Self, LogError> {
        checks::check_options(&options)?;
        checks::check_server(&client.server_info())?;
        let context = ContextBuilder::new()
            .timeout(options.request_timeout)
            // Our own semaphore bounds appends; the slack is for object store chunk publishes.
            .max_ack_inflight(APPEND_IN_FLIGHT_MAX + 64)
            .backpressure_on_inflight(true)
            .build(client.clone());
        let mut input_config = streams::input_stream_config(&options);
        if options.test_given_times {
            given_times::mark(&mut input_config.metadata);
        }
        let input = streams::create_or_bind(&context, input_config).await?;
        let keeps_given_times = given_times::is_marked(&input.cached_info().config.metadata);
        let decisions = streams::decisions_stream_config(&options);
        let decisions = streams::create_or_bind(&context, decisions).await?;
        let checkpoints = streams::checkpoint_bucket(&context, &options).await?;
        let batches = streams::batch_bucket(&context, &options).await?;
        let event_ids = streams::event_id_bucket(&context, &options).await?;
        let builds = builds::bucket(&context, &options).await?;
        let fence = last_decision(&decisions, options.request_timeout)
            .await?
            .fence;
        tracing::info!(
            input = %input.cached_info().config.name,
            decided = fence.last_decided,
            "bound to the JetStream log"
        );
        Ok(Self {
            client,
            context,
            input,
            decisions,
            checkpoints,
            batches,
            event_ids,
            builds,
            options,
            writer_id: Uuid::now_v7(),
            fence: Mutex::new(fence),
            in_flight: Arc::new(Semaphore::new(APPEND_IN_FLIGHT_MAX)),
            keeps_given_times,
            limits: limits::Limits::default(),
            retention: retention::Known::default(),
        })
    }

    /// The id this writer puts in its decision batches' `Nats-Msg-Id`
    /// (`<writer id>:<first input>-<last input>`); fresh for every `NatsLog`.
    #[must_use]
    pub fn writer_id(&self) -> Uuid {
        self.writer_id
    }

    /// Binds to (or creates) the writer lease bucket of this log, as `holder`.
    ///
    /// # Errors
    /// When the bucket can be neither bound nor created.
    pub async fn writer_lease(
        &self,
        holder: String,
        ttl: Duration,
    ) -> Result<lease::WriterLease, LogError> {
        lease::WriterLease::open(&self.context, &self.options, holder, ttl).await
    }

    /// The JetStream context the log uses (for the buckets that sit beside the log: works,
    /// the writer lease).
    #[must_use]
    pub fn jetstream(&self) -> &jetstream::Context {
        &self.context
    }

    /// The connection the log uses.
    #[must_use]
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// The options this log was opened with.
    #[must_use]
    pub fn options(&self) -> &NatsOptions {
        &self.options
    }

    /// The server's fsync policy from its monitoring endpoint; `None` when no
    /// [`NatsOptions::monitoring_url`] is set or it cannot be read (logged as a warning).
    pub async fn server_sync(&self) -> Option<ServerSync> {
        let url = self.options.monitoring_url.as_deref()?;
        match varz::server_sync(url, self.options.request_timeout).await {
            Ok(sync) => Some(sync),
            Err(reason) => {
                tracing::warn!(%reason, "cannot read the NATS server's fsync policy");
                None
            }
        }
    }

    /// Whether the server fsyncs before every ack (`sync_interval: always`); `None` when
    /// unknown. `flotilla serve` warns on anything but `Some(true)`.
    pub async fn server_syncs_always(&self) -> Option<bool> {
        self.server_sync().await.map(|sync| sync.always)
    }

    /// Waits (bounded by the request timeout) until the input stream's leader reports an end
    /// at or past `last`. Reads are direct gets that any replica may answer, while the stream
    /// info comes from the leader, so under load the writer can fold inputs a moment before
    /// the leader's answer counts them (a leader that has not yet applied the commit, or a
    /// stale one during an election). That is a transient disagreement: after the wait it is a
    /// [`LogError::Nats`], which the writer tries again, never a reason to stop.
    async fn wait_for_leader_at(&self, first: u64, last: u64) -> Result<(), LogError> {
        let deadline = Instant::now() + self.options.request_timeout.min(LEADER_CATCH_UP_MAX);
        let mut pause = WAIT_POLL_MIN;
        loop {
            let last_input = self.last_seq().await?;
            if last <= last_input {
                return Ok(());
            }
            if Instant::now() + pause > deadline {
                return Err(LogError::Nats(format!(
                    "decision batch covers inputs {first}..={last}, but the input stream's \
                     leader reports its end at {last_input}; asking again"
                )));
            }
            tracing::debug!(first, last, last_input, "the stream leader trails the read");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(WAIT_POLL_MAX);
        }
    }

    fn fenced(&self, expected: u64, actual: u64, why: &str) -> LogError {
        tracing::warn!(writer = %self.writer_id, expected, actual, why, "decision append fenced");
        LogError::Fenced { expected, actual }
    }
}

impl LogReader for NatsLog {
    async fn read(&self, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        let name = self.input.cached_info().config.name.as_str();
        let max = max.min(READ_BATCH_MAX);
        let timeout = self.options.request_timeout;
        // A retention window removed what lies at or before the base (`retention`).
        let from = from.max(self.retention.read_from());
        let messages = direct::get_batch(&self.client, name, from, max, timeout).await?;
        Ok(messages
            .into_iter()
            .map(|message| {
                let origin = InputOrigin {
                    seq: message.sequence,
                    subject: Some(message.subject.as_str()),
                    log_time: given_times::log_time(&message, self.keeps_given_times),
                };
                StoredEvent {
                    seq: message.sequence,
                    record: read_input(&message.payload, &origin),
                }
            })
            .collect())
    }

    async fn last_seq(&self) -> Result<u64, LogError> {
        Ok(self.input_info().await?.state.last_sequence)
    }

    /// Polls the input stream's last sequence: at once, then after pauses doubling from
    /// [`WAIT_POLL_MIN`] to [`WAIT_POLL_MAX`] until `timeout`. Chosen over a consumer because it
    /// holds no server state, survives reconnects and leader changes unchanged, and costs one
    /// small request per poll; the price is up to [`WAIT_POLL_MAX`] of latency after idling.
    ///
    /// Every poll, the first too, ends at the deadline: while an R3 stream elects a new leader
    /// (about 5 s after losing one, `docs/reliability.md`) its info request goes unanswered,
    /// and waiting out [`NatsOptions::request_timeout`] (10 s by default) kept the writer idle
    /// for seconds after the new leader took writes. A wait cut off so returns the highest
    /// sequence seen, or `after` when none was; the caller reads again, and `read` reports a
    /// server that stays away.
    async fn wait_for(&self, after: u64, timeout: Duration) -> Result<u64, LogError> {
        let deadline = Instant::now() + timeout;
        if self.retention.writing() {
            // An idle writer folds nothing and checkpoints nothing: it still keeps max_age
            // clear of the inputs after its newest checkpoint (`retention`), within this wait
            // (cut short, it is done again at the next).
            let guard = self.guard_newest_checkpoint(after);
            let _ = tokio::time::timeout_at(deadline, guard).await;
        }
        let mut highest = None;
        let mut pause = WAIT_POLL_MIN;
        loop {
            match tokio::time::timeout_at(deadline, self.last_seq()).await {
                Ok(last) => highest = highest.max(Some(last?)),
                Err(_) => break,
            }
            let now = Instant::now();
            if highest.is_some_and(|highest| highest > after) || now >= deadline {
                break;
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(WAIT_POLL_MAX);
        }
        Ok(highest.unwrap_or(after))
    }

    async fn read_decisions(&self, from: u64, max: usize) -> Result<Vec<DecisionBatch>, LogError> {
        let max = max.min(READ_BATCH_MAX);
        if max == 0 {
            return Ok(Vec::new());
        }
        let timeout = self.options.request_timeout;
        match decisions::first_batch_covering(&self.decisions, from, timeout).await? {
            Some(start) => {
                let (client, stream) = (&self.client, &self.decisions);
                decisions::read_batches(client, stream, &self.batches, (start, max), timeout).await
            }
            None => Ok(Vec::new()),
        }
    }

    async fn last_decided_seq(&self) -> Result<u64, LogError> {
        Ok(last_decision(&self.decisions, self.options.request_timeout)
            .await?
            .fence
            .last_decided)
    }

    async fn load_checkpoint_before(&self, seq: u64) -> Result<Option<Checkpoint>, LogError> {
        checkpoints::load_before(&self.checkpoints, self.options.request_timeout, seq).await
    }

    async fn load_checkpoint(&self) -> Result<Option<Checkpoint>, LogError> {
        checkpoints::load(&self.checkpoints, self.options.request_timeout).await
    }

    /// The stored base, or a later checkpoint when `max_age` removed the inputs after it
    /// ([`retention`]).
    async fn base_seq(&self) -> Result<u64, LogError> {
        self.reader_base().await
    }

    async fn newer_build(&self) -> Result<Option<String>, LogError> {
        let announced = builds::newest(&self.builds).await?;
        Ok(builds::decline_reason(
            announced.as_ref().map(|(versions, _)| versions),
        ))
    }

    async fn first_seq_of(&self, ids: &[Uuid]) -> Result<BTreeMap<Uuid, u64>, LogError> {
        event_ids::first_seq_of(&self.event_ids, ids, self.options.request_timeout).await
    }
}

impl EventLog for NatsLog {
    async fn append(
        &self,
        events: Vec<Envelope>,
        time: AppendTime,
    ) -> Result<Vec<Appended>, LogError> {
        self.append_events(&events, time).await
    }

    async fn append_decisions(&self, batch: &DecisionBatch) -> Result<(), LogError> {
        let appended = self.append_decisions_fenced(batch).await;
        match &appended {
            Ok(()) => self.retention.note_writing(true),
            Err(LogError::Fenced { .. }) => self.retention.note_writing(false),
            Err(_) => {}
        }
        appended?;
        // Only the writer appends decisions: it keeps max_age clear of what it needs.
        self.guard_newest_checkpoint(batch.last_input_seq).await;
        Ok(())
    }

    /// Learns the decisions stream's position afresh. Only a standby that has just been granted
    /// the writer lease calls it, before it folds the undecided tail: a writer that was fenced
    /// never calls it, so it stays fenced.
    async fn claim_writer_position(&self) -> Result<u64, LogError> {
        let mut fence = self.fence.lock().await;
        *fence = last_decision(&self.decisions, self.options.request_timeout)
            .await?
            .fence;
        Ok(fence.last_decided)
    }

    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<u64, LogError> {
        self.save_encoded_checkpoint(checkpoints::encode(checkpoint)?)
            .await
    }

    /// Stores the checkpoint, then (the writer alone saves checkpoints) applies the retention
    /// window ([`retention`]).
    async fn save_encoded_checkpoint(&self, encoded: EncodedCheckpoint) -> Result<u64, LogError> {
        let seq = encoded.seq;
        // The thinning never counts the seek checkpoints before the base.
        self.fresh_base().await;
        let seeking = checkpoints::Seeking {
            base: self.retention.read_from() - 1,
            window: self.options.retain,
            time_ms: self.checkpoint_time_ms(seq).await?,
        };
        let bytes = checkpoints::save_encoded(&self.checkpoints, &encoded, seeking).await?;
        if bytes > 0 {
            self.after_checkpoint(seq).await;
        }
        Ok(bytes)
    }

    async fn announce_build(&self, by: &str) -> Result<(), LogError> {
        builds::announce(&self.builds, &builds::BuildVersions::this_build(by)).await
    }

    async fn record_folded(&self, folded: &[(Uuid, u64)]) -> Result<(), LogError> {
        let timeout = self.options.request_timeout;
        event_ids::record_folded(&self.client, &self.event_ids, folded, timeout).await
    }

    /// A stream of the log refused its last write at its limits ([`limits`]).
    fn storage_full(&self) -> bool {
        self.limits.is_full()
    }
}

impl NatsLog {
    /// [`EventLog::append_decisions`]: the fenced publish.
    async fn append_decisions_fenced(&self, batch: &DecisionBatch) -> Result<(), LogError> {
        let (first, last) = (batch.first_input_seq, batch.last_input_seq);
        if first == 0 || first > last {
            return Err(LogError::Storage(format!(
                "decision batch covers inputs {first}..={last}: not a range of input sequences"
            )));
        }
        let expected = first - 1;
        let mut fence = self.fence.lock().await;
        if fence.last_decided != expected {
            let actual = last_decision(&self.decisions, self.options.request_timeout)
                .await?
                .fence
                .last_decided;
            let why = format!("this writer last decided {}", fence.last_decided);
            return Err(self.fenced(expected, actual, &why));
        }
        self.wait_for_leader_at(first, last).await?;
        let msg_id = format!("{}:{first}-{last}", self.writer_id);
        let target = decisions::Target {
            context: &self.context,
            stream: &self.decisions,
            batches: &self.batches,
            max_payload: self.client.server_info().max_payload,
            budget: self.options.request_timeout,
        };
        // Bounded: each attempt after the first follows messages that are not batches.
        for _ in 0..PUBLISH_OVER_NOT_BATCHES_MAX {
            let ack = decisions::publish(&target, *fence, &msg_id, batch).await?;
            let err = match ack {
                Ok(ack) => {
                    *fence = Fence {
                        stream_seq: ack.sequence,
                        last_decided: last,
                    };
                    self.limits
                        .stored(&self.decisions.cached_info().config.name);
                    return Ok(());
                }
                Err(err) if err.kind() == PublishErrorKind::WrongLastSequence => err,
                Err(err) => {
                    let detail = format!("ack of decision batch {first}..={last}: {err}");
                    if limits::publish_at_limits(&err) {
                        let stream = &self.decisions.cached_info().config.name;
                        return Err(self.limits.refused(stream, detail));
                    }
                    return Err(LogError::Nats(detail));
                }
            };
            let found = last_decision(&self.decisions, self.options.request_timeout).await?;
            // The server checks the expected sequence before the message id, so a retry of
            // our own batch whose ack was lost lands here: recognise it by the id, which names
            // this writer, as the last batch.
            if found.msg_id.as_deref() == Some(msg_id.as_str()) && found.fence.last_decided == last
            {
                *fence = found.fence;
                return Ok(());
            }
            if found.fence.last_decided != expected {
                let actual = found.fence.last_decided;
                return Err(self.fenced(expected, actual, "another writer appended decisions"));
            }
            // Only messages that are not batches came after ours: nobody decided anything, so
            // this writer still holds the position and publishes after them.
            tracing::warn!(%err, from = fence.stream_seq, to = found.fence.stream_seq, "the decisions stream moved by messages that are not batches; publishing after them");
            fence.stream_seq = found.fence.stream_seq;
        }
        Err(LogError::Nats(format!(
            "decision batch {first}..={last}: the decisions stream keeps moving by messages \
             that are not batches"
        )))
    }
}

/// The servers `urls` names: one URL, or the nodes of a cluster separated by commas, so the
/// client can connect to any of them and fail over when one is lost.
#[must_use]
pub fn server_urls(urls: &str) -> Vec<&str> {
    urls.split(',')
        .map(str::trim)
        .filter(|url| !url.is_empty())
        .collect()
}

fn nats<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> LogError {
    move |err| LogError::Nats(format!("{what}: {err}"))
}

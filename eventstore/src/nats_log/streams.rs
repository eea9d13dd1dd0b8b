//! The JetStream streams and the checkpoint bucket: every setting spelled out, and a check that
//! an existing stream still has the settings the log's guarantees rest on.
//!
//! Both streams are the log's truth, so they keep everything (`limits` retention with no
//! limit), refuse rather than drop when an operator adds a limit later (`discard: new`), and
//! deny message deletion, which keeps sequences dense. Under a retention window the writer
//! purges what lies before the log's base and sets the input stream's `max_age`
//! (`retention.rs`), so that stream's `max_age` is the writer's, not a setting checked here.
//! Streams created before that deny purges as well; JetStream never lifts that, and they are
//! bound as they are.

use std::time::Duration;

use async_nats::jetstream::kv;
use async_nats::jetstream::object_store::{self, ObjectStore};
use async_nats::jetstream::stream::{
    Compression, Config, DiscardPolicy, PersistenceMode, RetentionPolicy, StorageType, Stream,
};
use async_nats::jetstream::{self, ErrorCode, context::CreateStreamErrorKind};

use super::NatsOptions;
use super::placing::{create_key_value, key_value_config};
use super::subjects::{DECISIONS_SUBJECT, INPUT_SUBJECTS};
use crate::LogError;

/// The input stream's name.
pub(crate) fn input_stream_name(options: &NatsOptions) -> String {
    format!("{}_INPUT", options.stream_prefix)
}

/// The decisions stream's name.
pub(crate) fn decisions_stream_name(options: &NatsOptions) -> String {
    format!("{}_DECISIONS", options.stream_prefix)
}

/// The checkpoint object store bucket's name (its stream is `OBJ_<bucket>`).
pub(crate) fn checkpoint_bucket_name(options: &NatsOptions) -> String {
    format!("{}_CHECKPOINTS", options.stream_prefix)
}

/// The object store bucket holding decision batches too large for one message.
pub(crate) fn batch_bucket_name(options: &NatsOptions) -> String {
    format!("{}_DECISION_BATCHES", options.stream_prefix)
}

/// The key-value bucket of folded event ids (its stream is `KV_<bucket>`).
pub(crate) fn event_id_bucket_name(options: &NatsOptions) -> String {
    format!("{}_EVENT_IDS", options.stream_prefix)
}

/// A log stream's full configuration.
pub(crate) fn log_stream_config(
    name: String,
    subject: &str,
    description: &str,
    options: &NatsOptions,
) -> Config {
    Config {
        name,
        description: Some(description.to_owned()),
        subjects: vec![subject.to_owned()],
        storage: StorageType::File,
        num_replicas: options.replicas,
        // Keep everything: the log is replayed from sequence 1, or from its base.
        retention: RetentionPolicy::Limits,
        max_messages: -1,
        max_bytes: -1,
        max_age: Duration::ZERO,
        max_messages_per_subject: -1,
        // The server's max_payload bounds a message; codec limits bound what we write.
        max_message_size: -1,
        max_consumers: -1,
        // If a limit is ever set, refuse new writes loudly instead of dropping history.
        discard: DiscardPolicy::New,
        discard_new_per_subject: false,
        duplicate_window: options.duplicate_window,
        // Direct gets let any replica serve reads (and batched gets serve `read`).
        allow_direct: true,
        mirror_direct: false,
        // Dense sequences: no message is removed from the middle; a retention cut purges
        // what lies before the base (`retention.rs`).
        deny_delete: true,
        deny_purge: false,
        allow_rollup: false,
        no_ack: false,
        sealed: false,
        // Per-message fsync behaviour is the server's `sync_interval`; `default` persistence
        // at least writes before acking (`async` would ack first).
        persist_mode: Some(PersistenceMode::Default),
        // Events are small and latency matters more than disk here.
        compression: Some(Compression::None),
        allow_message_ttl: false,
        allow_atomic_publish: false,
        allow_message_schedules: false,
        allow_message_counter: false,
        allow_batch_publish: false,
        ..Config::default()
    }
}

/// The input stream's configuration.
///
/// It allows atomic batch publishes (`atomic.rs`): an append of many events is stored and synced
/// as one. A stream created before that keeps working, one message at a time.
///
/// Its `max_age` follows the retention window ([`super::retention::max_age_for`]); the
/// duplicate window, which JetStream keeps within `max_age`, is shortened to it if longer.
pub(crate) fn input_stream_config(options: &NatsOptions) -> Config {
    let max_age = options
        .retain
        .map_or(Duration::ZERO, super::retention::max_age_for);
    Config {
        allow_atomic_publish: true,
        max_age,
        duplicate_window: within_max_age(options.duplicate_window, max_age),
        ..log_stream_config(
            input_stream_name(options),
            INPUT_SUBJECTS,
            "flotilla input events (the log); payload: codec::encode_envelope",
            options,
        )
    }
}

/// The decisions stream's configuration.
pub(crate) fn decisions_stream_config(options: &NatsOptions) -> Config {
    log_stream_config(
        decisions_stream_name(options),
        DECISIONS_SUBJECT,
        "flotilla decision batches; payload: codec::encode_decisions(DecisionBatch)",
        options,
    )
}

/// A duplicate window JetStream accepts beside `max_age` (zero: none): at most that.
fn within_max_age(duplicate_window: Duration, max_age: Duration) -> Duration {
    if max_age.is_zero() {
        duplicate_window
    } else {
        duplicate_window.min(max_age)
    }
}

/// Sets the `max_age` of the stream `name` (zero: none), and shortens its duplicate window to
/// it if longer; a stream that has it already is left alone.
pub(crate) async fn set_max_age(
    context: &jetstream::Context,
    name: &str,
    max_age: Duration,
) -> Result<(), LogError> {
    let mut stream = context
        .get_stream(name)
        .await
        .map_err(|err| LogError::Nats(format!("bind stream {name}: {err}")))?;
    let mut config = stream
        .info()
        .await
        .map_err(|err| LogError::Nats(format!("stream info {name}: {err}")))?
        .config
        .clone();
    if config.max_age == max_age {
        return Ok(());
    }
    config.max_age = max_age;
    config.duplicate_window = within_max_age(config.duplicate_window, max_age);
    context
        .update_stream(&config)
        .await
        .map_err(|err| LogError::Nats(format!("set max_age of stream {name}: {err}")))?;
    Ok(())
}

/// Creates the stream, or binds to an existing one whose guarantees match.
///
/// Creation is idempotent on the server for an identical configuration. A stream that exists
/// with a different one is accepted if only tunables differ (replicas, duplicate window,
/// description: an operator may have changed them on purpose, and a follower with default
/// options must not scale an R3 stream down), and refused if a setting the log relies on
/// differs.
pub(crate) async fn create_or_bind(
    context: &jetstream::Context,
    config: Config,
) -> Result<Stream, LogError> {
    let name = config.name.clone();
    let created = super::placing::patiently(&name, || context.create_stream(config.clone())).await;
    match created {
        Ok(stream) => return Ok(stream),
        Err(err) if is_name_in_use(&err) => {}
        Err(err) => return Err(LogError::Nats(format!("create stream {name}: {err}"))),
    }
    let mut stream = context
        .get_stream(&name)
        .await
        .map_err(|err| LogError::Nats(format!("bind stream {name}: {err}")))?;
    let existing = stream
        .info()
        .await
        .map_err(|err| LogError::Nats(format!("stream info {name}: {err}")))?
        .config
        .clone();
    let mismatches = guarantee_mismatches(&config, &existing);
    if !mismatches.is_empty() {
        return Err(LogError::Nats(format!(
            "stream {name} exists with settings the log cannot run on: {}",
            mismatches.join(", ")
        )));
    }
    if existing.num_replicas != config.num_replicas
        || existing.duplicate_window != config.duplicate_window
    {
        tracing::warn!(
            stream = %name,
            replicas = existing.num_replicas,
            wanted_replicas = config.num_replicas,
            duplicate_window = ?existing.duplicate_window,
            wanted_duplicate_window = ?config.duplicate_window,
            "binding to an existing stream whose tunables differ from the options; keeping them"
        );
    }
    Ok(stream)
}

fn is_name_in_use(err: &jetstream::context::CreateStreamError) -> bool {
    // "stream name already in use with a different configuration"
    matches!(err.kind(), CreateStreamErrorKind::JetStream(js)
        if js.error_code() == ErrorCode::STREAM_NAME_EXIST)
}

/// The settings that differ and that the log's guarantees depend on. Purges may be denied or
/// not (a stream created before retention denies them); the input stream's `max_age` is the
/// writer's retention window, while the decisions stream, whose last batch is the writers'
/// fence, must never lose one by age.
fn guarantee_mismatches(wanted: &Config, found: &Config) -> Vec<&'static str> {
    let input = wanted
        .subjects
        .iter()
        .any(|subject| subject == INPUT_SUBJECTS);
    let checks = [
        ("subjects", wanted.subjects == found.subjects),
        ("storage", wanted.storage == found.storage),
        ("retention", wanted.retention == found.retention),
        ("discard", wanted.discard == found.discard),
        ("max_age", input || found.max_age.is_zero()),
        ("allow_direct", wanted.allow_direct == found.allow_direct),
        ("deny_delete", wanted.deny_delete == found.deny_delete),
        (
            "allow_rollup_hdrs",
            wanted.allow_rollup == found.allow_rollup,
        ),
        ("no_ack", wanted.no_ack == found.no_ack),
        ("sealed", wanted.sealed == found.sealed),
        (
            "allow_msg_ttl",
            wanted.allow_message_ttl == found.allow_message_ttl,
        ),
        ("mirror", found.mirror.is_none()),
        ("sources", found.sources.as_ref().is_none_or(Vec::is_empty)),
        ("subject_transform", found.subject_transform.is_none()),
        (
            "persist_mode",
            found.persist_mode.unwrap_or_default() == PersistenceMode::Default,
        ),
    ];
    checks
        .into_iter()
        .filter(|(_, same)| !same)
        .map(|(field, _)| field)
        .collect()
}

/// Creates the checkpoint bucket, or binds to it. It holds the newest checkpoint (a put
/// replaces the object and purges its old chunks), the thinned ones kept for seeking and the
/// log's base (`retention.rs`), so it has no age or size limit: a limit could drop the base or
/// the newest.
pub(crate) async fn checkpoint_bucket(
    context: &jetstream::Context,
    options: &NatsOptions,
) -> Result<ObjectStore, LogError> {
    let description = "flotilla checkpoints of folded state";
    object_bucket(
        context,
        options,
        checkpoint_bucket_name(options),
        description,
    )
    .await
}

/// Creates (or binds to) the bucket of decision batches larger than the server's
/// `max_payload`; the decisions stream holds a pointer to each (see `decisions`). Part of the
/// log, so kept as long as the stream that points at them: no age or size limit either.
pub(crate) async fn batch_bucket(
    context: &jetstream::Context,
    options: &NatsOptions,
) -> Result<ObjectStore, LogError> {
    let description = "flotilla decision batches over the server's max_payload";
    object_bucket(context, options, batch_bucket_name(options), description).await
}

/// Binds to an object store bucket, or creates it: file storage, compressed (its objects are
/// large, written rarely and compress well), no age or size limit, the log's replicas.
async fn object_bucket(
    context: &jetstream::Context,
    options: &NatsOptions,
    bucket: String,
    description: &str,
) -> Result<ObjectStore, LogError> {
    if let Ok(store) = context.get_object_store(&bucket).await {
        return Ok(store);
    }
    let config = object_store::Config {
        bucket: bucket.clone(),
        description: Some(description.to_owned()),
        max_age: Duration::ZERO,
        max_bytes: -1,
        storage: StorageType::File,
        num_replicas: options.replicas,
        compression: true,
        placement: None,
    };
    super::placing::patiently(&bucket, || context.create_object_store(config.clone()))
        .await
        .map_err(|err| LogError::Nats(format!("create object store {bucket}: {err}")))
}

/// Creates (or binds to) the bucket of folded event ids: event id → the first input sequence it
/// was folded at. It is what makes a duplicate older than the stream's duplicate window
/// recognisable, so it keeps every id while its input is kept (the input stream's `max_age`,
/// no size limit), one value per key (a key is only ever created, never updated), on file
/// storage with the log's replicas. A bucket created here takes atomic batches of creates.
pub(crate) async fn event_id_bucket(
    context: &jetstream::Context,
    options: &NatsOptions,
) -> Result<kv::Store, LogError> {
    let bucket = event_id_bucket_name(options);
    if let Ok(store) = context.get_key_value(&bucket).await {
        return Ok(store);
    }
    let description = "flotilla folded event ids: id -> first input sequence";
    // The ids of the inputs a retention window removes expire with them, never before.
    let max_age = options
        .retain
        .map_or(Duration::ZERO, super::retention::max_age_for);
    let config = kv::Config {
        max_bytes: -1,
        max_value_size: -1,
        compression: false,
        ..key_value_config(&bucket, description, max_age, options)
    };
    let store = create_key_value(context, config, "key-value bucket").await?;
    allow_atomic_batches(context, &store).await;
    context
        .get_key_value(&bucket)
        .await
        .map_err(|err| LogError::Nats(format!("bind key-value bucket {bucket}: {err}")))
}

/// Lets a new bucket's stream take atomic batches (`atomic.rs`), which `kv::Config` cannot ask
/// for. A server that refuses (older than 2.12) leaves the bucket created one key at a time.
async fn allow_atomic_batches(context: &jetstream::Context, store: &kv::Store) {
    let config = Config {
        allow_atomic_publish: true,
        ..store.stream.cached_info().config.clone()
    };
    if let Err(err) = context.update_stream(config).await {
        tracing::warn!(stream = %store.stream_name, %err, "atomic batches not allowed; creating event ids one by one");
    }
}

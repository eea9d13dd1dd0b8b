//! `flotilla serve`: the hub process — log, single writer, clock and HTTP API together.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use flotilla_eventstore::EventLog;
use flotilla_eventstore::nats_log::NatsOptions;
use tokio::net::TcpListener;

use crate::auth::{Access, KindScope, KnownScope, TokenSet};
use crate::runtime::{Hub, HubConfig, HubError, clock};
use flotilla_adapters::signals::shutdown_signal;
use flotilla_adapters::store::AnyLog;

/// Default API address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7420";
/// Default data directory of the embedded log.
pub const DEFAULT_DATA_DIR: &str = "flotilla-data";

/// Options of `flotilla serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Data directory of the embedded log.
    pub data: PathBuf,
    /// NATS server URL (or a cluster's, comma-separated); when set, the log is a JetStream
    /// stream there.
    pub nats: Option<String>,
    /// The NATS server's monitoring URL, to read its fsync policy.
    pub nats_monitoring: Option<String>,
    /// The hub's NATS credentials file.
    pub nats_creds: Option<PathBuf>,
    /// Replicas of the streams and buckets the hub creates on NATS.
    pub nats_replicas: usize,
    /// On NATS: contend for the writer role, or only follow.
    pub role: crate::standby::Role,
    /// API address.
    pub listen: SocketAddr,
    /// Tokens file (`--tokens`); without it the API is open, which only loopback allows.
    pub tokens: Option<PathBuf>,
    /// Certificate chain and private key (PEM) to serve HTTPS with.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Connection caps and timeouts of the API.
    pub connections: flotilla_adapters::connections::ConnectionLimits,
    /// The log's retention window (`None`: every input is kept): on NATS the writer cuts the
    /// streams and sets the input stream's `max_age` (`nats_log::retention`).
    pub retain: Option<std::time::Duration>,
    /// Where the embedded log writes what its retention window removes, first (`None`: it is
    /// gone).
    pub archive: Option<PathBuf>,
    /// Runtime settings.
    pub hub: HubConfig,
}

/// Opens the configured log and runs the hub until Ctrl-C / SIGTERM.
///
/// # Errors
/// When the log cannot be opened, the address cannot be bound, or the writer fails.
pub async fn serve(options: ServeOptions) -> anyhow::Result<()> {
    let access = match &options.tokens {
        Some(path) => Access::Tokens(Arc::new(TokenSet::load(path)?)),
        None => Access::Open,
    };
    // Checked before the log is opened, so a refused start touches nothing.
    access.check_listener(options.listen)?;
    let tls = match &options.tls {
        Some((cert, key)) => Some(flotilla_adapters::tls::server_config(cert, key)?),
        None => None,
    };
    let (log, nats) = open_log(&options).await?;
    let hub = Hub::open(Arc::new(log), options.hub.clone())
        .await
        .context("restoring state")?;
    if nats.is_some() {
        // Until it holds the writer lease, a hub on NATS follows (no ticks, no checkpoints).
        hub.set_following(true)?;
        if options.role == crate::standby::Role::ReadOnly {
            hub.set_read_only()?;
        }
    }
    let listener = bind(options.listen, tls.is_some()).await?;
    let security = ApiSecurity {
        access,
        tls,
        connections: options.connections.fitted_to_fd_limit(),
    };
    let Some(client) = nats else {
        return run(hub, listener, security, shutdown_signal()).await;
    };
    spawn_nats_services(&hub, client).await?;
    let name = format!("{}@{}", uuid::Uuid::now_v7(), options.listen);
    // Before this hub publishes anything: a writer of an older build that meets this build's
    // records then knows they are an upgrade's, not a publisher's (`nats_log::builds`).
    patiently("announcing this build to the log's other hubs", || {
        hub.log().announce_build(&name)
    })
    .await?;
    let role = crate::standby::run(hub.clone(), options.role, name);
    run_with(hub, listener, security, shutdown_signal(), role).await
}

/// Opens the configured log: NATS (with its client) or the embedded file.
async fn open_log(options: &ServeOptions) -> anyhow::Result<(AnyLog, Option<async_nats::Client>)> {
    let Some(url) = &options.nats else {
        let redb = flotilla_eventstore::redb_log::RedbOptions {
            retain: options
                .retain
                .and_then(|window| chrono::Duration::from_std(window).ok()),
            archive: options.archive.clone(),
            ..flotilla_eventstore::redb_log::RedbOptions::default()
        };
        let log = AnyLog::open_embedded_with(&options.data, redb)
            .with_context(|| format!("opening the embedded log in {}", options.data.display()))?;
        let kept =
            flotilla_adapters::store::retention_text(options.retain, options.archive.as_deref());
        tracing::info!(data = %options.data.display(), "embedded log: {kept}");
        println!("log: embedded redb in {}, {kept}", options.data.display());
        return Ok((log, None));
    };
    let connection = flotilla_adapters::nats_auth::NatsConnection {
        creds: options.nats_creds.clone(),
        ..Default::default()
    };
    let client = connection.connect(url, "flotilla-hub").await?;
    let nats_options = NatsOptions {
        monitoring_url: options.nats_monitoring.clone(),
        replicas: options.nats_replicas,
        // A hub on a test clock records exact times (a test stream; see `given_times`).
        test_given_times: options.hub.test_clock.is_some(),
        retain: options.retain,
        ..NatsOptions::default()
    };
    let log = AnyLog::with_nats_client(client.clone(), nats_options)
        .await
        .with_context(|| format!("opening the log on NATS at {url}"))?;
    // Not the URL: it may carry a user and password.
    let retention = flotilla_adapters::store::retention_text(options.retain, None);
    tracing::info!("log on NATS: {retention}, applied while this hub writes");
    println!("log: NATS JetStream, {retention}, applied while this hub writes");
    warn_if_unsynced(&log).await;
    Ok((log, Some(client)))
}

/// The services of a hub on NATS: JSON ingest, rejection notices, and the works bucket (the
/// last two only act while this hub writes).
async fn spawn_nats_services(hub: &Hub<AnyLog>, client: async_nats::Client) -> anyhow::Result<()> {
    let ingress = crate::nats_ingress::run(hub.clone(), client.clone());
    tokio::spawn(async move {
        if let Err(error) = ingress.await {
            tracing::error!(%error, "NATS ingest stopped");
        }
    });
    tokio::spawn(crate::nats_rejections::run(hub.clone(), client));
    if let AnyLog::Nats(nats) = hub.log().as_ref() {
        let store = patiently("opening the works bucket", || {
            crate::nats_works::works_bucket(nats.jetstream(), nats.options())
        })
        .await?;
        tokio::spawn(crate::nats_works::run(hub.clone(), store));
    }
    Ok(())
}

/// How long a hub on NATS keeps asking for what it needs before it serves: a stream or bucket
/// of a three-node cluster that has just started, or just lost its leader, answers nothing
/// until it elects one (seconds, longer on a loaded machine).
const NATS_READY_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `step` until it succeeds, asking again after pauses doubling from 250 ms to 2 s, for at
/// most [`NATS_READY_BUDGET`]; the last error when that is spent.
async fn patiently<T, E, F, Fut>(what: &'static str, mut step: F) -> anyhow::Result<T>
where
    E: std::fmt::Display + Send + Sync + 'static,
    anyhow::Error: From<E>,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + NATS_READY_BUDGET;
    let mut pause = std::time::Duration::from_millis(250);
    loop {
        match step().await {
            Ok(done) => return Ok(done),
            Err(error) if tokio::time::Instant::now() + pause < deadline => {
                tracing::warn!(%error, "{what}: NATS did not answer yet; asking again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(2));
            }
            Err(error) => return Err(anyhow::Error::from(error).context(what)),
        }
    }
}

async fn warn_if_unsynced(log: &AnyLog) {
    if let AnyLog::Nats(nats) = log {
        match nats.server_syncs_always().await {
            Some(true) => {}
            Some(false) => tracing::warn!(
                "the NATS server acknowledges publishes before it fsyncs them \
                 (jetstream sync_interval is not `always`): a power loss can lose acknowledged \
                 events; see docs/durability.md"
            ),
            None => tracing::warn!(
                "cannot tell whether the NATS server fsyncs before acknowledging; unless its \
                 config has `jetstream {{ sync_interval: always }}`, a power loss can lose \
                 acknowledged events; see docs/durability.md"
            ),
        }
    }
}

/// Who may use the API, and whether it is served over TLS.
#[derive(Debug, Clone)]
pub struct ApiSecurity {
    /// Tokens, or open (loopback only).
    pub access: Access,
    /// The TLS configuration for HTTPS; plain HTTP without it.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Connection caps and timeouts.
    pub connections: flotilla_adapters::connections::ConnectionLimits,
}

impl ApiSecurity {
    /// Plain HTTP, open to everyone: loopback only.
    #[must_use]
    pub fn open() -> Self {
        Self {
            access: Access::Open,
            tls: None,
            connections: flotilla_adapters::connections::ConnectionLimits::default(),
        }
    }
}

/// Binds the API address; `https` only changes the scheme of the line it prints.
///
/// # Errors
/// When the address cannot be bound.
pub async fn bind(listen: SocketAddr, https: bool) -> anyhow::Result<TcpListener> {
    let listener = listen_socket(listen).with_context(|| format!("binding {listen}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    // Tests and scripts read this line to find a port chosen by the OS.
    let scheme = if https { "https" } else { "http" };
    println!("flotilla hub listening on {scheme}://{local}");
    Ok(listener)
}

/// Connections the kernel queues for the accept loop; tokio's default of 1,024 filled under
/// a flood of connections, and then a normal client's SYN waited a second for its retry.
const LISTEN_BACKLOG: u32 = 4_096;

fn listen_socket(listen: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if listen.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(listen)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Runs writer, clock and API (behind `security`) until `stop` resolves; then stops them and
/// checkpoints.
///
/// # Errors
/// When the API is open on a listener beyond loopback, or the writer or the API fails.
pub async fn run<L: EventLog>(
    hub: Hub<L>,
    listener: TcpListener,
    security: ApiSecurity,
    stop: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let writer = hub.clone();
    let role = async move { writer.run_writer().await };
    run_with(hub, listener, security, stop, role).await
}

/// [`run`] in a task, open (loopback only), until the returned sender fires or is dropped;
/// for the commands that run a hub beside their own work (`demo`, `simulate`).
pub fn spawn_open<L: EventLog>(
    hub: Hub<L>,
    listener: TcpListener,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let stop_signal = async {
        let _ = stopped.await;
    };
    let server = tokio::spawn(run(hub, listener, ApiSecurity::open(), stop_signal));
    (stop, server)
}

/// As [`run`], with `role` in place of the writer loop (a hub on NATS contends for the writer
/// role, or follows).
///
/// # Errors
/// As [`run`].
pub async fn run_with<L: EventLog>(
    hub: Hub<L>,
    listener: TcpListener,
    security: ApiSecurity,
    stop: impl Future<Output = ()> + Send + 'static,
    role: impl Future<Output = Result<(), HubError>> + Send + 'static,
) -> anyhow::Result<()> {
    let address = listener.local_addr().context("reading the bound address")?;
    security.access.check_listener(address)?;
    let app = crate::http_metrics::track(crate::auth::protect(
        crate::http::router(hub.clone()),
        security.access,
        kind_scope(&hub),
        known_scope(&hub),
    ));
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move {
            let result = role.await;
            if result.is_err() {
                // A writer that stopped (fenced, or the log failed) takes the API down with it,
                // so nobody keeps reading a state that no longer advances.
                hub.shutdown();
            }
            result
        }
    });
    let clock = tokio::spawn(clock::run(hub.clone()));
    let analyses = tokio::spawn(crate::runtime::analysis::run(hub.clone()));
    tokio::spawn(crate::metrics_scrape::run_upkeep(hub.clone()));
    let mut stopped = hub.shutdown_signal();
    let shutdown = async move {
        tokio::select! {
            () = stop => {}
            _ = stopped.changed() => {}
        }
    };
    crate::api_server::serve(listener, security.tls, app, security.connections, shutdown).await;
    hub.shutdown();
    let written = writer.await.context("writer task")?;
    let ticked = clock.await.context("clock task")?;
    let measured = analyses.await.context("analysis task")?;
    written.context("writer")?;
    ticked.context("clock")?;
    measured.context("analysis")?;
    tracing::info!("hub stopped cleanly");
    Ok(())
}

/// Whether a kind name resolves to a namespaced kind in the hub's current state.
fn kind_scope<L: EventLog>(hub: &Hub<L>) -> KindScope {
    let hub = hub.clone();
    Arc::new(move |kind: &str| {
        let view = hub.view().ok()?;
        flotilla_projections::resolve_kind(&view.folder.state, kind).map(|info| info.namespaced)
    })
}

/// Whether a kind name of a group is known as namespaced: the catalog, the Kubernetes built-ins
/// and the CRDs the hub's current state holds.
fn known_scope<L: EventLog>(hub: &Hub<L>) -> KnownScope {
    let hub = hub.clone();
    Arc::new(move |group: Option<&str>, kind: &str| {
        let view = hub.view().ok();
        let state = view.as_ref().map(|view| &view.folder.state);
        flotilla_core::query::kind_scope::namespaced(state, group, kind)
    })
}

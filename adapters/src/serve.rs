//! `flotilla serve`: the hub process — log, single writer, clock and HTTP API together.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use flotilla_eventstore::EventLog;
use tokio::net::TcpListener;

use crate::auth::{Access, KindScope, TokenSet};
use crate::runtime::{Hub, HubConfig, clock};
use crate::store::AnyLog;

/// Default API address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7420";
/// Default data directory of the embedded log.
pub const DEFAULT_DATA_DIR: &str = "flotilla-data";

/// Options of `flotilla serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Data directory of the embedded log.
    pub data: PathBuf,
    /// NATS server URL; when set, the log is a JetStream stream there.
    pub nats: Option<String>,
    /// The NATS server's monitoring URL, to read its fsync policy.
    pub nats_monitoring: Option<String>,
    /// API address.
    pub listen: SocketAddr,
    /// Tokens file (`--tokens`); without it the API is open, which only loopback allows.
    pub tokens: Option<PathBuf>,
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
    let log = match &options.nats {
        Some(url) => {
            let log = AnyLog::connect_nats(url, options.nats_monitoring.clone())
                .await
                .with_context(|| format!("connecting to NATS at {url}"))?;
            warn_if_unsynced(&log).await;
            log
        }
        None => AnyLog::open_embedded(&options.data)
            .with_context(|| format!("opening the embedded log in {}", options.data.display()))?,
    };
    let hub = Hub::open(Arc::new(log), options.hub.clone())
        .await
        .context("restoring state")?;
    let listener = bind(options.listen).await?;
    if let Some(url) = &options.nats {
        let client = async_nats::connect(url.as_str())
            .await
            .with_context(|| format!("connecting to NATS at {url} for ingest"))?;
        let ingress = crate::nats_ingress::run(hub.clone(), client);
        tokio::spawn(async move {
            if let Err(error) = ingress.await {
                tracing::error!(%error, "NATS ingest stopped");
            }
        });
    }
    run(hub, listener, access, shutdown_signal()).await
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

/// Binds the API address.
///
/// # Errors
/// When the address cannot be bound.
pub async fn bind(listen: SocketAddr) -> anyhow::Result<TcpListener> {
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    // Tests and scripts read this line to find a port chosen by the OS.
    println!("flotilla hub listening on http://{local}");
    Ok(listener)
}

/// Runs writer, clock and API (behind `access`) until `stop` resolves; then stops them and
/// checkpoints.
///
/// # Errors
/// When `access` is open on a listener beyond loopback, or the writer or the API fails.
pub async fn run<L: EventLog>(
    hub: Hub<L>,
    listener: TcpListener,
    access: Access,
    stop: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    access.check_listener(listener.local_addr().context("reading the bound address")?)?;
    let app = crate::auth::protect(crate::http::router(hub.clone()), access, kind_scope(&hub));
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move {
            let result = hub.run_writer().await;
            if result.is_err() {
                // A writer that stopped (fenced, or the log failed) takes the API down with it,
                // so nobody keeps reading a state that no longer advances.
                hub.shutdown();
            }
            result
        }
    });
    let clock = tokio::spawn(clock::run(hub.clone()));
    let mut stopped = hub.shutdown_signal();
    let api = axum::serve(listener, app).with_graceful_shutdown(async move {
        tokio::select! {
            () = stop => {}
            _ = stopped.changed() => {}
        }
    });
    let served = api.await;
    hub.shutdown();
    let written = writer.await.context("writer task")?;
    let ticked = clock.await.context("clock task")?;
    served.context("serving the API")?;
    written.context("writer")?;
    ticked.context("clock")?;
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

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

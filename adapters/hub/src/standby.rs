//! Roles of hubs sharing one NATS log: every `flotilla serve --nats` contends for the writer
//! lease (`flotilla_eventstore::nats_log::lease`). The holder writes; the others wait as
//! standbys, following the writer's decisions and serving the API from the state they fold,
//! and the first to take the lease after the writer dies becomes the writer. A hub started with
//! `--read-only` never contends: it is a read follower. Safety does not rest on the lease: a
//! writer that lost it is refused by the decisions stream's fence at its next batch.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;

use flotilla_eventstore::nats_log::lease::WriterLease;

use crate::runtime::{Hub, HubError};
use flotilla_adapters::store::AnyLog;

/// The writer lease's default time to live: how long a dead writer holds up its standby.
pub const LEASE_TTL_DEFAULT: Duration = Duration::from_secs(5);
/// Longest pause between two follow rounds of a standby or follower.
pub const FOLLOW_PAUSE: Duration = Duration::from_millis(100);

/// How this hub takes part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Contend for the writer lease; write while holding it, follow otherwise.
    Contend {
        /// The lease's time to live when this hub creates the lease bucket.
        lease_ttl: Duration,
    },
    /// Only follow (serve reads).
    ReadOnly,
}

/// Runs this hub's role until shutdown: the writer loop once it holds the lease, following
/// before that (or forever, read-only).
///
/// # Errors
/// A log failure, a divergence, or losing the writer role.
pub async fn run(hub: Hub<AnyLog>, role: Role, name: String) -> Result<(), HubError> {
    let Role::Contend { lease_ttl } = role else {
        println!("read follower: serving the log as the writer decides it");
        return hub.run_follower(FOLLOW_PAUSE, || false).await;
    };
    let AnyLog::Nats(nats) = hub.log().as_ref() else {
        return hub.run_writer().await;
    };
    let mut lease = nats.writer_lease(name, lease_ttl).await?;
    if !wait_for_lease(&hub, &mut lease).await? {
        return Ok(());
    }
    let folded = hub.take_writer_role().await?;
    println!("took the writer role at sequence {folded}");
    let lease = Arc::new(Mutex::new(lease));
    let renewer = tokio::spawn(keep_lease(hub.clone(), Arc::clone(&lease)));
    let written = hub.run_writer().await;
    renewer.abort();
    // A clean stop hands the role on at once; after a crash the lease expires instead.
    if written.is_ok()
        && hub.view()?.fenced.is_none()
        && let Err(error) = lease.lock().await.release().await
    {
        tracing::warn!(%error, "cannot release the writer lease; it expires by itself");
    }
    written
}

/// Follows the writer until this hub takes the lease (`true`) or shuts down (`false`).
async fn wait_for_lease(hub: &Hub<AnyLog>, lease: &mut WriterLease) -> Result<bool, HubError> {
    let mut shutdown = hub.shutdown_signal();
    let pause = FOLLOW_PAUSE.min(lease.ttl() / 4);
    let mut announced = false;
    loop {
        if *shutdown.borrow() {
            return Ok(false);
        }
        match lease.try_acquire().await {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            // The server is away: keep serving what was folded and ask again.
            Err(error) => tracing::warn!(%error, "cannot ask for the writer lease; trying again"),
        }
        if !announced && let Ok(holder) = lease.current_holder().await {
            println!(
                "standby: following the writer {}",
                holder.unwrap_or_default()
            );
            announced = true;
        }
        match hub.follow_decided().await {
            Ok(_) => {}
            Err(error) if crate::runtime::transient(&error) => {
                tracing::warn!(%error, "cannot follow the log; trying again");
            }
            Err(error) => return Err(error),
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            _ = shutdown.changed() => {}
        }
    }
}

/// Renews the lease every third of its time to live; when it is lost, the hub stops writing
/// and shuts down (a supervisor restarts it as a standby).
async fn keep_lease(hub: Hub<AnyLog>, lease: Arc<Mutex<WriterLease>>) {
    let every = lease.lock().await.ttl() / 3;
    loop {
        tokio::time::sleep(every).await;
        let mut lease = lease.lock().await;
        match lease.renew().await {
            Ok(true) => {}
            // Expired while nobody took it (the server was away longer than the lease lives):
            // take it again. Were another writer to have come and gone meanwhile, the fence
            // refuses this hub's next batch.
            Ok(false) if matches!(lease.try_acquire().await, Ok(true)) => {
                tracing::warn!("the writer lease expired unclaimed; took it again");
            }
            Ok(false) => {
                let holder = lease.current_holder().await.ok().flatten();
                tracing::error!(?holder, "lost the writer lease; stopping");
                hub.lose_lease(holder.unwrap_or_default());
                return;
            }
            Err(error) => tracing::warn!(%error, "cannot renew the writer lease; retrying"),
        }
    }
}

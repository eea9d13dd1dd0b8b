//! The agent's loop: heartbeat at the MemberCluster's period (reading the MemberCluster each
//! time, which is also how leaving is noticed), reconcile every change of the Works, and recheck
//! Works whose availability is pending. It ends when the member leaves or is gone (after
//! removing what it placed), on shutdown, or after `max_seconds`.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::applier::Applier;
use super::hub::{HubError, Membership, rejections};
use super::link::HubLink;
use super::reconcile::{ReconcileError, Reconciler};
use super::report::{ClusterProperties, heartbeat_event, leave_event};
use super::watch::WorkChange;

/// How often Works with pending availability are observed again.
pub const RECHECK_EVERY: Duration = Duration::from_millis(250);
/// The retry pause after a failed heartbeat (when shorter than the period).
pub const HEARTBEAT_RETRY: Duration = Duration::from_secs(2);
/// Work changes buffered between the watcher and the reconciler.
const CHANGES_BUFFER: usize = 64;

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The MemberCluster is leaving or gone; what the agent placed is removed.
    Left,
    /// Shut down (signal) or out of time; what it placed stays.
    Stopped,
}

/// The loop's inputs besides the applier.
pub struct Loop {
    /// The cluster's name.
    pub cluster: String,
    /// The hub.
    pub hub: HubLink,
    /// What heartbeats carry.
    pub properties: ClusterProperties,
    /// Stop after this long (`None`: until leaving or shutdown).
    pub max_duration: Option<Duration>,
}

/// Runs the agent until it leaves, `shutdown` resolves, or time runs out.
///
/// # Errors
/// When leaving fails to remove what was placed.
pub async fn run<A: Applier>(
    config: Loop,
    mut reconciler: Reconciler<A>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Ending, ReconcileError> {
    let (sender, mut changes) = mpsc::channel::<WorkChange>(CHANGES_BUFFER);
    let label = reconciler.label().to_owned();
    let watcher = tokio::spawn(config.hub.clone().follow(label, sender));
    let deadline = config
        .max_duration
        .map_or_else(far_future, |d| Instant::now() + d);
    let mut next_beat = Instant::now();
    let mut joined = false;
    let mut confirm_leave = false;
    tokio::pin!(shutdown);
    let ending = loop {
        tokio::select! {
            () = &mut shutdown => break Ending::Stopped,
            () = tokio::time::sleep_until(deadline) => break Ending::Stopped,
            () = tokio::time::sleep_until(next_beat) => {
                match beat(&config, reconciler.label(), &mut joined).await {
                    Ok(Beat::Next(period)) => next_beat = Instant::now() + period,
                    Ok(Beat::Leaving) => {
                        confirm_leave = true;
                        break Ending::Left;
                    }
                    Ok(Beat::Gone) => break Ending::Left,
                    Err(error) => {
                        println!("{} heartbeat failed: {error}", reconciler.label());
                        next_beat = Instant::now() + HEARTBEAT_RETRY;
                    }
                }
            }
            change = changes.recv() => match change {
                Some(change) => reconciler.on_change(change).await,
                None => break Ending::Stopped,
            },
            () = tokio::time::sleep(RECHECK_EVERY), if reconciler.has_pending() => {
                reconciler.recheck().await;
            }
        }
    };
    watcher.abort();
    if ending == Ending::Left {
        let removed = reconciler.remove_everything().await?;
        if confirm_leave {
            confirm_left(&config, reconciler.label()).await;
        }
        println!(
            "{} left the fleet: removed {removed} objects this agent placed; stopping",
            reconciler.label()
        );
    }
    Ok(ending)
}

/// Tells the hub that this agent removed what it placed, so the leaving MemberCluster goes
/// (a `leave` event). A failure is printed: the member then stays leaving until an agent
/// confirms again.
async fn confirm_left(config: &Loop, label: &str) {
    match config
        .hub
        .post_events(&[leave_event(&config.cluster)])
        .await
    {
        Ok(answers) => {
            for rejection in rejections(&answers) {
                println!("{label} the hub rejected the leave: {rejection}");
            }
        }
        Err(error) => println!("{label} could not confirm leaving: {error}"),
    }
}

/// What one heartbeat round found.
enum Beat {
    /// Beat again after this long.
    Next(Duration),
    /// The MemberCluster is leaving: remove everything and confirm.
    Leaving,
    /// The MemberCluster is gone: remove everything.
    Gone,
}

fn far_future() -> Instant {
    // About thirty years: "never" without overflowing the clock.
    Instant::now() + Duration::from_secs(60 * 60 * 24 * 365 * 30)
}

/// Reads the MemberCluster and heartbeats unless it is leaving or gone.
async fn beat(config: &Loop, label: &str, joined: &mut bool) -> Result<Beat, HubError> {
    let (period_secs, leaving) = match config.hub.membership().await? {
        Membership::Gone => {
            println!("{label} MemberCluster {} is gone", config.cluster);
            return Ok(Beat::Gone);
        }
        Membership::Member {
            heartbeat_period_secs,
            leaving,
        } => (heartbeat_period_secs, leaving),
    };
    if leaving {
        println!("{label} MemberCluster {} is leaving", config.cluster);
        return Ok(Beat::Leaving);
    }
    let answers = config
        .hub
        .post_events(&[heartbeat_event(&config.cluster, &config.properties)])
        .await?;
    for rejection in rejections(&answers) {
        println!("{label} the hub rejected a heartbeat: {rejection}");
    }
    if !*joined {
        println!("{label} joined the fleet; heartbeating every {period_secs}s");
        *joined = true;
    }
    Ok(Beat::Next(Duration::from_secs(period_secs)))
}

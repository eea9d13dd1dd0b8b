//! `flotilla drain CLUSTER` and `flotilla uncordon CLUSTER`: KubeFleet's `kubectl fleet
//! draincluster` and `uncordoncluster` (`tools/fleet/cmd/draincluster/draincluster.go`,
//! `tools/fleet/cmd/uncordoncluster/uncordoncluster.go`, the taint in `tools/utils/common.go`),
//! with their words.
//!
//! Contract:
//! - Every write goes through the hub's Kubernetes API, so each is the `apply` input event
//!   `flotilla apply` appends: the `MemberCluster` as the hub shows it with only `spec.taints`
//!   changed (an update carrying the `resourceVersion` it read, read and written again on a
//!   conflict, as client-go's `RetryOnConflict` does), and one `ClusterResourcePlacementEviction`
//!   per placement (a create, so a name already taken is never mistaken for ours).
//! - `drain` cordons first — KubeFleet's taint `cordon-key=cordon-value:NoSchedule`, added unless
//!   the cluster has it already — and only then lists the `ClusterResourceBinding`s on the
//!   cluster. The taint is folded before the list is read, so the scheduler places nothing new
//!   there afterwards (unless a placement tolerates the taint). For each placement with a binding
//!   there it creates an eviction named `drain-eviction-<placement>-<cluster>-<8 hex>`, waits for
//!   its terminal status (`Valid=False`, or any `Executed`) and prints one line: executed, or not
//!   executed and the `Executed` (or `Valid`) condition's message, e.g. the disruption budget's.
//! - It exits 0 when every placement was evicted (or had nothing left to evict), and 1 with
//!   `drain was not successful` when some eviction was not executed; the taint stays either way.
//! - `uncordon` removes that one taint (equal key, value and effect) and nothing else.
//! - A cluster the hub does not know is an error, and nothing is written.
//!
//! Where flotilla differs from KubeFleet's tool, on purpose:
//! - KubeFleet's `draincluster` exits 0 even when an eviction was not executed (it only logs
//!   "drain was not successful"); flotilla exits 1 so a script stops before the maintenance.
//! - KubeFleet logs only that an eviction was not executed; flotilla adds the reason.
//! - KubeFleet runs its whole drain twice (the second a "retry" for bindings created meanwhile).
//!   flotilla's second pass evicts only placements bound to the cluster that the first pass did
//!   not find blocked: evicting a blocked placement again would only add a second blocked
//!   eviction. Usually nothing is left for it.
//! - An eviction found invalid because the placement or its binding went away meanwhile counts
//!   as done: nothing is left to evict. That is what KubeFleet's code means to do; it compares
//!   the condition's reason with those messages, so its branch never matches.
//! - Only `ClusterResourcePlacement`s are evicted, as in KubeFleet's tool: there is no eviction
//!   of a namespaced `ResourcePlacement`, whose objects stay (the taint keeps new ones away).

mod cordon;
mod error;
mod evict;

use std::collections::BTreeSet;
use std::time::Duration;

pub use cordon::{CORDON_TAINT_EFFECT, CORDON_TAINT_KEY, CORDON_TAINT_VALUE};
pub use error::DrainError;
use evict::Outcome;
use flotilla_adapters::client::Client;

/// `flotilla drain CLUSTER [--timeout SECONDS]`.
///
/// # Errors
/// [`DrainError::Incomplete`] when some eviction was not executed (the lines printed say which
/// and why); an unknown cluster, an unreachable hub, a refusal or the timeout otherwise.
pub async fn drain(client: &Client, cluster: &str, timeout: Duration) -> Result<(), DrainError> {
    tokio::time::timeout(timeout, drain_cluster(client, cluster))
        .await
        .map_err(|_| DrainError::Timeout {
            verb: "drain",
            cluster: cluster.to_owned(),
            seconds: timeout.as_secs(),
        })?
}

/// `flotilla uncordon CLUSTER [--timeout SECONDS]`.
///
/// # Errors
/// An unknown cluster, an unreachable hub, a refusal or the timeout.
pub async fn uncordon(client: &Client, cluster: &str, timeout: Duration) -> Result<(), DrainError> {
    let removed = tokio::time::timeout(timeout, cordon::uncordon(client, cluster))
        .await
        .map_err(|_| DrainError::Timeout {
            verb: "uncordon",
            cluster: cluster.to_owned(),
            seconds: timeout.as_secs(),
        })??;
    if removed {
        println!("uncordoned member cluster {cluster}");
    } else {
        println!("member cluster {cluster} has no cordon taint; nothing to do");
    }
    Ok(())
}

async fn drain_cluster(client: &Client, cluster: &str) -> Result<(), DrainError> {
    if cordon::cordon(client, cluster).await? {
        println!("Successfully cordoned member cluster {cluster} by adding cordon taint");
    } else {
        println!("member cluster {cluster} is already cordoned");
    }
    let found = evict::placements_on(client, cluster).await?;
    if found.is_empty() {
        println!(
            "There are currently no resources propagated to {cluster} from fleet using \
             ClusterResourcePlacement resources"
        );
    }
    let mut blocked = evict_all(client, cluster, &found).await?;
    // Placements bound to the cluster since the list was read, or bound again after their
    // eviction (one that tolerates the taint); the blocked ones would only be blocked again.
    let again: BTreeSet<String> = evict::placements_on(client, cluster)
        .await?
        .difference(&blocked)
        .cloned()
        .collect();
    if !again.is_empty() {
        println!("retrying drain to ensure all resources propagated from hub cluster are evicted");
        blocked.extend(evict_all(client, cluster, &again).await?);
    }
    if blocked.is_empty() {
        println!("drain was successful for cluster {cluster}");
    }
    println!("reminder: uncordon the cluster {cluster} to remove cordon taint if needed");
    if blocked.is_empty() {
        return Ok(());
    }
    Err(DrainError::Incomplete {
        cluster: cluster.to_owned(),
        placements: blocked.into_iter().collect::<Vec<_>>().join(", "),
    })
}

/// Evicts each placement from the cluster in turn, printing its outcome; the placements whose
/// eviction was not executed.
async fn evict_all(
    client: &Client,
    cluster: &str,
    placements: &BTreeSet<String>,
) -> Result<BTreeSet<String>, DrainError> {
    let mut blocked = BTreeSet::new();
    for placement in placements {
        let (name, outcome) = evict::evict(client, placement, cluster).await?;
        let target = format!("for CRP {placement} targeting member cluster {cluster}");
        match outcome {
            Outcome::Executed => {
                println!("eviction {name} was executed successfully {target}");
                evict::print_evicted_resources(client, placement, cluster).await;
            }
            Outcome::NothingToEvict(message) => println!(
                "eviction {name} is invalid with reason {message:?} {target}, but drain will \
                 succeed"
            ),
            Outcome::NotExecuted(message) => {
                println!("eviction {name} was not executed successfully {target}: {message}");
                blocked.insert(placement.clone());
            }
        }
    }
    Ok(blocked)
}
